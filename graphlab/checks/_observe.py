"""What a checker observes of the mechanism a lesson teaches, beyond the numbers an answer returns.

- :class:`Replays` counts the replays of given graphs while the learner's code runs: an answer that
  computes the right numbers without replaying the graph has not used it. It is a
  :class:`MethodCalls`, which counts the calls of any methods (``capture_begin``, ``reset``...).
- :func:`replay_kernels` replays a graph once and counts the kernels that replay ran: on a GPU from
  the graph's own nodes when it was kept (``CUDAGraph(keep_graph=True)``, torch 2.8+, with the
  ``cuda.bindings`` package), otherwise from a torch.profiler trace of the replay (any torch the
  course supports); on the CPU emulator from the operations its capture recorded.
- :func:`address` and :func:`shares_memory` tell whether a tensor still has the memory the graph
  was captured with, and whether an output the learner keeps is memory a replay writes.
- :func:`warmed_capture` is how checkers capture their own graphs: warm up on graphlab's side
  stream, then capture there, as PyTorch's documentation asks.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Self

import numpy as np
import torch

from graphlab.backend import backend
from graphlab.errors import TraceError
from graphlab.timing.side_stream import capture_on_side_stream
from graphlab.trace.events import GRAPH_LAUNCH_CALLS, call_name
from graphlab.trace.timeline import Timeline

from ._core import live

__all__ = [
    "MethodCalls",
    "Replays",
    "address",
    "first_replay_kernels",
    "replay_kernels",
    "shares_memory",
    "warmed_capture",
]


class MethodCalls:
    """Count the calls of each of ``methods`` of each of ``objects`` while the ``with`` block runs.

    Each method is wrapped for the block's duration, on the object itself, so the learner holds
    the very object the checker made (a ``torch.cuda.CUDAGraph`` or the emulator's, say) and
    calls it as usual; leaving the block lets the class's method show through again.
    """

    def __init__(self, objects: Iterable[Any], methods: Iterable[str]):
        self._objects = list(objects)
        self._methods = tuple(methods)
        self._counts = {(i, name): 0 for i in range(len(self._objects)) for name in self._methods}

    def __enter__(self) -> Self:
        for i, obj in enumerate(self._objects):
            for name in self._methods:
                setattr(obj, name, self._counting((i, name), getattr(obj, name)))
        return self

    def _counting(self, key: tuple[int, str], method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def counted(*args: Any, **kwargs: Any) -> Any:
            self._counts[key] += 1
            return method(*args, **kwargs)

        return counted

    def __exit__(self, *exc: object) -> None:
        for obj in self._objects:
            for name in self._methods:
                vars(obj).pop(name, None)

    def count(self, obj: Any, method: str) -> int:
        """How many times ``obj.method`` was called in the block."""
        index = next(i for i, o in enumerate(self._objects) if o is obj)
        return self._counts[index, method]


class Replays(MethodCalls):
    """Count the calls of ``replay()`` of each of ``graphs`` while the ``with`` block runs."""

    def __init__(self, graphs: Iterable[Any]):
        super().__init__(graphs, ("replay",))

    def of(self, graph: Any) -> int:
        """How many times ``graph`` was replayed in the block."""
        return self.count(graph, "replay")


def address(t: torch.Tensor) -> tuple[int, int]:
    """Where ``t``'s values live: its storage's address and its first element's."""
    return t.untyped_storage().data_ptr(), t.data_ptr()


def shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the storages of ``a`` and ``b`` overlap: a write to one can change the other.

    A view (``static_y[:2]``, ``static_y.view(-1)``) shares its base's storage; ``.clone()`` and
    ``.cpu()`` of a GPU tensor do not.
    """
    if a.device != b.device:
        return False
    sa, sb = a.untyped_storage(), b.untyped_storage()
    start_a, start_b = sa.data_ptr(), sb.data_ptr()
    return start_a < start_b + sb.nbytes() and start_b < start_a + sa.nbytes()


def warmed_capture(
    fn: Callable[[], Any], *, pool: Any = None, warmups: int = 2, keep_graph: bool = False
) -> tuple[Any, Any]:
    """``(graph, fn())`` captured on the live backend, after ``warmups`` runs on the side stream.

    ``keep_graph=True`` keeps the graph's nodes (and leaves it to be instantiated), for
    checkers that list or compare them.

    Warming up creates what ``fn`` initialises lazily (cuBLAS handles, allocator blocks) before
    capture; capturing on the same side stream (graphlab's one per device) lets graphs that share
    a ``pool`` share it well, as ``torch.cuda.graph``'s documentation advises.
    """
    cuda, _ = live()
    with warnings.catch_warnings():
        # The CPU emulator's one-time notes on where it differs from a GPU (streams run serially,
        # pools are not reused) are about the learner's code, not the checker's own capture.
        warnings.filterwarnings("ignore", message="graphlab CPU emulator differs")
        return capture_on_side_stream(cuda, fn, warmups=warmups, pool=pool, keep_graph=keep_graph)


def replay_kernels(graph: Any) -> int | None:
    """Replay ``graph`` once; return how many kernels it ran, or None where that cannot be seen.

    None means only that this machine cannot count them (no profiler events reached the trace),
    never that the graph is wrong.
    """
    if not backend().is_cuda:
        graph.replay()
        # The emulator records one step per operation that does work (views and allocations do
        # none), which is one kernel each on a GPU, except copies, which run as memcpy there.
        steps = getattr(graph, "_steps", None)
        return None if steps is None else len(steps)
    nodes = _kernel_nodes(graph)
    if nodes is not None:
        graph.replay()
        return nodes
    return _profiled_kernels(graph)


def _kernel_nodes(graph: Any) -> int | None:
    """Kernel nodes of a kept graph (``keep_graph=True``, torch 2.8+) via ``cuda.bindings``."""
    try:
        raw = graph.raw_cuda_graph()
    except (AttributeError, RuntimeError):  # torch < 2.8, or a graph created without keep_graph
        return None
    try:
        from cuda.bindings import runtime
    except ImportError:
        return None
    ok = runtime.cudaError_t.cudaSuccess
    error, _, count = runtime.cudaGraphGetNodes(raw, numNodes=0)
    if error != ok:
        return None
    error, nodes, count = runtime.cudaGraphGetNodes(raw, numNodes=count)
    if error != ok:
        return None
    kernel = runtime.cudaGraphNodeType.cudaGraphNodeTypeKernel
    return sum(1 for node in nodes[:count] if runtime.cudaGraphNodeGetType(node)[1] == kernel)


def _profiled_kernels(graph: Any) -> int | None:
    """Kernels of one replay of ``graph``, counted in a torch.profiler trace of that replay.

    The profiler's own warnings are kept out of the learner's notebook.
    """
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            graph.replay()
            torch.cuda.synchronize()
        try:
            timeline = Timeline.from_chrome_trace(prof)
        except TraceError:
            return None
    return first_replay_kernels(timeline)


def first_replay_kernels(timeline: Timeline) -> int | None:
    """Kernels of the first graph launch in ``timeline``; None when it shows no replay's kernels.

    Every kernel of a replay carries the correlation id of its ``cudaGraphLaunch``. No kernel at
    all may mean the profiler delivered no GPU activity in this process; an empty graph is told
    apart by the checkers' own value checks.
    """
    # CUPTI may name the call with a version suffix (cudaGraphLaunch_v10000)
    calls = np.array([call_name(str(name)) in GRAPH_LAUNCH_CALLS for name in timeline.name])
    launches = (timeline.kind == "launch") & calls
    if not launches.any():
        return None
    starts = np.where(launches, timeline.start_ns, np.iinfo(np.int64).max)
    first = timeline.correlation[int(np.argmin(starts))]
    return int(((timeline.kind == "kernel") & (timeline.correlation == first)).sum()) or None
