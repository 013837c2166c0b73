"""Checks for lesson 00, start here: reading a timeline's columns."""

from __future__ import annotations

from collections.abc import Callable

from graphlab.trace.timeline import Timeline

from ._core import call, fail, number, passed

__all__ = ["check_busy_fraction", "small_timeline"]


def small_timeline() -> Timeline:
    """A hand-made timeline: three host launches, then the three kernels they submitted.

    Host launches at 0, 800 and 1600 ns (400 ns each); kernels on stream 7 at 1000-1500,
    2500-3000 and 4000-5000 ns. Busy 2000 ns over a GPU span of 4000 ns: busy fraction 0.5.
    """
    return Timeline(
        kind=["launch", "launch", "launch", "kernel", "kernel", "kernel"],
        name=["cudaLaunchKernel"] * 3 + ["mul_kernel", "add_kernel", "mul_kernel"],
        start_ns=[0, 800, 1600, 1000, 2500, 4000],
        dur_ns=[400, 400, 400, 500, 500, 1000],
        device=[-1, -1, -1, 0, 0, 0],
        stream=[-1, -1, -1, 7, 7, 7],
        thread=[1, 1, 1, -1, -1, -1],
        correlation=[1, 2, 3, 1, 2, 3],
        meta={"source": "hand-made example for lesson 00"},
    )


def check_busy_fraction(busy_fraction: Callable) -> None:
    """Check ``busy_fraction(t) -> float``: GPU busy time over the GPU's span, on one stream.

    Busy is the sum of the durations of GPU events (``t.is_gpu``); the span runs from the first
    GPU event's start to the last one's end. Host launch calls are not GPU work.
    """
    t = small_timeline()
    expected = 0.5  # 2000 ns of kernels between 1000 and 5000 ns
    yours = call(busy_fraction, t, name="busy_fraction")
    value = number(yours, "busy_fraction should return a number between 0 and 1")
    if abs(value - expected) < 1e-9:
        passed("busy fraction of the hand-made timeline", value, expected)
        return
    if abs(value - 3200 / 5000) < 1e-9:
        fail(
            f"you got {value:.4g}: you counted the host launch calls as GPU work. Keep only "
            "GPU events: t.select(t.is_gpu)."
        )
    if abs(value - 2000 / 5000) < 1e-9:
        fail(
            f"you got {value:.4g}: you divided by the time since zero. The GPU's span starts at "
            "its first event's start (1000 ns), not at the first host call."
        )
    if abs(value - 0.5 * 1000) < 1e-6 or abs(value - 2000) < 1e-6:
        fail(f"you got {value:.4g}: return a fraction between 0 and 1, not a time or a percent.")
    fail(f"busy_fraction returned {value:.4g}, expected {expected} for this timeline.")
