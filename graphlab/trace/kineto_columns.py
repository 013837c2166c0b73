"""Kineto trace events into the event table's columns, a batch at a time, and what is suspect.

Two routes give the same columns. The fast one decodes a batch of events (a chunk of the file's
event list, or of their texts, as :mod:`.kineto_chunks` cuts them) with msgspec into small
structs that keep only the fields the table uses (times stay as their text, read exactly by
:mod:`.decimals`), takes each field out of the batch at once while it is fresh in the CPU's cache,
and builds numpy columns from many batches together. The careful one reads already parsed events
(dicts, numbers as int, Decimal or float) one by one; it also reads a batch the fast route
refuses, one with anything unusual in it (a name that is a number, ``args`` that is a list), so
odd input costs time only where it is.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import compress, repeat
from typing import Any, NamedTuple

import msgspec
import numpy as np

from graphlab.errors import TraceError
from graphlab.language import N_
from graphlab.language import gettext as _

from .decimals import PAD, us_padded_texts_to_ns, us_to_ns
from .events import SYNC_CALLS, EventTable, call_name
from .jsonfile import objects_with_repeated_keys, python_json

__all__ = ["GROUP_EVENTS", "Columns", "Part"]

GROUP_EVENTS = 32_768  # events whose fields are turned into columns together

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
# The keys of an event's times, which an event holds once. A batch in which one of them occurs
# (as text) more often than it has events holds an event that repeats it, or a string equal to
# it: only then is the batch parsed again to count the objects that repeat a key. The usual trace
# pays one count of each key (see _time_keys). Other keys (an args' stream) are not counted, since
# each would cost as much again; the batches parsed again count them. A repeat is missed only
# when other events of its batch lack that key altogether.
_TS_KEY = np.frombuffer(b'"ts"', dtype="<u4")[0]
_DUR_KEY = np.frombuffer(b'"dur', dtype="<u4")[0]  # followed by a quote
_QUOTE = ord('"')


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


class Part(NamedTuple):
    """What a :class:`Columns` read, its batches flushed, for another to join after its own
    (:meth:`Columns.extend`): arrays and counts only, which a helper process sends back quickly.
    """

    names: list[str]  # in the order of their codes
    parts: dict[str, list[np.ndarray]]
    skipped: Counter
    host_pid: int | None
    no_phase: int
    repeated_keys: int


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
        self.repeated_keys = 0  # events (or their args) that hold a key twice
        self._parts: dict[str, list[np.ndarray]] = {col: [] for col in _COLUMN_NAMES}
        self._kind_of_name = np.zeros(0, dtype=np.int8)  # a host call's kind, by name code
        # The fast route's codes of events: an event of phase "X" has its category's, any other
        # (skipped whatever its category) its phase's. Per code: the kind its events get by
        # category, the key they are skipped under, and the category.
        self._by_category: dict[Any, int] = {}
        self._by_phase: dict[Any, int] = {}
        self._pair_kind = np.zeros(0, dtype=np.int8)
        self._pair_skip: list[tuple[str | None, bool]] = []
        self._pair_category: list[Any] = []
        self._gathered = _Gathered()

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

    def part(self) -> Part:
        """What was read here (after :meth:`flush`), for :meth:`extend`."""
        return Part(
            list(self.names),
            self._parts,
            self.skipped,
            self.host_pid,
            self.no_phase,
            self.repeated_keys,
        )

    def extend(self, part: Part) -> None:
        """Join ``part``, events read after those read here (both flushed), as if read here.

        Its names get their codes here, new ones the next codes in its order; what it skipped
        is counted after what was skipped here, so the keys keep the order they were first met
        in; its host process counts where none was met here.
        """
        codes = self.name_codes(part.names)
        for col, values in part.parts.items():
            self._parts[col] += [codes[v] for v in values] if col == "name" else values
        self.skipped.update(part.skipped)
        self.no_phase += part.no_phase
        self.repeated_keys += part.repeated_keys
        if self.host_pid is None:
            self.host_pid = part.host_pid

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
        """The event table of the columns (after :meth:`finish`), with ``meta``.

        The table takes the columns over without copying them: a million events' worth of
        copies costs more (fresh memory to fault in) than the rest of building the table.
        """
        names = np.empty(len(self.names), dtype=object)
        names[:] = list(self.names)
        columns = {
            "kind": np.array(_KIND_CODES, dtype="U6")[self.kind],
            "name": names[self.name],
            "start_ns": self.start,
            "dur_ns": self.dur,
            "device": self.device,
            "stream": self.stream,
            "thread": self.thread,
            "correlation": self.corr,
        }
        return EventTable._of_columns(columns, meta)

    def suspect_events(self) -> list[str]:
        """What is suspect in the events read: events without a phase, kernels without time."""
        notes = []
        if self.no_phase:
            notes.append(
                f"{_count(self.no_phase, 'event has', 'events have')} no 'ph' (phase) and "
                f"{'was' if self.no_phase == 1 else 'were'} skipped: the trace may be damaged or "
                "not from torch.profiler"
            )
        if self.repeated_keys:
            notes.append(
                f"{_count(self.repeated_keys, 'event holds', 'events hold')} a key twice (or "
                f"{'its' if self.repeated_keys == 1 else 'their'} args do), and only one of the "
                "two values was read: was the trace edited or written by another tool? Export "
                "it again"
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

    def add_text(
        self, text: bytes | bytearray, origin: str, advice: str, end: int | None = None
    ) -> None:
        """Read a JSON list of events, ``text[:end]`` (a reader's buffer may hold more): decoded
        by msgspec, or parsed the careful way when an event has an unusual shape.
        msgspec.DecodeError when msgspec cannot read it as JSON; TraceError when Python's json
        cannot either, or at an event without a time."""
        where = f"{origin}: "
        end = len(text) if end is None else end
        try:
            events = _EVENTS.decode(memoryview(text)[:end])
        except msgspec.ValidationError:
            # The careful way reads the events after those before them, so that the columns
            # keep the trace's order.
            self.flush(where)
            events = python_json(origin, bytes(text[:end]), advice)
            self.add_dicts(events, where)
        else:
            self.add_events(events)
        if max(_time_keys(text, end)) > len(events):
            self.repeated_keys += objects_with_repeated_keys(bytes(text[:end]))
        if len(self._gathered) >= GROUP_EVENTS:
            self.flush(where)

    def add_events(self, events: list[_Event]) -> None:
        """Take what the table needs out of a batch of decoded events (see :class:`_Gathered`).

        This runs while the batch's objects are fresh in the CPU's cache: each field is taken
        out once, and each decision is a look-up made once per distinct value (phase and
        category, name). The columns are built from many batches at once by :meth:`flush`.
        """
        # Comprehensions reach a struct's fields quickest.
        codes = self._codes(events)
        if None in codes:
            for phase, cat in dict.fromkeys([(e.ph, e.cat) for e in events]):
                self._add_pair(phase, cat)
            codes = self._codes(events)
        pair = np.fromiter(codes, dtype=np.int64, count=len(codes))
        gathered = self._gathered
        gathered.add("pair", pair)
        kind = self._pair_kind[pair]
        kept = np.flatnonzero(kind >= 0)  # the events the table keeps
        if not len(kept):
            return
        if len(kept) < len(events):
            events, kind = list(map(events.__getitem__, kept.tolist())), kind[kept]
        names = [e.name for e in events]
        pids = [e.pid for e in events]
        tids = [e.tid for e in events]
        starts = [e.ts for e in events]
        durs = [e.dur for e in events]
        args = [e.args for e in events]
        table = self.names
        new_names = dict.fromkeys(names)
        if set(map(type, new_names)) != {str}:
            names = ["" if n is msgspec.UNSET else str(n) for n in names]
            new_names = dict.fromkeys(names)
        for name in new_names:
            if name not in table:
                table[name] = len(table)
        gathered.add("name", np.fromiter(map(table.__getitem__, names), np.int64, len(names)))
        if None in args:
            args = [_NO_ARGS if a is None else a for a in args]
        corrs, devices = [a.correlation for a in args], [a.device for a in args]
        streams, written = [a.stream for a in args], [a.graphlab_kind for a in args]
        if written.count(None) == len(written):
            gathered.add("written", np.full(len(written), -1, dtype=np.int8))
        else:
            written_codes = map(_WRITTEN_KIND.get, written, repeat(-1))
            gathered.add("written", np.fromiter(written_codes, np.int8, len(written)))
        gathered.add("pid", _ids(pids, _MISSING))
        gathered.add("tid", _ids(tids, _MISSING))
        gathered.add("corr", _ids(corrs, _MISSING))
        gpu = kind < _FIRST_HOST_CODE
        if gpu.any():  # GPU work: its device and stream
            if not gpu.all():
                keep = gpu.tolist()
                devices, streams = list(compress(devices, keep)), list(compress(streams, keep))
            gathered.add("device", _ids(devices, _MISSING))
            gathered.add("stream", _ids(streams, _MISSING))
        gathered.add_times(starts, durs)

    def _codes(self, events: list[_Event]) -> list[int | None]:
        """Each event's code (None where its phase or category is new)."""
        by_category, by_phase = self._by_category.get, self._by_phase.get
        return [by_category(e.cat) if e.ph == "X" else by_phase(e.ph) for e in events]

    def _add_pair(self, phase: Any, cat: Any) -> None:
        """Give the events of this phase and category a code, unless they have one: the kind
        they get by category (a host call's is refined by name later), or -1 and the key they
        are counted under in ``skipped``."""
        key = None
        if phase != "X":
            if phase in self._by_phase:
                return
            self._by_phase[phase] = len(self._pair_kind)
            key = f"ph {'?' if phase is msgspec.UNSET else phase}"
            kind = -1
        else:
            if cat in self._by_category:
                return
            self._by_category[cat] = len(self._pair_kind)
            kind = _kind_code(_lower(cat), "", None)
            if kind is None:
                key, kind = _lower(cat) or "uncategorised", -1
        self._pair_kind = np.append(self._pair_kind, np.int8(kind))
        self._pair_skip.append((key, phase is msgspec.UNSET))
        self._pair_category.append(cat)

    def flush(self, where: str) -> None:
        """Build the columns of the events gathered since the last flush, and count what was
        skipped. TraceError at the first event without a time."""
        gathered, self._gathered = self._gathered, _Gathered()
        if not len(gathered):
            return
        pair = gathered.column("pair")
        counts = np.bincount(pair, minlength=len(self._pair_kind)).tolist()
        for (key, no_phase), count in zip(self._pair_skip, counts, strict=True):
            if key is not None and count:  # pairs in the order they were first seen
                self.skipped[key] += count
                self.no_phase += count if no_phase else 0
        kind = self._pair_kind[pair]
        kept = kind >= 0
        kind, pair = kind[kept], pair[kept]
        if not len(kind):
            return
        name = gathered.column("name")
        host = kind >= _FIRST_HOST_CODE
        gpu = ~host
        if host.any():
            written = gathered.column("written")[host]
            kind[host] = np.where(written >= 0, written, self._kind_by_name()[name[host]])
        start, dur = gathered.times(where, self, pair, name)
        pid, tid, corr = (gathered.column(col) for col in ("pid", "tid", "corr"))
        host_pids = pid[host & (pid != _MISSING)]
        if self.host_pid is None and len(host_pids):
            self.host_pid = int(host_pids[0])
        tid = np.where(tid == _MISSING, -1, tid)
        # A GPU event's device and stream are its args', else its pid and tid.
        device, stream = np.full(len(kind), -1), np.full(len(kind), -1)
        gpu_device, gpu_stream = gathered.column("device"), gathered.column("stream")
        pid_device = np.where(pid == _MISSING, -1, pid)[gpu]
        device[gpu] = np.where(gpu_device == _MISSING, pid_device, gpu_device)
        stream[gpu] = np.where(gpu_stream == _MISSING, tid[gpu], gpu_stream)
        self.add(
            kind=kind,
            name=name,
            start=start,
            dur=dur,
            device=device,
            stream=stream,
            thread=np.where(host, tid, -1),
            corr=np.where(corr == _MISSING, -1, corr),
        )

    def _kind_by_name(self) -> np.ndarray:
        """The kind of a host call by its name's code, each name's worked out once per trace."""
        known = self._kind_of_name
        if len(known) < len(self.names):
            names = list(self.names)[len(known) :]
            more = [_kind_code("cuda_runtime", name, None) for name in names]
            known = self._kind_of_name = np.concatenate((known, np.array(more, dtype=np.int8)))
        return known


# Timeline.to_chrome_trace writes the kind of each host event; only these are trusted.
_WRITTEN_KIND = {"launch": _CODE["launch"], "sync": _CODE["sync"]}


class _Gathered:
    """What :meth:`Columns.add_events` takes out of decoded batches for :meth:`Columns.flush`.

    Compact arrays only, no reference to the events: per event its (phase, category) code; per
    kept event its name code, the kind written in its args (-1: none), its pid, tid and
    correlation id (:data:`_MISSING` where there is none), and its 'ts' and 'dur' texts, each
    after :data:`PAD`; per GPU event its device and stream.
    """

    def __init__(self):
        self._parts: dict[str, list[np.ndarray]] = {}
        self.events = 0
        self.ts, self.dur = bytearray(), bytearray()

    def __len__(self) -> int:
        return self.events

    def add(self, col: str, values: np.ndarray) -> None:
        self._parts.setdefault(col, []).append(values)
        if col == "pair":
            self.events += len(values)

    def column(self, col: str) -> np.ndarray:
        parts = self._parts.get(col, [])
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def add_times(self, starts: list, durs: list) -> None:
        for col, text, values in (("ts_length", self.ts, starts), ("dur_length", self.dur, durs)):
            self.add(col, np.fromiter(map(len, values), dtype=np.int64, count=len(values)))
            text += PAD
            text += PAD.join(values)

    def times(self, where: str, columns: Columns, pair: np.ndarray, name: np.ndarray):
        """Start and duration in ns of each kept event; TraceError at the first that has none.

        ``pair`` and ``name`` are the events' codes, to name a bad one in the message.
        """
        ts_length, dur_length = self.column("ts_length"), self.column("dur_length")
        start, start_ok = us_padded_texts_to_ns(self.ts, ts_length)
        dur, dur_ok = us_padded_texts_to_ns(self.dur, dur_length)
        # The texts the quick reading leaves (an exponent, many decimals, no 'dur') are read
        # one by one.
        bad = np.flatnonzero(~(start_ok & dur_ok) | (dur < 0))
        if not len(bad):
            return start, dur
        ts_end = np.cumsum(ts_length + len(PAD))
        dur_end = np.cumsum(dur_length + len(PAD))
        for i in bad.tolist():
            ts_value = _raw_number(self.ts[ts_end[i] - ts_length[i] : ts_end[i]], where)
            dur_value = _raw_number(self.dur[dur_end[i] - dur_length[i] : dur_end[i]], where)
            one_start = us_to_ns(ts_value)
            one_dur = us_to_ns(0 if dur_value is msgspec.UNSET else dur_value)
            if one_start is None or one_dur is None or one_dur < 0:
                cat = columns._pair_category[pair[i]]
                event_name = list(columns.names)[name[i]]
                raise _bad_times(where, event_name, _lower(cat), ts_value, dur_value)
            start[i], dur[i] = one_start, one_dur
        return start, dur


def _time_keys(text: bytes | bytearray, end: int) -> tuple[int, int]:
    """How often ``"ts"`` and ``"dur"`` occur in ``text[:end]``.

    The text is read as four-byte words from each of its first four bytes, and each word
    compared with the key's first four bytes (numpy): two and a half times as fast as
    ``bytes.count`` of the two keys, which was a fifth of the time a trace took to read.
    """
    data = np.frombuffer(text, dtype=np.uint8, count=end)
    ts = dur = 0
    for offset in range(min(4, end)):
        words = np.frombuffer(text, dtype="<u4", count=(end - offset) // 4, offset=offset)
        ts += int(np.count_nonzero(words == _TS_KEY))
        after = np.flatnonzero(words == _DUR_KEY) * 4 + offset + 4
        dur += int(np.count_nonzero(data[after[after < end]] == _QUOTE))
    return ts, dur


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


def _raw_number(raw: bytes | bytearray, where: str) -> Any:
    """A JSON value from its text, as Python's json reads it; UNSET when there was none.

    ``where`` ("path: ") names the file in messages.
    """
    if not len(raw):
        return msgspec.UNSET
    origin = where.removesuffix(": ") or _("the trace")
    return python_json(origin, bytes(raw), N_("export it again"))


def _bad_times(where: str, name: str, cat: str, ts: Any, dur: Any) -> TraceError:
    shown = [_("missing") if v is msgspec.UNSET or v is None else repr(v) for v in (ts, dur)]
    return TraceError(
        _(
            "{where}event {name!r} ({category}) has a missing, non-numeric or negative "
            "'ts'/'dur' ({ts}, {dur}): the trace is damaged; re-export it"
        ).format(where=where, name=name, category=cat, ts=shown[0], dur=shown[1])
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
