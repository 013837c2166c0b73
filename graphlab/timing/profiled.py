"""Timelines of the timed loops under torch.profiler, recorded apart from the timings.

:func:`profiled_timeline` runs a loop as the timings do (no synchronize between iterations)
under torch.profiler; :func:`profile_timelines` records one eager and one graph timeline of a
:class:`~graphlab.timing.captured.Captured` step. Never time from them: the profiler slows the
host's launches down (it roughly doubles eager launch cost on the H200).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

from .captured import Captured, check_count

if TYPE_CHECKING:
    from graphlab.trace.timeline import Timeline

__all__ = ["profile_timelines", "profiled_timeline"]


def profile_timelines(captured: Captured, iterations: int = 2) -> dict[str, Timeline]:
    """Profiled timelines of ``iterations`` eager calls and of as many replays.

    Returns ``{"eager": Timeline, "graph": Timeline}``. Never time from these: the profiler slows
    the host's launches down (it roughly doubles eager launch cost on the H200).
    """
    check_count("iterations", iterations)
    timelines = {
        "eager": profiled_timeline(captured.eager, iterations),
        "graph": profiled_timeline(captured.replay, iterations),
    }
    for mode, timeline in timelines.items():
        if not timeline.is_gpu.any():
            raise GraphlabError(
                _(
                    "the profiler recorded no GPU work for the {mode} run: CUPTI's activity "
                    "tracing did not deliver kernel events in this process. Profile in a "
                    "fresh process, before any other profiling session."
                ).format(mode=mode)
            )
    return timelines


def profiled_timeline(step: Callable[[int], Any], iterations: int) -> Timeline:
    """A Timeline of ``iterations`` back-to-back calls of ``step(i)`` under torch.profiler.

    The calls run as in the timed loops: no synchronize between them, one at the end, so the
    timeline shows the same gaps the timings measured. A profiler schedule first runs the same
    loop once and discards it, so the profiler is fully started before the loop that is kept.
    Never time from it: the profiler slows the host's launches down. Needs a CUDA GPU.
    """
    import torch
    from torch.profiler import ProfilerActivity, schedule
    from torch.profiler import profile as profiler

    from graphlab.trace.timeline import Timeline

    plan = schedule(wait=0, warmup=1, active=1, repeat=1)
    torch.cuda.synchronize()
    with warnings.catch_warnings():
        # The schedule discards the warm-up cycle on purpose; the profiler warns that it does.
        warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)
        with profiler(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=plan
        ) as prof:
            for _ in range(2):
                for i in range(iterations):
                    step(i)
                torch.cuda.synchronize()
                prof.step()
    return Timeline.from_chrome_trace(prof)
