"""What one experiment is, and what a lesson's module adds to ``graphlab record``'s plan.

An :class:`Experiment` is one recording to make. A :class:`Lesson` is what a module of this package
contributes: the experiments of one kind, where they stand in the plan, and how
:func:`~graphlab.timing.experiments.record` times, captures and profiles them. The defaults here
serve every experiment that is one workload compared eagerly and as a graph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..captured import Captured, capture
from ..cumulative import measure_cumulative_totals
from ..profiled import profile_timelines
from ..workloads import Workload

__all__ = [
    "Experiment",
    "Lesson",
    "capture_workload",
    "describe_comparison",
    "loop_iterations",
    "profiled_iterations",
]


@dataclass(frozen=True)
class Experiment:
    """One recording to make: a workload builder and how hard to measure it.

    ``counts`` is None for a plain eager-vs-replay comparison; for a break-even experiment it is
    the iteration counts N at which cumulative totals are read.
    """

    name: str
    kind: str
    build: Callable[[], Workload]
    iterations: int
    repeats: int = 20
    warmup: int = 3
    profile_iterations: int = 2
    counts: tuple[int, ...] | None = None
    cumulative_repeats: int = 3
    quick: bool = False


def loop_iterations(kernels: int) -> int:
    """Calls per timed loop: about 2000 kernels per loop, so every loop lasts milliseconds."""
    return max(2, min(200, 2000 // kernels))


def profiled_iterations(kernels: int) -> int:
    """Iterations kept in a profiled timeline: two, or one for 1000-kernel steps (about 2000
    events per mode), so that recordings stay small."""
    return 1 if kernels >= 1000 else 2


def describe_comparison(
    experiment: Experiment, workload: Workload, settings: dict[str, Any], timings: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A recording's ``experiment`` and ``timings`` for one workload compared eagerly and as a
    graph: its description and the settings. An experiment with ``counts`` also measures the
    cumulative totals of N iterations (``timings["cumulative"]``, see the break-even lesson)."""
    if experiment.counts is None:
        return {**workload.description, **settings}, timings
    totals = measure_cumulative_totals(
        workload.fn,
        *workload.inputs,
        counts=experiment.counts,
        repeats=experiment.cumulative_repeats,
        warmup=experiment.warmup,
    )
    timings["cumulative"] = totals.to_dict()
    return {"kind": "break_even", "workload": workload.description, **settings}, timings


def capture_workload(experiment: Experiment) -> Captured:
    """The experiment's workload, built afresh and captured, ready to profile."""
    workload = experiment.build()
    return capture(workload.fn, *workload.inputs, warmup=experiment.warmup)


@dataclass(frozen=True)
class Lesson:
    """The experiments one module of this package adds to ``graphlab record``.

    ``kind``: the ``Experiment.kind`` of all of them (one kind per lesson). ``position``: where they
    stand in the plan, which runs lessons in ascending position. ``plan(quick)``: the experiments,
    in order (``quick``: the small, fast subset, often none).

    The three steps of :func:`~graphlab.timing.experiments.record`, for experiments of ``kind``:

    - ``describe(experiment, workload, settings, timings)``: after :func:`graphlab.compare` of the
      built workload has given ``timings`` (``settings`` holds warmup, repeats, iterations,
      profile_iterations and quick), the recording's ``experiment`` and ``timings``;
    - ``capture(experiment)``: what to profile, captured before any profiling session;
    - ``profile(captured, iterations)``: the recording's timelines by mode, as Timelines.
    """

    kind: str
    position: int
    plan: Callable[[bool], list[Experiment]]
    describe: Callable[
        [Experiment, Workload, dict[str, Any], dict[str, Any]],
        tuple[dict[str, Any], dict[str, Any]],
    ] = describe_comparison
    capture: Callable[[Experiment], Any] = capture_workload
    profile: Callable[[Any, int], dict[str, Any]] = profile_timelines
