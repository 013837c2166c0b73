"""The timing experiments that ``graphlab record`` runs on a GPU, and the files it writes.

Each experiment writes one recording, ``<name>.json`` (format: :mod:`graphlab.timing.recordings`),
with the machine's provenance in ``meta`` (GPU, driver, torch, CUDA, Python, UTC date, graphlab
version, the command line) and a profiled eager and graph timeline. Timings and timelines come
from separate runs: timings are never taken under the profiler. Profiled timelines keep two
iterations (one for 1000-kernel steps, to keep files small).

Experiments
-----------
``chain_<kernels>_k<numel>`` (``experiment.kind == "chain"``)
    :func:`graphlab.timing.workloads.chain`: 10, 100 and 1000 elementwise kernels on 4 Ki, 256 Ki
    and 16 Mi float32 elements. The smallest tensors make every kernel launch-bound (about a
    microsecond of GPU work per launch); 16 Mi floats (64 MiB read and 64 MiB written per kernel)
    keep the GPU busy for longer than a launch takes, so there the graph has little to save.
    ``timings`` is :meth:`graphlab.timing.results.Comparison.to_dict`. ``experiment`` holds the
    workload description plus ``warmup``, ``repeats``, ``iterations`` and ``profile_iterations``.

``break_even_<workload>`` (``experiment.kind == "break_even"``)
    A few workloads of different kernel counts and sizes (chains, and a small MLP). ``timings``
    holds the :class:`~graphlab.timing.results.Comparison` (capture C, end-to-end t_e and t_r, and
    the model's N* = C / (t_e − t_r) as ``break_even``) plus ``timings["cumulative"]``, the
    measured totals from :func:`graphlab.timing.compare.measure_cumulative_totals`: ``counts`` (N),
    ``eager_total_us`` (N eager iterations), ``graph_total_us`` (capture + N replays with input
    copies and output clones), ``repeats`` (medians over that many runs) and ``crossing`` (the
    smallest measured N whose graph total is no longer than the eager one, or null).
    ``experiment.workload`` is the workload's description. Lesson 06 and the simulator compare the
    model with the crossing.

``fork_join_<2streams|1stream>_k<steps>_n<n>`` (``experiment.kind == "fork_join"``)
    :func:`graphlab.timing.workloads.fork_join`: two independent branches of ``steps`` ×
    (``n``×``n`` float32 matmul, tanh) joined by an add, for n = 1024 and 256. ``2streams`` runs
    the second branch on a second stream forked from the caller's and joined back into it, so
    that the graph holds two parallel branches; ``1stream`` runs the same kernels one after the
    other on one stream. Their graph timelines show whether a replay keeps the branches' overlap
    (lesson 09). ``timings`` and ``experiment`` as for the chains.

Settings: ``--quick`` runs a few small experiments with fewer repeats (for tests of the machinery);
its files say ``"quick": true`` in ``experiment`` and are not meant for the bundled folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphlab.errors import GraphlabError, RecordingError
from graphlab.support.atomic import write_text_atomically

from . import workloads
from .compare import (
    BREAK_EVEN_COUNTS,
    Captured,
    capture,
    compare,
    measure_cumulative_totals,
    profile_timelines,
    require_gpu,
)
from .machine import machine_meta
from .recordings import RECORDINGS_DIR, SCHEMA, check_recording
from .workloads import Workload

__all__ = [
    "Experiment",
    "experiments",
    "measure_experiment",
    "record",
    "select",
    "write_recording",
]

CHAIN_KERNELS = (10, 100, 1000)
CHAIN_SIZES = (4096, 262_144, 16_777_216)
# (steps per branch, n) of the fork/join experiments, each recorded on two streams and on one.
FORK_JOIN = ((4, 1024), (4, 256))


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


def _iterations(kernels: int) -> int:
    """Calls per timed loop: about 2000 kernels per loop, so every loop lasts milliseconds."""
    return max(2, min(200, 2000 // kernels))


def _profile_iterations(kernels: int) -> int:
    """Iterations kept in a profiled timeline: two, or one for 1000-kernel steps (about 2000
    events per mode), so that recordings stay small."""
    return 1 if kernels >= 1000 else 2


def experiments(quick: bool = False) -> list[Experiment]:
    """The experiments ``graphlab record`` runs, in order (``quick``: a small, fast subset)."""
    if quick:
        return [
            Experiment(
                name=f"chain_{kernels}_k4096",
                kind="chain",
                build=lambda kernels=kernels: workloads.chain(kernels, 4096, device="cuda"),
                iterations=_iterations(kernels),
                repeats=3,
                quick=True,
            )
            for kernels in (10, 100)
        ] + [
            Experiment(
                name="break_even_chain_10_k4096",
                kind="break_even",
                build=lambda: workloads.chain(10, 4096, device="cuda"),
                iterations=_iterations(10),
                repeats=3,
                counts=(1, 2, 5, 10, 20),
                cumulative_repeats=1,
                quick=True,
            )
        ]

    chains = [
        Experiment(
            name=f"chain_{kernels}_k{numel}",
            kind="chain",
            build=lambda kernels=kernels, numel=numel: workloads.chain(
                kernels, numel, device="cuda"
            ),
            iterations=_iterations(kernels),
            profile_iterations=_profile_iterations(kernels),
        )
        for kernels in CHAIN_KERNELS
        for numel in CHAIN_SIZES
    ]
    # Break-even workloads: launch-bound chains short and long, a GPU-bound chain where the graph
    # saves almost nothing per iteration, and a small MLP. The 1000-kernel chain stops at 200
    # iterations: its break-even lies at a few iterations and each eager iteration costs ms.
    break_even = [
        ("chain_10_k4096", lambda: workloads.chain(10, 4096, device="cuda"), 10, BREAK_EVEN_COUNTS),
        (
            "chain_100_k262144",
            lambda: workloads.chain(100, 262_144, device="cuda"),
            100,
            BREAK_EVEN_COUNTS,
        ),
        (
            "chain_1000_k4096",
            lambda: workloads.chain(1000, 4096, device="cuda"),
            1000,
            BREAK_EVEN_COUNTS[:8],
        ),
        (
            "chain_20_k16777216",
            lambda: workloads.chain(20, 16_777_216, device="cuda"),
            20,
            BREAK_EVEN_COUNTS,
        ),
        ("mlp_l16_w64_b4", lambda: workloads.mlp(16, 64, 4, device="cuda"), 32, BREAK_EVEN_COUNTS),
    ]
    fork_join = [
        Experiment(
            name=f"fork_join_{'2streams' if streams == 2 else '1stream'}_k{steps}_n{n}",
            kind="fork_join",
            build=lambda steps=steps, n=n, streams=streams: workloads.fork_join(
                steps, n, streams, device="cuda"
            ),
            iterations=_iterations(4 * steps + 1),
        )
        for steps, n in FORK_JOIN
        for streams in (2, 1)
    ]
    return (
        chains
        + fork_join
        + [
            Experiment(
                name=f"break_even_{name}",
                kind="break_even",
                build=build,
                iterations=_iterations(kernels),
                profile_iterations=_profile_iterations(kernels),
                counts=counts,
            )
            for name, build, kernels, counts in break_even
        ]
    )


def select(plan: list[Experiment], names: Sequence[str]) -> list[Experiment]:
    """The experiments of ``plan`` named in ``names`` (all of them when ``names`` is empty)."""
    known = [experiment.name for experiment in plan]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise GraphlabError(
            f"no experiment named {', '.join(unknown)}; choose from {', '.join(known)}"
        )
    return [experiment for experiment in plan if not names or experiment.name in names]


def measure_experiment(experiment: Experiment) -> tuple[dict[str, Any], dict[str, Any]]:
    """Time one experiment (no profiler involved); return its ``experiment`` and ``timings``."""
    workload = experiment.build()
    comparison = compare(
        workload.fn,
        *workload.inputs,
        warmup=experiment.warmup,
        repeats=experiment.repeats,
        iterations=experiment.iterations,
    )
    timings = comparison.to_dict()
    settings = {
        "warmup": experiment.warmup,
        "repeats": experiment.repeats,
        "iterations": experiment.iterations,
        "profile_iterations": experiment.profile_iterations,
        "quick": experiment.quick,
    }
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


def write_recording(data: Mapping[str, Any], directory: str | os.PathLike) -> Path:
    """Check ``data`` and write it to ``directory/<name>.json`` atomically (temp file + rename).

    A reader never sees a half-written file, and a failed write leaves the old file in place.
    Raises RecordingError for data that is not a valid recording or cannot be written.
    """
    check_recording(data, where=f"recording {data.get('name')!r}")
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RecordingError(
            f"recording {data['name']!r} cannot be stored as JSON ({exc}): every value must be a "
            "finite number, a string, a list or a dict"
        ) from None
    folder = _writable_folder(directory)
    return write_text_atomically(folder / f"{data['name']}.json", text + "\n", RecordingError)


def _writable_folder(directory: str | os.PathLike) -> Path:
    """``directory``, created if needed; RecordingError if it cannot hold new files."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordingError(f"cannot create the folder {folder}: {exc.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise RecordingError(f"cannot write recordings into {folder}: permission denied")
    return folder


def record(
    out_dir: str | os.PathLike | None = None,
    quick: bool = False,
    command: str = "graphlab record",
    on_written: Callable[[Path], None] | None = None,
    only: Sequence[str] = (),
) -> list[Path]:
    """Run every experiment on this machine's GPU and write one recording per experiment.

    ``out_dir`` defaults to the package's bundled folder
    (:data:`graphlab.timing.recordings.RECORDINGS_DIR`); ``command`` is stored in each file's meta;
    ``on_written(path)`` is called after each file is written; ``only`` names the experiments to
    run (default: all of the plan). Returns the written paths.
    Raises NeedsGPUError on a machine without CUDA.

    Three phases, in this order on purpose:

    1. time every experiment, in a process that has never run the profiler (the profiler slows
       launches down, and CUPTI may stay attached after a session);
    2. capture one graph per experiment, still before any profiling session: a profiling session
       before a capture has been reported to leave the kernels of later replays untraced;
    3. profile each experiment's eager run and replay, then write its recording.

    Before phase 1, one tiny graph is captured untimed (:func:`_prime_graphs`).

    An experiment that fails is reported and skipped, so that it does not cost the others their
    results; a GraphlabError naming the failed ones is raised after the others are written.
    """
    plan = select(experiments(quick), only)
    require_gpu("graphlab record")
    from tqdm.auto import tqdm

    # Check the folder before spending minutes of GPU time on results that could not be saved.
    folder = _writable_folder(out_dir if out_dir is not None else RECORDINGS_DIR)
    meta = machine_meta(command)
    _prime_graphs()
    with tqdm(total=3 * len(plan), desc="graphlab record", unit="step") as progress:
        phases = _Phases(progress)
        measured = phases.run(plan, "timing", measure_experiment)
        captured = phases.run(plan, "capturing", _capture_for, among=measured)
        written = phases.run(
            plan,
            "profiling",
            lambda e: _profile_and_write(e, meta, *measured[e.name], captured[e.name], folder),
            among=captured,
            then=on_written,
        )

    if phases.failures:
        details = "; ".join(f"{name} ({why})" for name, why in phases.failures.items())
        raise GraphlabError(
            f"{len(phases.failures)} of {len(plan)} experiments failed: {details}. The other "
            f"{len(written)} recordings were written to {folder}."
        )
    return list(written.values())


class _Phases:
    """Runs one phase of :func:`record` over the plan, advancing ``progress`` once per experiment.

    A step that raises is reported and remembered in ``failures`` (experiment name -> what went
    wrong) instead of raised: a broken experiment must not cost the others their results.
    """

    def __init__(self, progress: Any):
        self.progress = progress
        self.failures: dict[str, str] = {}

    def run(
        self,
        plan: Sequence[Experiment],
        doing: str,
        action: Callable[[Experiment], Any],
        among: Mapping[str, Any] | None = None,
        then: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        """``action(experiment)`` for each experiment of ``plan``; the results, by name.

        ``among``: only the experiments named there (the previous phase's results); the others
        just advance the progress bar. ``then(result)`` is called after each success.
        """
        results: dict[str, Any] = {}
        for experiment in plan:
            if among is not None and experiment.name not in among:
                self.progress.update()
                continue
            result = self._attempt(experiment, doing, action)
            if result is not None:
                results[experiment.name] = result
                if then is not None:
                    then(result)
        return results

    def _attempt(self, experiment: Experiment, doing: str, action: Callable) -> Any:
        self.progress.set_postfix_str(f"{doing} {experiment.name}")
        try:
            return action(experiment)
        except Exception as exc:  # a broken experiment must not lose the others' results
            self.failures[experiment.name] = f"{doing}: {type(exc).__name__}: {exc}"
            self.progress.write(f"graphlab record: {experiment.name} failed while {doing}: {exc}")
            return None
        finally:
            self.progress.update()


def _prime_graphs() -> None:
    """Capture and replay one tiny graph, untimed, before any experiment.

    A process's first capture pays a one-time set-up that belongs to no workload: in the first
    H200 run, chain_10_k4096 (the first experiment) measured capture_us 7142.4 while the same
    workload measured 1387.6 later in the same run (break_even_chain_10_k4096).
    """
    import torch

    primer = capture(lambda x: x + 1.0, torch.zeros(16, device="cuda"), warmup=1)
    primer.replay()
    torch.cuda.synchronize()


def _capture_for(experiment: Experiment) -> Captured:
    workload = experiment.build()
    return capture(workload.fn, *workload.inputs, warmup=experiment.warmup)


def _profile_and_write(
    experiment: Experiment,
    meta: Mapping[str, str],
    description: dict[str, Any],
    timings: dict[str, Any],
    captured: Captured,
    folder: Path,
) -> Path:
    timelines = profile_timelines(captured, experiment.profile_iterations)
    data = {
        "schema": SCHEMA,
        "name": experiment.name,
        "meta": dict(meta),
        "experiment": description,
        "timings": timings,
        "timelines": {mode: timeline.to_dict() for mode, timeline in timelines.items()},
    }
    return write_recording(data, folder)
