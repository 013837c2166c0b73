"""The trace's event list, read into :class:`~.kineto_columns.Columns` a piece at a time.

:func:`read_array` cuts the list's text into chunks of about :data:`CHUNK_BYTES` between events,
so that no decoded event outlives its chunk; :func:`read_texts` reads the events' texts a batch
at a time, for a list that cannot be cut that way.

Where the list is cut depends on its text alone (:func:`chunk_target`), not on where a reader
began: so every reader of the list, whole or from the file, and each half of it read by two
processes (:mod:`.kineto_halves`), reads the same chunks. That matters beyond speed: which
repeated keys are noticed depends on which events share a chunk (see :mod:`.kineto_columns`).
"""

from __future__ import annotations

import re

import msgspec

from graphlab.errors import TraceError

from .jsonfile import parse_error
from .kineto_columns import Columns

__all__ = [
    "BATCH_EVENTS",
    "CHUNK_BYTES",
    "EVENT_BOUNDARY",
    "LONGEST_CHUNK",
    "chunk_target",
    "read_array",
    "read_texts",
]

BATCH_EVENTS = 2_000  # events decoded at a time (their memory is freed before the next batch)
CHUNK_BYTES = 1 << 19  # about 2,000 Kineto events, decoded at a time by read_array
LONGEST_CHUNK = 1 << 25  # a chunk read_array would have to make longer is left to read_texts
# Where one event may end and the next begin.
EVENT_BOUNDARY = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*\{")


def chunk_target(last: int) -> int:
    """Where the chunk after the cut at ``last`` may end: the first multiple of
    :data:`CHUNK_BYTES` after it. Positions count from the list's ``[`` (``last`` 0 for the
    first chunk).

    The list is cut after the first :data:`EVENT_BOUNDARY` that starts at or after each such
    multiple (one cut for several multiples that no boundary lies between), so a reader that
    begins at any cut reads the same chunks from there on as one that began at the ``[``.
    """
    return (last // CHUNK_BYTES + 1) * CHUNK_BYTES


def read_array(array: msgspec.Raw, origin: str, advice: str) -> Columns | None:
    """The columns of ``array``, the valid JSON text of a list (the trace's events), read a chunk
    of about :data:`CHUNK_BYTES` at a time (cut as :func:`chunk_target` says); None when it cannot
    be cut into chunks, for :func:`read_texts` to read its events one text at a time instead.

    The list is cut after a ``}`` that a comma and a ``{`` follow, which is where one event
    ends and the next begins, unless that ``}`` is inside a string or closes an object nested in
    an event. Then the chunk before it, in brackets, is not valid JSON, since its last string or
    object never closes: so a chunk that parses proves its cut right, and together the chunks
    hold exactly the list's events. A chunk that does not parse gives None (and so does any
    other error: :func:`read_texts` meets it again and says it as it always does).
    """
    columns = Columns()
    view = memoryview(array)
    end = view.nbytes - 1  # the closing bracket
    begin, last = 1, 0  # where the chunk begins, and where the one before it ended
    while begin < end:
        target = chunk_target(last)
        cut = EVENT_BOUNDARY.search(view, target, end) if target < end else None
        stop = cut.start() + 1 if cut else end
        if stop - begin > LONGEST_CHUNK:
            return None  # events that are not objects, or a huge event: not worth the memory
        try:
            columns.add_text(b"".join((b"[", view[begin:stop], b"]")), origin, advice)
        except (msgspec.DecodeError, TraceError):
            return None
        begin = cut.end() - 1 if cut else end  # the next event's opening brace
        last = stop - 1
    columns.flush(f"{origin}: ")
    return columns


def read_texts(texts: list[msgspec.Raw], origin: str, advice: str) -> Columns:
    """Decode the events' texts a batch at a time; a batch the fast route refuses is re-read.

    ``origin`` names the file in messages and ``advice`` says how to export a good one.
    """
    columns = Columns()
    for begin in range(0, len(texts), BATCH_EVENTS):
        batch = texts[begin : begin + BATCH_EVENTS]
        text = _array_text(batch)
        try:
            columns.add_text(text, origin, advice)
        except msgspec.DecodeError as exc:  # invalid UTF-8 in a string the first pass skipped
            columns.flush(f"{origin}: ")  # a bad time earlier in the trace is said first
            raise parse_error(origin, text, exc, advice) from None
        # The batch's texts are done with: let their memory go while the next batch is read.
        texts[begin : begin + BATCH_EVENTS] = [None] * len(batch)
    columns.flush(f"{origin}: ")
    return columns


def _array_text(texts: list[msgspec.Raw]) -> bytes:
    """The JSON array of ``texts``, copying them once: the brackets ride on the first and last
    text (``b"[" + b",".join(texts) + b"]"`` would copy the whole batch three times)."""
    if len(texts) == 1:
        return b"[" + texts[0] + b"]"
    return b",".join([b"[" + texts[0], *texts[1:-1], bytes(texts[-1]) + b"]"])
