"""Lesson 11's experiment: a toy decoder layer as one full graph, as pieces, and eagerly.

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

``--quick`` records none of it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from graphlab.errors import GraphlabError, RecordingError
from graphlab.language import gettext as _

from ..captured import require_gpu
from ..clocks import host_time_us, spread
from ..decoder import DecoderLayer, FullGraph, PiecewiseGraphs, metadata, pool_bytes
from ..profiled import profiled_timeline
from ..workloads import Workload
from .experiment import Experiment, Lesson

__all__ = [
    "DECODER_BUCKETS",
    "DECODER_KIND",
    "DECODER_NAME",
    "DECODER_PROFILED_BUCKET",
    "DECODER_STEPS",
    "LESSON",
    "SHORT_PROMPTS",
    "capture_decoder_steps",
    "decoder_batches",
    "measure_decoder_modes",
    "profile_decoder",
    "recorded_decoder_timelines",
]

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


def _decoder_experiments(quick: bool) -> list[Experiment]:
    """The decoder experiment (none when ``quick``)."""
    if quick:
        return []
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
    for _repeat in range(repeats):  # interleaved, so that drift affects every way alike
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
            _(
                "the profiler recorded no GPU work for {silent}: CUPTI's activity "
                "tracing did not deliver kernel events in this process. Profile in a "
                "fresh process."
            ).format(silent=", ".join(silent))
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
            _(
                "recording {rec} has no readable piecewise timeline ({exc}); re-record "
                "it with `graphlab record --only {decoder_name}` on a GPU"
            ).format(rec=repr(rec.name), exc=exc, decoder_name=DECODER_NAME)
        ) from None
    piecewise.meta = {**(piecewise.meta or {}), "label": rec.label, "recording": rec.name}
    return {**timelines, "piecewise": piecewise}


LESSON = Lesson(
    kind=DECODER_KIND,
    position=40,
    plan=_decoder_experiments,
    describe=_measure_decoder,
    capture=lambda experiment: capture_decoder_steps(),
    profile=profile_decoder,
)
