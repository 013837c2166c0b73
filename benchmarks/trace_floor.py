"""The floor for reading a Kineto trace's GPU busy time: what ``graphlab gaps`` is measured against.

Run ``python benchmarks/trace_floor.py TRACE.json [--per-stream]``. It does the least a correct
reader must do, with the fastest tools at hand and the cyclic garbage collector off: msgspec
decodes every event into a typed struct holding only ``cat``, ``tid``, ``ts``, ``dur`` and
``args.stream`` (the times kept as their JSON text), the GPU events' times become exact integer
nanoseconds (Kineto's three decimals: the text without its point; any other text through
Decimal), and a numpy interval union gives the device's span, busy time and gaps. ``--per-stream``
also unions each stream's intervals, as ``graphlab gaps`` does for a trace with many streams.

It prints one JSON object with the figures in µs, the same keys as ``graphlab gaps --json`` where
they mean the same, so the two can be checked against each other.
"""

from __future__ import annotations

import gc
import sys
from decimal import Decimal

import msgspec
import numpy as np

gc.disable()

GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})


class Args(msgspec.Struct, gc=False):
    stream: int | None = None


class Event(msgspec.Struct, gc=False):
    cat: str = ""
    tid: int | str | None = None
    ts: msgspec.Raw = msgspec.Raw()
    dur: msgspec.Raw = msgspec.Raw()
    args: Args | None = None


class Trace(msgspec.Struct, gc=False):
    traceEvents: list[Event]  # the JSON key


def ns(text: msgspec.Raw) -> int:
    """Microseconds as JSON text to exact integer nanoseconds."""
    b = bytes(text)
    if len(b) > 4 and b[-4] == 46:  # three decimals, as Kineto writes: "123.456"
        return int(b[:-4] + b[-3:])
    return int(Decimal(b.decode()) * 1000) if b else 0


def union(start: np.ndarray, end: np.ndarray) -> tuple[int, int, int]:
    """Span, busy time and number of gaps of intervals sorted by start, in ns."""
    reach = np.maximum.accumulate(end)
    new = np.empty(len(start), dtype=bool)
    new[0] = True
    new[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last_end = np.append(reach[first[1:] - 1], reach[-1])
    busy = int((last_end - start[first]).sum())
    return int(reach[-1] - start[0]), busy, len(first) - 1


def per_stream(stream: np.ndarray, start: np.ndarray, end: np.ndarray) -> dict[str, int]:
    """Busy ns and gap count of every stream, unioned at once over (stream, start) order."""
    order = np.lexsort((start, stream))
    stream, start, end = stream[order], start[order], end[order]
    lane_start = np.flatnonzero(np.append(True, stream[1:] != stream[:-1]))
    # Running maximum of end within each stream: offset each stream above the one before it.
    offset = np.zeros(len(stream), dtype=np.int64)
    shift = int(end.max() - start.min()) + 1
    offset[lane_start] = shift
    offset = np.cumsum(offset)
    reach = np.maximum.accumulate(end + offset) - offset
    new = np.ones(len(start), dtype=bool)
    new[1:] = start[1:] > reach[:-1]
    new[lane_start] = True
    first = np.flatnonzero(new)
    last_end = np.append(reach[first[1:] - 1], reach[-1])
    busy = np.add.reduceat(last_end - start[first], np.searchsorted(first, lane_start))
    runs = np.diff(np.append(np.searchsorted(first, lane_start), len(first)))
    return {
        "streams": len(lane_start),
        "busy_ns_sum": int(busy.sum()),
        "gaps": int((runs - 1).sum()),
    }


def main() -> None:
    path = sys.argv[1]
    with open(path, "rb") as f:
        data = f.read()
    events = msgspec.json.decode(data, type=Trace).traceEvents
    del data
    gpu = [e for e in events if e.cat in GPU_CATEGORIES]
    start = np.fromiter((ns(e.ts) for e in gpu), dtype=np.int64, count=len(gpu))
    end = start + np.fromiter((ns(e.dur) for e in gpu), dtype=np.int64, count=len(gpu))
    order = np.argsort(start, kind="stable")
    span, busy, gaps = union(start[order], end[order])
    figures = {
        "kernels": sum(e.cat == "kernel" for e in gpu),
        "span_us": span / 1000,
        "busy_us": busy / 1000,
        "idle_us": (span - busy) / 1000,
        "gaps": {"count": gaps},
    }
    if "--per-stream" in sys.argv[2:]:
        stream = np.fromiter(
            (e.args.stream if e.args and e.args.stream is not None else e.tid for e in gpu),
            dtype=np.int64,
            count=len(gpu),
        )
        figures["per_stream"] = per_stream(stream, start, end)
    sys.stdout.write(msgspec.json.encode(figures).decode() + "\n")


if __name__ == "__main__":
    main()
