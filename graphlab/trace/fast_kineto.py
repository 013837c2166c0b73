"""Read a large Kineto trace in seconds: the exact reader's event table, built column-wise.

The exact reader (:mod:`graphlab.trace.kineto`) parses every number as a :class:`~decimal.Decimal`
and walks the events one by one in Python; a million-event trace takes over half a minute on a
small machine. Here msgspec decodes only the fields graphlab uses (everything else in an event,
such as the ``args`` of a ``cpu_op``, is skipped without building Python objects), times are
kept as their JSON text and turned into integer nanoseconds by numpy, and the rules of the exact
reader (which events count, their kind, ids, the skipped counts, the meta) are applied to whole
columns.

:func:`read_fast` returns ``None`` whenever the file holds anything it does not treat exactly as
the exact reader does: a time that is not a plain decimal with at most three decimals (or above
10^15 µs), a field of an unexpected JSON type, a graphlab timeline file, a damaged or empty
trace. :func:`load_trace_fast`, which ``Timeline.from_chrome_trace`` calls, then falls back to
the exact reader, which gives the same result or the same error, only slower. Equality of the
two readers is tested on real and generated traces.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
import zlib
from collections import Counter
from decimal import Decimal
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, Raw, UnsetType

from .events import KINDS, EventTable, call_name
from .kineto import (
    _GPU_CATEGORIES,
    _HOST_CATEGORIES,
    MAX_TRACE_BYTES,
    _host_kind,
    _int,
    _meta,
    load_trace,
)

__all__ = ["load_trace_fast", "read_fast"]

_Id = int | str | None | UnsetType


class _Args(msgspec.Struct, gc=False):
    correlation: _Id = UNSET
    device: _Id = UNSET
    stream: _Id = UNSET
    graphlab_kind: str | UnsetType | None = UNSET


class _Event(msgspec.Struct, gc=False):
    # gc=False: a million small objects that hold no cycles need no tracking by the collector
    # (with it, decoding takes several times longer).
    ph: str | UnsetType | None = UNSET
    cat: str | UnsetType = UNSET
    name: str | UnsetType = UNSET
    pid: _Id = UNSET
    tid: _Id = UNSET
    ts: Raw = Raw(b"")
    dur: Raw = Raw(b"0")
    args: _Args | UnsetType | None = UNSET


class _Trace(msgspec.Struct):
    traceEvents: list[_Event]
    schema: Raw = Raw(b"null")
    graphlab: Raw = Raw(b"null")
    baseTimeNanoseconds: Raw = Raw(b"null")
    deviceProperties: Raw = Raw(b"null")


_DECODER = msgspec.json.Decoder(_Trace)
_NO_ARGS = _Args()
# Times up to 10^15 µs (31 years) have at most 15 integer digits, so their nanoseconds fit in
# int64 with room to spare; anything longer goes to the exact reader.
_MAX_INT_DIGITS = 15
_POW10 = 10 ** np.arange(4, dtype=np.int64)
# The bytes a plain JSON decimal is made of, plus the space that separates them when joined.
_NUMBER_BYTES = np.zeros(256, dtype=bool)
_NUMBER_BYTES[list(b"0123456789.- ")] = True
# Rows are classified with small codes: the index of their kind in KINDS, or one of these.
_HOST, _SKIP, _UNRESOLVED = -1, -2, -3
_CODE = {kind: code for code, kind in enumerate(KINDS)}
_FORCED = {"launch": _CODE["launch"], "sync": _CODE["sync"]}


def load_trace_fast(src) -> EventTable:
    """:func:`graphlab.trace.kineto.load_trace`, through :func:`read_fast` for a file path."""
    if isinstance(src, (str, os.PathLike)):
        fast = read_fast(src)
        if fast is not None:
            return fast
    return load_trace(src)


def read_fast(path: str | os.PathLike) -> EventTable | None:
    """The trace at ``path`` as an event table, or None when only the exact reader may read it."""
    raw = _file_bytes(Path(path))
    if raw is None:
        return None
    try:
        trace = _DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    del raw
    if _top(trace.schema) is not None:
        return None  # a graphlab timeline, or a graphlab file the exact reader explains
    return _table(trace, str(path))


def _file_bytes(path: Path) -> bytes | None:
    """The JSON text of a .json or gzipped .json file, or None when the exact reader should
    report on it (missing, empty, too large, unreadable)."""
    try:
        if not path.is_file() or not 0 < path.stat().st_size <= MAX_TRACE_BYTES:
            return None
        with path.open("rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        if not gzipped:
            return path.read_bytes()
        with gzip.open(path, "rb") as f:
            raw = f.read(MAX_TRACE_BYTES + 1)
        return raw if len(raw) <= MAX_TRACE_BYTES else None
    except (OSError, EOFError, zlib.error):
        return None


def _top(value: Raw) -> Any:
    """A top-level field parsed as the exact reader parses it (floats as Decimal)."""
    return json.loads(bytes(value), parse_float=Decimal)


def _table(trace: _Trace, origin: str) -> EventTable | None:
    events = trace.traceEvents
    phases = list(map(attrgetter("ph"), events))
    cats = list(map(attrgetter("cat"), events))

    # Per distinct category: its code, and the label the exact reader counts a skipped one under.
    code_of: dict[Any, int] = {}
    label_of: dict[Any, str] = {}
    for cat in set(cats):
        lowered = "" if cat is UNSET else cat.lower()
        label_of[cat] = lowered or "uncategorised"
        gpu_kind = _GPU_CATEGORIES.get(lowered)
        code_of[cat] = (
            _CODE[gpu_kind] if gpu_kind else _HOST if lowered in _HOST_CATEGORIES else _SKIP
        )
    codes = np.array(
        [code_of[c] if p == "X" else _SKIP for p, c in zip(phases, cats, strict=True)],
        dtype=np.int64,
    )
    keep = codes != _SKIP
    # Counter keeps first-seen order, so the skipped counts come out in the exact reader's order.
    skipped = Counter(
        label_of[cats[i]] if phases[i] == "X" else _phase_label(phases[i])
        for i in np.flatnonzero(~keep).tolist()
    )
    kept = list(compress(events, keep.tolist()))
    codes = codes[keep]
    del events, phases, cats
    if not kept:
        return None
    names = ["" if name is UNSET else name for name in map(attrgetter("name"), kept)]
    args = [_NO_ARGS if a is None or a is UNSET else a for a in map(attrgetter("args"), kept)]

    start = _nanoseconds(list(map(attrgetter("ts"), kept)))
    dur = _nanoseconds(list(map(attrgetter("dur"), kept)))
    if start is None or dur is None or (dur < 0).any():
        return None  # the exact reader reports the damaged event

    # Host calls: the kind their name says, unless graphlab wrote their kind into the trace.
    gpu = codes != _HOST
    host_rows = np.flatnonzero(~gpu)
    host_names = [names[r] for r in host_rows.tolist()]
    by_name = {n: _CODE.get(_host_kind(call_name(n)), _UNRESOLVED) for n in set(host_names)}
    codes[host_rows] = [by_name[n] for n in host_names]
    written = [args[r].graphlab_kind for r in host_rows.tolist()]
    for i in [i for i, kind in enumerate(written) if kind in _FORCED]:
        codes[host_rows[i]] = _FORCED[written[i]]

    n = len(kept)
    correlation = _ids(list(map(attrgetter("correlation"), args)), np.full(n, -1, np.int64))
    pid = _ids(list(map(attrgetter("pid"), kept)), np.full(n, -1, np.int64))
    tid = _ids(list(map(attrgetter("tid"), kept)), np.full(n, -1, np.int64))
    gpu_rows = np.flatnonzero(gpu)
    device = np.full(n, -1, np.int64)
    stream = np.full(n, -1, np.int64)
    device[gpu_rows] = _ids([args[r].device for r in gpu_rows.tolist()], pid[gpu_rows])
    stream[gpu_rows] = _ids([args[r].stream for r in gpu_rows.tolist()], tid[gpu_rows])
    thread = np.where(gpu, -1, tid)
    host_pid = next(
        (p for p in (_int(kept[r].pid, None) for r in host_rows.tolist()) if p is not None), None
    )

    # Host calls that are neither launch nor sync by name stay only as launches whose
    # correlation id some GPU work carries (as the exact reader resolves them).
    rows = np.ones(n, dtype=bool)
    other = np.flatnonzero(codes == _UNRESOLVED)
    if len(other):
        gpu_correlations = correlation[gpu & (correlation >= 0)]
        launch = (correlation[other] >= 0) & np.isin(correlation[other], gpu_correlations)
        codes[other[launch]] = _CODE["launch"]
        rows[other[~launch]] = False
        if not launch.all():
            skipped["cuda_runtime (neither launch nor sync)"] += int((~launch).sum())
        if not rows.any():
            return None  # nothing left to show: the exact reader says so

    data = {
        key: _top(getattr(trace, key))
        for key in ("graphlab", "baseTimeNanoseconds", "deviceProperties")
    }
    meta = _meta(data, origin, skipped)
    if host_pid is not None:
        meta.setdefault("host_pid", host_pid)
    return EventTable(
        kind=np.array(KINDS)[codes[rows]],
        name=np.array(names, dtype=object)[rows],
        start_ns=start[rows],
        dur_ns=dur[rows],
        device=device[rows],
        stream=stream[rows],
        thread=thread[rows],
        correlation=correlation[rows],
        meta=meta,
    )


def _phase_label(phase: Any) -> str:
    return "ph " + ("?" if phase is UNSET else str(phase))


def _ids(values: list, default: np.ndarray) -> np.ndarray:
    """Ids as the exact reader's ``_int(value, default)`` reads them, per row."""
    if set(map(type, values)) == {int}:
        try:
            ids = np.array(values, dtype=np.int64)
        except OverflowError:
            ids = None
        if ids is not None and not (ids == np.iinfo(np.int64).min).any():
            return ids
    return np.array(
        [_int(v, d) for v, d in zip(values, default.tolist(), strict=True)], dtype=np.int64
    )


def _nanoseconds(texts: list) -> np.ndarray | None:
    """JSON numbers written as ``-?DIGITS[.D{1,3}]`` (microseconds) as exact int64 nanoseconds.

    ``texts`` are the numbers' JSON texts (msgspec Raw or bytes). None if any is written
    otherwise (an exponent, more decimals, a string, null, a missing time) or has more than 15
    integer digits. All texts are joined into one buffer; its shape is checked with array
    operations (which characters, where the sign and the dot are), then the dots are dropped and
    numpy parses every number as an integer of thousandths of a µs in one call.
    """
    count = len(texts)
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    lengths = np.fromiter(map(len, texts), np.int64, count)
    if lengths.min() == 0:
        return None
    joined = b" ".join(texts)
    buffer = np.frombuffer(joined, dtype=np.uint8)
    if not _NUMBER_BYTES[buffer].all():
        return None
    starts = np.cumsum(lengths + 1) - (lengths + 1)
    ends = starts + lengths
    negative = buffer[starts] == ord("-")
    if np.count_nonzero(buffer == ord("-")) != np.count_nonzero(negative):
        return None  # a minus sign inside a number
    dots = np.flatnonzero(buffer == ord("."))
    owner = np.searchsorted(starts, dots, side="right") - 1
    if len(dots) and np.bincount(owner, minlength=count).max() > 1:
        return None
    point = ends.copy()
    point[owner] = dots
    decimals = ends - point - (point < ends)
    whole = point - starts - negative
    if decimals.max() > 3 or whole.min() < 1 or whole.max() > _MAX_INT_DIGITS:
        return None
    if len(dots) and decimals[owner].min() < 1:
        return None  # "1." is not JSON; never guess
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        values = np.fromstring(joined.replace(b".", b""), dtype=np.int64, sep=" ")
    if len(values) != count:
        return None
    return values * _POW10[3 - decimals]
