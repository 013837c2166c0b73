"""How long graphlab's widgets take to build big timelines, in Python (no browser).

Run: ``python benchmarks/widgets_speed.py``. Prints, for eager+graph timeline pairs of 1e4, 1e5
and 1e6 kernels, the time to build the Timelines' gap summaries and the TimelineView (its plotly
FigureWidget included), and the number of points sent to the browser. The browser draw time is
measured by ``tests/test_browser.py`` (it prints it).

The timelines are synthetic: fixed made-up durations (a 1 µs kernel, a 5 µs launch call), chosen
only to give the shape of an eager run and a replay; they are not GPU measurements.
"""

from __future__ import annotations

import time

import numpy as np

from graphlab.timeline import Timeline
from graphlab.widgets import TimelineView
from graphlab.widgets.figures import LOD_EVENTS


def synthetic_pair(n: int) -> tuple[Timeline, Timeline]:
    """An eager timeline (n launch calls, each followed by its kernel) and a replay timeline
    (one cudaGraphLaunch, n kernels back to back), with made-up durations."""
    i = np.arange(n, dtype=np.int64)
    launch_start = i * 6_000
    kernel_start = launch_start + 7_000
    eager = Timeline(
        kind=np.repeat([["launch", "kernel"]], n, axis=0).reshape(-1),
        name=np.repeat([["cudaLaunchKernel", "mul_kernel"]], n, axis=0).reshape(-1),
        start_ns=np.column_stack([launch_start, kernel_start]).reshape(-1),
        dur_ns=np.tile([5_000, 1_000], n),
        device=np.tile([-1, 0], n),
        stream=np.tile([-1, 7], n),
        thread=np.tile([1, -1], n),
        correlation=np.repeat(i, 2),
        meta={"source": "synthetic"},
    )
    graph = Timeline(
        kind=["launch", *["kernel"] * n],
        name=["cudaGraphLaunch", *["mul_kernel"] * n],
        start_ns=np.concatenate([[0], 20_000 + i * 1_300]),
        dur_ns=np.concatenate([[15_000], np.full(n, 1_000)]),
        device=np.concatenate([[-1], np.zeros(n, dtype=np.int64)]),
        stream=np.concatenate([[-1], np.full(n, 7)]),
        thread=np.concatenate([[1], np.full(n, -1)]),
        correlation=np.zeros(n + 1, dtype=np.int64),
        meta={"source": "synthetic"},
    )
    return eager, graph


def main() -> None:
    # The first figure of a process pays for imports (plotly.io pulls in nbformat and jsonschema,
    # which took seconds here); measured separately so the table shows steady-state build times.
    t0 = time.perf_counter()
    TimelineView(*synthetic_pair(10)).close()
    cold = time.perf_counter() - t0
    print(f"first (cold) TimelineView of 10 kernels, imports included: {cold:.2f} s")
    print(f"{'kernels':>9} {'events':>9} {'summary s':>10} {'view s':>8} {'points':>10}  mode")
    for n in (10_000, 100_000, 1_000_000):
        eager, graph = synthetic_pair(n)
        t0 = time.perf_counter()
        eager.summary(), graph.summary()
        t1 = time.perf_counter()
        view = TimelineView(eager=eager, graph=graph)
        t2 = time.perf_counter()
        points = sum(len(trace.x) for trace in view.figure.data)
        mode = "level of detail" if view.events > LOD_EVENTS else "every event"
        print(f"{n:>9,} {view.events:>9,} {t1 - t0:>10.3f} {t2 - t1:>8.3f} {points:>10,}  {mode}")
        view.close()


if __name__ == "__main__":
    main()
