"""The eager profile of a step: kernels per step, how idle the GPU is, and its widest gaps.

On a GPU the timeline comes from torch.profiler (:func:`graphlab.timing.compare.profiled_timeline`,
the calls back to back as in a real loop); on a machine without one, from the simulator
calibrated on the H200 recordings, fed with the operations the blocker scan saw (one kernel each,
of an assumed length, :data:`ASSUMED_KERNEL_US`), and labelled as an estimate. Either way the
figures come from the same gap analysis (:meth:`graphlab.Timeline.summary`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphlab.language import N_
from graphlab.simulator import calibrated, eager, model_step, simulate
from graphlab.trace.gaps import busy_intervals
from graphlab.trace.timeline import Timeline

from .words import Text

__all__ = [
    "ASSUMED_KERNEL_US",
    "estimated_profile",
    "kernels_text",
    "measured_profile",
    "profile_of",
]

# Length assumed for every kernel of an estimate: a short elementwise or small-matmul kernel of a
# decode step on the H200 lasts a few µs. The estimate says so wherever it is shown.
ASSUMED_KERNEL_US = 3.0
_WIDEST = 3
_NAME_CHARS = 60


def measured_profile(fn: Callable[..., Any], inputs: Sequence[Any], steps: int) -> dict[str, Any]:
    """Profile ``steps`` eager calls on the GPU (needs CUDA)."""
    from graphlab.timing.profiled import profiled_timeline

    timeline = profiled_timeline(lambda i: fn(*inputs), steps)
    source = Text(N_("torch.profiler, eager calls back to back"))
    return profile_of(timeline, steps, source=source)


def kernels_text(count: float) -> Text:
    """``count`` kernels in words, rounded to a whole number: "1 kernel", "46 kernels"."""
    whole = round(count)
    return Text(N_("{n} kernel") if whole == 1 else N_("{n} kernels"), n=whole)


def estimated_profile(ops: Sequence[str], steps: int) -> dict[str, Any]:
    """Simulate ``steps`` eager calls of ``ops`` (one kernel each) with the calibrated H200
    parameters, back to back as a real loop runs them."""
    step = model_step([ASSUMED_KERNEL_US] * max(len(ops), 1), list(ops) or ["kernel"])
    timeline = simulate(eager(step, calibrated(), iterations=steps))
    source = Text(
        N_(
            "estimate: simulator calibrated on an NVIDIA H200, assuming {kernels} of {us} µs "
            "(one per operation seen on the CPU)"
        ),
        kernels=kernels_text(len(ops)),
        us=f"{ASSUMED_KERNEL_US:g}",
    )
    return profile_of(timeline, steps, source=source)


def profile_of(timeline: Timeline, steps: int, source: str) -> dict[str, Any]:
    """The profile's figures from a timeline of ``steps`` eager calls."""
    summary = timeline.summary()
    idle = summary.idle_fraction or 0.0
    gaps = summary.gaps.count
    return {
        "source": source,
        "kernels_per_step": summary.kernels / steps,
        "idle_fraction": idle,
        "gaps": gaps,
        "host_bound_gaps": summary.host_bound_gaps,
        # The GPU waits for the host when it idles a good part of the time and most of its gaps
        # end with work that had not been launched yet.
        "launch_bound": bool(idle > 0.3 and gaps and summary.host_bound_gaps * 2 >= gaps),
        "widest_gaps": widest_gaps(timeline),
    }


def widest_gaps(timeline: Timeline, count: int = _WIDEST) -> list[dict[str, Any]]:
    """The ``count`` widest idle gaps of the GPU (all streams together), with the work on each
    side: the GPU finished the first and waited for the host to launch the second."""
    gpu = np.asarray(timeline.is_gpu)
    start, end = timeline.start_ns[gpu], timeline.end_ns[gpu]
    names = np.asarray(timeline.name)[gpu]
    order = np.argsort(start, kind="stable")
    start, end, names = start[order], end[order], names[order]
    busy_start, busy_end = busy_intervals(start, end)
    widths = busy_start[1:] - busy_end[:-1]
    out = []
    for i in np.argsort(-widths, kind="stable")[:count]:
        before = names[np.searchsorted(np.maximum.accumulate(end), busy_end[i])]
        after = names[np.searchsorted(start, busy_start[i + 1])]
        out.append(
            {
                "us": float(widths[i]) / 1000,
                "after": _short(str(before)),
                "before": _short(str(after)),
            }
        )
    return out


def _short(name: str) -> str:
    return name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 3] + "..."
