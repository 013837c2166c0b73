"""graphlab.widgets checked through their state, without a browser.

The timelines here are tiny hand-made tables; every expected number below was worked out by hand
from them (see the comments), not read back from the code.
"""

from __future__ import annotations

import asyncio
import base64
import html
import io
import json
import math
import re
import subprocess
import sys

import nbformat
import numpy as np
import pytest
from browser.stored import execute_as_stored
from ipywidgets.widgets import widget as widget_module
from nbconvert import HTMLExporter
from PIL import Image

import graphlab
from graphlab import planner
from graphlab.errors import GraphlabError
from graphlab.simulator import SimParams
from graphlab.trace.timeline import Timeline
from graphlab.widgets import (
    BreakEvenExplorer,
    GapView,
    PlanView,
    SimulatorPlayground,
    TimelineView,
    live_figure,
    pictures,
    timeline_view,
)
from graphlab.widgets import figures as figures_module
from graphlab.widgets.gap_view import log_ticks
from graphlab.widgets.timeline_view import (
    HOST_COST_NOTE,
    PROFILED_NOTE,
    PROFILED_NOTE_AGAIN,
    summary_row_values,
)
from graphlab.widgets.wrapping import wrap

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(autouse=True)
def fresh_kernel(monkeypatch):
    """Each test starts as a new kernel would: no timeline has given the profiler note yet."""
    monkeypatch.setattr(timeline_view, "_profiled_note_given", False)


GAP = "rgba(214, 39, 40, 0.16)"


def png_size(encoded: str) -> tuple[int, int]:
    """Width and height of a base64 PNG, read from its header (the IHDR chunk comes first)."""
    data = base64.b64decode(encoded)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


# Eager: three launch calls (5 µs each), each followed by its kernel, then a device sync.
#   launch 1 [0, 5] µs       -> k_a [7, 9]        latency 2.0
#   launch 2 [6, 11]         -> k_b [13, 14]      latency 2.0
#   launch 3 [12, 17]        -> k_a [19.5, 21.5]  latency 2.5
#   sync [17, 22]
# GPU busy 2+1+2 = 5 µs over a span 7..21.5 = 14.5 µs; gaps 9..13 (4 µs) and 14..19.5 (5.5 µs).
EAGER = dict(
    kind=["launch", "kernel", "launch", "kernel", "launch", "kernel", "sync"],
    name=["cudaLaunchKernel", "k_a", "cudaLaunchKernel", "k_b", "cudaLaunchKernel", "k_a",
          "cudaDeviceSynchronize"],
    start_ns=[0, 7000, 6000, 13000, 12000, 19500, 17000],
    dur_ns=[5000, 2000, 5000, 1000, 5000, 2000, 5000],
    device=[-1, 0, -1, 0, -1, 0, -1],
    stream=[-1, 7, -1, 7, -1, 7, -1],
    thread=[1, -1, 1, -1, 1, -1, 1],
    correlation=[1, 1, 2, 2, 3, 3, -1],
)  # fmt: skip

# Graph: one cudaGraphLaunch [0, 4] µs replaying k_a, k_b, k_a, then a sync; everything shifted
# by 1 ms to check that the picture starts at zero anyway.
#   kernels [5, 7], [7.3, 8.3], [8.6, 10.6]: busy 5 µs, span 5.6 µs, two 0.3 µs gaps;
#   latencies from the launch's end (4 µs): 1.0, 3.3, 4.6.
SHIFT = 1_000_000
GRAPH = dict(
    kind=["launch", "kernel", "kernel", "kernel", "sync"],
    name=["cudaGraphLaunch", "k_a", "k_b", "k_a", "cudaDeviceSynchronize"],
    start_ns=[SHIFT + s for s in (0, 5000, 7300, 8600, 4500)],
    dur_ns=[4000, 2000, 1000, 2000, 6500],
    device=[-1, 0, 0, 0, -1],
    stream=[-1, 7, 7, 7, -1],
    thread=[1, -1, -1, -1, 1],
    correlation=[9, 9, 9, 9, -1],
)


@pytest.fixture
def eager():
    return Timeline(**EAGER, meta={"source": "kineto", "gpu": "fixture GPU"})


@pytest.fixture
def graph():
    return Timeline(**GRAPH, meta={"source": "simulator"})


def nan_pairs(x) -> list[tuple[float, float]]:
    """The [start, end] pairs of a NaN-separated segment array."""
    x = np.asarray(x, dtype=float)
    assert len(x) % 3 == 0 and np.isnan(x[2::3]).all()
    return list(zip(x[0::3].tolist(), x[1::3].tolist(), strict=True))


def assert_pairs(x, expected) -> None:
    """The segments of ``x`` equal ``expected`` up to float rounding (same count, same order)."""
    np.testing.assert_allclose(np.array(nan_pairs(x)), np.array(expected, dtype=float), rtol=1e-9)


def bar_traces(view, panel: int):
    """The bar (line) traces of one panel, idle-gap band excluded, as {name: trace}."""
    axis = "x" if panel == 0 else f"x{panel + 1}"
    return {
        t.name: t
        for t in view.figure.data
        if t.mode == "lines" and t.xaxis == axis and not t.name.endswith("idle gaps")
    }


def gap_trace(view, panel: int):
    (trace,) = [t for t in view.figure.data if t.name == f"{view.panels[panel].title}: idle gaps"]
    return trace


def hover_traces(view, panel: int, lane: int):
    axis = "x" if panel == 0 else f"x{panel + 1}"
    return [
        t
        for t in view.figure.data
        if t.mode == "markers" and t.xaxis == axis and len(t.y) and t.y[0] == lane
    ]


def by_name(traces) -> dict:
    """Hover traces keyed by the event name baked into their template."""
    return {t.hovertemplate.split("</b>")[0].removeprefix("<b>"): t for t in traces}


def test_each_widget_imports_only_what_it_needs():
    # A lesson's first figure waits for these imports: the package imports no widget, a widget
    # only its own module, and TimelineView matplotlib only when its picture is drawn.
    steps = [
        "import graphlab.widgets",
        "from graphlab.widgets import TimelineView",
        "TimelineView(graphlab.recording('chain_100_k4096')).picture()",
        "from graphlab.widgets import PlanView",
    ]
    loaded = "print(*(m in sys.modules for m in ('ipywidgets', 'matplotlib', 'graphlab.planner')))"
    code = "import sys, graphlab\n" + "".join(f"{step}\n{loaded}\n" for step in steps)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "False False False",
        "True False False",
        "True True False",
        "True True True",
    ]


def test_lanes_host_on_top_then_each_stream(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    assert [p.title for p in view.panels] == ["eager", "graph replay"]
    for i in range(2):
        layout_y = view.figure.layout["yaxis" if i == 0 else f"yaxis{i + 1}"]
        assert list(layout_y.ticktext) == ["host", "stream 7"]
    bars = bar_traces(view, 0)
    assert sorted(bars) == ["host: host sync", "host: launch call", "stream 7: GPU work"]
    # One line trace per lane and colour, NaN-separated segments in µs from the first event.
    assert nan_pairs(bars["host: launch call"].x) == [(0, 5), (6, 11), (12, 17)]
    assert nan_pairs(bars["host: host sync"].x) == [(17, 22)]
    assert nan_pairs(bars["stream 7: GPU work"].x) == [(7, 9), (13, 14), (19.5, 21.5)]
    assert set(np.asarray(bars["stream 7: GPU work"].y)[0::3]) == {1.0}
    # The graph panel starts at zero too, although its events are 1 ms later.
    graph_bars = bar_traces(view, 1)
    assert nan_pairs(graph_bars["host: launch call"].x) == [(0, 4)]
    assert_pairs(graph_bars["stream 7: GPU work"].x, [(5, 7), (7.3, 8.3), (8.6, 10.6)])
    # Zoom is shared: the lower panel's x axis follows the upper one.
    assert view.figure.layout.xaxis2.matches == "x"


def test_idle_gaps_shaded_one_segment_per_gap_of_the_summary(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    assert nan_pairs(gap_trace(view, 0).x) == [(9, 13), (14, 19.5)]
    assert_pairs(gap_trace(view, 1).x, [(7, 7.3), (8.3, 8.6)])
    for panel, timeline in enumerate((eager, graph)):
        assert len(nan_pairs(gap_trace(view, panel).x)) == timeline.summary().gaps.count == 2


def test_summary_numbers_are_the_timelines_own(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    assert view.summaries["eager"] == eager.summary().to_dict()
    assert view.summaries["graph replay"] == graph.summary().to_dict()
    eager_column = summary_row_values(eager, view.summaries["eager"])
    # kernels, span, busy, idle fraction, median gap, launch calls, host µs per launch call
    assert eager_column == pytest.approx([3, 14.5, 5.0, 9.5 / 14.5, 4.75, 3, 5.0])
    graph_column = summary_row_values(graph, view.summaries["graph replay"])
    assert graph_column == pytest.approx([3, 5.6, 5.0, 0.6 / 5.6, 0.3, 1, 4.0])
    table = view.children[1].value
    assert "14.5" in table and "65.5%" in table and "10.7%" in table and "4.750" in table
    # The host row says what it measures.
    assert "host µs per launch call (median)" in table
    assert html.escape(HOST_COST_NOTE) in table


def test_profiled_timelines_carry_the_profiler_note_in_full_once_per_kernel(eager, graph):
    simulated = TimelineView(graph=graph)  # the simulator's host costs come from unprofiled runs
    assert not simulated.profiled
    assert "profiler" not in simulated.children[1].value
    first = TimelineView(eager=eager, graph=graph)  # eager came from a profiler trace
    assert first.profiled
    assert html.escape(PROFILED_NOTE) in first.children[1].value
    for words in ("764 µs profiled", "7 µs unprofiled", "--cuda-graph-trace=node"):
        assert words in PROFILED_NOTE
    second = TimelineView(eager=eager, graph=graph)
    assert html.escape(PROFILED_NOTE) not in second.children[1].value
    assert html.escape(PROFILED_NOTE_AGAIN) in second.children[1].value
    first.set_timelines(eager=eager, graph=graph)  # a redraw keeps the view's own note
    assert html.escape(PROFILED_NOTE) in first.children[1].value


def test_hover_shows_name_duration_and_launch_latency(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    gpu = by_name(hover_traces(view, 0, 1))
    k_a, k_b = gpu["k_a"], gpu["k_b"]
    assert list(k_a.x) == [8.0, 20.5] and list(k_a.customdata) == [2.0, 2.0]
    assert list(k_a.marker.color) == [2.0, 2.5]
    assert list(k_b.x) == [13.5] and list(k_b.marker.color) == [2.0]
    assert "launch latency %{marker.color:.3f} µs" in k_a.hovertemplate
    graph_gpu = by_name(hover_traces(view, 1, 1))
    assert list(graph_gpu["k_a"].marker.color) == pytest.approx([1.0, 4.6])
    assert list(graph_gpu["k_b"].marker.color) == pytest.approx([3.3])
    # The launch call's hover: its GPU work starts 2 µs after the call returns.
    (launch,) = [t for t in hover_traces(view, 0, 0) if "cudaLaunchKernel" in t.hovertemplate]
    assert list(launch.marker.color) == [2.0, 2.0, 2.5]


def test_source_banner_says_where_the_data_came_from(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    banners = [a.text for a in view.figure.layout.annotations]
    # Wrapped to the plot's 470 px at 12 px: 470 / (0.62 * 12) = 63 characters a line.
    # "graph replay · simulator (hand-set parameters): a model of the" is 62 of them.
    assert banners == [
        "<b>eager</b> · profiled on fixture GPU",
        "<b>graph replay</b> · simulator (hand-set parameters): a model of the<br>"
        "GPU, not a measurement",
    ]
    # The second panel's banner takes two 17 px lines above it, the first one line.
    layout = view.figure.layout
    assert layout.margin.t == 30 + 1 * 17 + 14
    gap_px = (layout.yaxis.domain[0] - layout.yaxis2.domain[1]) * (
        layout.height - layout.margin.t - layout.margin.b
    )
    assert gap_px == pytest.approx(2 * 17 + 14)


def test_legend_names_the_colours_drawn(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    keys = [t for t in view.figure.data if t.showlegend]
    assert [t.name for t in keys] == [
        "host launch call",
        "host sync (waits for the GPU)",
        "GPU work",
        "GPU idle",
    ]
    assert [t.marker.color for t in keys] == ["#4C78A8", "#E45756", "#F58518", GAP]
    assert all(t.x == (None,) for t in keys)  # keys only: they draw nothing
    assert view.figure.layout.showlegend is True
    # A timeline with no host sync and no idle gap gets no key for them.
    packed = Timeline(
        kind=["launch", "kernel", "kernel"], name=["cudaGraphLaunch", "a", "b"],
        start_ns=[0, 5000, 6000], dur_ns=[4000, 1000, 1000], device=[-1, 0, 0],
        stream=[-1, 7, 7], thread=[1, -1, -1], correlation=[1, 1, 1],
    )  # fmt: skip
    names = [t.name for t in TimelineView(graph=packed).figure.data if t.showlegend]
    assert names == ["host launch call", "GPU work"]


def test_a_bundled_recording_supplies_both_timelines_and_its_provenance():
    recording = graphlab.recording("chain_10_k4096")  # real H200 data bundled with graphlab
    view = TimelineView(recording)
    assert [p.title for p in view.panels] == ["eager", "graph replay"]
    for panel, mode in zip(view.panels, ("eager", "graph"), strict=True):
        assert view.summaries[panel.title] == recording.timeline(mode).summary().to_dict()
        assert panel.source == recording.label
    # The banner above a panel is short; the full provenance line is under the summary table.
    gpu = recording.meta["gpu"]
    banner = f"<b>graph replay</b> · recording chain_10_k4096 on {gpu}"
    assert view.figure.layout.annotations[1].text == banner
    assert html.escape(recording.label) in view.children[1].value


def test_one_timeline_alone(graph):
    view = TimelineView(graph=graph)
    assert [p.title for p in view.panels] == ["graph replay"]
    assert list(view.summaries) == ["graph replay"]
    assert view.figure.layout.xaxis.showticklabels is True


@pytest.mark.parametrize(
    ("args", "message"),
    [((), "needs something to show"), ((42,), "not int")],
)
def test_bad_input_is_one_clear_error(args, message):
    with pytest.raises(GraphlabError, match=message):
        TimelineView(*args)


def test_display_bundle_is_the_widget_a_png_and_text_without_html(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    data, metadata = view._repr_mimebundle_()
    assert set(data) == {WIDGET_VIEW, "image/png", "text/plain"}
    assert data[WIDGET_VIEW]["model_id"] == view.model_id
    # 980 x 320 CSS px at 2 device pixels each: 100 px lane labels + 480 px plot + 28 px gutter
    # + 360 px table + 12 px margin; the height follows from the table, taller than the panels.
    width, height = png_size(data["image/png"])
    assert metadata["image/png"] == {"width": 980, "height": height // 2}
    assert (width, height % 2) == (2 * 980, 0)
    # Text-only viewers get the summary as text.
    assert data["text/plain"].splitlines()[0] == (
        "eager (profiled on fixture GPU): kernels 3, span (µs) 14.5, busy (µs) 5.0, idle 65.5%, "
        "median gap (µs) 4.750, launch calls 3, host µs per launch call (median) 5.000"
    )


SPARSE_KERNELS = 10_000


@pytest.fixture
def sparse_kernels() -> Timeline:
    """10,000 kernels of 1 µs, one every 2 µs (kernel i covers [2i, 2i+1] µs): span 19,999 µs."""
    n = SPARSE_KERNELS
    return Timeline(
        kind=["kernel"] * n, name=["k"] * n, start_ns=np.arange(n, dtype=np.int64) * 2000,
        dur_ns=np.full(n, 1000), device=np.zeros(n, dtype=np.int64), stream=np.full(n, 7),
        meta={"source": "simulator"},
    )  # fmt: skip


def test_level_of_detail_merges_below_a_pixel_and_refines_on_zoom(monkeypatch, sparse_kernels):
    n = SPARSE_KERNELS
    monkeypatch.setattr(figures_module, "LOD_EVENTS", 1000)
    view = TimelineView(graph=sparse_kernels)
    gpu = bar_traces(view, 0)["stream 7: GPU work"]
    # Whole view: one pixel is 19,999/2000 ≈ 10 µs, every 1 µs gap is below it: one run.
    assert nan_pairs(gpu.x) == [(0, 19_999)]
    assert len(gap_trace(view, 0).x) == 0
    (merged,) = [t for t in hover_traces(view, 0, 0) if "merged" in t.hovertemplate]
    assert merged.customdata[0][0] == n and merged.customdata[0][1] == pytest.approx(n * 1.0)

    # Zoom to [100, 120] µs: a pixel is 0.01 µs, so every kernel is its own bar again. Drawn:
    # the view plus one view width either side, [80, 140] µs.
    view.figure.layout.xaxis.range = (100, 120)
    expected = [(2 * i, 2 * i + 1) for i in range(n) if 2 * i <= 140 and 2 * i + 1 >= 80]
    gpu = bar_traces(view, 0)["stream 7: GPU work"]
    assert nan_pairs(gpu.x) == expected and len(expected) == 31
    assert len(nan_pairs(gap_trace(view, 0).x)) == 31  # the gap after each drawn kernel
    merged = [t for t in view.figure.data if t.hovertemplate and "merged" in t.hovertemplate]
    assert [len(t.x) for t in merged] == [0]  # no merged runs left to hover
    (single,) = [t for t in hover_traces(view, 0, 0) if "<b>k</b>" in t.hovertemplate]
    assert list(single.x) == [(a + b) / 2 for a, b in expected]
    assert len(single.marker.color) == 31 and list(single.customdata) == [1.0] * 31
    assert "latency" not in single.hovertemplate  # no launch calls in this timeline


def test_set_timelines_redraws_in_place(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    figure = view.figure
    view.set_timelines(eager=graph, graph=eager)
    assert view.figure is figure
    assert_pairs(bar_traces(view, 0)["stream 7: GPU work"].x, [(5, 7), (7.3, 8.3), (8.6, 10.6)])
    assert view.children[1].value.index("10.7%") < view.children[1].value.index("65.5%")
    assert math.isclose(view.summaries["graph replay"]["span_us"], 14.5)


# --------------------------------------------------------------------------------- GapView


def test_gap_view_histogram_and_meter(eager, graph):
    view = GapView(eager=eager, graph=graph)
    # Eager gaps 4 and 5.5 µs, graph gaps 0.3 and 0.3 µs; all on one set of log bins.
    edges = view.edges_us
    assert edges[0] == pytest.approx(0.3 / 1.25) and edges[-1] == pytest.approx(5.5 * 1.25)
    assert np.allclose(np.diff(np.log(edges)), np.log(edges[1] / edges[0]))
    for title, gaps in (("eager", [4.0, 5.5]), ("graph replay", [0.3, 0.3])):
        counts = view.counts[title]
        expected = np.zeros(len(edges) - 1, dtype=int)
        for g in gaps:
            expected[np.flatnonzero((edges[:-1] <= g) & (g < edges[1:]))[0]] += 1
        assert counts.tolist() == expected.tolist()
    assert view.figure.layout.xaxis.type == "log"
    assert [t.name for t in view.figure.data] == ["eager (2 gaps)", "graph replay (2 gaps)"]
    assert view.meter == "GPU idle: 65.5% eager → 10.7% graph replay"
    assert view._repr_mimebundle_()[0]["text/plain"] == view.meter
    # Plain tick labels from 0.24 to 6.875 µs: 1-2-5 in each decade.
    assert view.figure.layout.xaxis.tickvals == (0.5, 1, 2, 5)
    assert view.figure.layout.xaxis.ticktext == ("0.5", "1", "2", "5")


@pytest.mark.parametrize(
    ("lo", "hi", "labels"),
    [
        # 1-2-5 gives three or more ticks.
        (0.24, 6.875, ["0.5", "1", "2", "5"]),
        # 1-2-5 would give 20 ticks over seven decades: the powers of ten instead.
        (0.0008, 3000, ["0.001", "0.01", "0.1", "1", "10", "100", "1000"]),
        # 1-2-5 gives 0.2 and 0.5 only: every integer mantissa.
        (0.15, 0.8, ["0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8"]),
        # A replay's gaps of 0.256 µs: the bins span 0.256 / 1.25 to 0.256 * 1.25, where only
        # 0.3 is an integer mantissa; round steps of 0.025 (0.1152 µs / 5 bins, rounded up).
        (0.2048, 0.32, ["0.225", "0.25", "0.275", "0.3"]),
    ],
)
def test_gap_axis_ticks_are_plain_numbers(lo, hi, labels):
    values, text = log_ticks(lo, hi)
    assert text == labels
    assert values == [float(label) for label in labels]


def test_gap_view_of_a_replay_labels_its_sub_microsecond_gaps(graph):
    # The graph fixture's two gaps are 0.3 µs: bins from 0.24 to 0.375 µs.
    view = GapView(graph=graph)
    assert view.figure.layout.xaxis.ticktext == ("0.24", "0.27", "0.3", "0.33", "0.36")


def test_gap_view_without_gaps_says_so():
    # Two kernels back to back: no idle gap at all.
    timeline = Timeline(
        kind=["kernel", "kernel"], name=["a", "b"], start_ns=[0, 1000], dur_ns=[1000, 1000],
        device=[0, 0], stream=[7, 7], meta={"source": "simulator"},
    )  # fmt: skip
    view = GapView(graph=timeline)
    assert view.meter == "GPU idle: 0.0% graph replay"
    texts = [a.text for a in view.figure.layout.annotations]
    # The source line (70 characters) wrapped to the 520 px plot at 12 px: 69 a line.
    assert texts == [
        "simulator (hand-set parameters): a model of the GPU, not a<br>measurement",
        "no idle gaps: the GPU never waited",
    ]


# ----------------------------------------------------------------------- BreakEvenExplorer


def test_break_even_lines_and_n_star_follow_the_sliders():
    explorer = BreakEvenExplorer(capture_us=1000.0, eager_us=30.0, replay_us=10.0)
    # N* = 1000 / (30 - 10) = 50 steps; drawn up to 2.5 N* = 125 steps.
    eager_line, graph_line, marker = explorer.figure.data
    assert list(eager_line.x) == [0, 125] and list(eager_line.y) == [0, 3750]
    assert list(graph_line.y) == [1000, 1000 + 125 * 10]
    assert list(marker.x) == [50] and list(marker.y) == [1500]
    assert "from step 51 on" in explorer.readout.value

    explorer.replay.value = 20.0  # N* = 1000 / 10 = 100
    assert list(explorer.figure.data[2].x) == [100]
    assert list(explorer.figure.data[0].x) == [0, 250]
    explorer.capture.value = 2500.0  # N* = 250
    assert list(explorer.figure.data[2].x) == [250] and explorer.n_star == 250

    explorer.replay.value = 35.0  # replay slower than eager: no break-even
    assert len(explorer.figure.data[2].x) == 0
    assert "never pays back" in explorer.readout.value


def test_every_figure_opens_its_comm_with_the_whole_figure(monkeypatch, eager, graph):
    """The first message of each widget's figure holds every trace and the whole layout, so the
    first picture needs no later message (anywidget drops those for a figure whose browser code
    loaded slowly: see graphlab.widgets.live_figure)."""
    opened = []
    create = widget_module.comm.create_comm

    def record(**kwargs):
        opened.append(kwargs["data"]["state"])
        return create(**kwargs)

    monkeypatch.setattr(widget_module.comm, "create_comm", record)
    views = all_widgets(eager, graph)
    states = [state for state in opened if "_widget_data" in state]
    figures = [getattr(view, "figure", None) or view.view.figure for view in views.values()]
    assert len(states) == len(figures) == 5  # the playground's figure is its TimelineView's
    for state, figure in zip(states, figures, strict=True):
        assert len(state["_widget_data"]) == len(figure.data) > 0
        assert set(state["_widget_layout"]) == set(figure.layout.to_plotly_json())
    # The break-even explorer's N* = 1000 / (30 - 10) = 50 steps, by when eager spent 1,500 µs.
    marker = states[2]["_widget_data"][2]
    assert (marker["x"], marker["y"]) == ([50.0], [1500.0])


def answer(figure) -> None:
    """What plotly's browser side sends once it has drawn the figure's latest edit."""
    deltas = [{"uid": trace.uid} for trace in figure.data]
    figure._js2py_traceDeltas = {
        "trace_deltas": deltas,
        "trace_edit_id": figure._last_trace_edit_id,
    }


def test_a_figure_whose_edits_go_unanswered_is_drawn_afresh_in_its_place(monkeypatch):
    monkeypatch.setattr(live_figure, "ANSWER_S", 0.05)
    wait = 0.3  # several times ANSWER_S

    async def learner() -> None:
        explorer = BreakEvenExplorer(capture_us=1000.0, eager_us=30.0, replay_us=10.0)
        first = explorer.figure
        # Edited before any browser drew it: nothing to wait for.
        explorer.replay.value = 20.0
        await asyncio.sleep(wait)
        assert explorer.figure is first
        # Drawn, then an edit the browser answers: still the same figure.
        answer(first)
        explorer.replay.value = 25.0
        answer(first)
        await asyncio.sleep(wait)
        assert explorer.figure is first
        # An edit that goes unanswered: a new figure in its place, as it is now. N* = 2000 / 5.
        explorer.capture.value = 2000.0
        await asyncio.sleep(wait)
        fresh = explorer.figure
        assert fresh is not first and first.comm is None  # the lost one is closed
        assert explorer.children[2] is fresh and first not in explorer.children
        assert list(fresh.data[2].x) == [400.0] and list(fresh.data[2].y) == [400.0 * 30.0]
        # The sliders now redraw the new figure: N* = 2000 / (30 - 10).
        explorer.replay.value = 10.0
        assert list(fresh.data[2].x) == [100.0]

    asyncio.run(learner())


def test_a_timeline_drawn_afresh_still_refines_on_zoom(monkeypatch, sparse_kernels):
    monkeypatch.setattr(live_figure, "ANSWER_S", 0.05)
    monkeypatch.setattr(figures_module, "LOD_EVENTS", 1000)  # one merged bar at the full view
    view = TimelineView(graph=sparse_kernels)
    first = view.figure

    async def learner() -> None:
        answer(first)
        first.layout.xaxis.range = (100, 120)  # zoom; no answer comes
        await asyncio.sleep(0.3)

    asyncio.run(learner())
    assert view.figure is not first and view.children[0] is view.figure
    # The new figure holds the zoomed range's 31 bars, [80, 140] µs, and zooming it refines.
    assert len(nan_pairs(bar_traces(view, 0)["stream 7: GPU work"].x)) == 31
    view.figure.layout.xaxis.range = (1000, 1010)  # drawn: [990, 1020] µs
    assert nan_pairs(bar_traces(view, 0)["stream 7: GPU work"].x)[0] == (990, 991)


class ComparisonFixture:
    """Shaped like a graphlab.compare() result: only to_dict() is used. A test fixture."""

    def to_dict(self):
        return {"capture_us": 6000.0, "eager_end_to_end_us": 70.0, "replay_end_to_end_us": 10.0,
                "eager_us": 65.0, "replay_us": 9.0}  # fmt: skip


def test_break_even_starts_from_measured_end_to_end_times():
    explorer = BreakEvenExplorer(ComparisonFixture())
    assert (explorer.capture.value, explorer.eager.value, explorer.replay.value) == (6000, 70, 10)
    assert explorer.n_star == 100  # 6000 / (70 - 10): end-to-end times, not the kernel-only ones
    assert "measured" in explorer.figure.layout.annotations[0].text
    overridden = BreakEvenExplorer(ComparisonFixture(), capture_us=3000.0)
    assert overridden.n_star == 50


def test_break_even_without_numbers_is_one_clear_error():
    with pytest.raises(GraphlabError, match="needs capture_us, eager_us, replay_us"):
        BreakEvenExplorer()
    with pytest.raises(GraphlabError, match="not int"):
        BreakEvenExplorer(3)


# ---------------------------------------------------------------------- SimulatorPlayground

# Hand-set simulator parameters (not GPU numbers): launch 5 µs, latency 2 µs, graph launch 10 µs,
# node gap 0.5 µs, sync 3 µs.
PARAMS = SimParams(host_us=5, launch_latency_us=2, graph_launch_us=10, node_gap_us=0.5, sync_us=3)


def test_playground_draws_the_simulated_schedule():
    playground = SimulatorPlayground(PARAMS, kernels=4, kernel_us=1.0, sync_every=2)
    view = playground.view
    # Eager, worked by hand: launches [0,5] [5,10], kernels start 2 µs after each launch ends;
    # a sync after kernel 2 waits for it (13) plus 3 µs; then the same again from 16.
    eager_bars = bar_traces(view, 0)
    assert nan_pairs(eager_bars["host: launch call"].x) == [(0, 5), (5, 10), (16, 21), (21, 26)]
    assert nan_pairs(eager_bars["host: host sync"].x) == [(10, 16), (26, 32)]
    assert nan_pairs(eager_bars["stream 0: GPU work"].x) == [(7, 8), (12, 13), (23, 24), (28, 29)]
    # Graph: sync every 2 kernels splits the step into two graphs of two kernels; a replay's
    # nodes start 2 µs after its 10 µs launch, 0.5 µs apart.
    graph_bars = bar_traces(view, 1)
    assert nan_pairs(graph_bars["host: launch call"].x) == [(0, 10), (17.5, 27.5)]
    assert nan_pairs(graph_bars["stream 0: GPU work"].x) == [
        (12, 13), (13.5, 14.5), (29.5, 30.5), (31, 32)
    ]  # fmt: skip


def test_playground_sliders_redraw_the_timelines():
    playground = SimulatorPlayground(PARAMS, kernels=4, kernel_us=1.0)
    figure = playground.view.figure
    playground.kernels.value = 6
    assert playground.view.figure is figure
    assert len(nan_pairs(bar_traces(playground.view, 0)["stream 0: GPU work"].x)) == 6
    assert playground.view.summaries["graph replay"]["kernels"] == 6
    playground.kernel_us.value = 3.0
    widths = {
        round(b - a, 9)
        for a, b in nan_pairs(bar_traces(playground.view, 1)["stream 0: GPU work"].x)
    }
    assert widths == {3.0}
    playground.host_us.value = 20.0  # eager launches now take 20 µs each
    launches = nan_pairs(bar_traces(playground.view, 0)["host: launch call"].x)
    assert launches[:2] == [(0, 20), (20, 40)]
    assert playground.params.host_us == 20.0 and playground.params.graph_launch_us == 10.0


def test_break_even_starts_from_a_bundled_recording():
    recording = graphlab.recording("chain_10_k4096")  # real H200 data bundled with graphlab
    explorer = BreakEvenExplorer(recording)
    t = recording.timings
    assert explorer.capture.value == pytest.approx(t["capture_us"], rel=1e-3)
    assert explorer.eager.value == pytest.approx(t["eager_end_to_end_us"], rel=1e-3)
    assert explorer.replay.value == pytest.approx(t["replay_end_to_end_us"], rel=1e-3)
    # The label is long: the heading wraps it (lines joined by <br>) instead of cutting it off.
    heading = explorer.figure.layout.annotations[0].text
    assert html.escape(recording.label) in heading.replace("<br>", " ")
    assert heading.count("<br>") >= 1


# ------------------------------------------------------------ static pictures in the bundle


def all_widgets(eager, graph) -> dict:
    return {
        "TimelineView": TimelineView(eager=eager, graph=graph),
        "GapView": GapView(eager=eager, graph=graph),
        "BreakEvenExplorer": BreakEvenExplorer(capture_us=1000.0, eager_us=30.0, replay_us=10.0),
        "SimulatorPlayground": SimulatorPlayground(PARAMS, kernels=4, kernel_us=1.0),
        "PlanView": PlanView(
            planner.decode_histogram(planner.azure_requests()),
            planner.recorded_costs().table,
            source=planner.recorded_costs().label,
        ),
    }


@pytest.fixture
def canvases(monkeypatch) -> list:
    """Every picture Canvas that is finished while the test runs, in order."""
    finished = []
    png = pictures.Canvas.png

    def keep(canvas):
        finished.append(canvas)
        return png(canvas)

    monkeypatch.setattr(pictures.Canvas, "png", keep)
    return finished


def test_every_widget_bundle_carries_a_png_and_no_script(eager, graph, canvases):
    for name, widget in all_widgets(eager, graph).items():
        data, metadata = widget._repr_mimebundle_()
        assert set(data) == {WIDGET_VIEW, "image/png", "text/plain"}, name
        width, height = png_size(data["image/png"])
        canvas = canvases[-1]
        # The PNG holds 2 device pixels per CSS pixel; the metadata gives the CSS size.
        assert metadata["image/png"] == {"width": canvas.width, "height": canvas.height}
        assert (width, height) == (2 * canvas.width, 2 * canvas.height), name
        text = json.dumps({k: v for k, v in data.items() if k != "image/png"}).lower()
        assert "<script" not in text and "cdn" not in text and "plotly" not in text, name


def test_no_text_is_cut_off_or_drawn_over_other_text(eager, graph, canvases):
    recording = graphlab.recording("chain_10_k4096")  # long provenance lines
    widgets = [*all_widgets(eager, graph).values(), TimelineView(recording)]
    widgets += [GapView(recording), BreakEvenExplorer(recording)]
    for widget in widgets:
        widget.picture()
    assert len(canvases) == len(widgets)
    for canvas in canvases:
        renderer = canvas.figure.canvas.get_renderer()
        inside = canvas.figure.bbox.padded(-0.5)
        # Text placed on the picture, one by one; each plot's drawn tick labels, axis titles and
        # legend together (matplotlib keeps labels of ticks outside the view, undrawn).
        texts = [(t.get_text(), t.get_window_extent(renderer)) for t in canvas.overlay.texts]
        plots = [(str(a), a.get_tightbbox(renderer)) for a in canvas.figure.axes[1:]]
        assert [name for name, box in texts + plots if not _within(box, inside)] == []
        # Boxes a device pixel smaller: a bold title and the text set right after it touch.
        clashes = [
            (a, b)
            for i, (a, box_a) in enumerate(texts)
            for b, box_b in texts[i + 1 :]
            if box_a.padded(-1).overlaps(box_b.padded(-1))
        ]
        assert clashes == []


def _within(box, outer) -> bool:
    return box.x0 >= outer.x0 and box.y0 >= outer.y0 and box.x1 <= outer.x1 and box.y1 <= outer.y1


def pixel(canvas, image, axes, x: float, y: float) -> tuple[int, int, int]:
    """The picture's colour at data point (x, y) of ``axes``."""
    px, py = axes.transData.transform((x, y))
    return image.getpixel((int(px), image.height - 1 - int(py)))[:3]


def test_timeline_picture_draws_the_same_lanes_and_idle_shading(eager, graph, canvases):
    png = TimelineView(eager=eager, graph=graph).picture()
    (canvas,) = canvases
    image = Image.open(io.BytesIO(png.data)).convert("RGB")
    eager_axes, graph_axes = canvas.figure.axes[1:]
    # Lane colours on white, or the idle shading (rgba(214, 39, 40, 0.16)) over white:
    # 255 - 0.16 * (255 - c) per channel.
    launch, sync, gpu, idle = (76, 120, 168), (228, 87, 86), (245, 133, 24), (248, 220, 221)
    white = (255, 255, 255)
    expected = [
        # eager: launch [0, 5], k_a [7, 9], gap [9, 13], sync [17, 22] (lane 0 host, 1 stream)
        (eager_axes, 2.5, 0, launch), (eager_axes, 8, 1, gpu), (eager_axes, 11, 1, idle),
        (eager_axes, 19.5, 0, sync), (eager_axes, 5.5, 0, white),
        # graph: cudaGraphLaunch [0, 4], k_a [5, 7], gap [7, 7.3], k_b [7.3, 8.3]
        (graph_axes, 2, 0, launch), (graph_axes, 6, 1, gpu), (graph_axes, 7.15, 1, idle),
        (graph_axes, 7.8, 1, gpu), (graph_axes, 16.5, 1, white),
    ]  # fmt: skip
    for axes, x, y, colour in expected:
        # The PNG has at most 256 colours: each may move a little.
        assert np.allclose(pixel(canvas, image, axes, x, y), colour, atol=6), (x, y, colour)
    labels = [t.get_text() for t in canvas.overlay.texts]
    legend = [t for t in labels if t in figures_module.LEGEND_LABELS.values()]
    assert legend == ["host launch call", "host sync (waits for the GPU)", "GPU work", "GPU idle"]
    assert "graph replay" in labels and "65.5%" in labels and "10.7%" in labels
    assert any("--cuda-graph-trace=node" in t for t in labels)  # the eager side was profiled


@pytest.mark.parametrize(
    ("start", "end", "x0", "x1", "pixels", "expected"),
    [
        # [1, 2] and [2.5, 4.5] over five 1 µs columns.
        ([1, 2.5], [2, 4.5], 0, 5, 5, [0, 1, 0.5, 1, 0.5]),
        # Overlapping intervals count once: clipped to 1.
        ([0, 1], [2, 3], 0, 4, 4, [1, 1, 1, 0]),
        # A quarter-pixel interval covers a quarter.
        ([0.25], [0.5], 0, 1, 1, [0.25]),
        ([], [], 0, 1, 2, [0, 0]),
    ],
)
def test_coverage_is_the_share_of_each_column_covered(start, end, x0, x1, pixels, expected):
    assert pictures.coverage(np.array(start), np.array(end), x0, x1, pixels).tolist() == (
        pytest.approx(expected)
    )


def test_coverage_leaves_empty_columns_exactly_empty():
    # 1000 kernels in the first 10% of the range: rounding in the running sums must not leave
    # specks in the other 90% (a specked column would be drawn at the minimum opacity).
    start = np.arange(1000) * 1.3 + 1_000_000.0
    cover = pictures.coverage(start, start + 1.0, 1_000_000.0, 1_013_000.0, 2000)
    assert (cover[201:] == 0).all() and cover[:199].min() > 0.7


def test_wrap_fits_lines_to_a_width():
    # 62 px at 10 px: 62 / (0.62 * 10) = 10 characters a line.
    assert wrap("aaaa bbbb cccc", 62, 10) == ["aaaa bbbb", "cccc"]
    # 31 px of the first line already used: 5 characters left for it.
    assert wrap("aaaa bbbb cccc", 62, 10, first_line_used_px=31) == ["aaaa", "bbbb cccc"]
    assert wrap("", 62, 10) == [""]


@pytest.fixture(scope="module")
def saved_notebook(tmp_path_factory):
    return nbformat.read(execute_as_stored(tmp_path_factory.mktemp("saved")), as_version=4)


def test_saved_notebook_shows_the_pictures_in_nbconvert_html(saved_notebook):
    outputs = [o for cell in saved_notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert [sorted(o.data) for o in outputs] == [[WIDGET_VIEW, "image/png", "text/plain"]] * 2
    assert "widgets" not in saved_notebook.metadata
    # TimelineView's picture: 980 CSS px wide; GapView's: 600.
    assert [o.metadata["image/png"]["width"] for o in outputs] == [980, 600]
    for output in outputs:
        size = png_size(output.data["image/png"])
        assert size == (2 * output.metadata["image/png"]["width"],
                        2 * output.metadata["image/png"]["height"])  # fmt: skip
    # Without widget state nbconvert has no widget to draw: it shows the PNG, inline, at its
    # CSS size, and nothing loads plotly.
    page, _ = HTMLExporter().from_notebook_node(saved_notebook)
    images = re.findall(r'<img [^>]*src="data:image/png;base64,([^"]+)"[^>]*>', page)
    assert images == [o.data["image/png"] for o in outputs]
    assert re.findall(r'<img [^>]*width="(\d+)"', page) == ["980", "600"]
    assert "plotly" not in page.lower()


def test_pictures_draw_text_from_a_trace_as_it_is(canvases):
    # matplotlib would read "$...$" as math markup, and fail to draw this one.
    gpu = r"GPU $\frac$ 7"
    TimelineView(eager=Timeline(**EAGER, meta={"source": "kineto", "gpu": gpu})).picture()
    texts = [t.get_text() for t in canvases[0].overlay.texts]
    assert " · profiled on GPU $\\frac$ 7" in texts
