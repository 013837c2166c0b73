"""Gap analysis: busy/idle, gaps, host-bound gaps, launch latency, per stream and per device.

The timelines in this file are SYNTHETIC, built by hand so that every expected figure can be
worked out on paper (the arithmetic is in the comments). Percentiles are numpy's linear
definition: rank h = (n - 1) * q / 100, interpolated between the two nearest sorted values.
The real H200 trace's figures were computed once by a separate plain-Python script over the raw
JSON (Decimal microseconds, a loop that merges intervals), not by graphlab.
"""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlab.trace import lanes
from graphlab.trace.gaps import busy_intervals, summarize
from graphlab.trace.timeline import Timeline

TRACES = Path(__file__).parent / "traces"


def timeline(*events) -> Timeline:
    """Rows of (kind, name, start, end, device, stream, correlation); host rows on thread 1."""
    kind, name, start, end, device, stream, corr = zip(*events, strict=True)
    thread = [1 if k in ("launch", "sync") else -1 for k in kind]
    return Timeline(
        kind=kind,
        name=name,
        start_ns=start,
        dur_ns=np.subtract(end, start),
        device=device,
        stream=stream,
        thread=thread,
        correlation=corr,
    )


def launch(name, start, end, corr):
    return ("launch", name, start, end, -1, -1, corr)


def kernel(start, end, corr, stream=7, device=0, kind="kernel"):
    return (kind, "k", start, end, device, stream, corr)


# Eager chain: each kernel has its own cudaLaunchKernel.
EAGER = timeline(
    launch("cudaLaunchKernel", 0, 5000, 1),
    kernel(6000, 7000, 1),
    launch("cudaLaunchKernel", 5500, 10000, 2),
    kernel(11000, 12000, 2),
    launch("cudaLaunchKernel", 10500, 11000, 3),
    kernel(12500, 13500, 3),
)


def test_eager_chain_figures():
    s = EAGER.summary()
    assert (s.kernels, s.kernel_launches, s.graph_launches, s.graph_replays) == (3, 3, 0, 0)
    # span 13500 - 6000 = 7500; busy 3 x 1000; idle 4500.
    assert (s.span_ns, s.busy_ns, s.idle_ns) == (7500, 3000, 4500)
    assert s.idle_fraction == 0.6
    # gaps: 11000 - 7000 = 4000 and 12500 - 12000 = 500. Sorted [500, 4000]:
    # median 2250; p90 rank 0.9 -> 500 + 0.9 * 3500 = 3650.
    assert dataclasses.astuple(s.gaps) == (2, 2250.0, 3650.0, 4000)
    # Gap 1 begins at 7000; kernel 2's launch call ended at 10000: the GPU waited for the host.
    # Gap 2 begins at 12000; kernel 3's launch ended at 11000: it was already queued.
    assert s.host_bound_gaps == 1
    # Latency: 6000-5000, 11000-10000, 12500-11000 = [1000, 1000, 1500];
    # median 1000; p90 rank 1.8 -> 1000 + 0.8 * 500 = 1400.
    assert dataclasses.astuple(s.launch_latency) == (3, 1000.0, 1400.0, 1500)


def test_json_shape_and_microseconds():
    # One device with one stream: the device's and the stream's figures are the totals.
    figures = {
        "kernels": 3,
        "kernel_launches": 3,
        "graph_launches": 0,
        "graph_replays": 0,
        "span_us": 7.5,
        "busy_us": 3.0,
        "idle_us": 4.5,
        "idle_fraction": 0.6,
        "gaps": {"count": 2, "median_us": 2.25, "p90_us": 3.65, "max_us": 4.0},
        "host_bound_gaps": 1,
        "launch_latency": {"count": 3, "median_us": 1.0, "p90_us": 1.4},
    }
    assert EAGER.summary().to_dict() == {
        **figures,
        "streams": [{"device": 0, "stream": 7, **figures}],
        "devices": [{"device": 0, **figures}],
    }


def test_graph_replays_are_not_mistaken_for_host_gaps():
    # Two cudaGraphLaunch calls; every kernel of a replay shares its launch's correlation id.
    # Replay 1's kernels start while its launch call has not yet returned (it ends at 10000).
    t = timeline(
        launch("cudaGraphLaunch", 0, 10000, 10),
        kernel(4000, 5000, 10),
        kernel(5300, 6300, 10),
        kernel(6600, 7600, 10),
        launch("cudaGraphLaunch", 10500, 20000, 11),
        kernel(21000, 22000, 11),
        kernel(22300, 23300, 11),
    )
    s = t.summary()
    assert (s.kernels, s.kernel_launches, s.graph_launches, s.graph_replays) == (5, 0, 2, 2)
    # span 23300 - 4000 = 19300; busy 5 x 1000 = 5000; idle 14300.
    assert (s.span_ns, s.busy_ns, s.idle_ns) == (19300, 5000, 14300)
    # gaps [300, 300, 13400, 300] sorted [300, 300, 300, 13400]: median 300;
    # p90 rank 2.7 -> 300 + 0.7 * 13100 = 9470.
    assert dataclasses.astuple(s.gaps) == (4, 300.0, 9470.0, 13400)
    # Only the gap between the replays (7600 -> 21000) waited for the host: replay 2 was
    # submitted at 20000. The gaps inside replay 1 begin at 5000 and 6300, before its launch
    # call returned at 10000 -- but its kernels were already running, so they are not
    # host-bound. (Judging by the launch call's end alone would wrongly count 3.)
    assert s.host_bound_gaps == 1
    # Latency: 4000 - 10000 = -6000 and 21000 - 20000 = 1000: median -2500;
    # p90 rank 0.9 -> -6000 + 0.9 * 7000 = 300.
    assert dataclasses.astuple(s.launch_latency) == (2, -2500.0, 300.0, 1000)


# Fork/join graph on device 0 (streams 7 and 8), a memcpy on stream 8, a kernel on device 1.
MULTI = timeline(
    launch("cudaGraphLaunch", -2000, -100, 5),
    kernel(0, 1000, 5, stream=7),
    kernel(500, 3500, 5, stream=8),
    kernel(3000, 4000, 5, stream=7),
    launch("cudaMemcpyAsync", 4100, 4300, 7),
    kernel(4500, 4600, 7, stream=8, kind="memcpy"),
    launch("cudaLaunchKernel", 9000, 9500, 6),
    kernel(10000, 11000, 6, stream=7, device=1),
)


def test_multistream_multidevice_whole_timeline():
    s = MULTI.summary()
    assert (s.kernels, s.kernel_launches, s.graph_launches, s.graph_replays) == (4, 1, 1, 1)
    # Union of all GPU work: [0, 4000) [4500, 4600) [10000, 11000).
    assert (s.span_ns, s.busy_ns, s.idle_ns) == (11000, 5100, 5900)
    # gaps [500, 5400]: median 2950; p90 500 + 0.9 * 4900 = 4910.
    assert dataclasses.astuple(s.gaps) == (2, 2950.0, 4910.0, 5400)
    # 4000 -> 4500: the memcpy's launch ended at 4300; 4600 -> 10000: launch ended at 9500.
    assert s.host_bound_gaps == 2
    # Latency: graph 0 - (-100) = 100, memcpy 4500 - 4300 = 200, kernel 10000 - 9500 = 500.
    assert dataclasses.astuple(s.launch_latency) == (3, 200.0, 440.0, 500)


def test_multistream_per_stream_and_per_device():
    s = MULTI.summary()
    lanes = {(f.device, f.stream): f for f in s.streams}
    assert list(lanes) == [(0, 7), (0, 8), (1, 7)]

    s07 = lanes[(0, 7)]  # [0, 1000) [3000, 4000)
    assert (s07.span_ns, s07.busy_ns, s07.idle_ns, s07.kernels) == (4000, 2000, 2000, 2)
    assert dataclasses.astuple(s07.gaps) == (1, 2000.0, 2000.0, 2000)
    assert s07.host_bound_gaps == 0  # the replay was running since 0: submitted
    assert (s07.kernel_launches, s07.graph_launches, s07.graph_replays) == (0, 1, 1)
    assert dataclasses.astuple(s07.launch_latency) == (1, 100.0, 100.0, 100)

    s08 = lanes[(0, 8)]  # [500, 3500) then the memcpy [4500, 4600)
    assert (s08.span_ns, s08.busy_ns, s08.idle_ns, s08.kernels) == (4100, 3100, 1000, 1)
    assert s08.host_bound_gaps == 1  # memcpy launched at 4300, after the gap began at 3500
    # Latency on this stream: graph 500 - (-100) = 600, memcpy 200: median 400, p90 560.
    assert dataclasses.astuple(s08.launch_latency) == (2, 400.0, 560.0, 600)

    s17 = lanes[(1, 7)]
    assert (s17.span_ns, s17.busy_ns, s17.idle_ns, s17.gaps.count) == (1000, 1000, 0, 0)
    assert (s17.kernel_launches, s17.graph_launches) == (1, 0)

    d0, d1 = s.devices
    assert (d0.device, d0.stream, d1.device) == (0, None, 1)
    # Device 0: [0, 4000) [4500, 4600).
    assert (d0.span_ns, d0.busy_ns, d0.idle_ns, d0.kernels) == (4600, 4100, 500, 3)
    assert (d0.gaps.count, d0.host_bound_gaps) == (1, 1)
    assert dataclasses.astuple(d0.launch_latency) == (2, 150.0, 190.0, 200)
    assert (d1.span_ns, d1.busy_ns, d1.kernels, d1.kernel_launches) == (1000, 1000, 1, 1)


def test_touching_work_is_one_busy_interval():
    s = timeline(kernel(0, 1000, -1), kernel(1000, 2000, -1)).summary()
    assert (s.span_ns, s.busy_ns, s.idle_ns, s.gaps.count, s.host_bound_gaps) == (
        2000,
        2000,
        0,
        0,
        0,
    )
    assert s.gaps.median_ns is None and s.launch_latency.count == 0


def test_no_gpu_work():
    s = timeline(launch("cudaLaunchKernel", 0, 10, 1)).summary()
    assert (s.kernels, s.kernel_launches, s.span_ns, s.busy_ns) == (0, 1, 0, 0)
    assert s.idle_fraction is None
    d = s.to_dict()
    assert d["idle_fraction"] is None and d["gaps"] == {
        "count": 0,
        "median_us": None,
        "p90_us": None,
        "max_us": None,
    }
    assert d["streams"] == []
    empty = Timeline([], [], [], []).summary()
    assert (empty.kernels, empty.span_ns, empty.gaps.count) == (0, 0, 0)


@pytest.mark.parametrize(
    ("gpu", "reported"), [("NVIDIA H200", "NVIDIA H200"), (float("inf"), None)]
)
def test_only_a_gpu_name_is_reported(gpu, reported):
    t = timeline(launch("cudaLaunchKernel", 0, 10, 1))
    t.meta["gpu"] = gpu  # a damaged file may hold a number there; Python's json reads Infinity
    figures = t.summary().to_dict()
    assert figures.get("gpu") == reported
    json.dumps(figures, allow_nan=False)  # what `graphlab gaps --json` prints stays valid JSON


def test_nanoseconds_survive_at_absolute_timestamps():
    base = 1733155200000000000
    s = timeline(
        kernel(base, base + 1, -1), kernel(base + 2, base + 3, -1), kernel(base + 6, base + 7, -1)
    ).summary()
    # gaps of 1 ns and 3 ns: median 2 ns; p90 1 + 0.9 * 2 = 2.8 ns.
    assert (s.span_ns, s.busy_ns) == (7, 3)
    assert s.to_dict()["gaps"] == {
        "count": 2,
        "median_us": 0.002,
        "p90_us": 0.0028,
        "max_us": 0.003,
    }


def test_summary_is_frozen_and_reports_in_words():
    s = EAGER.summary()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.kernels = 0
    text = str(s)
    assert "3 kernels on 1 stream" in text
    assert "span 7.500 µs, busy 3.000 µs, idle 4.500 µs (60.0% idle)" in text
    assert "2 gaps (median 2.250 µs, p90 3.650 µs, max 4.000 µs)" in text
    assert "host-bound: 1 of 2 gaps (the GPU waited for the host" in text
    assert "3 kernel launches, 0 graph launches" in text
    assert s.report() == text


def test_real_h200_eager_then_replay_trace():
    # Figures from the separate script over the raw JSON (see module docstring).
    s = Timeline.from_chrome_trace(TRACES / "h200_eager8_then_replay8.json").summary()
    d = s.to_dict()
    assert (d["kernels"], d["kernel_launches"], d["graph_launches"]) == (16, 8, 1)
    assert (d["span_us"], d["busy_us"], d["idle_us"]) == (275.968, 15.456, 260.512)
    assert (d["gaps"]["count"], d["gaps"]["median_us"], d["gaps"]["max_us"]) == (15, 11.168, 111.2)
    # 7 gaps between eager kernels + the gap before the replay, whose cudaGraphLaunch ended
    # after the last eager kernel; none of the 7 gaps inside the replay.
    assert d["host_bound_gaps"] == 8
    assert d["launch_latency"]["median_us"] == 2.215
    assert [x["stream"] for x in d["streams"]] == [7]


# Real H200 traces written by tests/traces/make_traces.py (provenance.json: torch 2.11.0+cu130,
# driver 580.159.04). Every figure below came from the separate plain-Python script over the raw
# JSON (see the module docstring), not from graphlab.


def real(name: str) -> dict:
    return Timeline.from_chrome_trace(TRACES / name).summary().to_dict()


def test_real_eager_chain():
    d = real("eager_chain.json")
    assert (d["kernels"], d["kernel_launches"], d["graph_launches"]) == (20, 20, 0)
    assert (d["span_us"], d["busy_us"], d["idle_us"]) == (601.405, 17.245, 584.16)
    assert (d["gaps"]["count"], d["gaps"]["median_us"], d["gaps"]["max_us"]) == (
        19,
        20.256,
        203.136,
    )
    # Every gap of an eager chain of tiny kernels is the GPU waiting for the next launch.
    assert d["host_bound_gaps"] == 19
    assert (d["launch_latency"]["count"], d["launch_latency"]["median_us"]) == (20, 1.8465)


def test_real_graph_replay():
    d = real("graph_replay.json")
    assert (d["kernels"], d["kernel_launches"], d["graph_launches"], d["graph_replays"]) == (
        40,
        0,
        2,
        2,
    )
    assert (d["span_us"], d["busy_us"], d["idle_us"]) == (87.264, 39.169, 48.095)
    assert (d["gaps"]["count"], d["gaps"]["median_us"], d["gaps"]["max_us"]) == (39, 0.256, 38.208)
    # Only the gap between the two replays waited for the host.
    assert d["host_bound_gaps"] == 1
    assert (d["launch_latency"]["count"], d["launch_latency"]["median_us"]) == (2, 4.989)


def test_real_multistream_replay_overlaps_its_branches():
    d = real("multistream_replay.json")
    assert (d["kernels"], d["graph_launches"], d["graph_replays"]) == (3, 1, 1)
    assert (d["span_us"], d["busy_us"], d["idle_us"]) == (105.472, 104.0, 1.472)
    assert (d["gaps"]["count"], d["gaps"]["median_us"], d["host_bound_gaps"]) == (1, 1.472, 0)
    lanes = {x["stream"]: x for x in d["streams"]}
    assert sorted(lanes) == [7, 144]
    assert (lanes[7]["kernels"], lanes[7]["busy_us"], lanes[7]["idle_us"]) == (2, 90.176, 15.296)
    assert (lanes[144]["kernels"], lanes[144]["busy_us"], lanes[144]["idle_us"]) == (1, 85.343, 0.0)
    # The two matmul branches ran at the same time: the device was busy for less than the sum
    # of its streams (90.176 + 85.343 = 175.519 µs of stream time in 104.000 µs).
    assert d["busy_us"] < lanes[7]["busy_us"] + lanes[144]["busy_us"]


# ------------------------------------------------------------ property: union vs a plain loop

intervals = st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 3_000), st.sampled_from([7, 8, 9])),
    min_size=1,
    max_size=40,
)


def plain_union(pairs):
    """Busy length and gap list by the textbook loop over intervals sorted by start."""
    merged = []
    for start, end in sorted(pairs):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    busy = sum(e - s for s, e in merged)
    return busy, [merged[i + 1][0] - merged[i][1] for i in range(len(merged) - 1)]


@settings(max_examples=200, deadline=None)
@given(intervals)
def test_union_matches_a_plain_loop(events):
    t = Timeline(
        kind=["kernel"] * len(events),
        name=["k"] * len(events),
        start_ns=[s for s, _, _ in events],
        dur_ns=[d for _, d, _ in events],
        device=[0] * len(events),
        stream=[c for _, _, c in events],
    )
    s = summarize(t)
    busy, gaps = plain_union([(a, a + d) for a, d, _ in events])
    first, last = min(a for a, _, _ in events), max(a + d for a, d, _ in events)
    assert (s.busy_ns, s.span_ns, s.idle_ns) == (busy, last - first, last - first - busy)
    assert s.gaps.count == len(gaps) and sum(gaps) == s.idle_ns
    starts, ends = busy_intervals(t.start_ns[t.is_gpu], t.end_ns[t.is_gpu])
    assert int((ends - starts).sum()) == busy
    for lane in s.streams:
        mine = [(a, a + d) for a, d, c in events if c == lane.stream]
        assert lane.busy_ns == plain_union(mine)[0]


def test_a_negative_launch_latency_is_explained_in_the_report():
    traces = Path(__file__).parent / "traces"
    # multistream_replay.json (H200): the replay's kernels started before cudaGraphLaunch returned.
    negative = Timeline.from_chrome_trace(traces / "multistream_replay.json").summary()
    assert negative.launch_latency.median_ns < 0
    note = "(negative: the GPU started the work before the launch call returned"
    assert note in negative.report()
    positive = Timeline.from_chrome_trace(traces / "eager_chain.json").summary().report()
    assert "negative" not in positive


# ------------------------------------------ property: every lane is the analysis of its own events

lane_events = st.lists(
    st.tuples(
        st.sampled_from(["launch", "kernel", "kernel", "memcpy", "sync"]),
        st.sampled_from(["cudaLaunchKernel", "cudaGraphLaunch", "cudaMemcpyAsync", "k"]),
        st.integers(0, 50_000),
        st.integers(0, 3_000),
        st.integers(0, 2),  # device
        st.integers(0, 3),  # stream
        st.integers(-1, 8),  # correlation
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(lane_events)
def test_each_lane_equals_the_analysis_of_that_lane_alone(rows):
    # The figures of all lanes come from one vectorised pass; here each lane is compared with
    # the whole-timeline figures of a table holding only its GPU events (and every host call).
    # (Not host-bound gaps: work counts as submitted once any event of its correlation id runs,
    # on whichever lane, so a lane's count depends on the other lanes by definition.)
    kind, name, start, dur, device, stream, corr = (list(c) for c in zip(*rows, strict=True))
    host = [k in ("launch", "sync") for k in kind]
    t = Timeline(
        kind=kind,
        name=name,
        start_ns=start,
        dur_ns=dur,
        device=[-1 if h else d for h, d in zip(host, device, strict=True)],
        stream=[-1 if h else s for h, s in zip(host, stream, strict=True)],
        thread=[1 if h else -1 for h in host],
        correlation=corr,
    )
    s = summarize(t)
    lanes = [(lane, (t.device == lane.device) & (t.stream == lane.stream)) for lane in s.streams]
    lanes += [(lane, t.device == lane.device) for lane in s.devices]
    for lane, mine in lanes:
        alone = summarize(t.select(mine | ~t.is_gpu))
        same = ("kernels", "span_ns", "busy_ns", "idle_ns", "gaps")
        assert [getattr(lane, f) for f in same] == [getattr(alone, f) for f in same]
        assert lane.launch_latency == alone.launch_latency
        assert lane.graph_replays == alone.graph_replays
    assert sum(lane.kernels for lane in s.streams) == s.kernels


def test_the_report_scales_each_duration_to_its_unit():
    # Three 0.5 ms kernels, the second 12.92 s after the first, the third 4.001 ms after it:
    # spans and gaps of seconds print in s, the busy time in ms (worked out by hand below).
    t = Timeline(
        kind=["kernel"] * 3,
        name=["a", "b", "c"],
        start_ns=[0, 12_920_243_000, 12_924_744_000],
        dur_ns=[500_000] * 3,
        device=[0] * 3,
        stream=[7] * 3,
        thread=[-1] * 3,
        correlation=[-1] * 3,
    )
    # span 12_925_244_000, busy 1_500_000, idle 12_923_744_000; gaps 12_919_743_000 and
    # 4_001_000: median 6_461_872_000, p90 4_001_000 + 0.9 * 12_915_742_000 = 11_628_168_800.
    assert t.summary().report().splitlines()[1] == (
        "  all streams: span 12.925 s, busy 1.500 ms, idle 12.924 s (100.0% idle); "
        "2 gaps (median 6.462 s, p90 11.628 s, max 12.920 s)"
    )


@pytest.mark.parametrize(
    "name", sorted(p.name for p in TRACES.glob("*.json") if p.name != "provenance.json")
)
def test_lane_json_built_by_columns_equals_each_lanes_own(name):
    # to_dict builds the streams' and devices' objects a column at a time; each lane's own
    # Figures.to_dict builds them one figure at a time. Every number must be the same.
    s = Timeline.from_chrome_trace(TRACES / name).summary()
    d = s.to_dict()
    assert d["streams"] == [lane.to_dict() for lane in s.streams] and len(s.streams) >= 1
    assert d["devices"] == [lane.to_dict() for lane in s.devices]
    # --json writes the lanes' text straight from the columns: the same numbers again.
    assert json.loads(s.to_json()) == d


def test_lane_json_past_2_to_the_53_ns():
    # Gaps of 2**53 + 1 and 2**53 + 3 ns (104 days) are not exact as doubles: each figure is
    # still the float nearest ns / 1000, as Python's int / int gives it.
    big = 2**53
    t = timeline(
        kernel(0, 10, -1, stream=3),
        kernel(10 + big + 1, 20 + big + 1, -1, stream=3),
        kernel(20 + 2 * big + 4, 30 + 2 * big + 4, -1, stream=3),
        kernel(0, 10, -1, stream=4),
    )
    (lane, other) = t.summary().to_dict()["streams"]
    assert lane["gaps"] == {
        "count": 2,
        "median_us": (big + 2) / 1000,  # (big + 1 + big + 3) / 2
        "p90_us": float(Decimal(repr((100 * (big + 1) + 90 * 2) / 100)) / 1000),
        "max_us": (big + 3) / 1000,
    }
    assert lane["span_us"] == (30 + 2 * big + 4) / 1000
    assert lane["idle_fraction"] == (2 * big + 4) / (30 + 2 * big + 4)
    assert other["gaps"] == {"count": 0, "median_us": None, "p90_us": None, "max_us": None}
    s = t.summary()
    assert [lane.to_dict() for lane in s.streams] == s.to_dict()["streams"]
    assert json.loads(s.to_json()) == s.to_dict()


def test_lane_json_written_a_batch_of_lanes_at_a_time(monkeypatch):
    # Seven streams, one kernel each, written three lanes at a time: the lines are those of
    # each lane's own Figures.to_dict, in order, each on a line of its own.
    t = timeline(*(kernel(10 * i, 10 * i + 4, -1, stream=i) for i in range(7)))
    monkeypatch.setattr(lanes, "WRITE_LANES", 3)
    s = t.summary()
    text = s.to_json()
    assert json.loads(text) == s.to_dict()
    lines = text.splitlines()
    first = lines.index('  "streams": [') + 1
    assert [json.loads(line.rstrip(",")) for line in lines[first : first + 7]] == [
        lane.to_dict() for lane in s.streams
    ]
