"""``CUDAGraph`` and the ``graph`` context manager of the emulator, named as in ``torch.cuda``.

The layering follows torch: ``CUDAGraph.capture_begin/capture_end`` are the primitives, and
``graph(g)`` wraps them the way ``torch.cuda.graph`` does: synchronize, switch to a side stream
(graphs cannot be captured on the default stream), capture, and on the way out end the capture and
switch back. As in torch, if ending the capture fails the stream is not switched back.

A replay uses the memory the capture used, not the program's tensor objects, and checks first that
the program still holds that memory (see :mod:`graphlab.emulator.storages`).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, NoReturn

import torch

from graphlab.errors import CaptureError
from graphlab.language import gettext as _

from . import state, streams
from .capture import Capture
from .differences import warn_once
from .pools import Pool, get_pool, new_pool
from .storages import (
    CapturedInputs,
    FreedInputWarning,
    freed_input_error,
    warn_at_caller,
    warn_freed,
)
from .streams import Stream, default_stream, synchronize

__all__ = ["CUDAGraph", "graph", "is_current_stream_capturing"]

_MODES = ("global", "thread_local", "relaxed")
_NO_HANDLES = (
    "The CPU emulator has no cudaGraph_t or cudaGraphExec_t to hand out: list and change a "
    "graph with graphlab.editing (graph_nodes, update_graph, set_kernel_node), which work on "
    "the emulator and on a GPU."
)
_SOURCE_RESET = (
    "This graph was updated from a graph that has since been reset: its replay reads and writes "
    "memory that graph's pool no longer holds. On a GPU that memory may already belong to other "
    "tensors; keep the source graph alive while the updated graph replays."
)
# torch 2.13 added check_input_liveness; the emulator takes it where the installed torch does.
_HAS_LIVENESS_CHECK = "check_input_liveness" in inspect.signature(torch.cuda.graph).parameters


def _liveness_flag(value: object, where: str) -> bool:
    if value and not _HAS_LIVENESS_CHECK:
        raise TypeError(
            _(
                "{where} got an unexpected keyword argument 'check_input_liveness': torch "
                "{version} has no such check (torch 2.13 added it)."
            ).format(where=where, version=torch.__version__)
        )
    return bool(value)


def is_current_stream_capturing() -> bool:
    """True while the current stream takes part in a capture."""
    return state.capture is not None and state.current in state.capture.streams


class CUDAGraph:
    """A captured graph: the recorded operations, replayed on the very same memory.

    The graph holds every storage allocated during its capture (its pool) until :meth:`reset`.
    """

    def __init__(self, keep_graph: bool = False):
        self._keep_graph = bool(keep_graph)  # keep the recording for graphlab.editing
        self._instantiated = False  # whether the "executable graph" exists (see instantiate)
        self._updated_from: CUDAGraph | None = None  # the graph an update pointed this one at
        self._steps: list[tuple[Any, ...]] | None = None  # the recorded (callable, args, kwargs)
        self._kernels: tuple[str, ...] = ()  # each step's aten op, as a GPU graph's kernel nodes
        # storages allocated during capture: the graph's share of its pool
        self._held: tuple[torch.UntypedStorage, ...] = ()
        self._inputs: CapturedInputs | None = None  # the memory it uses that it did not allocate
        self._check_liveness = False
        self._pool: Pool | None = None
        self._capture: Capture | None = None

    def capture_begin(
        self,
        pool: Sequence[int] | None = None,
        capture_error_mode: str = "global",
        check_input_liveness: bool = False,
    ) -> None:
        """Begin capturing the work submitted to the current stream.

        ``check_input_liveness=True`` (where torch has it) makes a replay raise, instead of warn,
        when the program no longer holds memory the graph reads.
        """
        check = _liveness_flag(check_input_liveness, "capture_begin()")
        if state.capture is not None:
            raise CaptureError(
                "Another capture is under way: end it (capture_end, or leave its `with "
                "cuda.graph(...)` block) before beginning a new one."
            )
        if self._steps is not None:
            raise CaptureError(
                "This CUDAGraph instance already owns a captured graph. To capture a new graph, "
                "create a new instance or call reset() first."
            )
        if state.current == default_stream():
            raise CaptureError(
                "CUDA graphs must be captured on a non-default stream. (However, after capture, "
                "it's ok to replay them on the default stream.) Use `with cuda.graph(g):`, which "
                "switches to a side stream, or enter `with cuda.stream(cuda.Stream()):` first."
            )
        if capture_error_mode not in _MODES:
            raise CaptureError(
                f"capture_error_mode={capture_error_mode!r} is not a mode: use one of {_MODES}."
            )
        if capture_error_mode != "global":
            warn_once("capture_mode")
        if pool is not None:
            warn_once("shared_pool_reuse")
        self._pool = get_pool(pool) if pool is not None else new_pool()
        self._check_liveness = check
        self._capture = Capture(state.current, self._pool)
        self._capture.start()

    def capture_end(self) -> None:
        """End the capture; fail as CUDA does if it was invalidated or left work unjoined."""
        cap = self._capture
        if cap is None:
            raise CaptureError("capture_end() was called without a capture_begin() before it.")
        if state.current != cap.origin:
            raise CaptureError("Capture must end on the same stream it began on.")
        self._capture = None
        cap.finish()
        if cap.failure is not None:
            raise cap.invalidated_error()
        unjoined = cap.unjoined()
        if unjoined:
            raise cap.unjoined_error(unjoined)
        self._steps = cap.steps
        self._kernels = tuple(cap.kernels)
        # As in torch: capture_end() instantiates at once unless the graph is kept.
        self._instantiated = not self._keep_graph
        self._held = tuple(t.untyped_storage() for t in cap.new_storages.values())
        self._inputs = CapturedInputs(cap.binder, cap.constants)

    def instantiate(self) -> None:
        """Build the executable graph of a kept graph; the emulator replays its recording as is."""
        if self._steps is None:
            raise CaptureError("instantiate() needs a captured graph: capture it first.")
        self._instantiated = True

    def raw_cuda_graph(self) -> NoReturn:
        """Refuse as torch does; past that, say that the emulator has no CUDA handles."""
        if not self._keep_graph:
            raise CaptureError(
                "You cannot access the raw cudaGraph_t instance unless CUDAGraph was "
                "initialized with keep_graph=true"
            )
        if self._steps is None:
            raise CaptureError(
                "You cannot access the raw cudaGraph_t instance until capture_end() has been called"
            )
        raise CaptureError(_NO_HANDLES)

    def raw_cuda_graph_exec(self) -> NoReturn:
        """Refuse as torch does; past that, say that the emulator has no CUDA handles."""
        if self._steps is None or not self._instantiated:
            raise CaptureError(
                "You cannot access the raw cudaGraphExec_t instance until instantiate() has "
                "been called"
            )
        raise CaptureError(_NO_HANDLES)

    def replay(self) -> None:
        """Re-run every recorded operation, in order, on the captured memory."""
        if self._steps is None:
            raise CaptureError(
                "Called CUDAGraph.replay() without a preceding successful capture: capture "
                "first, e.g. `with cuda.graph(g): out = fn(static_input)`."
            )
        self._instantiated = True  # as torch: a kept graph's first replay instantiates it
        if self._updated_from is not None and self._updated_from._steps is None:
            warn_at_caller(_SOURCE_RESET, FreedInputWarning, depth=1)
        assert self._inputs is not None  # set with _steps by capture_end()
        freed = self._inputs.freed()
        if freed:
            if self._check_liveness:
                raise freed_input_error(freed)
            warn_freed(freed)
        # A GPU replay writes memory behind autograd's back: it builds no autograd history, and
        # the graph's aliases leave the program's tensors' version counters alone.
        with torch.inference_mode():
            for op, args, kwargs in self._steps:
                op(*args, **kwargs)

    def reset(self) -> None:
        """Drop the recording and release this graph's hold on its pool's storages."""
        self._steps = None
        self._kernels = ()
        self._instantiated = False
        self._updated_from = None
        self._held = ()
        self._inputs = None

    def pool(self) -> tuple[int, ...]:
        """The id of this graph's memory pool; pass it as ``pool=`` to share the pool."""
        if self._pool is None:
            raise CaptureError("This CUDAGraph has no pool yet: it has never been captured.")
        return self._pool.id


class graph:
    """Context manager that captures the work of its block into ``cuda_graph``.

    Arguments are those of ``torch.cuda.graph``: ``pool`` shares a memory pool (from
    ``graph_pool_handle()`` or ``other_graph.pool()``), ``stream`` is the side stream to capture
    on (by default one shared by all captures), ``capture_error_mode`` is accepted for
    compatibility, and ``check_input_liveness=True`` (torch 2.13+) makes a replay whose input
    memory the program has let go of raise, as torch does, instead of warn.
    """

    default_capture_stream: Stream | None = None

    def __init__(
        self,
        cuda_graph: CUDAGraph,
        pool: Sequence[int] | None = None,
        stream: Stream | None = None,
        capture_error_mode: str = "global",
        check_input_liveness: bool = False,
    ):
        self.check_input_liveness = _liveness_flag(check_input_liveness, "graph.__init__()")
        if stream is None and graph.default_capture_stream is None:
            graph.default_capture_stream = Stream(_internal=True)
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream if stream is not None else graph.default_capture_stream
        self.capture_error_mode = capture_error_mode
        self._stream_ctx: streams.stream | None = None

    def __enter__(self) -> None:
        synchronize()  # as torch does: finish pending work; inside another capture this fails
        self._stream_ctx = streams.stream(self.capture_stream)
        self._stream_ctx.__enter__()
        self.cuda_graph.capture_begin(
            self.pool,
            capture_error_mode=self.capture_error_mode,
            check_input_liveness=self.check_input_liveness,
        )

    def __exit__(self, *exc: object) -> None:
        self.cuda_graph.capture_end()
        assert self._stream_ctx is not None  # set by __enter__
        self._stream_ctx.__exit__(*exc)
