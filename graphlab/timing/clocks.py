"""The two clocks of the timings, and how their samples are summarised.

:func:`event_time_us` is the steady-state clock: GPU time per iteration between two CUDA events
around a loop started on an idle GPU. :func:`host_time_us` is the end-to-end clock: host time per
iteration until the loop's work has finished, counting input copies, output clones and launches.
:func:`spread` gives the median and the 10th and 90th percentiles of repeated samples.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["event_time_us", "host_time_us", "spread"]


def spread(samples: Sequence[float]) -> tuple[float, float, float]:
    """(median, 10th percentile, 90th percentile) of ``samples``, by linear interpolation."""
    p10, p50, p90 = np.percentile(np.asarray(samples, dtype=float), [10, 50, 90])
    return float(p50), float(p10), float(p90)


def event_time_us(step: Callable[[int], Any], iterations: int) -> float:
    """GPU time per iteration of ``step(0..iterations-1)``, between two CUDA events, in µs.

    The loop starts on an idle GPU and runs without a synchronize between iterations, as a real
    loop does; the events are read once the GPU has passed the end one. This is the steady-state
    clock of :func:`compare` (``eager_us``, ``replay_us``, ``first_replay_us``); ``step`` gets the
    iteration index. Needs a CUDA GPU.
    """
    import torch

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # Start on an idle GPU: queued earlier work would let the loop's launches hide behind it.
    torch.cuda.synchronize()
    start.record()
    for i in range(iterations):
        step(i)
    end.record()
    # elapsed_time is valid only once the GPU has reached the end event.
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / iterations


def host_time_us(step: Callable[[int], Any], iterations: int) -> float:
    """Host-clock time per iteration of ``step(0..iterations-1)``, in µs, from an idle GPU until
    all the loop's work has finished.

    The end-to-end clock of :func:`compare`: it counts everything the host pays (input copies,
    output clones, launches) as well as the GPU's work. ``step`` gets the iteration index. Needs a
    CUDA GPU.
    """
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter_ns()
    for i in range(iterations):
        step(i)
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - start) / 1e3 / iterations
