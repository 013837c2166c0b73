"""A step captured into a CUDA graph the way the timings need it, and the checks before it.

:func:`capture` warms the step up on a side stream, then captures it on that stream (lazy
initialisation must not happen inside a capture), and returns a :class:`Captured`: the graph,
its static input buffers and outputs, and what the capture cost on the host clock. Every timing
function of :mod:`graphlab.timing` starts here: :func:`require_gpu` says where the recordings are
on a machine without a GPU, :func:`check_count` and :func:`check_inputs` refuse bad arguments in
one sentence before anything runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlab.errors import CaptureError, GraphlabError, NeedsGPUError
from graphlab.language import gettext as _
from graphlab.support.capture_errors import first_cuda_error

from .side_stream import side_stream

if TYPE_CHECKING:
    import torch

__all__ = [
    "FRESH_INPUT_SETS",
    "Captured",
    "capture",
    "capture_graph",
    "check_count",
    "check_inputs",
    "clone_outputs",
    "require_gpu",
    "warm_up",
]

# How many distinct sets of "fresh" inputs the end-to-end loops cycle through: each iteration
# consumes tensors other than the graph's static buffers, as a real loop would.
FRESH_INPUT_SETS = 4


def require_gpu(what: str) -> None:
    """Raise :class:`NeedsGPUError` unless torch sees a CUDA device; ``what`` names the caller."""
    import torch

    if not torch.cuda.is_available():
        raise NeedsGPUError(
            _(
                "{what} measures real GPU time, and torch sees no CUDA device on this "
                "machine. Timings recorded on a real GPU ship with graphlab: list them "
                "with `graphlab recordings` (or graphlab.recordings()) and load one with "
                "graphlab.recording(name)."
            ).format(what=what)
        )


@dataclass(frozen=True, eq=False)  # compared by identity: it holds tensors and a graph
class Captured:
    """A step captured into a CUDA graph, ready to run both ways; made by :func:`capture`.

    ``static`` holds the graph's input buffers (clones of the inputs given to :func:`capture`):
    a replay always reads these addresses. ``outputs`` are the tensors every replay overwrites.
    ``capture_us`` is what the capture cost on the host clock.
    """

    fn: Callable[..., Any]
    static: tuple[torch.Tensor, ...]
    graph: torch.cuda.CUDAGraph
    outputs: Any
    capture_us: float

    def eager(self, i: int = 0) -> Any:
        """Run ``fn`` eagerly on the static buffers (``i``, an iteration index, is ignored)."""
        return self.fn(*self.static)

    def replay(self, i: int = 0) -> None:
        """Replay the graph once (``i`` is ignored)."""
        self.graph.replay()

    def replay_with(self, inputs: Sequence[torch.Tensor]) -> Any:
        """Copy ``inputs`` into the static buffers, replay, and return clones of the outputs."""
        if len(inputs) != len(self.static):
            raise GraphlabError(
                _(
                    "the graph was captured with {captured} inputs, not {given}: pass one new "
                    "tensor per captured input, in the same order"
                ).format(captured=len(self.static), given=len(inputs))
            )
        for buffer, new in zip(self.static, inputs, strict=True):
            buffer.copy_(new)
        self.graph.replay()
        return clone_outputs(self.outputs)


def capture(fn: Callable[..., Any], *inputs: torch.Tensor, warmup: int = 3) -> Captured:
    """Warm ``fn`` up on a side stream, then capture ``fn(*static)`` on that stream.

    ``inputs`` are CUDA tensors; the graph gets clones of them as its static buffers.
    Raises NeedsGPUError without a GPU and CaptureError when ``fn`` cannot be captured.
    """
    check_count("warmup", warmup)
    require_gpu("graphlab.timing.captured.capture")
    import torch

    check_inputs(inputs)
    static = tuple(x.clone() for x in inputs)
    stream = side_stream(torch.cuda)  # one stream, one cuBLAS workspace, however many captures
    warm_up(fn, static, stream, warmup)
    graph, outputs, capture_us = capture_graph(fn, static, stream)
    return Captured(fn, static, graph, outputs, capture_us)


def check_count(what: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GraphlabError(
            _("{what} must be a whole number of at least 1, not {value}").format(
                what=what, value=repr(value)
            )
        )


def check_inputs(inputs: Sequence[Any]) -> None:
    import torch

    for position, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise GraphlabError(
                _(
                    "input {position} is a {type}, not a tensor: pass tensors as inputs and "
                    "close over other values in fn (a graph freezes them at capture anyway)"
                ).format(position=position, type=type(x).__name__)
            )
        if x.device.type != "cuda":
            raise GraphlabError(
                _(
                    "input {position} is on {device}, not on the GPU: move it with x.cuda() "
                    "(a CUDA graph can only read GPU memory)"
                ).format(position=position, device=x.device)
            )


def clone_outputs(out: Any) -> Any:
    """Clone every tensor in ``out`` (a tensor, or tuples/lists/dicts of them)."""
    import torch

    if isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, (tuple, list)):
        return type(out)(clone_outputs(o) for o in out)
    if isinstance(out, dict):
        return {key: clone_outputs(value) for key, value in out.items()}
    return out


def warm_up(fn: Callable[..., Any], inputs: tuple, stream: torch.cuda.Stream, times: int) -> None:
    """Run ``fn`` ``times`` times on ``stream``, the stream that will capture it.

    torch.cuda.graph requires warm-up iterations on a side stream before capture: lazy
    initialisation (cuBLAS handles and workspaces, allocator blocks, autotuning) must not
    happen inside the capture. Warming up on the capture stream itself also covers per-stream
    state such as cuBLAS workspaces.
    """
    import torch

    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(times):
            fn(*inputs)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()


def capture_graph(
    fn: Callable[..., Any], static: tuple, stream: torch.cuda.Stream
) -> tuple[torch.cuda.CUDAGraph, Any, float]:
    """Capture ``fn(*static)``; return the graph, its output tensors and the capture time in µs.

    The host clock runs from an idle GPU to the end of ``torch.cuda.graph`` (which empties the
    allocator cache, captures and instantiates) plus a synchronize: what a user's loop pays.
    """
    import torch

    graph = torch.cuda.CUDAGraph()
    caller_stream = torch.cuda.current_stream()
    torch.cuda.synchronize()
    start = time.perf_counter_ns()
    try:
        with torch.cuda.graph(graph, stream=stream):
            out = fn(*static)
    except RuntimeError as exc:
        # When ending the capture fails, torch.cuda.graph leaves the capture stream current;
        # put the caller's stream back so that later work does not silently run on ours.
        torch.cuda.set_stream(caller_stream)
        raise CaptureError(
            _(
                "fn could not be captured into a CUDA graph: {exc}. Remove host syncs "
                "(.item(), print of a GPU value, .cpu()), CPU tensors and data-dependent "
                "shapes from fn; graphlab.explain(error) says more."
            ).format(exc=exc),
            cuda_error=first_cuda_error(exc),
        ) from exc
    torch.cuda.synchronize()
    return graph, out, (time.perf_counter_ns() - start) / 1e3
