"""A Kineto trace file's event list read straight from the file, a chunk at a time.

Kineto writes one long list in a small object: ``{"schemaVersion": 1, ..., "traceEvents": [...],
"traceName": "..."}``. :func:`read_events` reads the file into one buffer a block at a time
(:class:`ListText`), cuts the list between events as :func:`.kineto_chunks.read_array` does, and
gives each chunk to :class:`~.kineto_columns.Columns` where it lies in the buffer. So the file is
never whole in memory (a trace of a million kernels is 1.4 GB) and its bytes are not copied
again. What is around the list is kept: the caller reads it as a small document with an empty
list in its place.

It is a quicker way to exactly what reading the whole file gives, taken only where it proves so:

- every chunk parses, which proves its cut right (see :func:`.kineto_chunks.read_array`), so the
  list's text is one valid JSON list of exactly the events read;
- the list ends at the first ``}`` and ``]`` after which the last chunk parses: there the parser
  is between two events of the list, and the ``]`` closes it;
- the small document holds the key ``"traceEvents"`` once, spelled plainly (no ``\\u`` escape in
  it at all), so that the list put back in its place is the document's one ``traceEvents``; the
  caller checks that the document parses and that its ``traceEvents`` is that empty list.

Anything else (a gzip file, no such list near the top, a list that is empty or holds something
other than objects, a chunk that does not parse, an event without a time) gives None, and the
caller reads the whole file as before, which says what is wrong with it.
"""

from __future__ import annotations

import re
from typing import BinaryIO, NamedTuple

import msgspec

from graphlab.errors import TraceError

from . import kineto_chunks
from .kineto_columns import Columns

__all__ = [
    "EMPTY_LIST",
    "ListHead",
    "ListText",
    "Refused",
    "StreamedTrace",
    "find_list",
    "read_events",
    "read_list",
    "streamed_trace",
]

EMPTY_LIST = b"[]"  # stands in the small document for the list read
_BLOCK = 1 << 16  # bytes read ahead of a chunk, and at a time while looking for the list
_LONGEST_HEAD = 1 << 20  # the list must start within this many bytes of the file's start
_LAST_CHUNK_TRIES = 16  # places tried as the list's end before leaving the file to be read whole
_LIST_START = re.compile(rb'"traceEvents"[ \t\n\r]*:[ \t\n\r]*(\[)[ \t\n\r]*')
_LIST_END = re.compile(rb"\}[ \t\n\r]*\]")  # where the last event and the list may end
_OPEN, _CLOSE = ord("["), ord("]")
_JSON = msgspec.json.Decoder(msgspec.Raw)  # checks that a text is one JSON value, and no more


class StreamedTrace(NamedTuple):
    """The columns of a trace's events, and the trace's document with :data:`EMPTY_LIST` where
    its event list was."""

    columns: Columns
    document: bytes


class ListHead(NamedTuple):
    """Where a file's event list starts: the document's text before the list's ``[``, the file
    offset of that ``[``, and the text after it already read."""

    before: bytes
    offset: int
    first: memoryview


class Refused(Exception):
    """The event list is not to be read as a stream: the caller reads the whole file instead."""


def read_events(f: BinaryIO, origin: str, advice: str) -> StreamedTrace | None:
    """The events of the open file ``f`` (at its start) read a chunk at a time, and its small
    document; None where the file is to be read whole instead (see the module's docstring).

    ``origin`` names the file in messages and ``advice`` says how to export a good one. Errors
    reading the file (OSError) are the caller's to report.
    """
    head = find_list(f)
    return None if head is None else read_list(f, head, origin, advice)


def find_list(f: BinaryIO) -> ListHead | None:
    """Where the event list of the open file ``f`` (at its start) starts, having read its first
    bytes, up to a block past its first event's start; None when no list of objects is found
    that near the start."""
    text = bytearray()
    while len(text) <= _LONGEST_HEAD:
        block = f.read(_BLOCK)
        text += block
        found = _LIST_START.search(text)
        if found and (found.end() < len(text) or not block):
            if text[found.end() : found.end() + 1] != b"{":
                return None
            start = found.start(1)
            return ListHead(bytes(text[:start]), start, memoryview(text)[start + 1 :])
        if not block:
            return None
    return None


def read_list(f: BinaryIO, head: ListHead, origin: str, advice: str) -> StreamedTrace | None:
    """:func:`read_events`, the list's start found already (``f`` is where ``head`` ends)."""
    try:
        text = ListText(f, head.first, 1)
        columns = Columns()
        text.read_chunks(columns, origin, advice, 0)
        return streamed_trace(head.before, columns, text.read_last(columns, origin, advice))
    except (Refused, msgspec.DecodeError, TraceError):
        return None


def streamed_trace(before: bytes, columns: Columns, after: bytes) -> StreamedTrace | None:
    """The trace of the ``columns`` read from its list and the text ``before`` and ``after`` the
    list; None unless that text holds the key ``"traceEvents"`` once, spelled plainly."""
    document = b"".join((before, EMPTY_LIST, after))
    if document.count(b'"traceEvents"') != 1 or b"\\u" in document:
        return None
    return StreamedTrace(columns, document)


class ListText:
    """The event list's text from some place on, read from the file a block at a time into one
    buffer and read a chunk at a time.

    The buffer holds ``[`` and the events not yet read; each chunk is closed in place by writing
    ``]`` over the byte after its last event (the comma or a space before it), which the next
    chunk does not need. Places in the list count from its ``[`` (as
    :func:`.kineto_chunks.chunk_target` does), wherever the reading began. Refused is raised
    where the list is to be read from the whole file instead.
    """

    def __init__(self, f: BinaryIO, first: bytes | memoryview, at: int):
        """``first`` is the list's text from place ``at`` on, read from ``f`` up to where ``f``
        now is."""
        self._f = f
        self._buffer = bytearray(max(kineto_chunks.CHUNK_BYTES + _BLOCK, 1 + len(first)))
        self._buffer[0] = _OPEN
        self._filled = 1 + len(first)
        self._buffer[1 : self._filled] = first
        self._at = at - 1  # the list's byte at place self._at + i is self._buffer[i], for i >= 1

    def read_chunks(
        self, columns: Columns, origin: str, advice: str, last: int, stop: int | None = None
    ) -> int | None:
        """Read the events into ``columns`` a chunk at a time, the first after the cut at place
        ``last`` (0: the ``[``), as far as the first cut at or after place ``stop``: that cut's
        place. None when the file ends first: the buffer then holds the last events, for
        :meth:`read_last`."""
        while True:
            found = self._cut(kineto_chunks.chunk_target(last))
            if found is None:
                return None
            end = found.start() + 1
            self._buffer[end] = _CLOSE
            columns.add_text(self._buffer, origin, advice, end + 1)
            last = self._drop(found)
            if stop is not None and last >= stop:
                return last

    def skip_to_cut(self, start: int) -> int:
        """Drop the text before the first place at or after ``start`` where one event may end
        and the next begin, keeping the next event; that place (of its ``}``)."""
        found = self._cut(start)
        if found is None:
            raise Refused
        return self._drop(found)

    def read_last(self, columns: Columns, origin: str, advice: str) -> bytes:
        """Read the last events (what the buffer holds, the file having ended) and flush the
        ``columns``: the list ends at the first ``}`` and ``]`` after which they parse. The text
        after the list."""
        buffer, filled = self._buffer, self._filled
        for tries, end in enumerate(_LIST_END.finditer(buffer, 1, filled)):
            if tries == _LAST_CHUNK_TRIES:
                break
            stop = end.start() + 1
            kept = buffer[stop]
            buffer[stop] = _CLOSE
            try:
                _JSON.decode(memoryview(buffer)[: stop + 1])
            except msgspec.DecodeError:
                buffer[stop] = kept
                continue
            columns.add_text(buffer, origin, advice, stop + 1)
            columns.flush(f"{origin}: ")
            return bytes(buffer[end.end() : filled])
        raise Refused

    def _cut(self, start: int) -> re.Match[bytes] | None:
        """The first :data:`.kineto_chunks.EVENT_BOUNDARY` at or after place ``start``, reading
        on as needed; None when the file ends first."""
        while True:
            found = kineto_chunks.EVENT_BOUNDARY.search(
                self._buffer, max(1, start - self._at), self._filled
            )
            if found is not None:
                if found.start() > kineto_chunks.LONGEST_CHUNK:
                    raise Refused  # a huge event, as read_array leaves it: not worth the memory
                return found
            if self._filled == len(self._buffer):
                if self._filled - 1 > kineto_chunks.LONGEST_CHUNK:
                    raise Refused
                self._buffer = _room(self._buffer, 2 * self._filled)
            read = self._f.readinto(memoryview(self._buffer)[self._filled :])
            if not read:
                return None
            self._filled += read

    def _drop(self, found: re.Match[bytes]) -> int:
        """Drop the text before the event that starts at the end of ``found`` (a boundary); the
        place of the boundary's ``}``."""
        place = self._at + found.start()
        rest = found.end() - 1  # the next event's opening brace
        buffer, filled = self._buffer, self._filled
        buffer[1 : 1 + filled - rest] = buffer[rest:filled]
        self._filled = 1 + filled - rest
        self._at += rest - 1
        return place


def _room(buffer: bytearray, size: int) -> bytearray:
    """``buffer``, or a copy of it at least ``size`` long where it is shorter."""
    if len(buffer) >= size:
        return buffer
    larger = bytearray(size)
    larger[: len(buffer)] = buffer
    return larger
