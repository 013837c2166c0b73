"""Capture: record the tensor operations of a region, as CUDA records kernels into a graph.

During a capture two torch modes are active:

- a :class:`~torch.utils._python_dispatch.TorchDispatchMode` sees every aten operation (forward,
  backward and optimizer alike) with the very tensor objects it reads and writes, and records it;
- a :class:`~torch.overrides.TorchFunctionMode` catches the Tensor methods that read a value on
  the host (``.item()``, ``.tolist()``, ``print``...), which on a GPU fail inside a capture.

Every recorded step runs on graph-owned aliases of the tensors it used (see
:mod:`graphlab.emulator.storages`), so that a replay binds to memory, as a GPU graph binds to
addresses, and not to the program's tensor objects.

A GPU does not run captured work; it only records it. The emulator must run each operation to
learn the shapes of its outputs, so it undoes what that run changed: tensors that existed before
the capture get their contents back at the end, tensors allocated during the capture are filled
with NaN ("not computed yet"), and torch's CPU random generator is restored. After a capture,
then, nothing has happened yet, as on a GPU; each replay does the work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch.overrides import TorchFunctionMode

from graphlab.support.torch_internals import DispatchMode, storage_id, tree_leaves

from . import state
from .differences import warn_once
from .host_sync import (
    COPY,
    INVALIDATED,
    ISOLATION,
    UNJOINED,
    UNSUPPORTED,
    capture_error,
    copy_refusal,
    host_method,
    op_problem,
)
from .replay import plan_step
from .storages import Binder

if TYPE_CHECKING:
    from graphlab.errors import CaptureError

    from .pools import Pool
    from .streams import Stream

__all__ = ["Capture", "Mark"]

_LIFT_FRESH = torch.ops.aten.lift_fresh.default

# What an event recorded in a capture stands for: the capture, and how much of each stream's work
# the recording stream had waited for (a vector clock; see Capture).
Mark = tuple["Capture", dict["Stream", int]]


class Capture:
    """One capture under way: the recorded steps and the streams taking part.

    Fork/join is tracked with vector clocks: ``work[s]`` counts the operations recorded on stream
    ``s``; ``seen[s][t]`` is how much of stream ``t``'s work ``s`` has waited for. At the end,
    every side stream's work must have been waited for by the stream the capture began on.
    """

    def __init__(self, origin: Stream, pool: Pool):
        self.origin = origin
        self.pool = pool
        self.streams = {origin}
        self.work = {origin: 0}
        self.seen: dict[Stream, dict[Stream, int]] = {origin: {}}
        self.steps: list[tuple[Any, ...]] = []
        self.kernels: list[str] = []  # the aten op of each step: what a GPU would run as a kernel
        self.binder = Binder()
        self.new_storages: dict[int, torch.Tensor] = {}  # data_ptr -> a tensor using it
        self.constants: set[int] = set()  # storage ids of constants made in the block
        # data_ptr -> (storage, copy before capture)
        self._saved: dict[int, tuple[torch.UntypedStorage, torch.UntypedStorage]] = {}
        self.failure: str | None = None  # what invalidated this capture, in a few words
        self._rng = torch.random.get_rng_state()
        self._modes: tuple[DispatchMode | TorchFunctionMode, ...] = (
            _Recorder(self),
            _HostGuard(self),
        )

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        state.capture = self
        for mode in self._modes:
            mode.__enter__()  # type: ignore[no-untyped-call]  # torch's is unannotated

    def finish(self) -> None:
        """Leave capture mode and undo what running the operations changed (see module doc)."""
        for mode in reversed(self._modes):
            mode.__exit__(None, None, None)  # type: ignore[no-untyped-call]  # as __enter__
        # The modes point back at this capture: drop them so that no reference cycle keeps the
        # recorded tensors alive after CUDAGraph.reset() (on a GPU, reset frees the pool at once).
        self._modes = ()
        state.capture = None
        for storage, before in self._saved.values():
            storage.copy_(before)
        self._saved.clear()
        for tensor in self.new_storages.values():
            if tensor.is_floating_point() or tensor.is_complex():
                # All bits set: NaN in every float format. (torch's stubs lack fill_.)
                tensor.untyped_storage().fill_(0xFF)  # type: ignore[attr-defined]
        torch.random.set_rng_state(self._rng)

    def unjoined(self) -> list[Stream]:
        """Side streams with recorded work the origin stream never waited for."""
        seen = self.seen[self.origin]
        return [s for s in self.streams if s != self.origin and self.work[s] > seen.get(s, 0)]

    # -- failures --------------------------------------------------------------------------
    def fail(self, what: str, reason: tuple[str, str]) -> CaptureError:
        """Invalidate the capture because ``what`` needs the host; return the error to raise."""
        why, fix = reason
        if self.failure is None:
            self.failure = f"{UNSUPPORTED} from {what}"
        return capture_error(UNSUPPORTED, f"{what} {why} Fix: {fix}")

    def invalidated_error(self) -> CaptureError:
        return capture_error(
            INVALIDATED,
            f"This capture was invalidated by an earlier error ({self.failure}), so nothing was "
            "captured. Fix that error and capture again; the graph object can be reused.",
        )

    def unjoined_error(self, streams: Iterable[Stream]) -> CaptureError:
        return capture_error(
            UNJOINED,
            f"Work was forked to {', '.join(map(repr, streams))} during the capture and never "
            "joined back. Before the capture ends, make the capturing stream wait for it: "
            "capture_stream.wait_stream(side_stream), or record an Event on the side stream and "
            "call event.wait() on the capturing stream.",
        )

    def isolation_error(self, stream: Stream) -> CaptureError:
        """Invalidate the capture: ``stream``, which takes part in it, waited for an event
        recorded outside it; return the error to raise."""
        if self.failure is None:
            self.failure = f"{ISOLATION} from a wait on work outside the capture"
        return capture_error(
            ISOLATION,
            f"{stream!r} takes part in this capture and was made to wait for an event recorded "
            "outside it (on a stream that is not capturing, or before the capture began). A graph "
            "can only depend on work inside it. Fix: wait before the capture begins, or fork the "
            "other stream inside the capture (other.wait_stream(capture_stream)) so that its work "
            "is captured too.",
        )

    # -- streams ---------------------------------------------------------------------------
    def mark(self, stream: Stream) -> Mark | None:
        """What an event recorded on ``stream`` now stands for (None if not in this capture)."""
        if stream not in self.streams:
            return None
        return self, {**self.seen[stream], stream: self.work[stream]}

    def depend(self, stream: Stream, mark: Mark) -> None:
        """``stream`` waits for an event marked by :meth:`mark` (joining the capture: a fork)."""
        owner, clock = mark
        if owner is not self:
            return
        if stream not in self.streams:
            self.streams.add(stream)
            self.work[stream] = 0
            self.seen[stream] = {}
        seen = self.seen[stream]
        for s, count in clock.items():
            seen[s] = max(seen.get(s, 0), count)

    # -- recording -------------------------------------------------------------------------
    def record(self, func: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Run aten op ``func`` once (for its outputs' shapes) and record how to replay it."""
        plan = plan_step(func)
        if plan.mutates:
            self._save_before_write(plan.written(args, kwargs))
        out = func(*args, **kwargs)
        inputs = {t.untyped_storage().data_ptr() for t in _tensors((args, kwargs))}
        outputs = _tensors(out)
        for t in outputs:
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr not in inputs and ptr not in self.new_storages:
                self.new_storages[ptr] = t
                self.pool.add(storage)
        if func is _LIFT_FRESH:  # a constant made in the block (torch.tensor(2.0), x[m] = 0.0)
            self.constants.add(storage_id(args[0].untyped_storage()))
        aliases = any(t.untyped_storage().data_ptr() in inputs for t in outputs)
        step = plan.step(args, kwargs, out, aliases)
        if step is not None:
            call, step_args, step_kwargs = step
            self.steps.append((call, *self.binder.bind((step_args, step_kwargs), func)))
            self.kernels.append(str(func))
        self.work[state.current] += 1
        return out

    def _save_before_write(self, tensors: Iterable[torch.Tensor]) -> None:
        for t in tensors:
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr not in self.new_storages and ptr not in self._saved:
                self._saved[ptr] = (storage, storage.clone())


def _tensors(tree: object) -> list[torch.Tensor]:
    return [x for x in tree_leaves(tree) if isinstance(x, torch.Tensor)]


class _Recorder(DispatchMode):
    """Records every aten op submitted to a stream taking part in the capture."""

    def __init__(self, capture: Capture):
        super().__init__()  # type: ignore[no-untyped-call]  # torch's is unannotated
        self.capture = capture

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        cap = self.capture
        if state.current not in cap.streams:  # another stream: runs now, is not captured
            return func(*args, **kwargs)
        if cap.failure is not None:
            raise cap.invalidated_error()
        problem = op_problem(func, args)
        if problem is not None:
            what, reason = problem
            raise cap.fail(what, reason)
        if torch.Tag.nondeterministic_seeded in func.tags:
            warn_once("random_numbers")
        return cap.record(func, args, kwargs)


class _HostGuard(TorchFunctionMode):
    """Refuses Tensor methods that read a value on the host while the stream is capturing."""

    def __init__(self, capture: Capture):
        super().__init__()
        self.capture = capture

    def __torch_function__(
        self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        found = host_method(func)
        if found is not None and state.current in self.capture.streams:
            warn_once("host_tensors")
            what, reason = found
            if reason is COPY:  # refused by torch before CUDA sees it: the capture goes on
                raise copy_refusal(what)
            raise self.capture.fail(what, reason)
        return func(*args, **(kwargs or {}))
