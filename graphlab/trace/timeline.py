"""One flat table of GPU-related events, in integer nanoseconds.

A :class:`Timeline` holds what a profiler saw (or what the simulator or a recording says): host
calls that submit GPU work ("launch"), host calls that wait for the GPU ("sync"), and the GPU work
itself ("kernel", "memcpy", "memset"). Every column is a numpy array of the same length, sorted by
start time, so analyses are vectorised functions over the table rather than loops over objects.

Times are integer nanoseconds. Kineto writes microseconds with three decimals; graphlab keeps every
one of those nanoseconds (a replay's kernels start about 0.3 µs apart, so rounding to whole
microseconds would erase exactly what the course wants to show).

Tracks: host events live on ``thread``; GPU events on ``(device, stream)``. A host launch call and
the GPU work it submitted share a ``correlation`` id; every kernel of one CUDA Graph replay shares
the correlation id of its ``cudaGraphLaunch``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.errors import TraceError
from graphlab.support.atomic import write_text_atomically

__all__ = [
    "GPU_KINDS",
    "GRAPH_LAUNCH_CALLS",
    "KERNEL_LAUNCH_CALLS",
    "KINDS",
    "SCHEMA",
    "SYNC_CALLS",
    "Timeline",
    "call_name",
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

_INT_COLUMNS = ("start_ns", "dur_ns", "device", "stream", "thread", "correlation")
_COLUMNS = ("kind", "name", *_INT_COLUMNS)

# Chrome-trace category written for each kind, the one Kineto uses for the same event.
_CHROME_CATEGORY = {
    "kernel": "kernel",
    "memcpy": "gpu_memcpy",
    "memset": "gpu_memset",
    "launch": "cuda_runtime",
    "sync": "cuda_runtime",
}


class Timeline:
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
            raise TraceError(f"unknown event kind(s) {unknown}: use one of {list(KINDS)}")
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
            array = np.asarray(values)
            if array.size and array.dtype.kind not in "iu":
                raise TraceError(
                    f"column {col!r} must hold integers (nanoseconds or ids), got {array.dtype}: "
                    "convert times to integer nanoseconds first"
                )
            columns[col] = array.astype(np.int64).reshape(-1)
        for col in _COLUMNS:
            if len(columns[col]) != n:
                raise TraceError(
                    f"column {col!r} has {len(columns[col])} values but 'kind' has {n}: "
                    "every column needs one value per event"
                )
        if n and columns["dur_ns"].min() < 0:
            raise TraceError("an event has a negative duration: durations must be >= 0 ns")
        starts = columns["start_ns"]
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
        return f"<Timeline {len(self)} events ({counts or 'empty'}) from {source}>"

    def select(self, mask) -> Timeline:
        """The events picked by a boolean mask or an index array, as a new Timeline (same meta)."""
        picked = {col: values[mask] for col, values in self._columns.items()}
        return Timeline(**picked, meta=self.meta)

    def summary(self):
        """Gap analysis of this timeline: a :class:`graphlab.trace.gaps.Summary`."""
        from .gaps import summarize

        return summarize(self)

    # ------------------------------------------------------------------- graphlab's own JSON

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
    def from_dict(cls, data: Mapping[str, Any]) -> Timeline:
        """Rebuild a Timeline from :meth:`to_dict`'s output; TraceError if it is not one."""
        schema = data.get("schema") if isinstance(data, Mapping) else None
        if isinstance(schema, str) and schema.startswith("graphlab.timeline/") and schema != SCHEMA:
            raise TraceError(
                f"timeline schema {schema!r} is not one this graphlab reads ({SCHEMA!r}): "
                "upgrade graphlab (pip install -U cuda-graphlab) or re-save the timeline"
            )
        if schema != SCHEMA:
            found = schema if isinstance(data, Mapping) else type(data).__name__
            raise TraceError(
                f"not a graphlab timeline (schema {found!r}, expected {SCHEMA!r}): "
                "pass the output of Timeline.to_dict() or a file written by Timeline.save()"
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
            meta = plain_json(data.get("meta"))
            return cls(kind=events["kind"], name=name, meta=meta, **int_columns)
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            if isinstance(exc, TraceError):
                raise
            raise TraceError(
                f"graphlab timeline data is damaged ({type(exc).__name__}: {exc}): "
                "re-create it with Timeline.save()"
            ) from None

    def save(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` atomically (temp file, then rename)."""
        try:
            text = json.dumps(self.to_dict(), separators=(",", ":"))
        except TypeError as exc:
            raise TraceError(f"timeline meta is not JSON-serialisable: {exc}") from None
        return write_text_atomically(path, text, TraceError)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Timeline:
        """Read a file written by :meth:`save`."""
        from .kineto import read_json

        return cls.from_dict(read_json(path))

    # ------------------------------------------------------------------------ Chrome traces

    @classmethod
    def from_chrome_trace(cls, src) -> Timeline:
        """Load a torch.profiler / Kineto Chrome trace.

        ``src`` is a path (``.json`` or ``.json.gz``), an already parsed dict, or a finished
        ``torch.profiler.profile`` object. A graphlab timeline file is accepted too. Raises
        :class:`~graphlab.errors.TraceError` with advice when the input is not a usable trace.
        """
        from .kineto import load_trace

        return load_trace(src)

    def to_chrome_trace(self, path: str | os.PathLike | None = None) -> str | Path:
        """Export as a Chrome trace (the JSON Perfetto and chrome://tracing open).

        Each event is a complete ("X") event with ``ts``/``dur`` in microseconds written with
        exactly three decimals, so no nanosecond is lost. Host threads and GPU streams become
        labelled lanes: one process for the host, one per GPU, one thread per host thread or
        stream. The file loads back with :meth:`from_chrome_trace` to the same table.
        Returns the written path, or the JSON text when ``path`` is None.
        """
        text = _chrome_trace_text(self)
        if path is None:
            return text
        return write_text_atomically(path, text, TraceError)


def call_name(name: str) -> str:
    """The CUDA API call a runtime event names, without CUPTI's version/per-thread suffix."""
    return _SUFFIX.sub("", name, count=1)


def _us(ns: int) -> str:
    """Integer nanoseconds as a microsecond JSON number with three decimals, exactly."""
    sign = "-" if ns < 0 else ""
    whole, frac = divmod(abs(ns), 1000)
    return f"{sign}{whole}.{frac:03d}"


def _chrome_trace_text(t: Timeline) -> str:
    gpu = t.is_gpu
    devices = sorted(set(t.device[gpu].tolist()))
    host_pid = t.meta.get("host_pid")
    if not isinstance(host_pid, int) or host_pid in devices:
        host_pid = (max(devices) + 1) if devices else 0
    gpu_name = t.meta.get("gpu")
    lanes: list[str] = [
        _metadata_event("process_name", host_pid, 0, {"name": "host"}),
        _metadata_event("process_sort_index", host_pid, 0, {"sort_index": 0}),
    ]
    for d in devices:
        label = f"GPU {d}" + (f" ({gpu_name})" if gpu_name else "")
        lanes.append(_metadata_event("process_name", d, 0, {"name": label}))
        lanes.append(_metadata_event("process_sort_index", d, 0, {"sort_index": 1 + d}))
    host_threads = sorted(set(t.thread[~gpu].tolist()))
    for tid in host_threads:
        lanes.append(_metadata_event("thread_name", host_pid, tid, {"name": f"thread {tid}"}))
    for d, s in sorted(set(zip(t.device[gpu].tolist(), t.stream[gpu].tolist(), strict=True))):
        lanes.append(_metadata_event("thread_name", d, s, {"name": f"stream {s}"}))

    events = []
    columns = zip(
        t.kind.tolist(),
        t.name.tolist(),
        t.start_ns.tolist(),
        t.dur_ns.tolist(),
        t.device.tolist(),
        t.stream.tolist(),
        t.thread.tolist(),
        t.correlation.tolist(),
        strict=True,
    )
    for kind, name, start, dur, device, stream, thread, corr in columns:
        args: dict[str, Any] = {"graphlab_kind": kind}
        if corr >= 0:
            args["correlation"] = corr
        if kind in GPU_KINDS:
            pid, tid = device, stream
            args["device"], args["stream"] = device, stream
        else:
            pid, tid = host_pid, thread
        events.append(
            f'{{"ph":"X","cat":"{_CHROME_CATEGORY[kind]}","name":{json.dumps(name)},'
            f'"pid":{pid},"tid":{tid},"ts":{_us(start)},"dur":{_us(dur)},'
            f'"args":{json.dumps(args, separators=(",", ":"))}}}'
        )
    header = {
        "schemaVersion": 1,
        "displayTimeUnit": "ns",
        "graphlab": {"schema": SCHEMA, "meta": t.meta},
    }
    head = json.dumps(header, separators=(",", ":"))[:-1]
    return head + ',"traceEvents":[\n' + ",\n".join(lanes + events) + "\n]}\n"


def plain_json(value: Any) -> Any:
    """``value`` with Decimals (from JSON parsed with parse_float=Decimal) turned into floats."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_json(v) for v in value]
    return value


def _metadata_event(name: str, pid: int, tid: int, args: dict) -> str:
    return json.dumps({"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args})
