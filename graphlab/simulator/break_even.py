"""Break-even points from measured timings or from the simulator, and the model against the GPU.

The model itself, N* = C / (t_e - t_r) and the cumulative totals ``N * t_e`` and
``C + N * t_r``, is :mod:`graphlab.timing.break_even`. Here its three numbers come from a
measurement (:func:`from_timings`, a ``graphlab.compare`` result or a recording's timings) or from
the simulator (:func:`from_simulation`), and :func:`model_vs_measured` sets the model beside the
totals measured on a GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from graphlab.errors import SimulatorError
from graphlab.language import gettext as _
from graphlab.timing.break_even import break_even, check_duration, cumulative_totals

from .model import simulate
from .params import SimParams
from .programs import Step, eager, graph, model_step

__all__ = [
    "BreakEven",
    "from_simulation",
    "from_timings",
    "model_vs_measured",
    "step_from_timeline",
]


@dataclass(frozen=True)
class BreakEven:
    """The three inputs of the break-even model, where they came from, and ``n_star``."""

    capture_us: float
    eager_us: float
    replay_us: float
    source: str

    @property
    def n_star(self) -> float | None:
        return break_even(self.capture_us, self.eager_us, self.replay_us)

    def totals(self, steps):
        """``(eager_total, graph_total)`` for the given step counts (the model's totals)."""
        return cumulative_totals(self.capture_us, self.eager_us, self.replay_us, steps)

    def to_dict(self) -> dict:
        return {**asdict(self), "n_star": self.n_star}


def from_timings(timings) -> BreakEven:
    """Break-even from measured timings: a ``Comparison.to_dict()`` or a recording (or its timings).

    Uses the end-to-end times (each step with its input copies and output reads) and the capture
    time, the scope in which the comparison is fair.
    """
    data = getattr(timings, "timings", timings)
    if not isinstance(data, Mapping):
        raise SimulatorError(
            _("expected a Comparison.to_dict() or a recording, got {kind}").format(
                kind=type(timings).__name__
            )
        )
    keys = ("capture_us", "eager_end_to_end_us", "replay_end_to_end_us")
    missing = [k for k in keys if data.get(k) is None]
    if missing:
        raise SimulatorError(
            _("timings lack {missing}: measure them with graphlab.compare").format(missing=missing)
        )
    capture, eager_us, replay_us = (check_duration(k, data[k], error=SimulatorError) for k in keys)
    return BreakEven(capture, eager_us, replay_us, source="measured")


def from_simulation(
    step: Step,
    params: SimParams,
    *,
    copy_in_us: Sequence[float] = (),
    copy_out_us: Sequence[float] = (),
) -> BreakEven:
    """Break-even from the simulator: one step run eagerly vs one replay, each ending in a sync.

    ``copy_in_us`` and ``copy_out_us`` are the replay's own extra kernels in an end-to-end loop
    (new inputs copied into the static buffers, outputs cloned), so both sides cover the same
    scope. The capture cost is the calibrated capture model (``params.capture_us(len(step))``),
    since capture is host work the simulator does not model; SimulatorError if there is none.
    """
    capture = params.capture_us(len(step))
    if capture is None:
        raise SimulatorError(
            _(
                "no capture cost in these parameters: set capture_base_us and "
                "capture_per_kernel_us (the calibrated parameters have them) to get a break-even "
                "point"
            )
        )
    copies = {"copy_in_us": copy_in_us, "copy_out_us": copy_out_us}
    eager_us = int(simulate(eager(step, params)).end_ns.max()) / 1000
    replay_us = int(simulate(graph(step, params, **copies)).end_ns.max()) / 1000
    return BreakEven(capture, eager_us, replay_us, source="simulated")


def model_vs_measured(recording) -> dict:
    """The break-even model against measured cumulative totals (a ``break_even`` recording).

    ``recording`` is a :class:`graphlab.timing.recordings.Recording` (or its ``timings``) holding
    ``timings["cumulative"]``: totals of N eager steps and of capture + N replays, measured.
    Returns, per measured N: the measured totals and the model's ``N * t_e`` and
    ``C + N * t_r`` from the same recording's C, t_e and t_r; plus the model's N* and the
    smallest measured N at which the graph was ahead.
    """
    data = getattr(recording, "timings", recording)
    cumulative = data.get("cumulative") if isinstance(data, Mapping) else None
    if not isinstance(cumulative, Mapping):
        raise SimulatorError(
            _(
                "no measured cumulative totals here: use a break_even recording "
                "(graphlab.recordings() lists them; their names start with break_even_)"
            )
        )
    model = from_timings(data)
    counts = list(cumulative["counts"])
    eager_total, graph_total = model.totals(counts)
    return {
        "counts": counts,
        "measured_eager_total_us": list(cumulative["eager_total_us"]),
        "measured_graph_total_us": list(cumulative["graph_total_us"]),
        "model_eager_total_us": eager_total.tolist(),
        "model_graph_total_us": graph_total.tolist(),
        "n_star": model.n_star,
        "measured_crossing": cumulative.get("crossing"),
    }


def step_from_timeline(timeline, iterations: int = 1) -> Step:
    """A :func:`~graphlab.simulator.programs.model_step` with the kernels of a recorded step.

    ``timeline`` is a profiled eager timeline of ``iterations`` identical steps (a recording's
    holds ``experiment["profile_iterations"]``); the first step's kernels, in start order, give
    the durations and names. Every kernel is put on one stream: streams are not modelled here.
    """
    kernel = timeline.kind == "kernel"
    n_kernels = int(kernel.sum())
    if iterations < 1 or n_kernels == 0 or n_kernels % iterations:
        raise SimulatorError(
            _(
                "{kernels} kernels cannot be {iterations} identical steps: pass the number of "
                "steps the timeline holds"
            ).format(kernels=n_kernels, iterations=iterations)
        )
    per_step = n_kernels // iterations
    durations = timeline.dur_ns[kernel][:per_step] / 1000
    names = [str(n) for n in timeline.name[kernel][:per_step]]
    return model_step(durations.tolist(), names)
