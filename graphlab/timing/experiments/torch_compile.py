"""Lesson 10's recording: torch.compile(mode="reduce-overhead") against eager and a manual graph.

``compiled_mlp_l16_w64_b4.json`` is written by :func:`record_compiled`, not by ``graphlab
record``'s plan, and has its own schema, ``graphlab.compiled/1``, because it holds per-call times
of three modes and counts rather than a Comparison and two timelines::

    {"schema": "graphlab.compiled/1", "name": "compiled_mlp_l16_w64_b4",
     "meta": <machine_meta>, "experiment": <workload description + calls, repeats, warmup>,
     "timings": {"eager_us", "compiled_us", "manual_graph_us", "first_calls_s"},
     "first_calls": [<counts of compiled call 1>, <call 2>, <call 3>],
     "steady": <counts over ``calls`` more compiled calls, after the timed ones>,
     "kept_outputs": {"calls": [{"call", "captures", "replays", "error", "right"}, ...],
                      "copies_right"},
     "variants": {<name>: {"what", "first": <counts>, "then": <counts>}}}

Per-call times are medians over ``repeats`` loops of ``calls`` calls, timed with CUDA events.
``compiled_us`` includes what CUDAGraph Trees does on the host per call (input checks, copies
of non-static inputs); ``manual_graph_us`` is ``graph.replay()`` alone, inputs in place.
``first_calls_s`` is the wall time of the first three compiled calls (compile, warm-up, record).
Counts (``{"captures", "replays", "cudagraph_skips", "log"}``) come from
:func:`watch_cudagraphs`. ``kept_outputs`` is :func:`keep_every_output`'s experiment (recordings
made before it existed lack the key).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphlab.support.torch_internals import compile_counters

from .. import workloads
from ..captured import capture, require_gpu
from ..recordings import RECORDINGS_DIR
from .recorder import load_own_schema, record_own_schema, writable_folder

__all__ = [
    "COMPILED_DIR",
    "COMPILED_NAME",
    "COMPILED_SCHEMA",
    "CUDAGRAPHS_LOGGER",
    "KEPT_CALLS",
    "NEW_SHAPES",
    "GraphCalls",
    "keep_every_output",
    "kept_output_row",
    "load_compiled",
    "measure_compiled",
    "record_compiled",
    "watch_cudagraphs",
]

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
# Calls of keep_every_output: one warm-up, one recording, then replays; the last call's output is
# the only one no later call wrote over, so six leaves three replays to read back.
KEPT_CALLS = 6


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
# to site-packages, so that it reads the same wherever it was made. The project is the folder
# that holds graphlab/, three above this file's folder (graphlab/timing/experiments/).
_PROJECT_ROOT = str(Path(__file__).resolve().parents[3]) + os.sep
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
    module docstring). Raises NeedsGPUError on a machine without CUDA.
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
        "kept_outputs": keep_every_output(fn, x),
        "variants": _variants(fn, x),
    }


def keep_every_output(fn: Callable, x: Any, calls: int = KEPT_CALLS) -> dict[str, Any]:
    """Compile ``fn`` afresh, call it ``calls`` times on different inputs, keeping every output
    (and a clone taken right after each call), then read every kept output.

    Each call begins a new iteration (``torch.compiler.cudagraph_mark_step_begin()``), which
    allows CUDAGraph Trees to reuse the previous call's output memory. Returns ``calls``: per
    call, what :func:`watch_cudagraphs` counted, ``error`` (the first line of what reading the kept
    output raised, None if nothing) and ``right`` (whether it still held that call's values; None
    when reading raised); and ``copies_right``, whether every clone kept its call's values.
    """
    import torch

    torch._dynamo.reset()  # a new tree: the first call warms up, the second records
    compiled = torch.compile(fn, mode="reduce-overhead")
    rows, kept, copies = [], [], []
    for call in range(1, calls + 1):
        with watch_cudagraphs() as seen:
            torch.compiler.cudagraph_mark_step_begin()
            out = compiled(x * call)  # each call's input, and so its output, differs
        kept.append(out)
        copies.append(out.clone())
        rows.append({"call": call, "captures": seen.captures, "replays": seen.replays})
    torch.cuda.synchronize()
    for row, out, copy in zip(rows, kept, copies, strict=True):
        try:
            row["right"], row["error"] = bool(torch.equal(out, copy)), None
        except RuntimeError as exc:  # CUDAGraph Trees freed this output's memory
            row["right"], row["error"] = None, str(exc).strip().splitlines()[0]
    truth = [fn(x * call) for call in range(1, calls + 1)]  # eager, for the clones
    copies_right = all(
        torch.allclose(copy, want, rtol=1e-4, atol=1e-5)
        for copy, want in zip(copies, truth, strict=True)
    )
    return {"calls": rows, "copies_right": copies_right}


def kept_output_row(row: dict[str, Any]) -> tuple[str, str]:
    """What one row of :func:`keep_every_output` says: the call's stage (from its counts) and what
    reading its kept output gave.

    A call that ran no graph was the warm-up; one that captured and replayed was the recording;
    one that only replayed, a replay.
    """
    if row["replays"] == 0:
        stage = "warm-up"
    elif row["captures"]:
        stage = "recording"
    else:
        stage = "replay"
    if row["error"] is not None:
        return stage, "raised: " + row["error"].split(". ")[0]  # its first sentence
    return stage, "right values" if row["right"] else "WRONG values, no error"


def record_compiled(
    out_dir: str | os.PathLike | None = None,
    command: str = "graphlab.timing.experiments.record_compiled()",
) -> Path:
    """Measure :func:`measure_compiled` and write ``compiled_mlp_l16_w64_b4.json`` atomically,
    by default into the bundled ``recorded/compiled`` folder."""
    folder = writable_folder(out_dir if out_dir is not None else COMPILED_DIR)
    return record_own_schema(folder, COMPILED_SCHEMA, COMPILED_NAME, command, measure_compiled())


def load_compiled(directory: str | os.PathLike | None = None) -> dict[str, Any]:
    """The bundled ``compiled_mlp_l16_w64_b4.json`` recording, checked; RecordingError if it is
    missing or not one."""
    path = Path(directory if directory is not None else COMPILED_DIR) / f"{COMPILED_NAME}.json"
    keys = ("meta", "experiment", "timings", "steady", "variants")
    how = "on a GPU, write it with graphlab.timing.experiments.record_compiled()"
    return load_own_schema(path, COMPILED_SCHEMA, keys, how)
