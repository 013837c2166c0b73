"""One "what if" question: a step run eagerly and as a graph replay, simulated side by side.

:func:`what_if` is what ``graphlab simulate`` prints and what a notebook slider calls: both
timelines, and for each mode the total time of one step (from the first launch until the final
synchronize returns), the cost per kernel and the GPU's idle fraction (from the same gap analysis
as a real trace), plus the break-even count for a given or modelled capture cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphlab.errors import SimulatorError
from graphlab.timing.break_even import break_even, check_duration

from .model import simulate
from .params import MAX_DURATION_US, SimParams
from .programs import Step, eager, graph

__all__ = ["WhatIf", "what_if"]


@dataclass(frozen=True)
class WhatIf:
    """Simulated eager and graph runs of one step, with their figures and the break-even count.

    ``timelines`` maps "eager" and "graph" to :class:`graphlab.Timeline` s. ``capture_us`` is
    None when neither a capture cost nor a capture model was available; so is ``break_even``
    then, and also when a replay is not faster.
    """

    timelines: dict[str, Any]
    figures: dict[str, dict[str, float | None]]
    capture_us: float | None
    capture_source: str
    break_even: float | None
    params: SimParams
    workload: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The ``graphlab simulate --json`` object."""
        return {
            **self.figures,
            "capture_us": self.capture_us,
            "capture_source": self.capture_source,
            "break_even": self.break_even,
            "params": self.params.to_dict(),
            "calibration": self.params.calibration,
            "workload": self.workload,
        }


def _figures(timeline, kernels: int) -> dict[str, float | None]:
    total_us = int(timeline.end_ns.max()) / 1000
    return {
        "total_us": total_us,
        "per_kernel_us": total_us / kernels,
        "idle_fraction": timeline.summary().idle_fraction,
    }


def what_if(
    step: Step,
    params: SimParams,
    *,
    sync_every: int | None = None,
    capture_us: float | None = None,
    queue_depth: int | None = None,
) -> WhatIf:
    """Simulate ``step`` once eagerly and once as a replay (each ending in a synchronize).

    The break-even count is ``capture / (eager total - graph total)``, with ``capture_us`` if
    given, else the calibrated capture model ``params.capture_us(len(step))``. ``queue_depth``
    bounds the launch queue (None: unbounded).
    """
    options = {"sync_every": sync_every, "queue_depth": queue_depth}
    timelines = {
        "eager": simulate(eager(step, params, **options)),
        "graph": simulate(graph(step, params, **options)),
    }
    figures = {mode: _figures(t, len(step)) for mode, t in timelines.items()}
    if capture_us is not None:
        capture, source = (
            check_duration("capture_us", capture_us, MAX_DURATION_US, SimulatorError),
            "given",
        )
    else:
        capture = params.capture_us(len(step))
        source = (
            "calibrated model: capture_base_us + kernels * capture_per_kernel_us"
            if capture is not None
            else "unknown: no capture cost given and no capture model in the parameters"
        )
    n_star = (
        None
        if capture is None
        else break_even(capture, figures["eager"]["total_us"], figures["graph"]["total_us"])
    )
    return WhatIf(
        timelines=timelines,
        figures=figures,
        capture_us=capture,
        capture_source=source,
        break_even=n_star,
        params=params,
        workload={"label": step.label, "kernels": len(step), **options},
    )
