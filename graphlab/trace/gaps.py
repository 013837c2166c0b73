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

from dataclasses import dataclass, replace

import numpy as np

from .events import GRAPH_LAUNCH_CALLS, KERNEL_LAUNCH_CALLS, EventTable, call_name
from .figures import Figures, Stats, Summary
from .lanes import Lanes, StatsColumns

__all__ = ["Figures", "Stats", "Summary", "busy_intervals", "summarize"]


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
    if not len(index):
        whole, streams, devices = _no_gpu_work(launches), (), ()
    else:
        whole, streams, devices = _whole_streams_devices(launches, events, index, device, stream)
    # meta holds whatever the file held; only a string names a GPU (a number there, even
    # Infinity, which Python's json reads, would otherwise reach `graphlab gaps --json`).
    gpu_name = t.meta.get("gpu")
    return Summary(
        **{f: getattr(whole, f) for f in Figures.__dataclass_fields__},
        streams=streams,
        devices=devices,
        gpu=gpu_name if isinstance(gpu_name, str) else None,
    )


def _whole_streams_devices(launches, events, index, device, stream):
    """The figures of the whole timeline, of each stream and of each device (GPU work found)."""
    # np.lexsort sorts by its last key first: lanes in (device, stream) order, and within a lane
    # the events keep their order by start time.
    streams = _lanes(launches, events, np.lexsort((index, stream, device)), device, stream)
    # A device with one stream has that stream's figures, and a timeline on one device that
    # device's (but for the launch calls, which count the whole timeline's): the same events in
    # the same order, so they are not worked out again. The lanes' devices are sorted, so each
    # new device is a change from the lane before (np.unique would load numpy.ma, a fiftieth of
    # a second, for this one count).
    if np.count_nonzero(streams.device[1:] != streams.device[:-1]) + 1 == len(streams):
        devices = streams.without_stream()
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
        whole = _lanes(launches, events, index, None, None)[0]
    return whole, streams, devices


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


def _lanes(launches: _Launches, g: _GpuEvents, order: np.ndarray, device, stream) -> Lanes:
    """The figures of every lane: GPU events grouped by ``device`` (and ``stream``), or all in one.

    ``order`` sorts the events by lane, and by start within a lane. ``device``/``stream`` are the
    events' columns that name the lanes (None: not part of the lane's key).
    """
    n = len(order)
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
    return Lanes(
        device[order][first_of_lane] if device is not None else None,
        stream[order][first_of_lane] if stream is not None else None,
        kernels=kernels,
        kernel_launches=(np.full(n_lanes, launches.kernel_launches_total) if whole else ran_kernel),
        graph_launches=np.full(n_lanes, launches.graph_launches_total) if whole else ran_graph,
        graph_replays=ran_graph,
        span=span,
        busy=busy,
        gaps=stats_by_lane(gaps, gap_lane, n_lanes),
        host_bound_gaps=host_bound,
        launch_latency=stats_by_lane(latency, latency_lane, n_lanes),
    )


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


def stats_by_lane(values: np.ndarray, lane: np.ndarray, n_lanes: int) -> StatsColumns:
    """:class:`Stats` of ``values`` per lane (lanes 0 .. n_lanes - 1), from one sort."""
    order = np.lexsort((values, lane))
    values = values[order]
    counts = np.bincount(lane, minlength=n_lanes)
    offsets = np.cumsum(counts) - counts
    last = np.maximum(counts, 1) - 1
    percentiles = []
    for q in (50, 90):
        # numpy's linear percentile: rank h = (n - 1) * q / 100, between v[floor h] and the next.
        low = last * q // 100
        high = np.minimum(low + 1, last)
        percentiles.append(
            (_gather(values, offsets + low), _gather(values, offsets + high), last * q % 100)
        )
    return StatsColumns(counts, _gather(values, offsets + last), *percentiles)


def _gather(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index]``, 0 where the index falls outside (empty lanes)."""
    if len(values) == 0:
        return np.zeros(len(index), dtype=np.int64)
    return values[np.clip(index, 0, len(values) - 1)]


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
