"""PlanView: which batch sizes to capture, as the planner sees it.

Two panels, computed by the planner (:mod:`graphlab.planner`) and only drawn here:

- **Top, the trade-off.** The best plan for each graph count (the Pareto front,
  :func:`~graphlab.planner.pareto`): expected step time against what the graphs cost. A
  dropdown switches the x axis between the number of graphs, their memory and their capture
  time at start-up. The planner's plan under the constraints and each serving stack's default
  list (:func:`~graphlab.planner.preset_sizes`, moved onto the cost table's sizes) are marked
  and labelled.
- **Bottom, where each batch size runs.** Bars: the share of decode steps at each batch size.
  Lines: the rows of padding a step of that size computes, in the graph the plan replays (the
  smallest captured size at least as large) and in the one a preset replays, for contrast. A
  batch size above every captured size runs eagerly: no padding, no replay, marked with a cross.

Needs no GPU: everything comes from a histogram and a cost table (a recorded one on a CPU).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
from matplotlib.ticker import FuncFormatter, PercentFormatter
from plotly.subplots import make_subplots

from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.planner import (
    Constraints,
    CostTable,
    Histogram,
    Plan,
    best_plan,
    evaluate,
    fit_to_table,
    pareto,
    preset_sizes,
)

from .display import StaticPicture
from .live_figure import HoldsLiveFigure, LiveFigure
from .pictures import FONT, LINE, Canvas, Png, drawing
from .wrapping import wrap

__all__ = ["AXES", "PlanView", "Routes", "routes"]

WIDTH_PX = 640
# x axis of the top panel: dropdown value -> (Plan attribute, axis title, log scale). The
# dropdown shows each value's label of AXIS_LABELS; labels and titles are translated where shown.
AXES = {
    "graphs": ("graphs", N_("graphs captured"), False),
    "memory": ("memory_mib", N_("memory of the graphs' pools (MiB, log scale)"), True),
    "start-up": ("capture_s", N_("capture time at start-up (s, log scale)"), True),
}
AXIS_LABELS = {"graphs": N_("graphs"), "memory": N_("memory"), "start-up": N_("start-up")}
# The planner's plan, as its points and lines are named (a preset goes by its own name).
PLAN = N_("plan")
COLOURS = {
    "front": "#4C78A8",
    "plan": "#E45756",
    "preset": "#F58518",
    "steps": "#BBBBBB",
    "eager": "#222222",
}
PRESET_SYMBOL = "diamond"
# The PNG's labels and ticks, a size above the body text: the picture is shown 640 px wide.
LABEL_FONT = FONT + 2
# Points closer than this share of the x axis get their labels on opposite sides.
CLOSE = 0.06
PLAN_SYMBOL = "star"
# Axis titles drawn in both the live figure and the PNG, translated where drawn.
SHARE = N_("share of steps")
BATCH = N_("decode batch size")
PADDED = N_("padded rows per step")


@dataclass(frozen=True)
class Routes:
    """Where each batch size of a histogram runs under one plan.

    ``graph[i]`` is the captured size batch size ``sizes[i]`` replays in, 0 where it runs
    eagerly; ``padding[i]`` the padded rows of one such step (``graph - size``, 0 when eager).
    """

    sizes: np.ndarray
    graph: np.ndarray
    padding: np.ndarray

    @property
    def eager(self) -> np.ndarray:
        """Which batch sizes run eagerly (no captured size is that large)."""
        eager: np.ndarray = self.graph == 0
        return eager


def routes(plan: Plan, histogram: Histogram) -> Routes:
    """The graph each batch size of ``histogram`` replays under ``plan`` (0: eager)."""
    chosen = np.asarray(plan.sizes, dtype=np.int64)
    at = np.searchsorted(chosen, histogram.sizes, side="left")
    graph = np.where(at < len(chosen), np.append(chosen, 0)[np.minimum(at, len(chosen))], 0)
    padding = np.where(graph > 0, graph - histogram.sizes, 0)
    return Routes(histogram.sizes.copy(), graph, padding)


def _summary(name: str, plan: Plan) -> str:
    return _(
        "{name}: {graphs} graphs, {step_us} µs/step, hit {hit_rate}, padding {padding}, "
        "{memory_mib} MiB, {capture_s} s"
    ).format(
        name=name,
        graphs=plan.graphs,
        step_us=f"{plan.expected_step_us:,.1f}",
        hit_rate=f"{plan.hit_rate:.1%}",
        padding=f"{plan.padding_waste:.1%}",
        memory_mib=f"{plan.memory_mib:,.0f}",
        capture_s=f"{plan.capture_s:.2f}",
    )


def _name(name: str) -> str:
    """What the figure calls a plan: the planner's in the language, a preset by its name."""
    return _(PLAN) if name == "plan" else name


class PlanView(StaticPicture, HoldsLiveFigure, widgets.VBox):
    """The planner's plan against the Pareto front and serving stacks' default lists.

    Args:
        histogram: decode steps per batch size (``graphlab.planner.decode_histogram`` of a
            trace, or a :class:`~graphlab.planner.Histogram`).
        costs: the per-size cost table (``graphlab.planner.recorded_costs().table`` on a CPU).
        constraints: the planner's constraints; default at most 32 graphs, no budgets.
        presets: names of the preset lists to mark (from ``graphlab.planner.PRESETS``).
        contrast: the preset whose padding the bottom panel draws beside the plan's.
        source: a line saying where the costs came from, shown above the figure.

    Attributes: ``figure`` (the plotly FigureWidget), ``axis`` (the dropdown), ``plan``,
    ``front`` (best plan per graph count), ``presets`` (name -> Plan), ``contrast``.
    """

    def __init__(
        self,
        histogram: Histogram,
        costs: CostTable,
        constraints: Constraints | None = None,
        *,
        presets: tuple[str, ...] = ("vllm", "sglang", "trtllm", "tgi", "pow2"),
        contrast: str = "vllm",
        source: str = "",
    ):
        if not isinstance(histogram, Histogram) or not isinstance(costs, CostTable):
            raise GraphlabError(
                _(
                    "PlanView takes a graphlab.planner Histogram and CostTable, e.g. "
                    "PlanView(decode_histogram(requests), recorded_costs().table)"
                )
            )
        if contrast not in presets:
            raise GraphlabError(
                _(
                    "contrast {contrast} is not among the presets shown ({presets}): "
                    "pick one of them"
                ).format(contrast=repr(contrast), presets=", ".join(presets))
            )
        constraints = constraints or Constraints(max_graphs=32)
        self.histogram, self.costs, self.source = histogram, costs, source
        self.plan = best_plan(histogram, costs, constraints)
        self.front = pareto(histogram, costs, constraints)
        self.presets = {
            name: evaluate(
                fit_to_table(preset_sizes(name), costs), histogram, costs, constraints.shared_pool
            )
            for name in presets
        }
        self.contrast = contrast
        self.axis = widgets.Dropdown(
            options=[(_(AXIS_LABELS[key]), key) for key in AXES],
            value="graphs",
            description=_("x axis (top):"),
        )
        self._show_figure(LiveFigure(self._figure()))
        self.axis.observe(self._redraw, names="value")
        # Where the costs came from (a recording's provenance), then the plan against the preset.
        origin = f"<span style='color:#444'>{html.escape(source)}</span><br>" if source else ""
        heading = widgets.HTML(f"{origin}<b>{html.escape(self.headline())}</b>")
        super().__init__([heading, self.axis, self.figure])

    # ------------------------------------------------------------------ what is drawn
    def headline(self) -> str:
        """The plan's figures against the contrast preset's, in one line."""
        contrast = self.presets[self.contrast]
        return f"{_summary(_(PLAN), self.plan)} · {_summary(self.contrast, contrast)}"

    def top_points(self, axis: str = "graphs") -> dict[str, tuple[list[float], list[float]]]:
        """(x, y) of the front, the plan and each preset on the top panel, x as ``axis``."""
        field = AXES[axis][0]

        def xy(plans: list[Plan]) -> tuple[list[float], list[float]]:
            return [float(getattr(p, field)) for p in plans], [p.expected_step_us for p in plans]

        points = {"front": xy(self.front), "plan": xy([self.plan])}
        points.update({name: xy([plan]) for name, plan in self.presets.items()})
        return points

    def _figure(self) -> go.Figure:
        figure = make_subplots(
            rows=2,
            cols=1,
            vertical_spacing=0.16,
            specs=[[{}], [{"secondary_y": True}]],
            subplot_titles=(
                _("expected step time: best plan per graph count, the plan, presets"),
                _("where each batch size runs: the plan vs {preset}").format(preset=self.contrast),
            ),
        )
        points = self.top_points()
        x, y = points["front"]
        figure.add_trace(
            go.Scatter(
                x=x, y=y, mode="lines+markers", name=_("best plan per graph count"),
                line={"color": COLOURS["front"]},
                text=[", ".join(map(str, p.sizes)) for p in self.front],
                hovertemplate=_("{step_us} µs/step<br>sizes {sizes}").format(
                    step_us="%{y:,.1f}", sizes="%{text}"
                ) + "<extra></extra>",
            ),
            row=1, col=1,
        )  # fmt: skip
        for n, name in enumerate(("plan", *self.presets)):
            plan = self.plan if name == "plan" else self.presets[name]
            x, y = points[name]
            figure.add_trace(
                go.Scatter(
                    x=x, y=y, mode="markers+text", name=_name(name), text=[_name(name)],
                    textposition="bottom center" if n % 2 else "top center",
                    cliponaxis=False, showlegend=False,
                    marker={
                        "size": 14 if name == "plan" else 10,
                        "symbol": PLAN_SYMBOL if name == "plan" else PRESET_SYMBOL,
                        "color": COLOURS["plan" if name == "plan" else "preset"],
                    },
                    customdata=[", ".join(map(str, plan.sizes))],
                    hovertemplate=_("{name}: {step_us} µs/step<br>sizes {sizes}").format(
                        name=_name(name), step_us="%{y:,.1f}", sizes="%{customdata}"
                    ) + "<extra></extra>",
                ),
                row=1, col=1,
            )  # fmt: skip
        share = self.histogram.counts / self.histogram.total
        figure.add_trace(
            go.Bar(
                x=self.histogram.sizes, y=share, name=_(SHARE),
                marker={"color": COLOURS["steps"]},
                hovertemplate=_("batch {size}: {share} of steps").format(
                    size="%{x}", share="%{y:.2%}"
                ) + "<extra></extra>",
            ),
            row=2, col=1, secondary_y=False,
        )  # fmt: skip
        for name, plan, dash in (
            ("plan", self.plan, "solid"),
            (self.contrast, self.presets[self.contrast], "dot"),
        ):
            route = routes(plan, self.histogram)
            colour = COLOURS["plan" if name == "plan" else "preset"]
            figure.add_trace(
                go.Scatter(
                    x=route.sizes, y=np.where(route.eager, np.nan, route.padding),
                    mode="lines+markers", name=_padded(name),
                    line={"color": colour, "dash": dash}, marker={"size": 4},
                    customdata=route.graph,
                    hovertemplate=_(
                        "batch {size} runs in the graph of {graph}: {rows} padded rows"
                    ).format(size="%{x}", graph="%{customdata}", rows="%{y}")
                    + "<extra>" + _name(name) + "</extra>",
                ),
                row=2, col=1, secondary_y=True,
            )  # fmt: skip
            figure.add_trace(
                go.Scatter(
                    x=route.sizes[route.eager], y=np.zeros(int(route.eager.sum())),
                    mode="markers",
                    name=_("{name}: eager (no graph large enough)").format(name=_name(name)),
                    marker={"symbol": "x", "size": 8, "color": colour},
                    showlegend=bool(route.eager.any()),
                    hovertemplate=_("batch {size} runs eagerly").format(size="%{x}")
                    + "<extra>" + _name(name) + "</extra>",
                ),
                row=2, col=1, secondary_y=True,
            )  # fmt: skip
        figure.update_layout(
            width=WIDTH_PX,
            height=720,
            margin={"l": 70, "r": 70, "t": 40, "b": 50},
            plot_bgcolor="white",
            legend={"orientation": "h", "x": 0, "y": -0.12},
            bargap=0.1,
        )
        figure.update_xaxes(title_text=_(AXES["graphs"][1]), row=1, col=1)
        figure.update_yaxes(title_text=_("µs per step (log scale)"), type="log", row=1, col=1)
        figure.update_xaxes(title_text=_(BATCH), row=2, col=1)
        figure.update_yaxes(title_text=_(SHARE), tickformat=".0%", secondary_y=False, row=2, col=1)
        figure.update_yaxes(
            title_text=_(PADDED),
            rangemode="tozero",
            tickmode="auto",  # its own round ticks, not the share axis's grid
            secondary_y=True,
            row=2,
            col=1,
        )
        return figure

    def _redraw(self, change: object = None) -> None:
        points = self.top_points(self.axis.value)
        _field, title, log = AXES[self.axis.value]
        names = ["front", "plan", *self.presets]  # the top panel's traces, in the order added
        with self.figure.batch_update():
            for trace, name in zip(self.figure.data[: len(names)], names, strict=True):
                trace.x = points[name][0]
            self.figure.layout.xaxis.title.text = _(title)
            self.figure.layout.xaxis.type = "log" if log else "linear"

    # ------------------------------------------------------------------ static picture
    def static_text(self) -> str:
        lines = [
            _("{summary} (sizes {sizes})").format(
                summary=_summary(_(PLAN), self.plan), sizes=", ".join(map(str, self.plan.sizes))
            )
        ]
        lines += [_summary(name, plan) for name, plan in self.presets.items()]
        return "\n".join(lines)

    @drawing
    def picture(self) -> Png:
        """Both panels as one PNG (x axis of the top one: the number of graphs)."""
        text = [
            line
            for part in (self.source, self.headline())
            if part
            for line in wrap(part, WIDTH_PX - 20, FONT)
        ]
        top = 10 + len(text) * LINE + 14
        canvas = Canvas(WIDTH_PX, top + 560)
        canvas.lines(10, 10, text, color="#222222")
        upper = canvas.axes(70, top + 10, WIDTH_PX - 140, 210)
        points = self.top_points()
        upper.plot(*points["front"], "-o", color=COLOURS["front"], ms=4,
                   label=_("best plan per graph count"))  # fmt: skip
        labels = ("plan", *self.presets)
        for name, (offset, align) in zip(labels, _label_offsets(points, labels), strict=True):
            x, y = points[name]
            is_plan = name == "plan"
            colour = COLOURS["plan" if is_plan else "preset"]
            upper.plot(x, y, "*" if is_plan else "D", color=colour, ms=12 if is_plan else 7)
            upper.annotate(_name(name), (x[0], y[0]), textcoords="offset points", xytext=offset,
                           ha=align, fontsize=LABEL_FONT)  # fmt: skip
        upper.set_yscale("log")
        # Plain numbers on the log axis: with math text off, matplotlib's default log labels
        # would show as raw "$10^{2}$" markup.
        upper.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        upper.yaxis.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        upper.set_xlabel(_(AXES["graphs"][1]), fontsize=LABEL_FONT)
        upper.set_ylabel(_("µs per step (log)"), fontsize=LABEL_FONT)
        upper.legend(loc="upper right", frameon=False, fontsize=LABEL_FONT)
        lower = canvas.axes(70, top + 300, WIDTH_PX - 140, 200)
        lower.bar(self.histogram.sizes, self.histogram.counts / self.histogram.total,
                  width=0.9, color=COLOURS["steps"])  # fmt: skip
        lower.yaxis.set_major_formatter(PercentFormatter(1.0))
        lower.set_ylabel(_(SHARE), fontsize=LABEL_FONT)
        lower.set_xlabel(_(BATCH), fontsize=LABEL_FONT)
        padding = lower.twinx()
        for name, plan, style in (
            ("plan", self.plan, "-"),
            (self.contrast, self.presets[self.contrast], ":"),
        ):
            route = routes(plan, self.histogram)
            colour = COLOURS["plan" if name == "plan" else "preset"]
            padding.plot(route.sizes, np.where(route.eager, np.nan, route.padding), style,
                         color=colour, label=_padded(name))  # fmt: skip
            if route.eager.any():
                padding.plot(route.sizes[route.eager], np.zeros(int(route.eager.sum())), "x",
                             color=colour,
                             label=_("{name}: eager").format(name=_name(name)))  # fmt: skip
        padding.set_ylim(bottom=0)
        padding.set_ylabel(_(PADDED), fontsize=LABEL_FONT)
        padding.legend(loc="upper right", frameon=False, fontsize=LABEL_FONT)
        padding.tick_params(labelsize=LABEL_FONT)
        for axes in (upper, lower):
            axes.tick_params(labelsize=LABEL_FONT)
            axes.grid(color="#eeeeee", lw=0.8)
            for side in ("top", "right"):
                axes.spines[side].set_visible(False)
        return canvas.png()


def _padded(name: str) -> str:
    """The name of a plan's padding line."""
    return _("{name}: padded rows per step").format(name=_name(name))


def _label_offsets(
    points: dict[str, tuple[list[float], list[float]]], names: tuple[str, ...]
) -> list[tuple[tuple[int, int], str]]:
    """Where each point's label goes: ((dx, dy) in points, horizontal alignment).

    A label sits above its point, centred. Of two points closer than ``CLOSE`` of the x span
    (vLLM's 35 graphs and SGLang's 36, say), the left one's label goes up and to the left and
    the right one's down and to the right, so that neither covers the other.
    """
    xs = {name: points[name][0][0] for name in names}
    span = (max(xs.values()) - min(xs.values())) or 1.0
    placed: dict[str, tuple[tuple[int, int], str]] = {}
    previous = None
    for name in sorted(names, key=lambda n: xs[n]):
        placed[name] = ((0, 7), "center")
        if previous is not None and xs[name] - xs[previous] < CLOSE * span:
            placed[previous] = ((-5, 7), "right")
            placed[name] = ((5, -16), "left")
        previous = name
    return [placed[name] for name in names]
