"""Split a Timeline into the lanes a timeline picture draws: host threads on top, GPU streams below.

A *lane* is one horizontal row of the picture. A *track* is one colour of bars in a lane: host
launch calls and host syncs share their thread's lane but get different colours; every GPU stream
is one lane with one track. Tracks hold float64 microseconds measured from the timeline's first
event, because that is what the plot's x axis shows; the conversion happens once, here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from graphlab.language import gettext as _
from graphlab.trace.gaps import busy_intervals

if TYPE_CHECKING:
    from graphlab.trace.timeline import Timeline

__all__ = ["Track", "device_gaps_ns", "lanes_of", "launch_latency_us", "name_codes"]

# Longer names are cut: a hover box that spans the screen helps nobody. The full name stays in
# the Timeline.
NAME_LIMIT = 70


@dataclass(frozen=True)
class Track:
    """The bars of one colour in one lane, sorted by start.

    ``code`` indexes ``names`` (the track's distinct names, most frequent first).
    ``latency_us`` is the launch latency of each bar: for GPU work, the time from the end of the
    host call that submitted it to its start; for a launch call, the same gap seen from the host
    (call end to the start of the first GPU work it submitted). NaN where no partner was recorded.
    """

    lane: int
    label: str
    group: str  # "launch", "sync" or "gpu": picks the colour
    start_us: np.ndarray
    end_us: np.ndarray
    code: np.ndarray
    names: list[str]
    latency_us: np.ndarray

    def __len__(self) -> int:
        return len(self.start_us)


def name_codes(names: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Names as small integer codes plus the table of (trimmed) names, most frequent first.

    A timeline repeats a few kernel names many times; plotly then draws one hover trace per name
    with the name in its template, instead of shipping 100,000 strings to the browser.
    """
    full = list(dict.fromkeys(names))  # distinct names in first-seen order, at C speed
    lookup = {name: i for i, name in enumerate(full)}
    raw = np.fromiter(map(lookup.__getitem__, names), np.int64, len(names))
    by_count = np.argsort(-np.bincount(raw, minlength=len(full)), kind="stable")
    rank = np.empty(len(full), dtype=np.int64)
    rank[by_count] = np.arange(len(full))
    return rank[raw], [_trim(str(full[i])) for i in by_count]


def _trim(name: str) -> str:
    name = name.removeprefix("void ")
    return name if len(name) <= NAME_LIMIT else name[: NAME_LIMIT - 1] + "…"


def launch_latency_us(timeline: Timeline) -> np.ndarray:
    """Per event: launch latency in µs (see :class:`Track`), NaN where it cannot be known.

    Matched through the correlation id: a launch call and the GPU work it submitted share it, and
    all kernels of one graph replay share the id of their ``cudaGraphLaunch``.
    """
    n = len(timeline)
    latency = np.full(n, np.nan)
    corr = timeline.correlation
    gpu = timeline.is_gpu & (corr >= 0)
    launch = (timeline.kind == "launch") & (corr >= 0)
    if not gpu.any() or not launch.any():
        return latency
    launch_idx = np.flatnonzero(launch)
    # One host call per correlation id; if a trace repeats an id, the last call wins.
    launch_corr, first = np.unique(corr[launch_idx][::-1], return_index=True)
    launch_end = timeline.end_ns[launch_idx][::-1][first]

    gpu_idx = np.flatnonzero(gpu)
    pos = np.searchsorted(launch_corr, corr[gpu_idx])
    pos_ok = pos < len(launch_corr)
    matched = np.zeros(len(gpu_idx), dtype=bool)
    matched[pos_ok] = launch_corr[pos[pos_ok]] == corr[gpu_idx][pos_ok]
    gpu_hit = gpu_idx[matched]
    gpu_latency_ns = timeline.start_ns[gpu_hit] - launch_end[pos[matched]]
    latency[gpu_hit] = gpu_latency_ns / 1000.0

    # Seen from the host: the call's end to the first GPU start it caused.
    first_start = np.full(len(launch_corr), np.iinfo(np.int64).max)
    np.minimum.at(first_start, pos[matched], timeline.start_ns[gpu_hit])
    has_work = first_start != np.iinfo(np.int64).max
    launch_pos = np.searchsorted(launch_corr, corr[launch_idx])
    host_ok = has_work[launch_pos]
    latency[launch_idx[host_ok]] = (
        first_start[launch_pos[host_ok]] - timeline.end_ns[launch_idx[host_ok]]
    ) / 1000.0
    return latency


def lanes_of(timeline: Timeline) -> list[Track]:
    """The tracks of a timeline, host lanes first, in drawing order.

    Lane labels are ``host`` (``host thread N`` when several threads launch work) and
    ``stream S`` (``GPU D stream S`` when the table spans several GPUs). Times start at zero at
    the timeline's first event.
    """
    if len(timeline) == 0:
        return []
    t0 = int(timeline.start_ns.min())
    start_us = (timeline.start_ns - t0) / 1000.0
    end_us = (timeline.end_ns - t0) / 1000.0
    latency = launch_latency_us(timeline)
    gpu = timeline.is_gpu

    tracks: list[Track] = []

    def add(mask: np.ndarray, lane: int, label: str, group: str) -> None:
        code, names = name_codes(timeline.name[mask])
        tracks.append(
            Track(lane, label, group, start_us[mask], end_us[mask], code, names, latency[mask])
        )

    host = ~gpu
    threads = np.unique(timeline.thread[host]).tolist()
    for lane, thread in enumerate(threads):
        label = _("host") if len(threads) == 1 else _("host thread {thread}").format(thread=thread)
        on_thread = host & (timeline.thread == thread)
        for group in ("launch", "sync"):
            mask = on_thread & (timeline.kind == group)
            if mask.any():
                add(mask, lane, label, group)

    devices = np.unique(timeline.device[gpu]).tolist()
    lane = len(threads)
    for device in devices:
        on_device = gpu & (timeline.device == device)
        for stream in np.unique(timeline.stream[on_device]).tolist():
            if len(devices) > 1:
                label = _("GPU {device} stream {stream}").format(device=device, stream=stream)
            else:
                label = _("stream {stream}").format(stream=stream)
            add(on_device & (timeline.stream == stream), lane, label, "gpu")
            lane += 1
    return tracks


def device_gaps_ns(timeline: Timeline) -> tuple[np.ndarray, np.ndarray]:
    """The GPU's idle gaps (start, end) in ns: between the busy intervals of all GPU events,
    exactly the intervals the gap analysis (graphlab.trace.gaps) counts."""
    gpu = timeline.is_gpu
    starts, ends = busy_intervals(timeline.start_ns[gpu], timeline.end_ns[gpu])
    return ends[:-1], starts[1:]
