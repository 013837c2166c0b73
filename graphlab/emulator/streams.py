"""Streams and events of the emulator, with the dependencies a capture needs.

On a GPU a stream is a queue of work and an event a marker in it; a capture follows the
dependencies between streams (fork: a side stream waits on the capturing stream; join: the
capturing stream waits on the side stream) to build the graph. The emulator runs every operation
at once, in program order, so streams never overlap here; what it keeps is the bookkeeping a
capture checks: which streams take part and whether their work was joined back.

Everything that waits for the GPU (``synchronize``, ``Stream.synchronize``, ``Event.synchronize``,
``query``) is a host synchronization and fails inside a capture, as on a GPU.

Two more rules of CUDA's are kept. A stream taking part in a capture may wait only for events
recorded inside that capture: waiting for one recorded outside it fails with
``cudaErrorStreamCaptureIsolation``. And an event recorded inside a capture is only an edge between
the graph's nodes: it never happens by itself, not even when the graph is replayed, so querying it,
waiting for it on the host or timing it fails (on an H200 with torch 2.11, CUDA says
"invalid argument").
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from graphlab.errors import CaptureError, NeedsGPUError
from graphlab.language import gettext as _

from . import state
from .differences import warn_once

if TYPE_CHECKING:
    from .capture import Mark

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
# What Event.record left when the stream was not capturing: a point in ordinary stream order.
_ORDINARY = "recorded outside any capture"


class Stream:
    """A stream, named like ``torch.cuda.Stream``. Work submitted to it runs at once on the CPU."""

    def __init__(self, device: object = None, priority: int = 0, *, _internal: bool = False):
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


def default_stream(device: object = None) -> Stream:
    """The default (legacy) stream. CUDA graphs cannot be captured on it."""
    return _DEFAULT


def current_stream(device: object = None) -> Stream:
    """The stream work is submitted to now."""
    return state.current


def set_stream(s: Stream) -> None:
    """Make ``s`` the current stream."""
    state.current = s


class stream:  # lower-case, like torch.cuda.stream
    """Context manager that makes ``s`` the current stream (does nothing for None)."""

    def __init__(self, s: Stream | None):
        self.stream = s
        self._previous: Stream | None = None

    def __enter__(self) -> None:
        if self.stream is not None:
            self._previous, state.current = state.current, self.stream

    def __exit__(self, *exc: object) -> None:
        if self.stream is not None and self._previous is not None:
            state.current = self._previous


def synchronize(device: object = None) -> None:
    """Wait for all work: a host synchronization, which fails inside a capture."""
    state.check_host_sync("torch.cuda.synchronize()", None)


class Event:
    """An event, named like ``torch.cuda.Event``. It orders work between streams; it has no time.

    ``elapsed_time`` raises :class:`~graphlab.errors.NeedsGPUError`: the emulator never produces
    timings.
    """

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        self.enable_timing = enable_timing
        # None until recorded; then _ORDINARY, or what a capture's mark() gave when the stream
        # recorded on was capturing.
        self._mark: Mark | str | None = None

    def record(self, stream: Stream | None = None) -> None:
        """Mark the work submitted to ``stream`` (the current one if None) so far."""
        s = stream if stream is not None else state.current
        mark = state.capture.mark(s) if state.capture is not None else None
        self._mark = mark if mark is not None else _ORDINARY

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` (the current one if None) wait for this event.

        Inside a capture: an event recorded in the capture forks ``stream`` into it or joins work
        back; one recorded outside it cannot be waited for by a capturing stream (as on a GPU).
        """
        s = stream if stream is not None else state.current
        cap = state.capture
        if cap is None or self._mark is None:  # nothing to order, or never recorded: no wait
            return
        if isinstance(self._mark, str):  # _ORDINARY
            if s in cap.streams:
                raise cap.isolation_error(s)
            return
        cap.depend(s, self._mark)

    def query(self) -> bool:
        """True: the emulator has always finished (fails inside a capture, as on a GPU, and for
        an event recorded inside one)."""
        state.check_host_sync("Event.query()", None)
        self._refuse_if_captured("Event.query()")
        return True

    def synchronize(self) -> None:
        """Wait for the event: a host synchronization, which fails inside a capture (and for an
        event recorded inside one)."""
        state.check_host_sync("Event.synchronize()", None)
        self._refuse_if_captured("Event.synchronize()")

    def _refuse_if_captured(self, what: str) -> None:
        if self._mark is None or self._mark is _ORDINARY:
            return
        raise CaptureError(
            f"CUDA error: invalid argument (cudaErrorInvalidValue). {what} on an event last "
            "recorded in a capturing stream: inside a graph an event is only an edge between two "
            "nodes; it never happens by itself, not even when the graph is replayed. Fix: to "
            "time or wait for a graph, record events around g.replay() on a stream that is not "
            "capturing. [CPU emulator; on a GPU torch raises torch.AcceleratorError with this "
            "CUDA error.]",
            cuda_error="cudaErrorInvalidValue",
        )

    def elapsed_time(self, end_event: Event) -> float:
        """Refused: the emulator runs on the CPU and produces no GPU timings (and events
        recorded inside a capture have no time on a GPU either)."""
        self._refuse_if_captured("Event.elapsed_time()")
        end_event._refuse_if_captured("Event.elapsed_time()")
        raise NeedsGPUError(
            _(
                "Event.elapsed_time needs a GPU: the CPU emulator reproduces what a graph does, "
                "never how fast. Timings come from real GPU recordings (graphlab.recording(name)) "
                "or from the calibrated simulator (graphlab simulate), both labelled as such."
            )
        )
