"""Reading a (gzipped) JSON file within the limits of size and memory, with one-line errors.

:func:`read_bytes` brings a file's bytes into memory (or lets the caller read a plain file its
own way): it refuses a file larger than the caller's limit or than the memory available, and
unpacks a gzip file while streaming, stopping as soon as it unpacks to more than the limit (a few
kilobytes can unpack to gigabytes). :func:`parse_error`
turns msgspec's complaint about the JSON into the one line a person needs, and
:func:`python_json` parses with Python's own json module, for the two things it accepts that
strict JSON does not: ``NaN`` and ``Infinity``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import BinaryIO, TypeVar

import msgspec

from graphlab.errors import TraceError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.support.memory import describe_bytes, missing_bytes
from graphlab.support.printable import printable

__all__ = [
    "is_python_only",
    "objects_with_repeated_keys",
    "parse_error",
    "python_json",
    "read_bytes",
]

# Numbers Python's json reads and writes, which strict JSON (and msgspec) does not know.
PYTHON_ONLY_TOKENS = (b"NaN", b"Infinity", b"-Infinity")

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_SMALLEST = 18  # a 10-byte header, an empty deflate block and an 8-byte trailer
_BLOCK = 1 << 20  # unpacked bytes read at a time
_BYTE_AT = re.compile(r"\(byte (\d+)\)")
T = TypeVar("T")


def read_bytes(
    path: Path,
    limit: int,
    memory_factor: float,
    advice: str,
    stream: Callable[[BinaryIO], T | None] | None = None,
) -> bytes | bytearray | T:
    """The bytes of ``path`` (unpacked if gzipped), refused above ``limit`` or the memory free.

    ``memory_factor`` is how many times its size in memory the caller needs to work on the file;
    ``advice`` says how to make a smaller one. Messages show the path :func:`printable`.
    ``stream``, if given, may read a plain (not gzipped) file its own way: it gets the open file
    and returns what it read, or None to have the file's bytes read after all.
    """
    shown = printable(path)
    if not path.exists():
        raise TraceError(_("{path}: no such file; {advice}").format(path=shown, advice=_(advice)))
    if not path.is_file():
        raise TraceError(
            _("{path}: is {kind}, not a regular file; pass the trace's .json file").format(
                path=shown, kind=_(_kind_of_file(path))
            )
        )
    size = path.stat().st_size
    if size == 0:
        raise TraceError(
            _("{path}: the file is empty; {advice}").format(path=shown, advice=_(advice))
        )
    try:
        with path.open("rb", buffering=0) as f:  # unbuffered: read() fills one bytes object
            gzipped = f.read(2) == _GZIP_MAGIC
            if not gzipped:
                _check_size(shown, size, limit, memory_factor)
                f.seek(0)
                streamed = stream(f) if stream else None
                if streamed is not None:
                    return streamed
                f.seek(0)
                return f.read()
            return _gunzip(shown, f, limit, memory_factor)
    except OSError as exc:
        reason = exc.strerror or exc
        raise TraceError(
            _("{path}: cannot be read ({reason}); check the file").format(path=shown, reason=reason)
        ) from None


def _kind_of_file(path: Path) -> str:
    """What ``path``, which exists and is not a regular file, is: "a folder", "a FIFO", ..."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return N_("not readable")
    for test, kind in (
        (stat.S_ISDIR, N_("a folder")),
        (stat.S_ISFIFO, N_("a FIFO (named pipe)")),
        (stat.S_ISCHR, N_("a character device")),
        (stat.S_ISBLK, N_("a block device")),
        (stat.S_ISSOCK, N_("a socket")),
    ):
        if test(mode):
            return kind
    return N_("not a file")


def _check_size(path: str, size: int, limit: int, memory_factor: float, what: str = "") -> None:
    """Refuse ``size`` bytes above ``limit``, or when working on them needs more memory than is
    available. ``what`` says what the size is of (the file itself by default)."""
    described = _(what).format(size=describe_bytes(size)) if what else describe_bytes(size)
    if size > limit:
        raise TraceError(
            _(
                "{path}: {size} is more than graphlab reads ({limit}): profile fewer steps "
                "(torch.profiler.schedule with active=1..3) and export again"
            ).format(path=path, size=described, limit=describe_bytes(limit))
        )
    short = missing_bytes(int(size * memory_factor))
    if short:
        needed, available = short
        raise TraceError(
            _(
                "{path}: reading {size} needs about {needed} of memory and {available} is "
                "available: free some memory, or profile fewer steps "
                "(torch.profiler.schedule with active=1..3)"
            ).format(
                path=path,
                size=described,
                needed=describe_bytes(needed),
                available=describe_bytes(available),
            )
        )


def _gunzip(path: str, f, limit: int, memory_factor: float) -> bytearray:
    """Unpack a gzip file, refusing it as soon as it unpacks to more than it may.

    The gzip trailer states the unpacked size modulo 2**32; the real size is at least that, so a
    stated size beyond the limit is refused before unpacking anything (a damaged file may state
    anything: the message says so). The unpacked bytes grow in one buffer, never past the limit.
    """
    if f.seek(0, os.SEEK_END) < _GZIP_SMALLEST:
        raise TraceError(
            _("{path}: the gzip file ends early (truncated?); export the trace again").format(
                path=path
            )
        )
    f.seek(-4, os.SEEK_END)
    stated = int.from_bytes(f.read(4), "little")
    trailer = N_(
        "the {size} its gzip trailer says it unpacks to (if it is damaged, export it again)"
    )
    _check_size(path, stated, limit, memory_factor, trailer)
    f.seek(0)
    unpacked = bytearray()
    try:
        with gzip.GzipFile(fileobj=f) as unpacking:
            while block := unpacking.read(min(_BLOCK, limit + 1 - len(unpacked))):
                unpacked += block
                if len(unpacked) > limit:
                    over = N_("over {size} unpacked")
                    _check_size(path, len(unpacked), limit, memory_factor, over)
    except EOFError:
        raise TraceError(
            _("{path}: the gzip file ends early (truncated?); export the trace again").format(
                path=path
            )
        ) from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise TraceError(
            _("{path}: a damaged gzip file ({reason}); export the trace again").format(
                path=path, reason=exc
            )
        ) from None
    _check_size(path, len(unpacked), limit, memory_factor, N_("{size} unpacked"))
    return unpacked


def parse_error(path: str, data: bytes, exc: Exception, advice: str) -> TraceError:
    """One line for msgspec's complaint about the JSON in ``data``."""
    if isinstance(exc, RecursionError):
        return TraceError(_too_deep(path, advice))
    message = str(exc)
    if "truncated" in message:
        return TraceError(
            _("{path}: ends early (truncated?); re-export the trace, {advice}").format(
                path=path, advice=_(advice)
            )
        )
    if "UTF-8" in message:
        return TraceError(_not_text(path, advice))
    at = _BYTE_AT.search(message)
    position = int(at.group(1)) if at else 0
    if position < len(data) and (data[position] >= 0x80 or data[position] < 0x09):
        return TraceError(_not_text(path, advice))
    line = data.count(b"\n", 0, position) + 1
    reason = _BYTE_AT.sub("", message.removeprefix("JSON is malformed: ")).strip()
    return TraceError(_not_valid(path, reason, line, advice))


def _too_deep(path: str, advice: str) -> str:
    return _("{path}: JSON nested too deeply to be a trace; {advice}").format(
        path=path, advice=_(advice)
    )


def _not_text(path: str, advice: str) -> str:
    return _("{path}: not a text JSON file; {advice}").format(path=path, advice=_(advice))


def _not_valid(path: str, reason: str, line: int, advice: str) -> str:
    return _(
        "{path}: is not valid JSON ({reason}) at line {line}; re-export the trace, {advice}"
    ).format(path=path, reason=reason, line=line, advice=_(advice))


def python_json(path: str, data: bytes, advice: str):
    """Parse ``data`` with Python's json module, numbers with a fraction as Decimal."""
    try:
        return json.loads(data, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise TraceError(_not_valid(path, exc.msg, exc.lineno, advice)) from None
    except UnicodeDecodeError:
        raise TraceError(_not_text(path, advice)) from None
    except ValueError:  # json's only other ValueError: an integer with too many digits
        raise TraceError(
            _(
                "{path}: holds a number of more than {digits:,} digits, which no trace has; "
                "{advice}"
            ).format(path=path, digits=sys.get_int_max_str_digits(), advice=_(advice))
        ) from None
    except RecursionError:
        raise TraceError(_too_deep(path, advice)) from None


def objects_with_repeated_keys(data: bytes | bytearray) -> int:
    """How many JSON objects in ``data`` hold a key twice (0 when ``data`` is not JSON).

    JSON readers keep one of the two values silently, so an event that repeats ``"ts"`` is read
    with one of its two times and nothing says so.
    """
    repeated = 0

    def pairs(items: list) -> dict:
        nonlocal repeated
        if len({key for key, _ in items}) != len(items):
            repeated += 1
        return dict(items)

    try:
        json.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError):  # the reading proper says what is wrong with it
        return 0
    return repeated


def is_python_only(data: bytes, exc: msgspec.DecodeError) -> bool:
    """Whether msgspec stopped at a NaN or Infinity, which only Python's json reads."""
    at = _BYTE_AT.search(str(exc))
    return bool(at) and data.startswith(PYTHON_ONLY_TOKENS, int(at.group(1)))
