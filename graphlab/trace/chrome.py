"""Write an event table as a Chrome trace: the JSON that Perfetto and chrome://tracing open.

Times are written as microseconds with exactly three decimals, so no nanosecond is lost, and the
file reads back (:mod:`.kineto`) to the same table.
"""

from __future__ import annotations

import json
from typing import Any

from .events import GPU_KINDS, SCHEMA, EventTable

__all__ = ["chrome_trace_text"]

# Chrome-trace category written for each kind, the one Kineto uses for the same event.
_CHROME_CATEGORY = {
    "kernel": "kernel",
    "memcpy": "gpu_memcpy",
    "memset": "gpu_memset",
    "launch": "cuda_runtime",
    "sync": "cuda_runtime",
}


def _us(ns: int) -> str:
    """Integer nanoseconds as a microsecond JSON number with three decimals, exactly."""
    sign = "-" if ns < 0 else ""
    whole, frac = divmod(abs(ns), 1000)
    return f"{sign}{whole}.{frac:03d}"


def chrome_trace_text(t: EventTable) -> str:
    """The Chrome-trace JSON text of ``t``: one lane per host thread and per GPU stream."""
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


def _metadata_event(name: str, pid: int, tid: int, args: dict) -> str:
    return json.dumps({"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args})
