"""How fast the simulator is: 1,000,000 simulated kernels, timeline included (target: < 2 s).

Run ``python benchmarks/simulator_speed.py``. Each case builds the program, schedules it and
builds its :class:`graphlab.Timeline` (host events + kernels); the figures are wall time on this
machine, best and median of a few runs, and the CPU time of the best run (on a shared machine the
wall time also counts waiting for a core). The parameters are arbitrary round numbers: the work
the simulator does does not depend on their values.
"""

from __future__ import annotations

import statistics
import time

from graphlab.simulator import SimParams, chain, eager, fork_join, graph, simulate

PARAMS = SimParams(
    host_us=7.0, launch_latency_us=1.0, graph_launch_us=5.0, node_gap_us=0.3, sync_us=2.0
)
RUNS = 3

CASES = {
    "eager chain, 1,000,000 kernels": lambda: eager(chain(1_000_000, 1.0), PARAMS),
    "eager chain, 1,000,000 kernels, sync every 10": lambda: eager(
        chain(1_000_000, 1.0), PARAMS, sync_every=10
    ),
    "graph, 1,000 kernels x 1,000 replays": lambda: graph(chain(1000, 1.0), PARAMS, replays=1000),
    "eager fork/join, 4 kernels x 250,000 iterations, sync every step": lambda: eager(
        fork_join([2.0], [2.0], [1.0], [1.0]), PARAMS, iterations=250_000, sync_every=4
    ),
}


def main() -> None:
    print(f"simulator speed: build + schedule + Timeline, best / median of {RUNS} runs")
    for label, build in CASES.items():
        runs = []  # (wall, cpu) seconds
        for _ in range(RUNS):
            wall, cpu = time.perf_counter(), time.process_time()
            timeline = simulate(build())
            runs.append((time.perf_counter() - wall, time.process_time() - cpu))
        kernels = int((timeline.kind == "kernel").sum())
        best = min(runs)
        print(
            f"  {label:<66} {kernels:>9,} kernels {len(timeline):>9,} events  "
            f"best {best[0]:.2f} s (cpu {best[1]:.2f} s)  "
            f"median {statistics.median(w for w, _ in runs):.2f} s"
        )


if __name__ == "__main__":
    main()
