"""``graphlab record``'s machinery: time, capture and profile each experiment, write its file.

Each experiment writes one recording, ``<name>.json`` (format: :mod:`graphlab.timing.recordings`),
with the machine's provenance in ``meta`` (GPU, driver, torch, CUDA, Python, UTC date, graphlab
version, the command line) and a profiled eager and graph timeline. Timings and timelines come
from separate runs: timings are never taken under the profiler. What each step does for an
experiment is its lesson's (:class:`~graphlab.timing.experiments.experiment.Lesson`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from graphlab.errors import GraphlabError, RecordingError
from graphlab.language import gettext as _
from graphlab.support.atomic import write_text_atomically

from ..captured import capture, require_gpu
from ..compare import compare
from ..machine import machine_meta
from ..recordings import RECORDINGS_DIR, SCHEMA, check_recording
from .experiment import Experiment
from .plan import experiments, lesson_of, select

__all__ = [
    "load_own_schema",
    "measure_experiment",
    "record",
    "record_own_schema",
    "writable_folder",
    "write_recording",
]


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
    return lesson_of(experiment.kind).describe(experiment, workload, settings, timings)


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
            _(
                "recording {name} cannot be stored as JSON ({exc}): every value must be "
                "a finite number, a string, a list or a dict"
            ).format(name=repr(data["name"]), exc=exc)
        ) from None
    folder = writable_folder(directory)
    return write_text_atomically(folder / f"{data['name']}.json", text + "\n", RecordingError)


def writable_folder(directory: str | os.PathLike) -> Path:
    """``directory``, created if needed; RecordingError if it cannot hold new files."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordingError(
            _("cannot create the folder {folder}: {strerror}").format(
                folder=folder, strerror=exc.strerror
            )
        ) from None
    if not os.access(folder, os.W_OK):
        raise RecordingError(
            _("cannot write recordings into {folder}: permission denied").format(folder=folder)
        )
    return folder


def record_own_schema(
    folder: Path, schema: str, name: str, command: str, measured: Mapping[str, Any]
) -> Path:
    """Write a lesson's recording of its own ``schema`` as ``folder/<name>.json``, atomically:
    the schema, the name, the machine's provenance and what was ``measured``."""
    data = {"schema": schema, "name": name, "meta": machine_meta(command), **measured}
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return write_text_atomically(folder / f"{name}.json", text + "\n", RecordingError)


def load_own_schema(path: Path, schema: str, keys: Sequence[str], how: str) -> dict[str, Any]:
    """A lesson's recording of its own ``schema`` at ``path``, checked to hold ``keys``.

    ``how`` says how to write it on a GPU (a function to call); every failure is one
    RecordingError that says so.
    """
    if not path.is_file():
        raise RecordingError(
            _("no recording {path} in {name}/ yet; {how}").format(
                path=path.name, name=path.parent.name, how=how
            )
        )
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RecordingError(
            _("no readable recording {path} ({exc}); {how}").format(
                path=path.name, exc=exc, how=how
            )
        ) from None
    if not isinstance(data, dict) or data.get("schema") != schema:
        raise RecordingError(
            _("{path} is not a {schema} recording; record it again").format(
                path=path.name, schema=schema
            )
        )
    missing = [k for k in keys if k not in data]
    if missing:
        raise RecordingError(
            _("{path} lacks {missing}; record it again").format(
                path=path.name, missing=", ".join(missing)
            )
        )
    return data


def record(
    out_dir: str | os.PathLike | None = None,
    quick: bool = False,
    command: str = "graphlab record",
    on_written: Callable[[Path], None] | None = None,
    only: Sequence[str] = (),
    progress: bool = True,
) -> list[Path]:
    """Run every experiment on this machine's GPU and write one recording per experiment.

    ``out_dir`` defaults to the package's bundled folder
    (:data:`graphlab.timing.recordings.RECORDINGS_DIR`); ``command`` is stored in each file's meta;
    ``on_written(path)`` is called after each file is written; ``only`` names the experiments to
    run (default: all of the plan); ``progress=False`` shows no progress bar (a notebook that
    stores its outputs would keep the bar's text frozen at its start). Returns the written paths.
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
    folder = writable_folder(out_dir if out_dir is not None else RECORDINGS_DIR)
    meta = machine_meta(command)
    _prime_graphs()
    with tqdm(
        total=3 * len(plan), desc="graphlab record", unit="step", disable=not progress
    ) as bar:
        phases = _Phases(bar)
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
            _(
                "{failed} of {total} experiments failed: {details}. The other {written} "
                "recordings were written to {folder}."
            ).format(
                failed=len(phases.failures),
                total=len(plan),
                details=details,
                written=len(written),
                folder=folder,
            )
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


def _capture_for(experiment: Experiment) -> Any:
    """What the profiling phase runs for ``experiment``, captured now, before any profiling."""
    return lesson_of(experiment.kind).capture(experiment)


def _profile_and_write(
    experiment: Experiment,
    meta: Mapping[str, str],
    description: dict[str, Any],
    timings: dict[str, Any],
    captured: Any,
    folder: Path,
) -> Path:
    """Profile what ``experiment`` captured, and write its recording into ``folder``."""
    timelines = lesson_of(experiment.kind).profile(captured, experiment.profile_iterations)
    data = {
        "schema": SCHEMA,
        "name": experiment.name,
        "meta": dict(meta),
        "experiment": description,
        "timings": timings,
        "timelines": {mode: timeline.to_dict() for mode, timeline in timelines.items()},
    }
    return write_recording(data, folder)
