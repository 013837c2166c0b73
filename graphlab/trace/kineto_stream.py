"""A Kineto trace file's event list read straight from the file, a chunk at a time.

Kineto writes one long list in a small object: ``{"schemaVersion": 1, ..., "traceEvents": [...],
"traceName": "..."}``. :func:`read_events` reads the file into one buffer a block at a time, cuts
the list between events as :func:`.kineto_chunks.read_array` does, and gives each chunk to
:class:`~.kineto_columns.Columns` where it lies in the buffer. So the file is never whole in
memory (a trace of a million kernels is 1.4 GB) and its bytes are not copied again. What is
around the list is kept: the caller reads it as a small document with an empty list in its place.

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

__all__ = ["EMPTY_LIST", "StreamedTrace", "read_events"]

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


def read_events(f: BinaryIO, origin: str, advice: str) -> StreamedTrace | None:
    """The events of the open file ``f`` (at its start) read a chunk at a time, and its small
    document; None where the file is to be read whole instead (see the module's docstring).

    ``origin`` names the file in messages and ``advice`` says how to export a good one. Errors
    reading the file (OSError) are the caller's to report.
    """
    head = _head(f)
    if head is None:
        return None
    text, found = head
    try:
        return _read_list(
            f, text[: found.start(1)], memoryview(text)[found.end(1) :], origin, advice
        )
    except (msgspec.DecodeError, TraceError):
        return None


def _head(f: BinaryIO) -> tuple[bytearray, re.Match[bytes]] | None:
    """The file's first bytes, up to a block past where its event list's first event starts,
    and the key and bracket that start the list; None when no list of objects is found that
    near the start."""
    text = bytearray()
    while len(text) <= _LONGEST_HEAD:
        block = f.read(_BLOCK)
        text += block
        found = _LIST_START.search(text)
        if found and (found.end() < len(text) or not block):
            return (text, found) if text[found.end() : found.end() + 1] == b"{" else None
        if not block:
            return None
    return None


def _read_list(
    f: BinaryIO, before: bytes, first: memoryview, origin: str, advice: str
) -> StreamedTrace | None:
    """Read the list's events, from the first (``first`` holds the text after the list's ``[``)
    to the list's end.

    ``before`` is the document's text up to the list's ``[``. The buffer holds ``[`` and the
    events not yet read; each chunk is closed in place by writing ``]`` over the byte after its
    last event (the comma or a space before it), which the next chunk does not need. The chunks
    are those :func:`.kineto_chunks.read_array` cuts the list into.
    """
    chunk_bytes = kineto_chunks.CHUNK_BYTES
    buffer = bytearray(chunk_bytes + _BLOCK)
    buffer[0] = _OPEN
    filled = 1 + len(first)
    buffer = _room(buffer, filled)
    buffer[1:filled] = first
    columns = Columns()
    while True:
        cut = kineto_chunks.EVENT_BOUNDARY.search(buffer, 1 + chunk_bytes, filled)
        if cut is None:
            if filled == len(buffer):
                if filled - 1 > kineto_chunks.LONGEST_CHUNK:
                    return None  # a huge event, as read_array leaves it: not worth the memory
                buffer = _room(buffer, 2 * filled)
            read = f.readinto(memoryview(buffer)[filled:])
            if read:
                filled += read
                continue
            return _last_chunk(columns, buffer, filled, before, origin, advice)
        stop = cut.start() + 1
        if stop - 1 > kineto_chunks.LONGEST_CHUNK:
            return None
        buffer[stop] = _CLOSE
        columns.add_text(buffer, origin, advice, stop + 1)
        rest = cut.end() - 1  # the next event's opening brace
        buffer[1 : 1 + filled - rest] = buffer[rest:filled]
        filled = 1 + filled - rest


def _room(buffer: bytearray, size: int) -> bytearray:
    """``buffer``, or a copy of it at least ``size`` long where it is shorter."""
    if len(buffer) >= size:
        return buffer
    larger = bytearray(size)
    larger[: len(buffer)] = buffer
    return larger


def _last_chunk(
    columns: Columns, buffer: bytearray, filled: int, before: bytes, origin: str, advice: str
) -> StreamedTrace | None:
    """Read the last events (``buffer[1:filled]``, which the end of the file follows): the list
    ends at the first ``}`` and ``]`` after which they parse; the document is what is around it.
    """
    for tries, end in enumerate(_LIST_END.finditer(buffer, 1, filled)):
        if tries == _LAST_CHUNK_TRIES:
            return None
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
        document = b"".join((before, EMPTY_LIST, buffer[end.end() : filled]))
        if document.count(b'"traceEvents"') != 1 or b"\\u" in document:
            return None
        return StreamedTrace(columns, document)
    return None
