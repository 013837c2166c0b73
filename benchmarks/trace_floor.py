"""The practical floor for reading a Kineto trace's kernel busy time exactly.

Run ``python benchmarks/trace_floor.py TRACE.json [--per-stream]``. It prints one JSON object:
the number of kernels, the span, the busy time (the union of the kernels' intervals) and the
number of idle gaps of the device, in integer nanoseconds, exact like ``graphlab gaps``. With
``--per-stream`` it also works out each stream's busy time and gaps, as ``graphlab gaps`` does
when a trace has several streams.

It is what a careful script would do and no more: msgspec decodes the document straight into
typed structs (the times kept as their raw JSON text, since a double cannot hold 16-digit
microseconds to the nanosecond), graphlab's vectorised decimal reader turns the texts into integer
nanoseconds, and numpy merges the intervals. The garbage collector is off, as the decode makes
millions of objects that hold no cycles. ``benchmarks/gaps_vs_floor.py`` compares
``graphlab gaps --json`` against it.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys

import msgspec
import numpy as np

from graphlab.trace.decimals import us_texts_to_ns, us_to_ns

_NO_TIME = msgspec.Raw(b"null")


class Event(msgspec.Struct):
    """The fields of a trace event that the busy time needs; the others are skipped."""

    ph: str = ""
    cat: str = ""
    tid: int | str = 0
    ts: msgspec.Raw = _NO_TIME
    dur: msgspec.Raw = _NO_TIME


class Trace(msgspec.Struct):
    traceEvents: list[Event]


def exact_ns(texts: list[msgspec.Raw]) -> np.ndarray:
    """Integer ns of JSON number texts in µs; the few the fast reader leaves go one by one."""
    ns, ok = us_texts_to_ns(texts)
    for i in np.flatnonzero(~ok):
        value = us_to_ns(msgspec.json.decode(texts[i], float_hook=_decimal))
        if value is None:
            raise SystemExit(f"not a time in µs: {bytes(texts[i])!r}")
        ns[i] = value
    return ns


def _decimal(text: str):
    from decimal import Decimal

    return Decimal(text)


def union(starts: np.ndarray, ends: np.ndarray) -> tuple[int, int]:
    """Busy ns and gap count of intervals sorted by start: a gap wherever a start passes every
    earlier end."""
    reach = np.maximum.accumulate(ends)
    breaks = starts[1:] > reach[:-1]
    busy = int(reach[-1] - starts[0]) - int((starts[1:][breaks] - reach[:-1][breaks]).sum())
    return busy, int(breaks.sum())


def per_stream(streams: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> dict:
    """Busy ns and gaps of every stream at once: sorted by stream then start, each stream's ends
    are lifted above every earlier stream's, so one running maximum never crosses a stream."""
    order = np.lexsort((starts, streams))
    streams, starts, ends = streams[order], starts[order], ends[order]
    first = np.flatnonzero(np.r_[True, streams[1:] != streams[:-1]])
    rank = np.cumsum(np.r_[False, streams[1:] != streams[:-1]])
    lift = rank * (int(ends.max()) - int(starts.min()) + 1)
    reach = np.maximum.accumulate(ends - starts.min() + lift)
    new = np.r_[True, streams[1:] != streams[:-1]]
    breaks = ~new[1:] & (starts[1:] - starts.min() + lift[1:] > reach[:-1])
    idle = np.zeros(len(starts), dtype=np.int64)
    idle[1:][breaks] = (starts[1:] - starts.min() + lift[1:] - reach[:-1])[breaks]
    last = np.r_[first[1:] - 1, len(starts) - 1]
    span = reach[last] - (starts[first] - starts.min() + lift[first])
    busy = span - np.add.reduceat(idle, first)
    gaps = np.add.reduceat(np.r_[0, breaks].astype(np.int64), first)
    return {
        "streams": len(first),
        "busy_ns": busy.tolist(),
        "gaps": gaps.tolist(),
        "stream_ids": streams[first].tolist(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--per-stream", action="store_true")
    args = parser.parse_args()
    gc.disable()
    with open(args.trace, "rb") as f:
        events = msgspec.json.decode(f.read(), type=Trace).traceEvents
    kernels = [e for e in events if e.ph == "X" and e.cat == "kernel"]
    del events
    starts = exact_ns([e.ts for e in kernels])
    ends = starts + exact_ns([e.dur for e in kernels])
    if np.any(starts[1:] < starts[:-1]):
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
    busy, gaps = union(starts, ends)
    figures = {
        "kernels": len(kernels),
        "span_ns": int(np.max(ends) - starts[0]),
        "busy_ns": busy,
        "gaps": gaps,
    }
    if args.per_stream:
        ids = [e.tid for e in kernels]
        codes = {tid: i for i, tid in enumerate(dict.fromkeys(ids))}
        streams = np.fromiter((codes[t] for t in ids), dtype=np.int64, count=len(ids))
        figures["per_stream"] = per_stream(streams, starts, ends)
    json.dump(figures, sys.stdout)
    print()


if __name__ == "__main__":
    main()
