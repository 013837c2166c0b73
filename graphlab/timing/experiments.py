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

``decoder_full_vs_piecewise`` (``experiment.kind == "decoder"``)
    The toy decoder layer of :mod:`graphlab.timing.decoder` (hidden 256, 4 heads, MLP 1024,
    float32) run every way lesson 11 compares, in buckets of 16, 64, 256, 1024 and 2048 tokens.
    ``timings["modes"]`` is :func:`measure_decoder_modes`'s result: per bucket and mode, the
    start-up cost of its graphs (``captures``: warm-up and capture, µs; the bytes of the graphs'
    memory pool), and per bucket, batch and way of running it, the step time end to end (``steps``:
    median µs per step with [p10, p90], input copy, replay and output clone included, and the
    memory a step allocates beyond what was allocated before it). The two batches of a bucket
    (:func:`decoder_batches`) hold three quarters of its tokens, as one prompt and as short
    prompts. The other ``timings`` are :func:`graphlab.compare` of the full graph's step in the
    256-token bucket on the short prompts (the padded layer eagerly vs its replay), and the
    timelines are of that batch: ``eager`` (the layer on the real rows, attention looping over the
    prompts), ``graph`` (the full graph) and ``piecewise`` (two graphs, attention between them);
    :func:`recorded_decoder_timelines` reads all three.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphlab.errors import GraphlabError, RecordingError
from graphlab.support.atomic import write_text_atomically
from graphlab.support.torch_internals import compile_counters

from . import workloads
from .compare import (
    BREAK_EVEN_COUNTS,
    Captured,
    capture,
    compare,
    host_time_us,
    measure_cumulative_totals,
    profile_timelines,
    profiled_timeline,
    require_gpu,
    spread,
)
from .decoder import DecoderLayer, FullGraph, PiecewiseGraphs, metadata, pool_bytes
from .machine import machine_meta
from .recordings import RECORDINGS_DIR, SCHEMA, check_recording
from .workloads import Workload

__all__ = [
    "Experiment",
    "capture_decoder_steps",
    "decoder_batches",
    "experiments",
    "measure_decoder_modes",
    "measure_experiment",
    "profile_decoder",
    "record",
    "recorded_decoder_timelines",
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
        + _decoder_experiments()
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
    if experiment.kind == DECODER_KIND:
        return _measure_decoder(experiment, workload, settings, timings)
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


def _capture_for(experiment: Experiment) -> Captured | dict[str, Callable[[int], Any]]:
    if experiment.kind == DECODER_KIND:
        return capture_decoder_steps()
    workload = experiment.build()
    return capture(workload.fn, *workload.inputs, warmup=experiment.warmup)


def _profile_and_write(
    experiment: Experiment,
    meta: Mapping[str, str],
    description: dict[str, Any],
    timings: dict[str, Any],
    captured: Captured | dict[str, Callable[[int], Any]],
    folder: Path,
) -> Path:
    timelines = (
        profile_decoder(captured, experiment.profile_iterations)
        if experiment.kind == DECODER_KIND
        else profile_timelines(captured, experiment.profile_iterations)
    )
    data = {
        "schema": SCHEMA,
        "name": experiment.name,
        "meta": dict(meta),
        "experiment": description,
        "timings": timings,
        "timelines": {mode: timeline.to_dict() for mode, timeline in timelines.items()},
    }
    return write_recording(data, folder)


# ------------------------------------------------------------ lesson 11: full vs piecewise graphs

DECODER_NAME = "decoder_full_vs_piecewise"
DECODER_KIND = "decoder"
# Buckets of the decoder experiment, in tokens; the profiled timelines are of PROFILED_BUCKET.
DECODER_BUCKETS = (16, 64, 256, 1024, 2048)
DECODER_PROFILED_BUCKET = 256
# Lengths of the short prompts, repeated in this order until the batch is full.
SHORT_PROMPTS = (5, 11, 7, 13)
# Each way a batch is run, as (mode, attention): the full graph's attention is always masked.
DECODER_STEPS = (
    ("eager", "loop"),
    ("eager", "masked"),
    ("full", "masked"),
    ("piecewise", "loop"),
    ("piecewise", "masked"),
)


def decoder_batches(size: int) -> dict[str, list[int]]:
    """The two batches timed in the bucket of ``size`` tokens, by name, as prompt lengths.

    Both hold ``size * 3 // 4`` tokens, so a quarter of the bucket is padding: "one prompt" has them
    in one prompt, "short prompts" in prompts of 5, 11, 7, 13, 5, ... tokens (the last one cut to
    fit).
    """
    tokens = size * 3 // 4
    short: list[int] = []
    for length in itertools.cycle(SHORT_PROMPTS):
        left = tokens - sum(short)
        if left == 0:
            break
        short.append(min(length, left))
    return {"one prompt": [tokens], "short prompts": short}


def _decoder_experiments() -> list[Experiment]:
    return [
        Experiment(
            name=DECODER_NAME,
            kind=DECODER_KIND,
            build=_decoder_workload,
            iterations=10,
            repeats=10,
        )
    ]


def _decoder_input(tokens: int, hidden: int) -> Any:
    """The hidden states of a batch of ``tokens`` tokens, from a fixed seed, on the GPU."""
    import torch

    generator = torch.Generator(device="cpu").manual_seed(tokens)
    return torch.randn(tokens, hidden, generator=generator).to("cuda")


def _decoder_workload() -> Workload:
    """The full graph's step in the profiled bucket, on the short prompts, for graphlab.compare."""
    import torch

    layer = DecoderLayer(device="cuda")
    size = DECODER_PROFILED_BUCKET
    seq_lens = decoder_batches(size)["short prompts"]
    x = torch.zeros(size, layer.hidden, device="cuda")
    x[: sum(seq_lens)] = _decoder_input(sum(seq_lens), layer.hidden)
    return Workload(
        name=f"decoder_full_t{size}",
        fn=layer.forward_masked,
        inputs=(x, metadata(seq_lens, size).to("cuda")),
        description={
            "kind": DECODER_KIND,
            "hidden": layer.hidden,
            "heads": layer.heads,
            "ffn": layer.up.out_features,
            "dtype": "float32",
            "bucket": size,
            "prompts": len(seq_lens),
            "tokens": sum(seq_lens),
            "op": "decoder layer, masked attention over the padded bucket (the full graph's step)",
        },
    )


def _measure_decoder(
    experiment: Experiment, workload: Workload, settings: dict[str, Any], timings: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    modes = measure_decoder_modes(repeats=experiment.repeats, iterations=experiment.iterations)
    description = {
        **workload.description,
        **settings,
        "buckets": list(DECODER_BUCKETS),
        "short_prompts": list(SHORT_PROMPTS),
        "batches": "3/4 of each bucket's tokens, as one prompt and as short prompts",
    }
    return description, {**timings, "modes": modes}


def measure_decoder_modes(
    buckets: Sequence[int] = DECODER_BUCKETS, repeats: int = 10, iterations: int = 10
) -> dict[str, Any]:
    """Time every way of running the decoder layer in each bucket, on this GPU.

    For each bucket, the full graph and the piecewise graphs are built (warm-up and capture timed
    on the host clock from an idle GPU to the end of the capture) and their pools measured; then,
    for each batch of :func:`decoder_batches`, each way of :data:`DECODER_STEPS` is timed end to
    end: ``repeats`` samples (interleaved across the ways) of ``iterations`` steps, each step
    copying the batch in, replaying and cloning the real rows out (or running the layer eagerly).
    Returns ``{"buckets", "repeats", "iterations", "captures": [...], "steps": [...]}`` as described
    in the module docstring. Raises NeedsGPUError without a GPU.
    """
    require_gpu("graphlab.timing.experiments.measure_decoder_modes")
    layer = DecoderLayer(device="cuda")
    captures: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    for size in buckets:
        runners = {}
        for mode, build in (("full", FullGraph), ("piecewise", PiecewiseGraphs)):
            runner, capture_us = _host_timed(build, layer, size)
            runners[mode] = runner
            captures.append(
                {
                    "bucket": size,
                    "mode": mode,
                    "graphs": runner.graphs,
                    "capture_us": capture_us,
                    "pool_bytes": pool_bytes(runner.pool),
                }
            )
        for batch, seq_lens in decoder_batches(size).items():
            steps += _time_decoder_batch(layer, runners, size, batch, seq_lens, repeats, iterations)
    return {
        "buckets": list(buckets),
        "repeats": repeats,
        "iterations": iterations,
        "captures": captures,
        "steps": steps,
    }


def _host_timed(fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    """``fn(*args)`` and its host-clock µs, from an idle GPU until all its GPU work has finished."""
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter_ns()
    result = fn(*args)
    torch.cuda.synchronize()
    return result, (time.perf_counter_ns() - start) / 1e3


def _decoder_step(
    layer: DecoderLayer,
    runners: Mapping[str, Any],
    x: Any,
    seq_lens: list[int],
    mode: str,
    how: str,
) -> Callable[[int], Any]:
    """One step of running the batch ``x`` (prompts ``seq_lens``) the way (mode, how): eagerly, or
    copied into a runner's first rows, replayed, and its real rows cloned out."""
    if mode == "eager":
        return lambda i: layer(x, seq_lens, how)
    runner = runners[mode]
    rows = x.shape[0]

    def step(i: int) -> Any:
        runner.static_x[:rows].copy_(x)
        if mode == "full":
            runner.replay(seq_lens)
        else:
            runner.replay(seq_lens, how)
        return runner.static_out[:rows].clone()

    return step


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


# The log quotes source files by absolute path; a recording keeps them relative to the project or
# to site-packages, so that it reads the same wherever it was made.
_PROJECT_ROOT = str(Path(__file__).resolve().parents[2]) + os.sep
_SITE_PACKAGES = re.compile(r"[^\s\"']*site-packages/")


class _LogLines(logging.Handler):
    def __init__(self, lines: list[str]):
        super().__init__(logging.DEBUG)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage().replace(_PROJECT_ROOT, "")
        self.lines.append(_SITE_PACKAGES.sub("", message))


@contextmanager
def watch_cudagraphs() -> Iterator[GraphCalls]:
    """Count graph captures, replays and cudagraph skips, and keep the cudagraphs log lines.

    A compile that succeeds says nothing about capture: this is the evidence. Counting wraps the
    methods of ``torch.cuda.CUDAGraph`` (the class CUDAGraph Trees captures with) for the
    duration of the block and puts them back afterwards.
    """
    import torch

    counters = compile_counters()
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
    level, propagate, disabled = logger.level, logger.propagate, logger.disabled
    # A logging.config.dictConfig elsewhere in the process (Jupyter's, say) may have disabled
    # every logger that existed then; the skip lines are warnings: make sure they reach us.
    logger.disabled = False
    if not logger.isEnabledFor(logging.WARNING):
        logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    logger.propagate = False  # kept here, not printed to stderr by torch's own handler too
    skips = counters["inductor"]["cudagraph_skips"]
    cls.replay, cls.capture_begin = counted_replay, counted_capture_begin
    try:
        yield calls
    finally:
        cls.replay, cls.capture_begin = replay, capture_begin
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate, logger.disabled = propagate, disabled
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


def _time_decoder_batch(
    layer: DecoderLayer,
    runners: Mapping[str, Any],
    size: int,
    batch: str,
    seq_lens: list[int],
    repeats: int,
    iterations: int,
) -> list[dict[str, Any]]:
    """The ``steps`` rows of one batch in one bucket: every way of :data:`DECODER_STEPS`."""
    x = _decoder_input(sum(seq_lens), layer.hidden)
    plan = {way: _decoder_step(layer, runners, x, seq_lens, *way) for way in DECODER_STEPS}
    peaks = {way: _peak_bytes(step) for way, step in plan.items()}  # also each step's first run
    samples: dict[tuple[str, str], list[float]] = {way: [] for way in plan}
    for _ in range(repeats):  # interleaved, so that drift affects every way alike
        for way, step in plan.items():
            samples[way].append(host_time_us(step, iterations))
    rows = []
    for (mode, how), times in samples.items():
        median, p10, p90 = spread(times)
        rows.append(
            {
                "bucket": size,
                "batch": batch,
                "tokens": sum(seq_lens),
                "prompts": len(seq_lens),
                "mode": mode,
                "attention": how,
                "us": median,
                "spread_us": [p10, p90],
                "peak_bytes": peaks[(mode, how)],
            }
        )
    return rows


def _peak_bytes(step: Callable[[int], Any]) -> int:
    """Bytes one run of ``step`` allocates at its peak beyond what was allocated before it."""
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    step(0)
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


def capture_decoder_steps() -> dict[str, Callable[[int], Any]]:
    """The steps whose timelines a decoder recording keeps, captured and ready to profile.

    In the profiled bucket, on the short prompts: ``eager`` (attention looping over the prompts),
    ``graph`` (the full graph) and ``piecewise`` (two graphs, the same loop between them).
    """
    require_gpu("graphlab.timing.experiments.capture_decoder_steps")
    layer = DecoderLayer(device="cuda")
    size = DECODER_PROFILED_BUCKET
    seq_lens = decoder_batches(size)["short prompts"]
    runners = {"full": FullGraph(layer, size), "piecewise": PiecewiseGraphs(layer, size)}
    x = _decoder_input(sum(seq_lens), layer.hidden)
    return {
        name: _decoder_step(layer, runners, x, seq_lens, mode, how)
        for name, mode, how in (
            ("eager", "eager", "loop"),
            ("graph", "full", "masked"),
            ("piecewise", "piecewise", "loop"),
        )
    }


def profile_decoder(steps: Mapping[str, Callable[[int], Any]], iterations: int = 2) -> dict:
    """Profiled Timelines of ``iterations`` back-to-back runs of each of ``steps``, by name.

    Never time from these: the profiler slows the host's launches down.
    """
    timelines = {name: profiled_timeline(step, iterations) for name, step in steps.items()}
    silent = [name for name, timeline in timelines.items() if not timeline.is_gpu.any()]
    if silent:
        raise GraphlabError(
            f"the profiler recorded no GPU work for {', '.join(silent)}: CUPTI's activity tracing "
            "did not deliver kernel events in this process. Profile in a fresh process."
        )
    return timelines


def recorded_decoder_timelines(rec: Any) -> dict[str, Any]:
    """The ``eager``, ``graph`` (full) and ``piecewise`` Timelines of a decoder recording, each
    labelled with the recording's provenance."""
    from graphlab.errors import TraceError
    from graphlab.trace.timeline import Timeline

    timelines = {mode: rec.timeline(mode) for mode in ("eager", "graph")}
    try:
        piecewise = Timeline.from_dict(rec.to_dict()["timelines"]["piecewise"])
    except (KeyError, TraceError) as exc:
        raise RecordingError(
            f"recording {rec.name!r} has no readable piecewise timeline ({exc}); re-record it "
            f"with `graphlab record --only {DECODER_NAME}` on a GPU"
        ) from None
    piecewise.meta = {**(piecewise.meta or {}), "label": rec.label, "recording": rec.name}
    return {**timelines, "piecewise": piecewise}


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
        with watch_cudagraphs() as seen:
            step()
        first_calls.append(seen.to_dict())
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
