"""Write event tables as Chrome traces: the JSON that Perfetto and chrome://tracing open.

Times are written as microseconds with exactly three decimals, so no nanosecond is lost, and the
file reads back (:mod:`.kineto`) to the same table. The text is written a batch of events at a
time into an open file, so a timeline of millions of events never exists as one string.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

import numpy as np

from .events import GPU_KINDS, SCHEMA, EventTable, TraceWarning, finite_json

__all__ = ["chrome_trace_text", "write_chrome_trace", "write_side_by_side"]

# Chrome-trace category written for each kind, the one Kineto uses for the same event.
_CHROME_CATEGORY = {
    "kernel": "kernel",
    "memcpy": "gpu_memcpy",
    "memset": "gpu_memset",
    "launch": "cuda_runtime",
    "sync": "cuda_runtime",
}
_BATCH = 50_000  # events formatted and written at a time
SIDE_BY_SIDE_STREAM_TID = 1000  # in a side-by-side trace, stream s is thread 1000 + s


def chrome_trace_text(t: EventTable) -> str:
    """The Chrome-trace JSON text of ``t`` (see :func:`write_chrome_trace`)."""
    out = io.StringIO()
    write_chrome_trace(t, out)
    return out.getvalue()


def write_chrome_trace(t: EventTable, out: TextIO) -> None:
    """Write ``t`` as a Chrome trace: one lane per host thread and per GPU stream.

    The host is one process and each GPU another; ``t.meta`` travels in a ``graphlab`` header so
    that the file reads back to the same table.
    """
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
    for tid in sorted(set(t.thread[~gpu].tolist())):
        lanes.append(_metadata_event("thread_name", host_pid, tid, {"name": f"thread {tid}"}))
    for d, s in sorted(set(zip(t.device[gpu].tolist(), t.stream[gpu].tolist(), strict=True))):
        lanes.append(_metadata_event("thread_name", d, s, {"name": f"stream {s}"}))
    header = {
        "schemaVersion": 1,
        "displayTimeUnit": "ns",
        "graphlab": {"schema": SCHEMA, "meta": _finite_meta(t.meta)},
    }
    out.write(json.dumps(header, separators=(",", ":"))[:-1] + ',"traceEvents":[\n')
    out.write(",\n".join(lanes))
    pid = np.where(gpu, t.device, host_pid)
    tid = np.where(gpu, t.stream, t.thread)
    for lines in _event_lines(t, pid, tid, correlation_shift=0):
        out.write(",\n" + lines)
    out.write("\n]}\n")


def write_side_by_side(timelines: Mapping[str, EventTable], out: TextIO) -> None:
    """Write several timelines as one Chrome trace, one process per name, all from time 0.

    Each timeline's host threads and GPU streams become labelled threads of its process (stream
    ``s`` is thread ``1000 + s``); correlation ids are shifted so that each stays unique in the
    file and still links a launch to its own GPU work. For viewing runs side by side (Perfetto,
    chrome://tracing); this file does not read back into one table.
    """
    out.write('{"displayTimeUnit":"ns","traceEvents":[\n')
    shift = 0
    first = True
    for pid, (label, t) in enumerate(timelines.items(), start=1):
        gpu = t.is_gpu
        tid = np.where(gpu, SIDE_BY_SIDE_STREAM_TID + t.stream, t.thread)
        lanes = [_metadata_event("process_name", pid, 0, {"name": label})]
        lanes += [
            _metadata_event("thread_name", pid, thread, {"name": f"host thread {thread}"})
            for thread in sorted(set(t.thread[~gpu].tolist()))
        ]
        lanes += [
            _metadata_event(
                "thread_name", pid, SIDE_BY_SIDE_STREAM_TID + s, {"name": f"stream {s}"}
            )
            for s in sorted(set(t.stream[gpu].tolist()))
        ]
        out.write(("" if first else ",\n") + ",\n".join(lanes))
        first = False
        for lines in _event_lines(t, np.full(len(t), pid), tid, correlation_shift=shift):
            out.write(",\n" + lines)
        shift += int(t.correlation.max()) + 1 if len(t) else 0
    out.write("\n]}\n")


def _event_lines(
    t: EventTable, pid: np.ndarray, tid: np.ndarray, correlation_shift: int
) -> Iterator[str]:
    """The complete ("X") events of ``t``, a batch of lines at a time, on the given lanes."""
    names: dict[str, str] = {}  # each name's JSON text, encoded once
    for lo in range(0, len(t), _BATCH):
        hi = min(lo + _BATCH, len(t))
        corr = t.correlation[lo:hi]
        columns = zip(
            t.kind[lo:hi].tolist(),
            t.name[lo:hi].tolist(),
            pid[lo:hi].tolist(),
            tid[lo:hi].tolist(),
            _us_texts(t.start_ns[lo:hi]),
            _us_texts(t.dur_ns[lo:hi]),
            np.where(corr >= 0, corr + correlation_shift, -1).tolist(),
            t.device[lo:hi].tolist(),
            t.stream[lo:hi].tolist(),
            strict=True,
        )
        lines = []
        for kind, name, p, th, ts, dur, c, device, stream in columns:
            quoted = names.get(name)
            if quoted is None:
                quoted = names[name] = json.dumps(str(name))
            args = f'"graphlab_kind":"{kind}"' + (f',"correlation":{c}' if c >= 0 else "")
            if kind in GPU_KINDS:
                args += f',"device":{device},"stream":{stream}'
            lines.append(
                f'{{"ph":"X","cat":"{_CHROME_CATEGORY[kind]}","name":{quoted},"pid":{p},'
                f'"tid":{th},"ts":{ts},"dur":{dur},"args":{{{args}}}}}'
            )
        yield ",\n".join(lines)


def _us_texts(ns: np.ndarray) -> list[str]:
    """Integer nanoseconds as microsecond JSON numbers with three decimals, exactly."""
    whole, frac = np.divmod(np.abs(ns), 1000)
    signs = np.where(ns < 0, "-", "").tolist()
    return [
        f"{sign}{w}.{f:03d}"
        for sign, w, f in zip(signs, whole.tolist(), frac.tolist(), strict=True)
    ]


def _finite_meta(meta: Mapping[str, Any]) -> Any:
    """``meta`` fit for JSON: NaN and infinities become null, with a warning (JSON has none)."""
    clean, where = finite_json(meta)
    if where:
        warnings.warn(
            f"timeline meta holds NaN or infinity (at {', '.join(where)}), which JSON cannot "
            "hold: written as null",
            TraceWarning,
            stacklevel=4,
        )
    return clean


def _metadata_event(name: str, pid: int, tid: int, args: dict) -> str:
    return json.dumps({"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args})
