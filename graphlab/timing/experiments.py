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

Settings: ``--quick`` runs a few small experiments with fewer repeats (for tests of the machinery);
its files say ``"quick": true`` in ``experiment`` and are not meant for the bundled folder.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
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
    return chains + [
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


# --- torch.compile(mode="reduce-overhead") against eager and a manual graph (lesson 10) ----------
#
# ``compiled_mlp_l16_w64_b4.json`` has its own schema, ``graphlab.compiled/1``, because it holds
# per-call times of three modes and counts rather than a Comparison and two timelines:
#
#     {"schema": "graphlab.compiled/1", "name": "compiled_mlp_l16_w64_b4",
#      "meta": <machine_meta>, "experiment": <workload description + calls, repeats, warmup>,
#      "timings": {"eager_us", "compiled_us", "manual_graph_us", "first_calls_s"},
#      "first_calls": [<counts of compiled call 1>, <call 2>, <call 3>],
#      "steady": <counts over ``calls`` more compiled calls, after the timed ones>,
#      "overwritten": {"error", "copy_kept"},
#      "variants": {<name>: {"what", "first": <counts>, "then": <counts>}}}
#
# Per-call times are medians over ``repeats`` loops of ``calls`` calls, timed with CUDA events.
# ``compiled_us`` includes what CUDAGraph Trees does on the host per call (input checks, copies
# of non-static inputs); ``manual_graph_us`` is ``graph.replay()`` alone, inputs in place.
# ``first_calls_s`` is the wall time of the first three compiled calls (compile, warm-up, record).
# Counts (``{"captures", "replays", "cudagraph_skips", "log"}``) come from
# :func:`watch_cudagraphs`. Write the file with :func:`record_compiled`.

COMPILED_NAME = "compiled_mlp_l16_w64_b4"
COMPILED_SCHEMA = "graphlab.compiled/1"
# A folder of its own: every JSON file directly in RECORDINGS_DIR must be a graphlab.recording/1.
COMPILED_DIR = RECORDINGS_DIR / "compiled"
# CUDAGraph Trees logs its "skipping cudagraphs due to ..." lines on this artifact logger
# (torch._inductor.cudagraph_utils, artifact "cudagraphs"; TORCH_LOGS=cudagraphs shows them).
CUDAGRAPHS_LOGGER = "torch._inductor.cudagraph_utils.__cudagraphs"
# Batch sizes fed to one compiled MLP: ten distinct sizes, more than CUDAGraph Trees' default
# warning limit (torch._inductor.config.triton.cudagraph_dynamic_shape_warn_limit, 8). Each comes
# twice: the tree warms a new size up on its first call and records it on the next.
NEW_SHAPES = tuple(rows for rows in range(4, 14) for _ in range(2))


@dataclass
class GraphCalls:
    """What happened to CUDA graphs while :func:`watch_cudagraphs` watched.

    ``captures`` and ``replays`` count calls of ``torch.cuda.CUDAGraph.capture_begin`` and
    ``.replay`` made by anyone (CUDAGraph Trees included); ``cudagraph_skips`` is the growth of
    ``torch._dynamo.utils.counters["inductor"]["cudagraph_skips"]``; ``log`` holds the messages
    logged on the cudagraphs artifact logger.
    """

    captures: int = 0
    replays: int = 0
    cudagraph_skips: int = 0
    log: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "captures": self.captures,
            "replays": self.replays,
            "cudagraph_skips": self.cudagraph_skips,
            "log": list(self.log),
        }


class _LogLines(logging.Handler):
    def __init__(self, lines: list[str]):
        super().__init__(logging.DEBUG)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def watch_cudagraphs() -> Iterator[GraphCalls]:
    """Count graph captures, replays and cudagraph skips, and keep the cudagraphs log lines.

    A compile that succeeds says nothing about capture: this is the evidence. Counting wraps the
    methods of ``torch.cuda.CUDAGraph`` (the class CUDAGraph Trees captures with) for the
    duration of the block and puts them back afterwards.
    """
    import torch
    from torch._dynamo.utils import counters

    calls = GraphCalls()
    cls = torch.cuda.CUDAGraph
    replay, capture_begin = cls.replay, cls.capture_begin

    def counted_replay(self):
        calls.replays += 1
        return replay(self)

    def counted_capture_begin(self, *args, **kwargs):
        calls.captures += 1
        return capture_begin(self, *args, **kwargs)

    logger = logging.getLogger(CUDAGRAPHS_LOGGER)
    handler = _LogLines(calls.log)
    level = logger.level
    if not logger.isEnabledFor(logging.WARNING):
        logger.setLevel(logging.WARNING)  # the skip lines are warnings; make sure they reach us
    logger.addHandler(handler)
    skips = counters["inductor"]["cudagraph_skips"]
    cls.replay, cls.capture_begin = counted_replay, counted_capture_begin
    try:
        yield calls
    finally:
        cls.replay, cls.capture_begin = replay, capture_begin
        logger.removeHandler(handler)
        logger.setLevel(level)
        calls.cudagraph_skips = counters["inductor"]["cudagraph_skips"] - skips


def _per_call_us(step: Callable[[], Any], calls: int, repeats: int) -> float:
    """Median over ``repeats`` loops of ``calls`` calls of ``step``, per call, in microseconds."""
    import statistics

    import torch

    results = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            step()
        end.record()
        end.synchronize()  # events can be read only once the GPU has passed them
        results.append(start.elapsed_time(end) * 1000.0 / calls)
    return statistics.median(results)


def _compiled_step(compiled: Callable, *inputs: Any) -> Callable[[], Any]:
    import torch

    def step():
        # Each call is a new iteration: CUDAGraph Trees may then reuse the previous call's
        # output memory. Nothing here keeps an output.
        torch.compiler.cudagraph_mark_step_begin()
        return compiled(*inputs)

    return step


def _observe(fn: Callable, calls: Sequence[tuple], **config: Any) -> dict[str, Any]:
    """Compile ``fn`` with reduce-overhead under Inductor ``config``, call it once per argument
    tuple of ``calls``; the counts of the first call and of all the later ones."""
    import torch

    torch._dynamo.reset()
    compiled = torch.compile(fn, mode="reduce-overhead")
    with torch._inductor.config.patch(config):
        with watch_cudagraphs() as first:
            _compiled_step(compiled, *calls[0])()
        with watch_cudagraphs() as then:
            for args in calls[1:]:
                _compiled_step(compiled, *args)()
        torch.cuda.synchronize()
    return {"first": first.to_dict(), "then": then.to_dict()}


def _variants(fn: Callable, x: Any) -> dict[str, dict[str, Any]]:
    """The MLP made uncapturable on purpose, and fed new shapes; what CUDAGraph Trees did."""
    import torch

    def mutates_input(x):
        x.mul_(0.5)  # writes into the caller's tensor
        return fn(x)

    scale = torch.full((1,), 0.5)  # stays on the CPU

    def reads_cpu_tensor(x):
        return fn(x) * scale.to(x.device)

    def batch(rows):
        return (torch.randn(rows, x.shape[1], device=x.device),)

    same = [(x.clone(),) for _ in range(4)]
    return {
        "mutated_input": {
            "what": "x.mul_(0.5) on the input, then the MLP",
            **_observe(mutates_input, same),
        },
        "cpu_tensor_partitions_off": {
            "what": "the MLP times a CPU tensor, graph_partition=False",
            **_observe(reads_cpu_tensor, same, graph_partition=False),
        },
        "cpu_tensor_partitions_on": {
            "what": "the MLP times a CPU tensor, graph_partition=True",
            **_observe(reads_cpu_tensor, same, graph_partition=True),
        },
        "new_shapes": {
            "what": f"batches {NEW_SHAPES[0]} to {NEW_SHAPES[-1]}, each twice",
            **_observe(fn, [batch(rows) for rows in NEW_SHAPES]),
        },
    }


def measure_compiled(calls: int = 200, repeats: int = 5, warmup: int = 3) -> dict[str, Any]:
    """Eager vs torch.compile(mode="reduce-overhead") vs a manual graph on the small MLP.

    Returns the recording's ``experiment``, ``timings``, ``steady`` and ``variants`` (see the
    block comment above). Raises NeedsGPUError on a machine without CUDA.
    """
    require_gpu("measuring torch.compile's CUDA graphs")
    import time

    import torch

    workload = workloads.mlp(16, 64, 4, device="cuda")
    fn, (x,) = workload.fn, workload.inputs
    for _ in range(warmup):
        fn(x)
    eager_us = _per_call_us(lambda: fn(x), calls, repeats)
    manual = capture(fn, x, warmup=warmup)
    manual_us = _per_call_us(manual.replay, calls, repeats)

    torch._dynamo.reset()
    step = _compiled_step(torch.compile(fn, mode="reduce-overhead"), x)
    first_calls = []
    began = time.perf_counter()
    for _ in range(3):  # compile and warm up, record, first replay
        with watch_cudagraphs() as calls:
            step()
        first_calls.append(calls.to_dict())
    torch.cuda.synchronize()
    first_calls_s = time.perf_counter() - began
    compiled_us = _per_call_us(step, calls, repeats)
    with watch_cudagraphs() as steady:  # counted apart: the counting wrappers cost host time
        for _ in range(calls):
            step()
        torch.cuda.synchronize()
    return {
        "experiment": {
            **workload.description,
            "calls": calls,
            "repeats": repeats,
            "warmup": warmup,
        },
        "timings": {
            "eager_us": eager_us,
            "compiled_us": compiled_us,
            "manual_graph_us": manual_us,
            "first_calls_s": first_calls_s,
        },
        "first_calls": first_calls,
        "steady": steady.to_dict(),
        "overwritten": _overwritten(step),
        "variants": _variants(fn, x),
    }


def _overwritten(step: Callable[[], Any]) -> dict[str, Any]:
    """Keep one compiled call's output, make a second call, then read the first output.

    ``error``: the first line of what reading it raised (None if nothing); ``copy_kept``: whether
    a clone taken before the second call still holds the first call's values.
    """
    import torch

    first = step()
    kept = first.clone()
    second = step()
    try:
        first.sum().item()
        error = None
    except RuntimeError as exc:
        error = str(exc).strip().splitlines()[0]
    torch.cuda.synchronize()
    return {"error": error, "copy_kept": bool(torch.equal(kept, second))}


def record_compiled(
    out_dir: str | os.PathLike | None = None,
    command: str = "graphlab.timing.experiments.record_compiled()",
) -> Path:
    """Measure :func:`measure_compiled` and write ``compiled_mlp_l16_w64_b4.json`` atomically,
    by default into the bundled ``recorded/compiled`` folder."""
    folder = _writable_folder(out_dir if out_dir is not None else COMPILED_DIR)
    data = {"schema": COMPILED_SCHEMA, "name": COMPILED_NAME, "meta": machine_meta(command)}
    data.update(measure_compiled())
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return write_text_atomically(folder / f"{COMPILED_NAME}.json", text + "\n", RecordingError)


def load_compiled(directory: str | os.PathLike | None = None) -> dict[str, Any]:
    """The bundled ``compiled_mlp_l16_w64_b4.json`` recording, checked; RecordingError if it is
    missing or not one."""
    path = Path(directory if directory is not None else COMPILED_DIR) / f"{COMPILED_NAME}.json"
    if not path.is_file():
        raise RecordingError(
            f"no recording {path.name} in {path.parent.name}/ yet; on a GPU, write it with "
            "graphlab.timing.experiments.record_compiled()"
        )
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RecordingError(
            f"no readable recording {path.name} ({exc}); on a GPU, write it with "
            "graphlab.timing.experiments.record_compiled()"
        ) from None
    if not isinstance(data, dict) or data.get("schema") != COMPILED_SCHEMA:
        raise RecordingError(f"{path.name} is not a {COMPILED_SCHEMA} recording; record it again")
    missing = [k for k in ("meta", "experiment", "timings", "steady", "variants") if k not in data]
    if missing:
        raise RecordingError(f"{path.name} lacks {', '.join(missing)}; record it again")
    return data
