"""A large trace file's event list read in two halves at once, the second by a helper process.

Reading a million events takes about two seconds of one core, nearly all of it decoding JSON and
taking the columns out (:mod:`.kineto_columns`), Python work that one process does one thing at
a time. Given a :class:`Helper` (another Python process, started ahead of time),
:func:`read_in_halves` has it read the list's second half from the file while this process reads
the first, and joins what the helper read after its own. benchmarks/trace_viewer_open.py's
million events, read first thing in a fresh process on two cores, took 1.06-1.26 s so instead of
1.81-1.87 s (2.0-2.2 s of CPU in the two processes together instead of 1.8-1.9 s).

What is read does not change:

- the list is cut into chunks where its text alone says (:func:`.kineto_chunks.chunk_target`),
  and the halves meet at one of those cuts, the first at or after a multiple of
  :data:`~.kineto_chunks.CHUNK_BYTES` near the list's middle; so the two halves are read in
  exactly the chunks one reader reads, and the helper's columns, names and counts are joined as
  if read here (:meth:`.kineto_columns.Columns.extend`);
- that cut is proved as every cut is (see :func:`.kineto_chunks.read_array`): the first half's
  last chunk ends there and parses, so the second half starts at an event;
- the helper reads the same file: it opens it by path, and the device, inode, size and time of
  modification it finds must be those of the file read here.

Where either half would leave the file to be read whole, the answer is None, as
:func:`.kineto_stream.read_events` gives; where the helper cannot help (it is reading another
trace, or its process died) or fails (it could not open the file, say), this process reads the
file alone.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, BinaryIO, NamedTuple

import msgspec

from graphlab.errors import TraceError

from . import kineto_chunks, kineto_stream
from .kineto_columns import Columns, Part
from .kineto_stream import ListHead, ListText, Refused, StreamedTrace

__all__ = ["SPLIT_BYTES", "Helper", "SecondHalf", "read_in_halves", "read_second_half"]

SPLIT_BYTES = 1 << 23  # a shorter list is read by one process: the helper would save little


class SecondHalf(NamedTuple):
    """What the helper read: the place of the cut it began after (counted from the list's
    ``[``), the events after it, the text after the list, and the file's identity."""

    cut: int
    part: Part
    after: bytes
    file: tuple[int, int, int, int]


class Helper:
    """Another Python process that reads second halves for this one (:func:`read_second_half`),
    one trace at a time, asked and answered through two pipes.

    It takes a fresh Python that imports numpy, msgspec and the reader (a quarter of a second of
    CPU), so it is started ahead of time: the constructor returns once it is ready, and raises
    OSError or EOFError where it cannot start. It is a plain ``python -c`` child: not forked,
    since a server runs threads and a forked child could inherit a lock that one of them held,
    nor started by multiprocessing's "spawn", which imports the parent's main script again (a
    Jupyter server's imports all of JupyterLab: seconds of CPU and 60 MB more). It ends when
    this process closes its pipes (:meth:`close`) or ends, and holds no thread here. It holds
    about 30 MB of memory, 70 MB once it has read half of a million events (120 MB at most
    while reading them).
    """

    def __init__(self) -> None:
        # Imported here: a reader without a helper (graphlab gaps) starts quicker without them.
        import subprocess
        from multiprocessing.connection import Connection

        their_requests, requests = os.pipe()
        answers, their_answers = os.pipe()
        self._requests = Connection(requests, readable=False)
        self._answers = Connection(answers, writable=False)
        # This process's import path, so that the helper imports this very reader.
        code = (
            f"import sys; sys.path[:] = {sys.path!r}; "
            f"from {__name__} import _serve; _serve({their_requests}, {their_answers})"
        )
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", code], pass_fds=(their_requests, their_answers)
            )
        finally:
            os.close(their_requests)
            os.close(their_answers)
        self._answers.recv()  # sent once the helper has imported the reader
        self._busy = threading.Lock()

    def ask(self, request: tuple[Any, ...]) -> bool:
        """Send a request (:func:`read_second_half`'s arguments); False where the helper is
        reading another trace or its process has ended. Each request sent is answered once:
        read the answer with :meth:`answer`."""
        if not self._busy.acquire(blocking=False):
            return False
        try:
            self._requests.send(request)
        except OSError:
            self._busy.release()
            return False
        return True

    def answer(self) -> tuple[bool, SecondHalf | None]:
        """The answer to the request sent: whether the helper read the file, and what it read
        (None: the file is to be read whole). Not read where its process ended meanwhile."""
        try:
            answer: tuple[bool, SecondHalf | None] = self._answers.recv()
        except (EOFError, OSError):
            answer = (False, None)
        self._busy.release()
        return answer

    def close(self) -> None:
        """End the helper process (it ends when its pipes close) and wait for it."""
        self._requests.close()
        self._answers.close()
        self._process.wait()


def read_in_halves(
    f: BinaryIO, path: str, helper: Helper, origin: str, advice: str
) -> StreamedTrace | None:
    """:func:`.kineto_stream.read_events` of the open file ``f`` (at its start), which is the
    file at ``path`` (absolute), the list's second half read by ``helper`` meanwhile.

    ``origin`` names the file in messages and ``advice`` says how to export a good one.
    """
    head = kineto_stream.find_list(f)
    if head is None:
        return None
    middle = _middle(f, head)
    if middle is None or not helper.ask((path, head.offset, middle, origin, advice)):
        return kineto_stream.read_list(f, head, origin, advice)
    try:
        first = _first_half(f, head, middle, origin, advice)
    finally:
        read, half = helper.answer()
    if not read:  # the helper could not read it: this process reads the file alone
        f.seek(0)
        return kineto_stream.read_events(f, origin, advice)
    if first is None or half is None or half.cut != first[1] or half.file != _identity(f):
        return None
    columns = first[0]
    columns.extend(half.part)
    return kineto_stream.streamed_trace(head.before, columns, half.after)


def read_second_half(
    path: str, offset: int, middle: int, origin: str, advice: str
) -> SecondHalf | None:
    """What the helper does: the events of the file at ``path`` after the first cut at or after
    place ``middle`` of its list (whose ``[`` is at file offset ``offset``), and the text after
    the list; None where the file is to be read whole."""
    with open(path, "rb", buffering=0) as f:
        identity = _identity(f)
        f.seek(offset + middle)
        text = ListText(f, b"", middle)
        columns = Columns()
        try:
            cut = text.skip_to_cut(middle)
            text.read_chunks(columns, origin, advice, cut)
            after = text.read_last(columns, origin, advice)
        except (Refused, msgspec.DecodeError, TraceError):
            return None
    return SecondHalf(cut, columns.part(), after, identity)


def _serve(requests: int, answers: int) -> None:
    """The helper process: say it is ready, then answer each request read from the pipe
    ``requests`` (a file descriptor) on the pipe ``answers``, with whether the file was read and
    :func:`read_second_half`'s answer, until the requests' pipe closes."""
    from multiprocessing.connection import Connection

    inbox, outbox = Connection(requests, writable=False), Connection(answers, readable=False)
    outbox.send(None)
    while True:
        try:
            request = inbox.recv()
        except EOFError:
            return
        try:
            answer: tuple[bool, SecondHalf | None] = (True, read_second_half(*request))
        except Exception:  # the file could not be read here (gone, say): the asker reads it
            answer = (False, None)
        outbox.send(answer)


def _first_half(
    f: BinaryIO, head: ListHead, middle: int, origin: str, advice: str
) -> tuple[Columns, int] | None:
    """The columns of the list's events up to the first cut at or after place ``middle``, and
    that cut's place; None where the file is to be read whole (the list ends before it, say)."""
    columns = Columns()
    try:
        cut = ListText(f, head.first, 1).read_chunks(columns, origin, advice, 0, middle)
        if cut is None:
            return None
        columns.flush(f"{origin}: ")
    except (Refused, msgspec.DecodeError, TraceError):
        return None
    return columns, cut


def _middle(f: BinaryIO, head: ListHead) -> int | None:
    """A multiple of :data:`~.kineto_chunks.CHUNK_BYTES` near the middle of the list (taken to
    run to the file's end); None for a list shorter than :data:`SPLIT_BYTES`."""
    length = os.fstat(f.fileno()).st_size - head.offset
    if length < SPLIT_BYTES:
        return None
    chunk = kineto_chunks.CHUNK_BYTES
    return max(1, length // 2 // chunk) * chunk


def _identity(f: BinaryIO) -> tuple[int, int, int, int]:
    """The open file's device, inode, size and time of modification."""
    stat = os.fstat(f.fileno())
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns
