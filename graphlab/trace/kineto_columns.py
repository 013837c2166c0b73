"""Kineto trace events into the event table's columns, a batch at a time, and what is suspect.

Two routes give the same columns. The fast one decodes a batch of event texts with msgspec into
small structs that keep only the fields the table uses (times stay as their text, read exactly by
:mod:`.decimals`) and turns them into numpy columns a field at a time. The careful one reads
already parsed events (dicts, numbers as int, Decimal or float) one by one; it also reads a batch
the fast route refuses, one with anything unusual in it (a name that is a number, ``args`` that is
a list), so odd input costs time only where it is.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import compress
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from graphlab.errors import TraceError

from .decimals import us_texts_to_ns, us_to_ns
from .events import SYNC_CALLS, EventTable, call_name
from .jsonfile import parse_error, python_json

__all__ = ["BATCH_EVENTS", "Columns", "duplicated_events", "read_texts"]

BATCH_EVENTS = 2_000  # events decoded at a time (their memory is freed before the next batch)

# Host calls that submit work to a stream, recognised by name even when the trace holds no GPU
# event with their correlation id (the profiler window may have closed before the work ran).
_LAUNCH_PREFIXES = (
    "cudaLaunch",
    "cuLaunch",
    "cudaGraphLaunch",
    "cuGraphLaunch",
    "cudaMemcpy",
    "cuMemcpy",
    "cudaMemset",
    "cuMemset",
)
_GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
_HOST_CATEGORIES = {"cuda_runtime", "cuda_driver"}
# Kinds as small codes while reading; "other" is a runtime call that is neither launch nor sync
# by name, kept only if GPU work carries its correlation id.
_KIND_CODES = ("kernel", "memcpy", "memset", "launch", "sync", "other")
_CODE = {kind: code for code, kind in enumerate(_KIND_CODES)}
_FIRST_HOST_CODE = _CODE["launch"]
_INT64_MIN = np.iinfo(np.int64).min
_COLUMN_NAMES = ("kind", "name", "start", "dur", "device", "stream", "thread", "corr")
# Stands for an id that is missing or not an integer while columns are combined; -1 in the table.
_MISSING = _INT64_MIN
_DIGITS = re.compile(r"-?[0-9]{1,18}")


class _Args(msgspec.Struct, frozen=True, gc=False):
    """The fields of an event's ``args`` that the table uses."""

    correlation: int | str | None = None
    device: int | str | None = None
    stream: int | str | None = None
    graphlab_kind: str | None = None


_NO_ARGS = _Args()


class _Event(msgspec.Struct, gc=False):
    """The fields of a trace event that the table uses; times stay as their JSON text."""

    ph: str | msgspec.UnsetType | None = msgspec.UNSET
    cat: str | msgspec.UnsetType | None = msgspec.UNSET
    name: str | msgspec.UnsetType | None = msgspec.UNSET
    pid: int | str | None = None
    tid: int | str | None = None
    ts: msgspec.Raw = msgspec.Raw()
    dur: msgspec.Raw = msgspec.Raw()
    args: _Args | None = None


_EVENTS = msgspec.json.Decoder(list[_Event])
_PHASE_AND_CATEGORY = attrgetter("ph", "cat")


class Columns:
    """The table's columns as they are read, batch after batch, in the trace's order.

    Each batch adds numpy arrays; :meth:`finish` joins them into the attributes ``kind`` (codes
    into ``_KIND_CODES``), ``name`` (codes into ``names``), ``start``, ``dur``, ``device``,
    ``stream``, ``thread`` and ``corr``.
    """

    def __init__(self):
        self.names: dict[str, int] = {}  # each distinct name once, with its code
        self.skipped: Counter = Counter()
        self.host_pid: int | None = None
        self.no_phase = 0
        self._parts: dict[str, list[np.ndarray]] = {col: [] for col in _COLUMN_NAMES}

    def add(self, **columns: np.ndarray) -> None:
        for col, values in columns.items():
            self._parts[col].append(values)

    def name_codes(self, names: list[str]) -> np.ndarray:
        """The code of each name, giving each new name the next code."""
        table = self.names
        for name in dict.fromkeys(names):
            if name not in table:
                table[name] = len(table)
        return np.fromiter(map(table.__getitem__, names), dtype=np.int64, count=len(names))

    def finish(self) -> None:
        """Join the batches, and keep a runtime call that is neither launch nor sync by name as a
        launch only if GPU work carries its correlation id.

        (cudaEventRecord, cudaGetDevice, cudaStreamIsCapturing ... submit no work of their own.)
        """
        for col, parts in self._parts.items():
            setattr(self, col, np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
        other = self.kind == _CODE["other"]
        if not other.any():
            return
        gpu_correlations = self.corr[(self.kind < _FIRST_HOST_CODE) & (self.corr >= 0)]
        launched = other & (self.corr >= 0) & np.isin(self.corr, gpu_correlations)
        drop = other & ~launched
        if drop.any():
            self.skipped["cuda_runtime (neither launch nor sync)"] += int(drop.sum())
        self.kind = np.where(launched, _CODE["launch"], self.kind)
        for col in _COLUMN_NAMES:
            setattr(self, col, getattr(self, col)[~drop])

    def table(self, meta: dict[str, Any]) -> EventTable:
        """The event table of the columns (after :meth:`finish`), with ``meta``."""
        names = np.empty(len(self.names), dtype=object)
        names[:] = list(self.names)
        return EventTable(
            kind=np.array(_KIND_CODES)[self.kind],
            name=names[self.name],
            start_ns=self.start,
            dur_ns=self.dur,
            device=self.device,
            stream=self.stream,
            thread=self.thread,
            correlation=self.corr,
            meta=meta,
        )

    def suspect_events(self) -> list[str]:
        """What is suspect in the events read: events without a phase, kernels without time."""
        notes = []
        if self.no_phase:
            notes.append(
                f"{_count(self.no_phase, 'event has', 'events have')} no 'ph' (phase) and "
                f"{'was' if self.no_phase == 1 else 'were'} skipped: the trace may be damaged or "
                "not from torch.profiler"
            )
        flat = int(np.count_nonzero((self.kind == _CODE["kernel"]) & (self.dur == 0)))
        if flat:
            notes.append(
                f"{_count(flat, 'kernel has', 'kernels have')} a missing or zero duration: "
                "counted as kernels, adding no busy time"
            )
        return notes

    @classmethod
    def of_dicts(cls, events: list, where: str) -> Columns:
        columns = cls()
        columns.add_dicts(events, where)
        return columns

    def add_dicts(self, events: list, where: str) -> None:
        """Read parsed events one by one (numbers as int, Decimal or float)."""
        rows: list[tuple] = []
        for event in events:
            if not isinstance(event, dict) or event.get("ph") != "X":
                phase = event.get("ph", "?") if isinstance(event, dict) else "?"
                self.skipped[f"ph {phase}"] += 1
                self.no_phase += isinstance(event, dict) and "ph" not in event
                continue
            cat = str(event.get("cat", "")).lower()
            name = str(event.get("name", ""))
            args = event.get("args")
            args = args if isinstance(args, dict) else {}
            code = _kind_code(cat, name, args.get("graphlab_kind"))
            if code is None:
                self.skipped[cat or "uncategorised"] += 1
                continue
            start, dur = us_to_ns(event.get("ts")), us_to_ns(event.get("dur", 0))
            if start is None or dur is None or dur < 0:
                raise _bad_times(where, name, cat, event.get("ts"), event.get("dur"))
            corr = _int(args.get("correlation"))
            if code < _FIRST_HOST_CODE:
                device = _int(args.get("device"), _int(event.get("pid")))
                stream = _int(args.get("stream"), _int(event.get("tid")))
                thread = -1
            else:
                device = stream = -1
                thread = _int(event.get("tid"))
                if self.host_pid is None:
                    self.host_pid = _int(event.get("pid"), None)
            rows.append((code, name, start, dur, device, stream, thread, corr))
        code, name, *numbers = zip(*rows, strict=True) if rows else [()] * 8
        self.add(
            kind=np.array(code, dtype=np.int8),
            name=self.name_codes(list(name)),
            **{
                col: np.array(values, dtype=np.int64)
                for col, values in zip(_COLUMN_NAMES[2:], numbers, strict=True)
            },
        )

    def add_structs(self, events: list[_Event], where: str) -> None:
        """Read a batch of decoded events, column by column."""
        pairs = list(map(_PHASE_AND_CATEGORY, events))
        wanted = set()  # the (ph, cat) pairs of the events the table keeps
        for (phase, cat), count in Counter(pairs).items():
            if phase != "X":
                self.skipped[f"ph {'?' if phase is msgspec.UNSET else phase}"] += count
                self.no_phase += count if phase is msgspec.UNSET else 0
            elif _lower(cat) in _GPU_CATEGORIES or _lower(cat) in _HOST_CATEGORIES:
                wanted.add((phase, cat))
            else:
                self.skipped[_lower(cat) or "uncategorised"] += count
        selected = list(map(wanted.__contains__, pairs))
        kept = list(compress(events, selected))
        if not kept:
            return
        lowered = {pair: _lower(pair[1]) for pair in wanted}
        cats = list(map(lowered.__getitem__, compress(pairs, selected)))
        names = list(map(_NAME, kept))
        if not set(map(type, names)) <= {str}:
            names = ["" if n is msgspec.UNSET else str(n) for n in names]
        args = list(map(_ARGS, kept))
        if None in args:
            args = [_NO_ARGS if a is None else a for a in args]
        codes = self.name_codes(names)
        kind = _kinds(cats, names, codes, args)
        host = kind >= _FIRST_HOST_CODE
        gpu = ~host
        start, dur = _times(kept, where, names, cats)
        pid = _ids(list(map(_PID, kept)), _MISSING)
        tid = _ids(list(map(_TID, kept)))
        host_pids = pid[host & (pid != _MISSING)]
        if self.host_pid is None and len(host_pids):
            self.host_pid = int(host_pids[0])
        # A GPU event's device and stream are its args', else its pid and tid.
        gpu_args = list(compress(args, gpu.tolist()))
        device, stream = np.full(len(kept), -1), np.full(len(kept), -1)
        device[gpu] = _ids(list(map(_DEVICE, gpu_args)), np.where(pid == _MISSING, -1, pid)[gpu])
        stream[gpu] = _ids(list(map(_STREAM, gpu_args)), tid[gpu])
        self.add(
            kind=kind,
            name=codes,
            start=start,
            dur=dur,
            device=device,
            stream=stream,
            thread=np.where(host, tid, -1),
            corr=_ids(list(map(_CORRELATION, args))),
        )


_NAME, _ARGS, _PID, _TID = (attrgetter(a) for a in ("name", "args", "pid", "tid"))
_DEVICE, _STREAM, _CORRELATION, _FORCED = (
    attrgetter(a) for a in ("device", "stream", "correlation", "graphlab_kind")
)


def _kinds(cats: list[str], names: list[str], codes: np.ndarray, args: list[_Args]) -> np.ndarray:
    """The kind code of each kept event: from its category, and a runtime call's from its name
    (``codes`` are the names' codes) or the kind graphlab wrote into its args."""
    by_category = {c: _kind_code(c, "", None) for c in set(cats)}
    kind = np.fromiter(map(by_category.__getitem__, cats), dtype=np.int8, count=len(cats))
    host = kind >= _FIRST_HOST_CODE
    if not host.any():
        return kind
    mask = host.tolist()
    forced = list(map(_FORCED, compress(args, mask)))
    if forced.count(None) == len(forced):
        # The usual case, no kind written: each distinct name's kind is worked out once.
        host_names = list(compress(names, mask))
        _, first, inverse = np.unique(codes[host], return_index=True, return_inverse=True)
        per_name = [_kind_code("cuda_runtime", host_names[i], None) for i in first.tolist()]
        kind[host] = np.array(per_name, dtype=np.int8)[inverse.reshape(-1)]
        return kind
    keys = list(zip(compress(names, mask), forced, strict=True))
    by_name = {key: _kind_code("cuda_runtime", *key) for key in set(keys)}
    kind[host] = np.fromiter(map(by_name.__getitem__, keys), dtype=np.int8, count=len(keys))
    return kind


def _times(kept: list[_Event], where: str, names: list[str], cats: list[str]):
    """Start and duration in ns of each kept event; TraceError at the first that has none."""
    starts, durs = list(map(attrgetter("ts"), kept)), list(map(attrgetter("dur"), kept))
    # Both columns in one call: each call costs a few dozen numpy operations whatever its size.
    ns, ok = us_texts_to_ns(starts + durs)
    start, dur = ns[: len(kept)], ns[len(kept) :]
    start_ok, dur_ok = ok[: len(kept)], ok[len(kept) :]
    # The texts the quick reading leaves (an exponent, many decimals, no 'dur') are read one by one.
    for i in np.flatnonzero(~(start_ok & dur_ok) | (dur < 0)).tolist():
        ts_value, dur_value = _raw_number(starts[i]), _raw_number(durs[i])
        one_start = us_to_ns(ts_value)
        one_dur = us_to_ns(0 if dur_value is msgspec.UNSET else dur_value)
        if one_start is None or one_dur is None or one_dur < 0:
            raise _bad_times(where, names[i], cats[i], ts_value, dur_value)
        start[i], dur[i] = one_start, one_dur
    return start, dur


def read_texts(texts: list[msgspec.Raw], origin: str, advice: str) -> Columns:
    """Decode the events' texts a batch at a time; a batch the fast route refuses is re-read.

    ``origin`` names the file in messages and ``advice`` says how to export a good one.
    """
    columns = Columns()
    where = f"{origin}: "
    for begin in range(0, len(texts), BATCH_EVENTS):
        batch = texts[begin : begin + BATCH_EVENTS]
        text = _array_text(batch)
        try:
            columns.add_structs(_EVENTS.decode(text), where)
        except msgspec.ValidationError:
            # An event of an unusual shape: read this batch the careful way.
            columns.add_dicts(python_json(origin, text, advice), where)
        except msgspec.DecodeError as exc:  # invalid UTF-8 in a string the first pass skipped
            raise parse_error(origin, text, exc, advice) from None
        # The batch's texts are done with: let their memory go while the next batch is read.
        texts[begin : begin + BATCH_EVENTS] = [None] * len(batch)
    return columns


def _array_text(texts: list[msgspec.Raw]) -> bytes:
    """The JSON array of ``texts``, copying them once: the brackets ride on the first and last
    text (``b"[" + b",".join(texts) + b"]"`` would copy the whole batch three times)."""
    if len(texts) == 1:
        return b"[" + texts[0] + b"]"
    return b",".join([b"[" + texts[0], *texts[1:-1], bytes(texts[-1]) + b"]"])


def _lower(cat: Any) -> str:
    return "" if cat is msgspec.UNSET else str(cat).lower()


def _kind_code(cat: str, name: str, forced: Any) -> int | None:
    """The kind code of an event of category ``cat``; None when the table does not keep it."""
    if cat in _GPU_CATEGORIES:
        return _CODE[_GPU_CATEGORIES[cat]]
    if cat not in _HOST_CATEGORIES:
        return None
    # Timeline.to_chrome_trace writes the kind of each host event; trust only known ones.
    if forced in ("launch", "sync"):
        return _CODE[forced]
    call = call_name(name)
    if call in SYNC_CALLS:
        return _CODE["sync"]
    return _CODE["launch"] if call.startswith(_LAUNCH_PREFIXES) else _CODE["other"]


def _raw_number(raw: msgspec.Raw) -> Any:
    """A JSON value from its text, as Python's json reads it; UNSET when there was none."""
    return python_json("", bytes(raw), "") if len(raw) else msgspec.UNSET


def _bad_times(where: str, name: str, cat: str, ts: Any, dur: Any) -> TraceError:
    shown = ["missing" if v is msgspec.UNSET or v is None else repr(v) for v in (ts, dur)]
    return TraceError(
        f"{where}event {name!r} ({cat}) has a missing, non-numeric or negative 'ts'/'dur' "
        f"({shown[0]}, {shown[1]}): the trace is damaged; re-export it"
    )


def _int(value: Any, default: int | None = -1) -> int | None:
    """An int64 id from an int or a string of digits; ``default`` otherwise."""
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63:
        return value
    return default


def _ids(values: list, default: np.ndarray | int = -1) -> np.ndarray:
    """An int64 id per value, as :func:`_int` reads it; ``default`` (per value) otherwise.

    The usual case, all plain ints, is converted in one go.
    """
    if set(map(type, values)) <= {int}:
        try:
            ids = np.fromiter(values, dtype=np.int64, count=len(values))
            if not (ids == _INT64_MIN).any():
                return ids
        except OverflowError:
            pass
    ids = np.array([_int(v, _MISSING) for v in values], dtype=np.int64)
    return np.where(ids == _MISSING, default, ids)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def duplicated_events(t: EventTable) -> list[str]:
    """A note when some events appear twice, identical in every column (a merged or doubled
    trace). Rows are sorted by start, so twins are among the rows sharing a start with a neighbour.
    """
    start = t.start_ns
    if len(start) < 2:
        return []
    shared = np.zeros(len(start), dtype=bool)
    shared[1:] |= start[1:] == start[:-1]
    shared[:-1] |= start[1:] == start[:-1]
    rows = np.flatnonzero(shared)
    if not len(rows):
        return []
    keys = [
        np.unique(t.name[rows].astype(str), return_inverse=True)[1].reshape(-1),
        np.unique(t.kind[rows], return_inverse=True)[1].reshape(-1),
        *(getattr(t, col)[rows] for col in ("dur_ns", "device", "stream", "thread", "correlation")),
        t.start_ns[rows],
    ]
    order = np.lexsort(keys)
    same = np.ones(len(rows) - 1, dtype=bool)
    for key in keys:
        ordered = key[order]
        same &= ordered[1:] == ordered[:-1]
    twins = int(same.sum())
    if not twins:
        return []
    return [
        f"{_count(twins, 'event is an exact copy', 'events are exact copies')} of another event "
        "(same kind, name, times, device, stream, thread and correlation), and each copy is "
        "counted: was the trace merged or written twice? Export it again"
    ]
