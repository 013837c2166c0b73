"""One flat table of GPU-related events, in integer nanoseconds.

An :class:`EventTable` holds what a profiler saw (or what the simulator or a recording says): host
calls that submit GPU work ("launch"), host calls that wait for the GPU ("sync"), and the GPU work
itself ("kernel", "memcpy", "memset"). Every column is a numpy array of the same length, sorted by
start time, so analyses are vectorised functions over the table rather than loops over objects.

Times are integer nanoseconds. Kineto writes microseconds with three decimals; graphlab keeps every
one of those nanoseconds (a replay's kernels start about 0.3 µs apart, so rounding to whole
microseconds would erase exactly what the course wants to show).

Tracks: host events live on ``thread``; GPU events on ``(device, stream)``. A host launch call and
the GPU work it submitted share a ``correlation`` id; every kernel of one CUDA Graph replay shares
the correlation id of its ``cudaGraphLaunch``.

:class:`~graphlab.trace.timeline.Timeline` is this table with its readers, writers and analysis
attached; the reader (:mod:`.kineto`), the analysis (:mod:`.gaps`) and the Chrome-trace writer
(:mod:`.chrome`) work on the table alone, so none of them needs the class above it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import numpy as np

from graphlab.errors import TraceError
from graphlab.language import gettext as _
from graphlab.support.printable import printable_json

__all__ = [
    "GPU_KINDS",
    "GRAPH_LAUNCH_CALLS",
    "KERNEL_LAUNCH_CALLS",
    "KINDS",
    "MAX_ABS_NS",
    "SCHEMA",
    "SYNC_CALLS",
    "EventTable",
    "TraceWarning",
    "call_name",
    "finite_json",
    "plain_json",
]

KINDS = ("launch", "kernel", "memcpy", "memset", "sync")
GPU_KINDS = ("kernel", "memcpy", "memset")
SCHEMA = "graphlab.timeline/1"

# The CUDA API calls analyses look for, by the name CUPTI gives them (see call_name).
KERNEL_LAUNCH_CALLS = frozenset(
    {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"}
)
GRAPH_LAUNCH_CALLS = frozenset({"cudaGraphLaunch", "cuGraphLaunch"})
SYNC_CALLS = frozenset(
    {
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
        "cuEventSynchronize",
    }
)
# CUPTI names some entry points with a version or per-thread-stream suffix:
# cudaLaunchKernel_v7000, cudaMemcpyAsync_ptsz, cudaLaunchKernel_ptsz_v7000, cudaMemcpy_ptds.
_SUFFIX = re.compile(r"(?:_ptsz|_ptds|_v\d+)+$")

# Largest time and duration a table holds: 2**62 ns, about 146 years. With starts in
# [-2**62, 2**62), durations below 2**62 and a whole table spanning at most 2**62 ns, every end,
# span and difference the analysis takes fits in int64 with room to spare.
MAX_ABS_NS = 2**62

_INT_COLUMNS = ("start_ns", "dur_ns", "device", "stream", "thread", "correlation")
_COLUMNS = ("kind", "name", *_INT_COLUMNS)


class TraceWarning(UserWarning):
    """A trace was read, but something in it is suspect (duplicated events, kernels without a
    duration, events without a phase): the figures may not mean what they seem."""


class EventTable:
    """A table of launch, sync, kernel, memcpy and memset events with nanosecond times.

    Args:
        kind: one of :data:`KINDS` per event.
        name: kernel name or runtime call name per event.
        start_ns, dur_ns: integer nanoseconds; durations must not be negative.
        device, stream: GPU index and stream id of GPU events (-1 for host events).
        thread: host thread id of host events (-1 for GPU events).
        correlation: links a launch call to the GPU work it submitted (-1 if none).
        meta: JSON-serialisable facts about where the table came from (``source``, ``gpu``, ...).

    Omitted integer columns are filled with -1. Rows are sorted by ``start_ns`` (stable, so events
    that start together keep their given order). Columns are read-only numpy arrays.
    """

    __slots__ = ("_columns", "meta")

    def __init__(
        self,
        kind,
        name,
        start_ns,
        dur_ns,
        device=None,
        stream=None,
        thread=None,
        correlation=None,
        meta: Mapping[str, Any] | None = None,
    ):
        kinds = np.asarray(kind, dtype=str).reshape(-1)
        n = len(kinds)
        known = np.zeros(n, dtype=bool)
        for k in KINDS:
            known |= kinds == k
        if not known.all():
            unknown = sorted(set(kinds[~known].tolist()))
            raise TraceError(
                _("unknown event kind(s) {unknown}: use one of {kinds}").format(
                    unknown=unknown, kinds=list(KINDS)
                )
            )
        columns: dict[str, np.ndarray] = {"kind": kinds.astype("U6")}
        columns["name"] = np.array(name, dtype=object).reshape(-1)
        given = {
            "start_ns": start_ns,
            "dur_ns": dur_ns,
            "device": device,
            "stream": stream,
            "thread": thread,
            "correlation": correlation,
        }
        for col, values in given.items():
            if values is None:
                columns[col] = np.full(n, -1, dtype=np.int64)
                continue
            try:
                array = np.asarray(values)
            except (OverflowError, ValueError, TypeError) as exc:
                raise TraceError(
                    _("column {column!r} cannot be read as integers ({reason})").format(
                        column=col, reason=exc
                    )
                ) from None
            if array.size and array.dtype.kind not in "iu":
                raise TraceError(
                    _(
                        "column {column!r} must hold integers (nanoseconds or ids), got {dtype}: "
                        "convert times to integer nanoseconds first"
                    ).format(column=col, dtype=array.dtype)
                )
            if array.size and array.dtype.kind == "u" and array.max() > np.iinfo(np.int64).max:
                # Converting would wrap 2**64 - 1 round to -1.
                raise TraceError(
                    _(
                        "column {column!r} holds {value}, beyond what a 64-bit signed integer "
                        "holds: the data is damaged"
                    ).format(column=col, value=int(array.max()))
                )
            columns[col] = array.astype(np.int64).reshape(-1)
        for col in _COLUMNS:
            if len(columns[col]) != n:
                raise TraceError(
                    _(
                        "column {column!r} has {values} values but 'kind' has {kinds}: "
                        "every column needs one value per event"
                    ).format(column=col, values=len(columns[col]), kinds=n)
                )
        self._take(columns, meta)

    @classmethod
    def _of_columns(
        cls, columns: dict[str, np.ndarray], meta: Mapping[str, Any] | None
    ) -> EventTable:
        """A table of columns a reader built for it, taken over as they are (no copy).

        The reader vouches for their types: ``kind`` a ``U6`` array of :data:`KINDS`, ``name``
        an object array, the others int64, all of one length, none shared with anyone else.
        Times are still checked, and rows sorted, as for any table.
        """
        table = cls.__new__(cls)
        table._take(columns, meta)
        return table

    def _take(self, columns: dict[str, np.ndarray], meta: Mapping[str, Any] | None) -> None:
        """Check the times, sort the rows by start and keep the columns, read-only."""
        starts = columns["start_ns"]
        n = len(starts)
        if n:
            _check_times(starts, columns["dur_ns"])
        if n > 1 and np.any(starts[1:] < starts[:-1]):
            order = np.argsort(starts, kind="stable")
            columns = {col: values[order] for col, values in columns.items()}
        for values in columns.values():
            values.flags.writeable = False
        self._columns = columns
        self.meta: dict[str, Any] = dict(meta or {})

    # ----------------------------------------------------------------------------- columns

    kind = property(lambda self: self._columns["kind"], doc="Event kind, one of KINDS.")
    name = property(lambda self: self._columns["name"], doc="Kernel or runtime call name.")
    start_ns = property(lambda self: self._columns["start_ns"], doc="Start, int64 ns.")
    dur_ns = property(lambda self: self._columns["dur_ns"], doc="Duration, int64 ns.")
    device = property(lambda self: self._columns["device"], doc="GPU index (-1 on the host).")
    stream = property(lambda self: self._columns["stream"], doc="GPU stream (-1 on the host).")
    thread = property(lambda self: self._columns["thread"], doc="Host thread (-1 on the GPU).")
    correlation = property(
        lambda self: self._columns["correlation"], doc="Launch/GPU-work link id (-1 if none)."
    )

    @property
    def end_ns(self) -> np.ndarray:
        """End of each event: ``start_ns + dur_ns``."""
        return self.start_ns + self.dur_ns

    @property
    def is_gpu(self) -> np.ndarray:
        """Boolean mask of GPU-side events (kernel, memcpy, memset)."""
        return np.isin(self.kind, GPU_KINDS)

    def __len__(self) -> int:
        return len(self._columns["kind"])

    def __repr__(self) -> str:
        counts = ", ".join(
            f"{k}={int(np.count_nonzero(self.kind == k))}" for k in KINDS if np.any(self.kind == k)
        )
        source = self.meta.get("source", "?")
        return f"<{type(self).__name__} {len(self)} events ({counts or 'empty'}) from {source}>"

    def select(self, mask) -> EventTable:
        """The events picked by a boolean mask or an index array: a new table of this class."""
        picked = {col: values[mask] for col, values in self._columns.items()}
        return type(self)(**picked, meta=self.meta)

    def to_dict(self) -> dict[str, Any]:
        """graphlab's versioned JSON form: ``{"schema": "graphlab.timeline/1", ...}``.

        Columns are stored as lists; names are stored once in ``names`` and referred to by index
        in ``name``, because a timeline repeats the same few kernel names many times.
        """
        names, name_index = np.unique(self.name.astype(str), return_inverse=True)
        events: dict[str, list] = {
            "kind": self.kind.tolist(),
            "name": name_index.reshape(-1).tolist(),
        }
        for col in _INT_COLUMNS:
            events[col] = self._columns[col].tolist()
        return {"schema": SCHEMA, "meta": self.meta, "names": names.tolist(), "events": events}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EventTable:
        """Rebuild a table from :meth:`to_dict`'s output; TraceError if it is not one."""
        schema = data.get("schema") if isinstance(data, Mapping) else None
        if isinstance(schema, str) and schema.startswith("graphlab.timeline/") and schema != SCHEMA:
            raise TraceError(
                _(
                    "timeline schema {schema!r} is not one this graphlab reads ({known!r}): "
                    "upgrade graphlab (pip install -U cuda-graphlab) or re-save the timeline"
                ).format(schema=schema, known=SCHEMA)
            )
        if schema != SCHEMA:
            found = schema if isinstance(data, Mapping) else type(data).__name__
            raise TraceError(
                _(
                    "not a graphlab timeline (schema {found!r}, expected {known!r}): "
                    "pass the output of Timeline.to_dict() or a file written by Timeline.save()"
                ).format(found=found, known=SCHEMA)
            )
        try:
            events, names = data["events"], data["names"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise TypeError("'names' must be a list of strings")
            if not isinstance(events, Mapping):
                raise TypeError("'events' must be an object of columns")
            index = np.asarray(events["name"], dtype=np.int64)
            if len(index) and (index.min() < 0 or index.max() >= len(names)):
                raise IndexError("a name index points outside 'names'")
            name = np.asarray(names, dtype=object)[index] if len(index) else []
            # The constructor refuses non-integer columns (a float time would be truncated).
            int_columns = {col: np.asarray(events[col]) for col in _INT_COLUMNS}
            meta = printable_json(plain_json(data.get("meta")))
            return cls(kind=events["kind"], name=name, meta=meta, **int_columns)
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            if isinstance(exc, TraceError):
                raise
            raise TraceError(
                _(
                    "graphlab timeline data is damaged ({kind}: {reason}): "
                    "re-create it with Timeline.save()"
                ).format(kind=type(exc).__name__, reason=exc)
            ) from None


def _check_times(start: np.ndarray, dur: np.ndarray) -> None:
    """Refuse negative durations and times a table cannot hold (see MAX_ABS_NS)."""
    if dur.min() < 0:
        raise TraceError(_("an event has a negative duration: durations must be >= 0 ns"))
    low, high, longest = int(start.min()), int(start.max()), int(dur.max())
    if low < -MAX_ABS_NS or high >= MAX_ABS_NS or longest >= MAX_ABS_NS:
        worst = max((low, high, longest), key=abs)
        raise TraceError(
            _(
                "an event time of {time} ns is outside what a timeline holds (+-2**62 ns, about "
                "146 years): times are integer nanoseconds; the data is damaged or not in ns"
            ).format(time=worst)
        )
    span = int((start + dur).max()) - low
    if span > MAX_ABS_NS:
        raise TraceError(
            _(
                "the events span {span} ns, more than a timeline holds (2**62 ns, about 146 "
                "years): the data is damaged or mixes time bases"
            ).format(span=span)
        )


def call_name(name: str) -> str:
    """The CUDA API call a runtime event names, without CUPTI's version/per-thread suffix."""
    return _SUFFIX.sub("", name, count=1)


def finite_json(value: Any) -> tuple[Any, list[str]]:
    """``value`` with every NaN or infinite float replaced by None, and where they were.

    JSON has no NaN: Python's json would write a bare ``NaN`` that other readers refuse.
    """
    found: list[str] = []

    def clean(node: Any, where: str) -> Any:
        if isinstance(node, float) and not math.isfinite(node):
            found.append(where or "(the value itself)")
            return None
        if isinstance(node, Mapping):
            return {k: clean(v, f"{where}.{k}" if where else str(k)) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            return [clean(v, f"{where}[{i}]") for i, v in enumerate(node)]
        return node

    return clean(value, ""), found


def plain_json(value: Any) -> Any:
    """``value`` with Decimals (from JSON parsed with parse_float=Decimal) turned into floats."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_json(v) for v in value]
    return value
