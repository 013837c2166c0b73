"""Checks for lesson 00, start here: reading a timeline's columns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphlab.language import gettext as _
from graphlab.trace.timeline import Timeline

from ._core import call, exercise, fail, not_fixed, number, passed, rounded
from ._sections import BUSY_EXERCISE, READING

__all__ = ["check_busy_fraction", "small_timeline"]


def _timeline(host: list[tuple[int, int]], kernels: list[tuple[int, int]], source: str) -> Timeline:
    """Host launches ``(start, duration)`` in ns, then the kernels they submitted, on stream 7."""
    n = len(host)
    return Timeline(
        kind=["launch"] * n + ["kernel"] * n,
        name=["cudaLaunchKernel"] * n + [f"kernel_{i}" for i in range(n)],
        start_ns=[s for s, _ in host] + [s for s, _ in kernels],
        dur_ns=[d for _, d in host] + [d for _, d in kernels],
        device=[-1] * n + [0] * n,
        stream=[-1] * n + [7] * n,
        thread=[1] * n + [-1] * n,
        correlation=list(range(1, n + 1)) * 2,
        meta={"source": source},
    )


def small_timeline() -> Timeline:
    """A hand-made timeline: three host launches, then the three kernels they submitted.

    Host launches at 0, 800 and 1600 ns (400 ns each); kernels on stream 7 at 1000-1500,
    2500-3000 and 4000-5000 ns. Busy 2000 ns over a GPU span of 4000 ns: busy fraction 0.5.
    """
    return _timeline(
        [(0, 400), (800, 400), (1600, 400)],
        [(1000, 500), (2500, 500), (4000, 1000)],
        "hand-made example for lesson 00",
    )


def _more_timelines() -> list[tuple[Timeline, float]]:
    """Two more timelines whose answers are not round numbers, with those answers by hand."""
    # Kernels of 373, 469 and 863 ns between 1200 and 4163 ns: 1705 / 2963.
    second = _timeline(
        [(0, 300), (900, 300), (1750, 300)],
        [(1200, 373), (2011, 469), (3300, 863)],
        "hand-made example for lesson 00, second",
    )
    # Kernels of 550, 237, 111 and 910 ns between 700 and 4410 ns: 1808 / 3710.
    third = _timeline(
        [(100, 250), (1300, 250), (2600, 250), (3100, 250)],
        [(700, 550), (1900, 237), (2900, 111), (3500, 910)],
        "hand-made example for lesson 00, third",
    )
    return [(second, 1705 / 2963), (third, 1808 / 3710)]


def _diagnose(value: float, t: Timeline, expected: float) -> None:
    """Fail with what ``value`` is, when it is a known mistake on ``t``."""
    gpu = t.is_gpu
    busy = float(t.dur_ns[gpu].sum())
    if abs(value - t.dur_ns.sum() / (t.end_ns.max() - t.start_ns.min())) < 1e-9:
        message = _(
            "you got {value:.4g}: you counted the host launch calls as GPU work. Keep only "
            "GPU events: t.select(t.is_gpu)."
        )
        fail(message.format(value=value), READING)
    if abs(value - busy / (t.end_ns[gpu].max() - t.start_ns.min())) < 1e-9:
        message = _(
            "you got {value:.4g}: you divided by the whole timeline's span. The GPU's span starts "
            "at its first event's start ({start} ns), not at the first host call."
        )
        fail(message.format(value=value, start=int(t.start_ns[gpu].min())), READING)
    if any(abs(value - v) < 1e-6 for v in (100 * expected, busy, busy / 1000)):
        message = _(
            "you got {value:.4g}: return a fraction between 0 and 1, not a time or a percent."
        )
        fail(message.format(value=value))
    if rounded(value, expected):
        message = _(
            "you got {value:.6g}, which is {expected:.6g} rounded: return the fraction as is."
        )
        fail(message.format(value=value, expected=expected))


@exercise(BUSY_EXERCISE)
def check_busy_fraction(busy_fraction: Callable[..., Any]) -> None:
    """Check ``busy_fraction(t) -> float``: GPU busy time over the GPU's span, on one stream.

    Busy is the sum of the durations of GPU events (``t.is_gpu``); the span runs from the first
    GPU event's start to the last one's end. Host launch calls are not GPU work. Three timelines,
    two of them with answers that are not round numbers, so that a constant or rounded answer
    cannot pass.
    """
    first = small_timeline()
    cases = [(first, 0.5), *_more_timelines()]  # 0.5: 2000 ns of kernels between 1000 and 5000
    values = []
    for t, expected in cases:
        yours = call(busy_fraction, t, name="busy_fraction")
        should = _("busy_fraction should return a number between 0 and 1")
        values.append(number(yours, should))
        if abs(values[-1] - expected) < 1e-9:
            continue
        not_fixed(values, "busy_fraction", _("timelines"), READING)
        _diagnose(values[-1], t, expected)
        message = _(
            "busy_fraction returned {value:.6g}, expected {expected:.6g} for this timeline."
        )
        fail(message.format(value=values[-1], expected=expected))
    passed(_("busy fraction of the hand-made timeline"), values[0], 0.5)
