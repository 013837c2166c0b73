"""How long a 1,000,000-event Timeline takes to build, summarise and round-trip through JSON.

Run: ``python benchmarks/timeline_summary.py [N]``. Prints seconds per step. The events are a
synthetic eager chain (a launch call, then its kernel, on 4 streams); only the sizes matter here.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from graphlab.trace.timeline import Timeline


def synthetic_chain(pairs: int) -> dict:
    """Columns of ``pairs`` launch+kernel pairs: launches every 5 µs, kernels 1.5 µs later."""
    i = np.arange(pairs, dtype=np.int64)
    launch_start = i * 5_000
    kernel_start = launch_start + 4_000 + 1_500
    kind = np.empty(2 * pairs, dtype="U6")
    kind[0::2], kind[1::2] = "launch", "kernel"
    name = np.empty(2 * pairs, dtype=object)
    name[0::2], name[1::2] = "cudaLaunchKernel", "elementwise_kernel"
    start = np.empty(2 * pairs, dtype=np.int64)
    start[0::2], start[1::2] = launch_start, kernel_start
    dur = np.empty(2 * pairs, dtype=np.int64)
    dur[0::2], dur[1::2] = 4_000, 1_200
    device = np.repeat(np.array([[-1, 0]]), pairs, axis=0).reshape(-1)
    stream = np.empty(2 * pairs, dtype=np.int64)
    stream[0::2], stream[1::2] = -1, 7 + (i % 4)
    thread = np.empty(2 * pairs, dtype=np.int64)
    thread[0::2], thread[1::2] = 1, -1
    corr = np.repeat(i, 2)
    return dict(
        kind=kind,
        name=name,
        start_ns=start,
        dur_ns=dur,
        device=device,
        stream=stream,
        thread=thread,
        correlation=corr,
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    columns = synthetic_chain(n // 2)
    t0 = time.perf_counter()
    t = Timeline(**columns)
    t1 = time.perf_counter()
    s = t.summary()
    t2 = time.perf_counter()
    d = t.to_dict()
    Timeline.from_dict(d)
    t3 = time.perf_counter()
    print(f"{len(t):,} events")
    print(f"build     {t1 - t0:.3f} s")
    print(f"summary   {t2 - t1:.3f} s  ({s.kernels:,} kernels, {s.gaps.count:,} gaps)")
    print(f"dict trip {t3 - t2:.3f} s")


if __name__ == "__main__":
    main()
