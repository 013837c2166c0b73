"""Where the GPU sat idle, and whether it was waiting for the host: gap analysis of an event table.

Everything here is a pure function of the event table, vectorised with numpy, in integer
nanoseconds. Definitions (per stream, and per device as the union of all its streams):

- **busy intervals**: the union of the GPU events' ``[start, end)`` intervals; events that touch
  or overlap merge into one interval.
- **span**: first GPU start to last GPU end. **busy**: total length of the busy intervals.
  **idle** = span - busy; **idle fraction** = idle / span.
- **gap**: the strictly positive interval between two consecutive busy intervals.
- **host-bound gap**: the GPU was waiting for the host. The work that ends the gap (the first GPU
  event of the next busy interval) had not been submitted when the gap began. The work counts as
  submitted at the end of its launch call (the host call with the same correlation id) — or
  earlier, at the start of the first GPU event of that correlation, because work that is already
  running has certainly been submitted. That second clause is what keeps graph replays right: all
  kernels of a replay share the correlation id of one ``cudaGraphLaunch``, and the call often
  returns only after the first kernels ran, yet the gaps *inside* a replay are not the GPU waiting
  for the host. (Holistic Trace Analysis ignores ``cudaGraphLaunch`` and rounds to whole µs.)
  A gap whose ending work has no launch call in the trace is not counted as host-bound. (One
  launch call per correlation id, as in Kineto traces.)
- **launch latency**: for each host launch call whose GPU work is in the trace, the start of the
  first GPU event with its correlation id minus the end of the call. It can be negative: a kernel
  may start before its launch call returns.
- **percentiles** (median, p90): numpy's default definition, linear interpolation between the two
  nearest ranks (``numpy.percentile(x, q, method="linear")``), computed exactly from the integer
  nanoseconds. Microsecond figures are ns / 1000 with no other rounding.

Counts: ``kernels`` are kernel events; ``kernel_launches`` host calls named
``cudaLaunchKernel``, ``cudaLaunchKernelExC``, ``cuLaunchKernel``, ``cuLaunchKernelEx``;
``graph_launches`` ``cudaGraphLaunch`` calls; ``graph_replays`` the graph launches whose kernels
are in the trace. For the whole timeline, launches are all such host calls; for a stream or a
device, the calls whose GPU work ran there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from .events import GRAPH_LAUNCH_CALLS, KERNEL_LAUNCH_CALLS, EventTable, call_name

__all__ = ["Figures", "Stats", "Summary", "busy_intervals", "summarize"]


@dataclass(frozen=True)
class Stats:
    """Count, median, 90th percentile and maximum of a set of durations, in ns (None if empty)."""

    count: int
    median_ns: float | None
    p90_ns: float | None
    max_ns: int | None

    @classmethod
    def of(cls, values_ns: np.ndarray) -> Stats:
        if len(values_ns) == 0:
            return cls(0, None, None, None)
        ordered = np.sort(values_ns)
        median, p90 = _percentile(ordered, 50), _percentile(ordered, 90)
        return cls(len(ordered), median, p90, int(ordered[-1]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "median_us": _us(self.median_ns),
            "p90_us": _us(self.p90_ns),
            "max_us": _us(self.max_ns),
        }


@dataclass(frozen=True)
class Figures:
    """The gap-analysis figures of one lane: a stream, a device, or the whole timeline.

    ``device``/``stream`` say which lane (None where the lane is a union).
    """

    device: int | None
    stream: int | None
    kernels: int
    kernel_launches: int
    graph_launches: int
    graph_replays: int
    span_ns: int
    busy_ns: int
    idle_ns: int
    gaps: Stats
    host_bound_gaps: int
    launch_latency: Stats

    @property
    def idle_fraction(self) -> float | None:
        """idle / span, or None when there is no GPU work."""
        return self.idle_ns / self.span_ns if self.span_ns else None

    def to_dict(self) -> dict[str, Any]:
        """The ``graphlab gaps --json`` object for this lane (times in µs from integer ns)."""
        out: dict[str, Any] = {}
        if self.device is not None:
            out["device"] = self.device
        if self.stream is not None:
            out["stream"] = self.stream
        out.update(
            kernels=self.kernels,
            kernel_launches=self.kernel_launches,
            graph_launches=self.graph_launches,
            graph_replays=self.graph_replays,
            span_us=_us(self.span_ns),
            busy_us=_us(self.busy_ns),
            idle_us=_us(self.idle_ns),
            idle_fraction=self.idle_fraction,
            gaps=self.gaps.to_dict(),
            host_bound_gaps=self.host_bound_gaps,
            launch_latency={
                k: v for k, v in self.launch_latency.to_dict().items() if k != "max_us"
            },
        )
        return out


@dataclass(frozen=True)
class Summary(Figures):
    """Gap analysis of a whole timeline, with one :class:`Figures` per stream and per device."""

    streams: tuple[Figures, ...] = field(default=())
    devices: tuple[Figures, ...] = field(default=())
    gpu: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["streams"] = [s.to_dict() for s in self.streams]
        out["devices"] = [d.to_dict() for d in self.devices]
        if self.gpu:
            out["gpu"] = self.gpu
        return out

    def report(self) -> str:
        """A short readable report (what ``graphlab gaps`` prints)."""
        on = f" on {self.gpu}" if self.gpu else ""
        lines = [
            f"GPU work{on}: {_count(self.kernels, 'kernel', 'kernels')} on "
            f"{_count(len(self.streams), 'stream', 'streams')}",
            _lane_line("all streams", self),
        ]
        if self.gaps.count:
            lines.append(
                f"  host-bound: {self.host_bound_gaps} of {_count(self.gaps.count, 'gap', 'gaps')}"
                " (the GPU waited for the host: the next work was not yet launched)"
            )
        replays = f" ({self.graph_replays} replayed in the trace)" if self.graph_launches else ""
        lines.append(
            f"  host: {_count(self.kernel_launches, 'kernel launch', 'kernel launches')}, "
            f"{_count(self.graph_launches, 'graph launch', 'graph launches')}{replays}"
        )
        if self.launch_latency.count:
            lines.append(
                f"  launch latency (launch call end -> GPU start): median "
                f"{_fmt_us(self.launch_latency.median_ns)}, p90 "
                f"{_fmt_us(self.launch_latency.p90_ns)} over "
                f"{_count(self.launch_latency.count, 'launch', 'launches')}"
            )
            if self.launch_latency.median_ns < 0:
                lines.append(
                    "    (negative: the GPU started the work before the launch call returned, "
                    "as an idle GPU can)"
                )
        if len(self.devices) > 1:
            lines.extend(_lane_line(f"device {d.device}", d) for d in self.devices)
        if len(self.streams) > 1:
            lines.extend(
                _lane_line(f"device {s.device} stream {s.stream}", s) for s in self.streams
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


def busy_intervals(start_ns: np.ndarray, end_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals sorted by start into disjoint busy intervals: ``(starts, ends)`` arrays.

    Public so that plots can shade busy time with exactly the intervals the analysis used.
    """
    first, ends = _merge(start_ns, end_ns)
    return start_ns[first], ends


def summarize(t: EventTable) -> Summary:
    """Gap analysis of ``t`` (see the module docstring for every definition)."""
    gpu = t.is_gpu
    launches = _Launches(t, gpu)
    g_start, g_end = t.start_ns[gpu], t.end_ns[gpu]
    g_corr, g_kind = t.correlation[gpu], t.kind[gpu]
    g_device, g_stream = t.device[gpu], t.stream[gpu]

    def lane(mask: np.ndarray | None, device, stream) -> Figures:
        sel = slice(None) if mask is None else mask
        return _figures(
            launches,
            g_start[sel],
            g_end[sel],
            g_corr[sel],
            g_kind[sel],
            device,
            stream,
            whole=mask is None,
        )

    streams = tuple(
        lane((g_device == d) & (g_stream == s), d, s)
        for d, s in sorted(set(zip(g_device.tolist(), g_stream.tolist(), strict=True)))
    )
    devices = tuple(lane(g_device == d, d, None) for d in sorted(set(g_device.tolist())))
    whole = lane(None, None, None)
    # meta holds whatever the file held; only a string names a GPU (a number there, even
    # Infinity, which Python's json reads, would otherwise reach `graphlab gaps --json`).
    gpu = t.meta.get("gpu")
    return Summary(
        **{f: getattr(whole, f) for f in Figures.__dataclass_fields__},
        streams=streams,
        devices=devices,
        gpu=gpu if isinstance(gpu, str) else None,
    )


class _Launches:
    """The host launch calls of a timeline, indexed by correlation id for vectorised look-ups."""

    def __init__(self, t: EventTable, gpu: np.ndarray):
        is_launch = (t.kind == "launch") & (t.correlation >= 0)
        names = t.name[t.kind == "launch"].tolist()
        # 1 = kernel launch call, 2 = graph launch call, 0 = other (memcpy, memset, ...).
        code = {n: _call_code(call_name(str(n))) for n in set(names)}
        codes = np.fromiter(map(code.__getitem__, names), dtype=np.int8, count=len(names))
        kernel_call, graph_call = codes == 1, codes == 2
        self.kernel_launches_total = int(kernel_call.sum())
        self.graph_launches_total = int(graph_call.sum())
        has_corr = t.correlation[t.kind == "launch"] >= 0
        # One row per launch call with a correlation id, sorted by that id.
        corr = t.correlation[is_launch]
        order = np.argsort(corr, kind="stable")
        self.corr = corr[order]
        self.end = t.end_ns[is_launch][order]
        self.is_kernel = kernel_call[has_corr][order]
        self.is_graph = graph_call[has_corr][order]
        # Earliest GPU start per correlation id, over every GPU event of the timeline.
        g_corr, g_start = t.correlation[gpu], t.start_ns[gpu]
        self.gpu_corr, self.gpu_first = _min_by_key(g_corr[g_corr >= 0], g_start[g_corr >= 0])

    def submitted(self, corr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """When the work with these correlation ids was submitted, and whether that is known.

        Submitted = min(end of the launch call, first GPU start of that correlation).
        """
        launch_end, known = _take(self.corr, self.end, corr)
        first_start, running = _take(self.gpu_corr, self.gpu_first, corr)
        return np.where(running, np.minimum(launch_end, first_start), launch_end), known


def _call_code(call: str) -> int:
    return 1 if call in KERNEL_LAUNCH_CALLS else 2 if call in GRAPH_LAUNCH_CALLS else 0


def _figures(launches: _Launches, start, end, corr, kind, device, stream, whole: bool) -> Figures:
    """The figures of one lane, from its GPU events (sorted by start) and the launch table."""
    first, ends = _merge(start, end)
    b_start = start[first]
    span = int(ends[-1] - b_start[0]) if len(first) else 0
    busy = int((ends - b_start).sum())
    gap_begin, gap_end_event = ends[:-1], first[1:]
    gaps = start[gap_end_event] - gap_begin
    submitted, known = launches.submitted(corr[gap_end_event])
    host_bound = int(np.count_nonzero(known & (submitted > gap_begin)))

    # Launch calls whose work ran in this lane, with the lane's first start per correlation
    # (searching the lane's few sorted ids in the launch table, not every launch in the lane).
    lane_corr, lane_first = _min_by_key(corr[corr >= 0], start[corr >= 0])
    pos, found = _find(launches.corr, lane_corr)
    latency = lane_first[found] - launches.end[pos[found]]
    ran = np.zeros(len(launches.corr), dtype=bool)
    ran[pos[found]] = True
    if whole:
        kernel_launches, graph_launches = (
            launches.kernel_launches_total,
            launches.graph_launches_total,
        )
    else:
        kernel_launches = int(np.count_nonzero(ran & launches.is_kernel))
        graph_launches = int(np.count_nonzero(ran & launches.is_graph))
    return Figures(
        device=device,
        stream=stream,
        kernels=int(np.count_nonzero(kind == "kernel")),
        kernel_launches=kernel_launches,
        graph_launches=graph_launches,
        graph_replays=int(np.count_nonzero(ran & launches.is_graph)),
        span_ns=span,
        busy_ns=busy,
        idle_ns=span - busy,
        gaps=Stats.of(gaps),
        host_bound_gaps=host_bound,
        launch_latency=Stats.of(latency),
    )


def _merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of intervals sorted by start: index of each merged interval's first event, and ends.

    An event opens a new interval when it starts strictly after every earlier event has ended.
    """
    if len(start) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    reach = np.maximum.accumulate(end)
    opens = np.empty(len(start), dtype=bool)
    opens[0] = True
    opens[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(opens)
    last = np.append(first[1:] - 1, len(start) - 1)
    return first, reach[last]


def _min_by_key(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique keys and the smallest value for each."""
    if len(keys) == 0:
        return keys, values
    order = np.lexsort((values, keys))
    keys, values = keys[order], values[order]
    firsts = np.flatnonzero(np.append(True, keys[1:] != keys[:-1]))
    return keys[firsts], values[firsts]


def _take(keys: np.ndarray, values: np.ndarray, query: np.ndarray):
    """``values`` at the positions of ``query`` in the sorted ``keys``, and a found-mask.

    Missing (or negative) queries get 0 and found=False.
    """
    pos, found = _find(keys, query)
    return np.where(found, values[pos] if len(keys) else 0, 0), found


def _find(keys: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each (non-negative) ``query`` in the sorted ``keys``, and whether it is there."""
    if len(keys) == 0:
        return np.zeros(len(query), dtype=np.int64), np.zeros(len(query), dtype=bool)
    pos = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
    return pos, (keys[pos] == query) & (query >= 0)


def _percentile(ordered: np.ndarray, q: int) -> float:
    """numpy's linear-interpolation percentile of sorted integers, computed exactly.

    Rank h = (n - 1) * q / 100; the value is ``v[floor(h)] + (h - floor(h)) * (v[floor(h)+1] -
    v[floor(h)])``, done in rational arithmetic so the only rounding is the final float.
    """
    rank = Fraction((len(ordered) - 1) * q, 100)
    low = int(rank)
    value = Fraction(int(ordered[low]))
    if rank > low:
        value += (rank - low) * (int(ordered[low + 1]) - int(ordered[low]))
    return float(value)


def _us(ns: float | None) -> float | None:
    """Nanoseconds to microseconds without binary round-off: the float nearest ns / 1000."""
    return None if ns is None else float(Decimal(repr(ns)) / 1000)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _fmt_us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:.3f} µs"


def _lane_line(label: str, f: Figures) -> str:
    if not f.span_ns:
        return f"  {label}: no GPU work"
    share = f"{100 * f.idle_fraction:.1f}% idle"
    gaps = (
        f"{_count(f.gaps.count, 'gap', 'gaps')} (median {_fmt_us(f.gaps.median_ns)}, "
        f"p90 {_fmt_us(f.gaps.p90_ns)},"
        f" max {_fmt_us(f.gaps.max_ns)})"
        if f.gaps.count
        else "no gaps"
    )
    return (
        f"  {label}: span {_fmt_us(f.span_ns)}, busy {_fmt_us(f.busy_ns)}, "
        f"idle {_fmt_us(f.idle_ns)} ({share}); {gaps}"
    )
