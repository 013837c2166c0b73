"""How fast the exact planner is (targets: N = 512 sizes with K = 64 in < 1 s; N = 8192 in < 10 s).

Run ``python benchmarks/planner_speed.py``. Each case plans for a histogram that uses every size
of the cost table (so no size can be merged away, the hardest case for the planner's reductions)
and prints the wall time of the best of a few runs with its CPU time, and the plan found (or
the planner's refusal, when proving the optimum would take more than its label limit).

The cost table is synthetic, shaped like a decode step: replay time grows with the batch size
plus measurement-like noise (so it is not monotone), an eager step pays a fixed launch overhead
more, capture time and graph memory grow with the size. The histogram falls off with the size, as
a serving mix does. Budgets are chosen to bind (the budget-free optimum does not fit them), which
is when the planner has to search.
"""

from __future__ import annotations

import time

import numpy as np

from graphlab.planner import Constraints, CostTable, Histogram, PlannerError, best_plan, pareto

RUNS = 3


def workload(n: int, seed: int = 0) -> tuple[Histogram, CostTable]:
    rng = np.random.default_rng(seed)
    sizes = np.arange(1, n + 1)
    replay = 200 + 0.5 * sizes + rng.normal(0, 2, n)
    costs = CostTable.from_dict(
        {
            "sizes": sizes.tolist(),
            "replay_us": replay.tolist(),
            "eager_us": (replay + 300).tolist(),
            "capture_s": (0.05 + 0.0005 * sizes).tolist(),
            "graph_mib": (20 + 0.1 * sizes).tolist(),
        }
    )
    counts = rng.poisson(50 * np.exp(-sizes / (n / 4))) + 1
    return Histogram.from_counts(dict(zip(sizes.tolist(), counts.tolist(), strict=True))), costs


CASES = [
    ("best plan", 512, Constraints(64)),
    ("best plan, memory budget 1000 MiB", 512, Constraints(64, memory_mib=1000)),
    ("best plan, start-up budget 5 s", 512, Constraints(64, startup_s=5)),
    ("best plan, both budgets", 512, Constraints(64, memory_mib=1500, startup_s=5)),
    ("pareto, K = 1..64", 512, Constraints(64)),
    ("pareto, K = 1..64, memory budget 1000 MiB", 512, Constraints(64, memory_mib=1000)),
    ("best plan", 8192, Constraints(64)),
    ("best plan, memory budget 3000 MiB", 8192, Constraints(64, memory_mib=3000)),
    ("best plan, start-up budget 20 s", 8192, Constraints(64, startup_s=20)),
]


def main() -> None:
    print(f"planner speed on this machine: best of {RUNS} runs (CPU time of that run)")
    for label, n, constraints in CASES:
        histogram, costs = workload(n)
        solve = pareto if label.startswith("pareto") else best_plan
        runs = []
        try:
            for _ in range(RUNS):
                wall, cpu = time.perf_counter(), time.process_time()
                result = solve(histogram, costs, constraints)
                runs.append((time.perf_counter() - wall, time.process_time() - cpu))
        except PlannerError as exc:
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(f"  N={n:<5} K={constraints.max_graphs:<3} {label:<42} {wall:7.3f} s "
                  f"(cpu {cpu:.3f} s)  refused: {exc}")  # fmt: skip
            continue
        plan = result[-1] if isinstance(result, list) else result
        best = min(runs)
        print(
            f"  N={n:<5} K={constraints.max_graphs:<3} {label:<42} {best[0]:7.3f} s "
            f"(cpu {best[1]:.3f} s)  {plan.graphs:>2} graphs, {plan.expected_step_us:.3f} µs/step, "
            f"{plan.memory_mib:,.0f} MiB, {plan.capture_s:.2f} s"
        )


if __name__ == "__main__":
    main()
