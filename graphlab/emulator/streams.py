"""Streams and events of the emulator, with the dependencies a capture needs.

On a GPU a stream is a queue of work and an event a marker in it; a capture follows the
dependencies between streams (fork: a side stream waits on the capturing stream; join: the
capturing stream waits on the side stream) to build the graph. The emulator runs every operation
at once, in program order, so streams never overlap here; what it keeps is the bookkeeping a
capture checks: which streams take part and whether their work was joined back.

Everything that waits for the GPU (``synchronize``, ``Stream.synchronize``, ``Event.synchronize``,
``query``) is a host synchronization and fails inside a capture, as on a GPU.
"""

from __future__ import annotations

import itertools

from graphlab.errors import NeedsGPUError

from . import state
from .differences import warn_once

__all__ = [
    "Event",
    "Stream",
    "current_stream",
    "default_stream",
    "set_stream",
    "stream",
    "synchronize",
]

_ids = itertools.count()


class Stream:
    """A stream, named like ``torch.cuda.Stream``. Work submitted to it runs at once on the CPU."""

    def __init__(self, device=None, priority: int = 0, *, _internal: bool = False):
        self.device = device
        self.priority = priority
        self.stream_id = next(_ids)
        if not _internal:  # graphlab's own streams (the default one, graph()'s) stay quiet
            warn_once("streams_serial")

    def wait_stream(self, other: Stream) -> None:
        """Make later work on this stream wait for all work submitted to ``other`` so far."""
        self.wait_event(other.record_event())

    def wait_event(self, event: Event) -> None:
        """Make later work on this stream wait for ``event``."""
        event.wait(self)

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) on this stream and return it."""
        event = event if event is not None else Event()
        event.record(self)
        return event

    def synchronize(self) -> None:
        """Wait for this stream's work: a host synchronization, which fails inside a capture."""
        state.check_host_sync("Stream.synchronize()", self)

    def query(self) -> bool:
        """True: the emulator has always finished (fails inside a capture, as on a GPU)."""
        state.check_host_sync("Stream.query()", self)
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("graphlab.emulator.Stream", self.stream_id))

    def __repr__(self) -> str:
        return f"<graphlab.emulator.Stream id={self.stream_id}>"


_DEFAULT = Stream(_internal=True)
state.current = _DEFAULT


def default_stream(device=None) -> Stream:
    """The default (legacy) stream. CUDA graphs cannot be captured on it."""
    return _DEFAULT


def current_stream(device=None) -> Stream:
    """The stream work is submitted to now."""
    return state.current


def set_stream(s: Stream) -> None:
    """Make ``s`` the current stream."""
    state.current = s


class stream:  # lower-case, like torch.cuda.stream
    """Context manager that makes ``s`` the current stream (does nothing for None)."""

    def __init__(self, s: Stream | None):
        self.stream = s
        self._previous = None

    def __enter__(self) -> None:
        if self.stream is not None:
            self._previous, state.current = state.current, self.stream

    def __exit__(self, *exc) -> None:
        if self.stream is not None:
            state.current = self._previous


def synchronize(device=None) -> None:
    """Wait for all work: a host synchronization, which fails inside a capture."""
    state.check_host_sync("torch.cuda.synchronize()", None)


class Event:
    """An event, named like ``torch.cuda.Event``. It orders work between streams; it has no time.

    ``elapsed_time`` raises :class:`~graphlab.errors.NeedsGPUError`: the emulator never produces
    timings.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess=False):
        self.enable_timing = enable_timing
        self._mark = None  # what record() saw, for the capture that was under way then

    def record(self, stream: Stream | None = None) -> None:
        """Mark the work submitted to ``stream`` (the current one if None) so far."""
        s = stream if stream is not None else state.current
        self._mark = state.capture.mark(s) if state.capture is not None else None

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` (the current one if None) wait for this event."""
        s = stream if stream is not None else state.current
        if self._mark is not None and state.capture is not None:
            state.capture.depend(s, self._mark)

    def query(self) -> bool:
        """True: the emulator has always finished (fails inside a capture, as on a GPU)."""
        state.check_host_sync("Event.query()", None)
        return True

    def synchronize(self) -> None:
        """Wait for the event: a host synchronization, which fails inside a capture."""
        state.check_host_sync("Event.synchronize()", None)

    def elapsed_time(self, end_event: Event) -> float:
        """Refused: the emulator runs on the CPU and produces no GPU timings."""
        raise NeedsGPUError(
            "Event.elapsed_time needs a GPU: the CPU emulator reproduces what a graph does, never "
            "how fast. Timings come from real GPU recordings (graphlab.recording(name)) or from "
            "the calibrated simulator (graphlab simulate), both labelled as such."
        )
