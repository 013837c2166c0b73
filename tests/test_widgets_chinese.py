"""The notebook widgets in Simplified Chinese (GRAPHLAB_LANG=zh_CN): their titles, axes, legends,
hover text, controls, summaries, static pictures and errors.

Each expected label is written here as a Chinese reader sees it. The numbers of a figure are the
same in either language; only the words change. The timelines are test_widgets.py's hand-made
ones (copied here so that this file stands alone).
"""

from __future__ import annotations

import logging
import warnings

import matplotlib
import numpy as np
import pytest
from matplotlib import font_manager
from packaging.version import Version
from test_widgets import EAGER, GRAPH  # the timelines worked out by hand there

from graphlab import planner
from graphlab.errors import GraphlabError
from graphlab.language import ENV
from graphlab.simulator import SimParams
from graphlab.trace.timeline import Timeline
from graphlab.widgets import (
    BreakEvenExplorer,
    GapView,
    PlanView,
    SimulatorPlayground,
    TimelineView,
    pictures,
    timeline_view,
)
from graphlab.widgets.wrapping import wrap

PARAMS = SimParams(host_us=5, launch_latency_us=2, graph_launch_us=10, node_gap_us=0.5, sync_us=3)


@pytest.fixture(autouse=True)
def chinese(monkeypatch):
    """Every test here speaks Chinese, in a kernel that has not shown the profiler note yet."""
    monkeypatch.setenv(ENV, "zh_CN")
    monkeypatch.setattr(timeline_view, "_profiled_note_given", False)
    return monkeypatch


@pytest.fixture
def eager():
    return Timeline(**EAGER, meta={"source": "kineto", "gpu": "fixture GPU"})


@pytest.fixture
def graph():
    return Timeline(**GRAPH, meta={"source": "simulator"})


def test_timeline_view_in_chinese(eager, graph):
    view = TimelineView(eager=eager, graph=graph)
    layout = view.figure.layout
    assert [p.title for p in view.panels] == ["eager", "图重放"]
    assert layout.xaxis2.title.text == "自时间线第一个事件起的时间（µs）"
    assert layout.yaxis.ticktext == ("主机", "流 7")
    legend = [t.name for t in view.figure.data if t.showlegend]
    assert legend == ["主机启动调用", "主机同步（等待 GPU）", "GPU 工作", "GPU 空闲"]
    names = {t.name for t in view.figure.data}
    assert {"eager：空闲空隙", "图重放：空闲空隙", "主机：启动调用", "流 7：GPU 工作"} <= names
    # The banner over the graph panel: title, then where its numbers came from.
    banner = layout.annotations[1].text
    assert banner == "<b>图重放</b> · 仿真器（手动设定的参数）：GPU 的模型，不是测量结果"
    hovers = [t.hovertemplate for t in view.figure.data if t.hovertemplate]
    assert "<b>k_a</b><br>%{customdata:.3f} µs<br>启动延迟 %{marker.color:.3f} µs" in [
        h.split("<extra>")[0] for h in hovers
    ]
    assert any("GPU 开始 − 调用结束：%{marker.color:.3f} µs" in h for h in hovers)
    summary = view.children[1].value
    assert ">时间跨度（µs）</td>" in summary and ">每次启动调用的主机 µs（中位数）</td>" in summary
    assert "每次启动调用的主机 µs：主机线程在一次启动调用内所花时间的中位数；" in summary
    assert "启动调用按性能分析器下的测量值绘制，而性能分析器会拖慢它们：" in summary
    assert view.static_text().splitlines() == [
        "eager（在 fixture GPU 上用性能分析器测得）：内核数 3，时间跨度（µs） 14.5，忙碌（µs） "
        "5.0，空闲 65.5%，空隙中位数（µs） 4.750，启动调用数 3，每次启动调用的主机 µs（中位数） "
        "5.000",
        "图重放（仿真器（手动设定的参数）：GPU 的模型，不是测量结果）：内核数 3，时间跨度（µs） "
        "5.6，忙碌（µs） 5.0，空闲 10.7%，空隙中位数（µs） 0.300，启动调用数 1，每次启动调用的"
        "主机 µs（中位数） 4.000",
    ]


def test_the_numbers_are_the_same_in_either_language(eager, graph, chinese):
    chinese_view = TimelineView(eager=eager, graph=graph)
    chinese.setenv(ENV, "en")
    english_view = TimelineView(eager=eager, graph=graph)
    # Read again for each figure: the English one is English.
    assert english_view.figure.layout.yaxis.ticktext == ("host", "stream 7")
    for ours, theirs in zip(chinese_view.figure.data, english_view.figure.data, strict=True):
        for key in ("x", "y", "customdata"):
            a, b = getattr(ours, key), getattr(theirs, key)
            if a is None or b is None:
                assert a is None and b is None
            else:
                np.testing.assert_array_equal(np.asarray(a, float), np.asarray(b, float))
    assert [row[1:] for row in chinese_view._cells[1:]] == [
        row[1:] for row in english_view._cells[1:]
    ]


def test_timeline_picture_in_chinese(eager, graph):
    canvases = []
    png = pictures.Canvas.png

    def keep(canvas):
        canvases.append(canvas)
        return png(canvas)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pictures.Canvas, "png", keep)
        TimelineView(eager=eager, graph=graph).picture()
    (canvas,) = canvases
    labels = [t.get_text() for t in canvas.overlay.texts]
    for label in ("主机启动调用", "主机同步（等待 GPU）", "GPU 工作", "GPU 空闲", "图重放"):
        assert label in labels
    assert "内核数" in labels and "时间跨度（µs）" in labels
    assert canvas.figure.axes[2].get_xlabel() == "自时间线第一个事件起的时间（µs）"
    assert [t.get_text() for t in canvas.figure.axes[1].get_yticklabels()] == ["主机", "流 7"]


def test_no_chinese_text_is_cut_off_or_drawn_over_other_text(eager, graph, chinese):
    """Chinese characters are a whole em wide, Latin ones about half: the wrapping must know."""
    canvases = []
    png = pictures.Canvas.png

    def keep(canvas):
        canvases.append(canvas)
        return png(canvas)

    chinese.setattr(pictures.Canvas, "png", keep)
    widgets = [
        TimelineView(eager=eager, graph=graph),
        GapView(eager=eager, graph=graph),
        BreakEvenExplorer(capture_us=1000.0, eager_us=30.0, replay_us=10.0),
        SimulatorPlayground(PARAMS, kernels=4, kernel_us=1.0),
        PlanView(
            planner.decode_histogram(planner.azure_requests()),
            planner.recorded_costs().table,
            source=planner.recorded_costs().label,
        ),
    ]
    for widget in widgets:
        widget.picture()
    assert len(canvases) == len(widgets)
    for canvas in canvases:
        renderer = canvas.figure.canvas.get_renderer()
        inside = canvas.figure.bbox.padded(-0.5)
        texts = [(t.get_text(), t.get_window_extent(renderer)) for t in canvas.overlay.texts]
        plots = [(str(a), a.get_tightbbox(renderer)) for a in canvas.figure.axes[1:]]
        outside = [
            name
            for name, box in texts + plots
            if not (box.x0 >= inside.x0 and box.y0 >= inside.y0)
            or not (box.x1 <= inside.x1 and box.y1 <= inside.y1)
        ]
        assert outside == []
        clashes = [
            (a, b)
            for i, (a, box_a) in enumerate(texts)
            for b, box_b in texts[i + 1 :]
            if box_a.padded(-1).overlaps(box_b.padded(-1))
        ]
        assert clashes == []


def test_pictures_draw_chinese_with_a_chinese_font_behind_dejavu_sans(chinese):
    family = pictures.cjk_family()
    expected = "DejaVu Sans" if family is None else ["DejaVu Sans", family]
    assert pictures._style()["font.family"] == expected
    chinese.setenv(ENV, "en")
    assert pictures._style()["font.family"] == "DejaVu Sans"


def test_without_a_chinese_font_a_picture_warns_once_in_one_sentence(eager, graph, chinese):
    chinese.setattr(pictures, "cjk_family", lambda: None)
    pictures._no_chinese_font.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TimelineView(eager=eager, graph=graph).picture()
        GapView(eager=eager, graph=graph).picture()
    assert [str(w.message) for w in caught] == [
        "没有安装中文字体，所以组件的 PNG 图片会把中文字符显示为空白方框（实时图表不受影响）："
        "请安装一种中文字体，例如 apt-get install fonts-noto-cjk，然后重启内核"
    ]
    pictures._no_chinese_font.cache_clear()


def test_a_one_weight_chinese_font_leaves_no_log_line_under_a_picture(
    eager, graph, chinese, caplog
):
    """A Chinese font in one weight draws bold titles in its regular weight, quietly.

    DejaVu Sans Display, which matplotlib ships in its regular weight only, stands in for such a
    font. Outside graphlab's drawing, matplotlib 3.11 and later log the fallback for a bold text
    (the control, at a size no picture uses, as matplotlib remembers each font lookup; older
    releases log nothing); inside, nothing is logged."""
    family = "DejaVu Sans Display"
    weights = {font.weight for font in font_manager.fontManager.ttflist if font.name == family}
    assert weights == {400}
    chinese.setattr(pictures, "cjk_family", lambda: family)
    # A logging.config.dictConfig earlier in this process (a Jupyter server's, in another test)
    # disables the loggers it does not name; a notebook kernel's matplotlib logger is enabled.
    chinese.setattr(logging.getLogger("matplotlib.font_manager"), "disabled", False)
    caplog.set_level(logging.WARNING, logger="matplotlib.font_manager")
    TimelineView(eager=eager, graph=graph).picture()
    GapView(eager=eager, graph=graph).picture()
    assert caplog.messages == []
    with matplotlib.rc_context(pictures._style()):
        control = pictures.Canvas(200, 40)
        control.text(0, 0, "图重放", fontweight="bold", fontsize=17.3)
        control.png()
    logs_fallbacks = Version(matplotlib.__version__).release >= (3, 11)
    fallback = f"findfont: Failed to find font weight bold for {family}, now using 400."
    assert caplog.messages == [fallback] * logs_fallbacks


def test_gap_view_in_chinese(eager, graph):
    view = GapView(eager=eager, graph=graph)
    assert view.meter == "GPU 空闲：65.5% eager → 10.7% 图重放"
    assert view.static_text() == "GPU 空闲：65.5% eager → 10.7% 图重放"
    layout = view.figure.layout
    assert layout.xaxis.title.text == "GPU 工作之间的空闲空隙（µs，对数刻度）"
    assert layout.yaxis.title.text == "空隙数"
    eager_trace, graph_trace = view.figure.data
    assert (eager_trace.name, graph_trace.name) == ("eager（2 个空隙）", "图重放（2 个空隙）")
    # The colours follow the timeline, whatever its title's language.
    assert (eager_trace.line.color, graph_trace.line.color) == ("#F58518", "#4C78A8")
    assert graph_trace.hovertemplate == "从 %{x:.3f} µs 起的空隙：%{y}<extra>图重放</extra>"


def test_gap_view_without_gaps_says_so_in_chinese():
    timeline = Timeline(
        kind=["kernel", "kernel"], name=["a", "b"], start_ns=[0, 1000], dur_ns=[1000, 1000],
        device=[0, 0], stream=[7, 7], meta={"source": "simulator"},
    )  # fmt: skip
    view = GapView(graph=timeline)
    assert view.meter == "GPU 空闲：0.0% 图重放"
    assert [a.text for a in view.figure.layout.annotations] == [
        "仿真器（手动设定的参数）：GPU 的模型，不是测量结果",
        "没有空闲空隙：GPU 从未等待",
    ]


def test_break_even_explorer_in_chinese():
    explorer = BreakEvenExplorer(capture_us=1000.0, eager_us=30.0, replay_us=10.0)
    descriptions = [s.description for s in (explorer.capture, explorer.eager, explorer.replay)]
    assert descriptions == ["捕获 C（µs）", "eager t_e（µs/步）", "重放 t_r（µs/步）"]
    assert explorer.readout.value == (
        "N* = C / (t_e − t_r) = 50.0 步：从第 51 步起，捕获 + 重放的总耗时少于 eager。"
    )
    layout = explorer.figure.layout
    assert layout.annotations[0].text == "起始值：手动给定；拖动滑块来探索"
    assert layout.xaxis.title.text == "步数 N" and layout.yaxis.title.text == "总时间（µs）"
    assert [t.name for t in explorer.figure.data] == ["eager：N·t_e", "图：C + N·t_r", "N*"]
    assert explorer.figure.data[2].hovertemplate == "N* = %{x:.1f} 步<extra></extra>"
    assert explorer.static_text() == (
        "C = 1,000.0 µs，t_e = 30.0 µs，t_r = 10.0 µs。"
        "N* = C / (t_e − t_r) = 50.0 步：从第 51 步起，捕获 + 重放的总耗时少于 eager。"
    )
    explorer.replay.value = 35.0
    assert (
        explorer.readout.value == "这里重放并不比 eager 快（t_r ≥ t_e）：图永远收不回捕获的开销。"
    )


def test_playground_in_chinese():
    playground = SimulatorPlayground(PARAMS, kernels=4, kernel_us=1.0)
    controls = (playground.kernels, playground.kernel_us, playground.host_us, playground.sync_every)
    assert [c.description for c in controls] == [
        "内核数",
        "内核 µs",
        "每次启动的主机 µs",
        "每 k 个内核同步（0：仅在末尾）",
    ]
    assert playground.static_text().splitlines()[0] == (
        "仿真：4 个 1 µs 的内核，每次启动主机耗时 5 µs，每步同步一次（在步末）"
    )
    playground.sync_every.value = 2
    assert playground.static_text().splitlines()[0] == (
        "仿真：4 个 1 µs 的内核，每次启动主机耗时 5 µs，每 2 个内核同步一次"
    )


def test_plan_view_in_chinese():
    view = PlanView(
        planner.decode_histogram(planner.azure_requests()), planner.recorded_costs().table
    )
    assert view.axis.description == "x 轴（上图）："
    assert view.axis.options == (("图数", "graphs"), ("内存", "memory"), ("初始化耗时", "start-up"))
    layout = view.figure.layout
    assert [a.text for a in layout.annotations] == [
        "预期单步时间：每个图数下的最佳方案、所选方案与预设",
        "每个批大小在哪里运行：方案与 vllm 对比",
    ]
    assert layout.xaxis.title.text == "捕获的图数"
    assert layout.yaxis.title.text == "每步 µs（对数刻度）"
    assert layout.xaxis2.title.text == "解码批大小"
    assert layout.yaxis2.title.text == "步骤占比" and layout.yaxis3.title.text == "每步填充行数"
    names = [t.name for t in view.figure.data]
    assert names[:3] == ["每个图数下的最佳方案", "方案", "vllm"]
    assert {"步骤占比", "方案：每步填充行数", "vllm：每步填充行数"} <= set(names)
    bars = view.figure.data[names.index("步骤占比")]
    assert bars.hovertemplate == "批大小 %{x}：占步骤的 %{y:.2%}<extra></extra>"
    assert view.headline().startswith(f"方案：{view.plan.graphs} 个图，")
    view.axis.value = "memory"
    assert view.figure.layout.xaxis.title.text == "图的内存池占用（MiB，对数刻度）"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: TimelineView(),
            "TimelineView 需要可显示的内容：请传入 eager=<Timeline> 和/或 graph=<Timeline>，"
            "或者 eager=graphlab.recording(name)",
        ),
        (
            lambda: GapView(42),
            "GapView(eager=...) 接受 graphlab 的 Timeline、录制（graphlab.recording(name)）或 "
            "graphlab.compare() 的结果，而不是 int",
        ),
        (
            lambda: BreakEvenExplorer(42),
            "BreakEvenExplorer 接受一个录制、graphlab.compare() 的结果或它的 to_dict()，而不是 "
            "int；也可以直接传入 capture_us=、eager_us=、replay_us=",
        ),
        (
            lambda: BreakEvenExplorer(capture_us=1.0),
            "BreakEvenExplorer 需要 eager_us, replay_us：请传入一个录制或 graphlab.compare() 的"
            "结果，或者直接给出以 µs 为单位的数值",
        ),
        (
            lambda: PlanView(None, None),
            "PlanView 接受 graphlab.planner 的 Histogram 和 CostTable，例如 "
            "PlanView(decode_histogram(requests), recorded_costs().table)",
        ),
    ],
    ids=["nothing-to-show", "not-a-timeline", "not-a-recording", "numbers-missing", "not-a-plan"],
)
def test_the_widgets_errors_in_chinese(make, message):
    with pytest.raises(GraphlabError) as raised:
        make()
    assert str(raised.value) == message


def test_wrap_breaks_chinese_between_characters_by_their_width():
    # A Chinese character is a whole em wide: 62 px at 10 px holds six of them.
    assert wrap("内核空隙内核空隙", 62, 10) == ["内核空隙内核", "空隙"]
    # Never a line that starts with a comma: the character before it comes along.
    assert wrap("一二三四五六，七", 62, 10) == ["一二三四五", "六，七"]
    # Latin words among the characters still break at spaces only.
    assert wrap("启动 cudaGraphLaunch 一次", 100, 10) == ["启动", "cudaGraphLaunch", "一次"]
