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

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import numpy as np

from graphlab.support.printable import printable

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
        values_ns = np.asarray(values_ns, dtype=np.int64)
        (stats,) = _stats_by_lane(values_ns, np.zeros(len(values_ns), dtype=np.int64), 1)
        return stats

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
        on = f" on {printable(self.gpu)}" if self.gpu else ""
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
                f"  launch latency (host call end -> GPU start): median "
                f"{_fmt_duration(self.launch_latency.median_ns)}, p90 "
                f"{_fmt_duration(self.launch_latency.p90_ns)} over "
                f"{_count(self.launch_latency.count, 'host call', 'host calls')} whose GPU work "
                "is in the trace (kernel and graph launches, and async copies and memsets)"
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
    first, ends = _merge(np.zeros(len(start_ns), dtype=np.int64), start_ns, end_ns)
    return start_ns[first], ends


def summarize(t: EventTable) -> Summary:
    """Gap analysis of ``t`` (see the module docstring for every definition).

    The figures of every stream (and every device) come out of one vectorised pass over the GPU
    events sorted by lane, so a trace with many streams costs no more than one with few.
    """
    gpu = t.is_gpu
    launches = _Launches(t, gpu)
    events = _GpuEvents(
        start=t.start_ns[gpu],
        end=t.end_ns[gpu],
        corr=t.correlation[gpu],
        is_kernel=t.kind[gpu] == "kernel",
    )
    device, stream = t.device[gpu], t.stream[gpu]
    index = np.arange(len(device))
    # np.lexsort sorts by its last key first: lanes in (device, stream) order, and within a lane
    # the events keep their order by start time.
    streams = _lanes(launches, events, np.lexsort((index, stream, device)), device, stream)
    # A device with one stream has that stream's figures, and a timeline on one device that
    # device's (but for the launch calls, which count the whole timeline's): the same events in
    # the same order, so they are not worked out again.
    if len({f.device for f in streams}) == len(streams):
        devices = [replace(f, stream=None) for f in streams]
    else:
        devices = _lanes(launches, events, np.lexsort((index, device)), device, None)
    if len(devices) == 1:
        whole = replace(
            devices[0],
            device=None,
            kernel_launches=launches.kernel_launches_total,
            graph_launches=launches.graph_launches_total,
        )
    else:
        (whole,) = _lanes(launches, events, index, None, None) or [_no_gpu_work(launches)]
    # meta holds whatever the file held; only a string names a GPU (a number there, even
    # Infinity, which Python's json reads, would otherwise reach `graphlab gaps --json`).
    gpu_name = t.meta.get("gpu")
    return Summary(
        **{f: getattr(whole, f) for f in Figures.__dataclass_fields__},
        streams=tuple(streams),
        devices=tuple(devices),
        gpu=gpu_name if isinstance(gpu_name, str) else None,
    )


@dataclass(frozen=True)
class _GpuEvents:
    """The GPU events' columns the analysis reads, sorted by start time."""

    start: np.ndarray
    end: np.ndarray
    corr: np.ndarray
    is_kernel: np.ndarray


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


def _lanes(launches: _Launches, g: _GpuEvents, order: np.ndarray, device, stream) -> list[Figures]:
    """The figures of every lane: GPU events grouped by ``device`` (and ``stream``), or all in one.

    ``order`` sorts the events by lane, and by start within a lane. ``device``/``stream`` are the
    events' columns that name the lanes (None: not part of the lane's key).
    """
    n = len(order)
    if n == 0:
        return []
    keys = [k[order] for k in (device, stream) if k is not None]
    new_lane = np.zeros(n, dtype=bool)
    new_lane[0] = True
    for k in keys:
        new_lane[1:] |= k[1:] != k[:-1]
    lane = np.cumsum(new_lane) - 1
    first_of_lane = np.flatnonzero(new_lane)
    n_lanes = len(first_of_lane)
    start, end, corr = g.start[order], g.end[order], g.corr[order]

    first, ends = _merge(lane, start, end)
    b_start, b_lane = start[first], lane[first]
    span = np.maximum.reduceat(end, first_of_lane) - start[first_of_lane]
    busy = np.add.reduceat(ends - b_start, np.searchsorted(b_lane, np.arange(n_lanes)))

    # Gaps lie between consecutive busy intervals of the same lane.
    inside = b_lane[1:] == b_lane[:-1]
    gap_begin, gap_end_event, gap_lane = ends[:-1][inside], first[1:][inside], b_lane[1:][inside]
    gaps = start[gap_end_event] - gap_begin
    submitted, known = launches.submitted(corr[gap_end_event])
    host_bound = np.bincount(gap_lane[known & (submitted > gap_begin)], minlength=n_lanes)

    # The launch calls whose work ran in each lane, with the lane's first start per correlation.
    pair_lane, pair_corr, pair_first = _first_start_per_lane_and_corr(lane, corr, start)
    pos, found = _find(launches.corr, pair_corr)
    latency = pair_first[found] - launches.end[pos[found]]
    latency_lane = pair_lane[found]
    ran_kernel = np.bincount(latency_lane[launches.is_kernel[pos[found]]], minlength=n_lanes)
    ran_graph = np.bincount(latency_lane[launches.is_graph[pos[found]]], minlength=n_lanes)
    kernels = np.bincount(lane[g.is_kernel[order]], minlength=n_lanes)

    whole = device is None
    gap_stats, latency_stats = (
        _stats_by_lane(gaps, gap_lane, n_lanes),
        _stats_by_lane(latency, latency_lane, n_lanes),
    )
    lane_device = device[order][first_of_lane].tolist() if device is not None else [None] * n_lanes
    lane_stream = stream[order][first_of_lane].tolist() if stream is not None else [None] * n_lanes
    columns = zip(
        lane_device,
        lane_stream,
        kernels.tolist(),
        ran_kernel.tolist(),
        ran_graph.tolist(),
        span.tolist(),
        busy.tolist(),
        gap_stats,
        host_bound.tolist(),
        latency_stats,
        strict=True,
    )
    return [
        Figures(
            device=d,
            stream=s,
            kernels=k,
            kernel_launches=launches.kernel_launches_total if whole else rk,
            graph_launches=launches.graph_launches_total if whole else rg,
            graph_replays=rg,
            span_ns=sp,
            busy_ns=b,
            idle_ns=sp - b,
            gaps=gs,
            host_bound_gaps=hb,
            launch_latency=ls,
        )
        for d, s, k, rk, rg, sp, b, gs, hb, ls in columns
    ]


def _no_gpu_work(launches: _Launches) -> Figures:
    """The whole timeline's figures when it holds no GPU event: only its launch calls count."""
    none = Stats(0, None, None, None)
    return Figures(
        device=None,
        stream=None,
        kernels=0,
        kernel_launches=launches.kernel_launches_total,
        graph_launches=launches.graph_launches_total,
        graph_replays=0,
        span_ns=0,
        busy_ns=0,
        idle_ns=0,
        gaps=none,
        host_bound_gaps=0,
        launch_latency=none,
    )


def _merge(lane: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of intervals per lane (sorted by lane, then start): first event and end of each.

    An event opens a new busy interval when it is the first of its lane or starts strictly after
    every earlier event of its lane has ended.
    """
    if len(start) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    reach = _running_max_by_lane(lane, end)
    opens = np.empty(len(start), dtype=bool)
    opens[0] = True
    opens[1:] = (start[1:] > reach[:-1]) | (lane[1:] != lane[:-1])
    first = np.flatnonzero(opens)
    last = np.append(first[1:] - 1, len(start) - 1)
    return first, reach[last]


def _running_max_by_lane(lane: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` that starts afresh in each lane (``lane`` non-decreasing).

    One ``np.maximum.accumulate`` over ``lane * n + rank(value)``: the lane dominates, so no
    maximum carries into the next lane, and the rank orders values within a lane.
    """
    if len(lane) == 0 or lane[-1] == lane[0]:
        return np.maximum.accumulate(values)
    distinct, rank = np.unique(values, return_inverse=True)
    scale = len(distinct)
    return distinct[np.maximum.accumulate(lane * scale + rank.reshape(-1)) - lane * scale]


def _first_start_per_lane_and_corr(lane, corr, start):
    """For each (lane, correlation id >= 0) pair: the lane, the id, and its earliest start."""
    has = corr >= 0
    lane, corr, start = lane[has], corr[has], start[has]
    order = np.lexsort((start, corr, lane))
    lane, corr, start = lane[order], corr[order], start[order]
    firsts = (
        np.flatnonzero(np.append(True, (lane[1:] != lane[:-1]) | (corr[1:] != corr[:-1])))
        if len(lane)
        else np.zeros(0, dtype=np.int64)
    )
    return lane[firsts], corr[firsts], start[firsts]


def _stats_by_lane(values: np.ndarray, lane: np.ndarray, n_lanes: int) -> list[Stats]:
    """:class:`Stats` of ``values`` per lane (lanes 0 .. n_lanes - 1), from one sort."""
    order = np.lexsort((values, lane))
    values = values[order]
    counts = np.bincount(lane, minlength=n_lanes)
    offsets = np.cumsum(counts) - counts
    last = np.maximum(counts, 1) - 1
    columns = [counts.tolist(), _gather(values, offsets + last)]
    for q in (50, 90):
        # numpy's linear percentile: rank h = (n - 1) * q / 100, between v[floor h] and the next.
        low = last * q // 100
        high = np.minimum(low + 1, last)
        columns += [_gather(values, offsets + low), _gather(values, offsets + high)]
        columns.append((last * q % 100).tolist())
    none = Stats(0, None, None, None)
    # Each percentile is low + hundredths / 100 * (high - low), computed exactly on Python ints
    # and rounded once: Python's int / int is correctly rounded.
    return [
        Stats(n, (100 * a + f * (b - a)) / 100, (100 * c + g * (d - c)) / 100, top) if n else none
        for n, top, a, b, f, c, d, g in zip(*columns, strict=True)
    ]


def _gather(values: np.ndarray, index: np.ndarray) -> list[int]:
    """``values[index]`` as Python ints, 0 where the index falls outside (empty lanes)."""
    if len(values) == 0:
        return [0] * len(index)
    return values[np.clip(index, 0, len(values) - 1)].tolist()


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


def _us(ns: float | None) -> float | None:
    """Nanoseconds to microseconds without binary round-off: the float nearest ns / 1000.

    An int divided by an int is correctly rounded in Python, so whole nanoseconds (every figure
    but an interpolated percentile) take that quick route; the rest go through their decimal text.
    """
    if ns is None:
        return None
    if isinstance(ns, int):
        return ns / 1000
    if ns.is_integer() and abs(ns) < 2**53:
        return int(ns) / 1000
    return float(Decimal(repr(ns)) / 1000)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _fmt_duration(ns: float | None) -> str:
    """A duration in the unit that suits it: ``20.704 µs``, ``4.488 ms``, ``12.920 s``."""
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns / 1000:.3f} µs"


def _lane_line(label: str, f: Figures) -> str:
    if not f.span_ns:
        return f"  {label}: no GPU work"
    share = f"{100 * f.idle_fraction:.1f}% idle"
    gaps = (
        f"{_count(f.gaps.count, 'gap', 'gaps')} (median {_fmt_duration(f.gaps.median_ns)}, "
        f"p90 {_fmt_duration(f.gaps.p90_ns)},"
        f" max {_fmt_duration(f.gaps.max_ns)})"
        if f.gaps.count
        else "no gaps"
    )
    return (
        f"  {label}: span {_fmt_duration(f.span_ns)}, busy {_fmt_duration(f.busy_ns)}, "
        f"idle {_fmt_duration(f.idle_ns)} ({share}); {gaps}"
    )
