"""BreakEvenExplorer: when does capturing a CUDA Graph pay for itself?

Eager, N steps cost ``N * t_e``; with a graph, ``C + N * t_r`` (capture once, then replay). The
two lines cross at ``N* = C / (t_e - t_r)``. Sliders move C, t_e and t_r from their measured
values so a learner sees how a cheaper capture or a bigger saving per step moves N*. The
arithmetic is the break-even model's (:mod:`graphlab.timing.break_even`); this module only draws
it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go

from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.simulator.break_even import from_timings
from graphlab.timing.break_even import break_even, cumulative_totals

from .display import StaticPicture
from .live_figure import HoldsLiveFigure, LiveFigure
from .pictures import FONT, LINE, Canvas, Png, drawing
from .wrapping import plotly_heading, wrap

__all__ = ["BreakEvenExplorer", "steps_axis"]

WIDTH_PX = 600
TITLE_FONT_PX = 12
COLOURS = {"eager": "#F58518", "graph": "#4C78A8", "n_star": "#E45756"}
# The lines' names, translated where they are drawn: _(NAMES["eager"]).
NAMES = {"eager": N_("eager: N·t_e"), "graph": N_("graph: C + N·t_r")}
X_TITLE = N_("steps N")
Y_TITLE = N_("total time (µs)")


def steps_axis(n_star: float | None) -> np.ndarray:
    """Step counts to draw: up to 2.5 N* (at least 10), or 100 steps when there is no N*."""
    last = 100 if n_star is None else max(10, math.ceil(2.5 * n_star))
    return np.array([0.0, float(last)])


def _timings(source: Any) -> Mapping[str, Any] | None:
    """The measured timings dict of a recording, a compare() result or a plain dict."""
    if source is None or isinstance(source, Mapping):
        return source
    if isinstance(getattr(source, "timings", None), Mapping):
        timings: Mapping[str, Any] = source.timings
        return timings
    if callable(getattr(source, "to_dict", None)):
        as_dict: Mapping[str, Any] = source.to_dict()
        return as_dict
    raise GraphlabError(
        _(
            "BreakEvenExplorer takes a recording, a graphlab.compare() result or its to_dict(), "
            "not {kind}; or pass capture_us=, eager_us=, replay_us="
        ).format(kind=type(source).__name__)
    )


def _origin(source: Any, from_source: bool) -> str:
    """Where the sliders' starting values came from, for the figure's title."""
    if not from_source:
        return _("given by hand")
    label = getattr(source, "label", None)
    return label if isinstance(label, str) else _("measured (end to end, with input copies)")


class BreakEvenExplorer(StaticPicture, HoldsLiveFigure, widgets.VBox):
    """Cumulative time of eager vs capture-then-replay over N steps, with N* marked.

    Args:
        source: a recording (``graphlab.recording(name)``) or a ``graphlab.compare`` result: the
            sliders start at its capture time and end-to-end eager and replay times per step.
        capture_us, eager_us, replay_us: starting values in µs, overriding ``source``'s.

    Attributes: ``figure``, the sliders ``capture``, ``eager``, ``replay`` and ``n_star``.
    """

    def __init__(
        self,
        source: Any = None,
        *,
        capture_us: float | None = None,
        eager_us: float | None = None,
        replay_us: float | None = None,
    ) -> None:
        timings = _timings(source)
        measured = from_timings(timings) if timings is not None else None
        given = {"capture_us": capture_us, "eager_us": eager_us, "replay_us": replay_us}
        start = {
            key: value if value is not None else getattr(measured, key, None)
            for key, value in given.items()
        }
        known = {key: value for key, value in start.items() if value is not None}
        missing = [key for key in start if key not in known]
        if missing:
            raise GraphlabError(
                _(
                    "BreakEvenExplorer needs {missing}: pass a recording or a "
                    "graphlab.compare() result, or give the numbers in µs"
                ).format(missing=", ".join(missing))
            )
        self.origin = _origin(source, measured is not None and None in given.values())
        self.capture = self._slider(_("capture C (µs)"), known["capture_us"])
        self.eager = self._slider(_("eager t_e (µs/step)"), known["eager_us"])
        self.replay = self._slider(_("replay t_r (µs/step)"), known["replay_us"])
        # Where the starting values came from, wrapped to the plot's width (a recording's label
        # is long) rather than cut off at the figure's edge.
        heading, top = plotly_heading(
            _("starting values: {origin}; move the sliders to explore").format(origin=self.origin),
            WIDTH_PX - 90,
            TITLE_FONT_PX,
        )
        # The curves go in as the figure is made: its first message to the browser carries them
        # (see LiveFigure); the sliders' later redraws update them in place.
        n_star = self.n_star
        eager, graph, marker = self._curves(n_star)
        figure = LiveFigure(
            [
                go.Scatter(
                    mode="lines", name=_(NAMES["eager"]), line={"color": COLOURS["eager"]}, **eager
                ),
                go.Scatter(
                    mode="lines", name=_(NAMES["graph"]), line={"color": COLOURS["graph"]}, **graph
                ),
                go.Scatter(
                    mode="markers",
                    name="N*",
                    marker={"size": 11, "color": COLOURS["n_star"]},
                    hovertemplate=_("N* = {n} steps").format(n="%{x:.1f}") + "<extra></extra>",
                    **marker,
                ),
            ],
            {
                "height": 300 + top,
                "width": WIDTH_PX,
                "annotations": [heading],
                "margin": {"l": 70, "r": 20, "t": top, "b": 50},
                "xaxis": {"title": {"text": _(X_TITLE)}, "rangemode": "tozero"},
                "yaxis": {"title": {"text": _(Y_TITLE)}, "rangemode": "tozero"},
                "plot_bgcolor": "white",
                "legend": {"x": 0, "y": 1},
            },
        )
        self._show_figure(figure)
        self.readout = widgets.HTML(self._sentence(n_star))
        for slider in (self.capture, self.eager, self.replay):
            slider.observe(self._redraw, names="value")
        super().__init__(
            [widgets.HBox([self.capture, self.eager, self.replay]), self.readout, self.figure]
        )

    @staticmethod
    def _slider(label: str, value: float) -> widgets.FloatSlider:
        top = 4 * value if value > 0 else 100.0
        return widgets.FloatSlider(
            value=value,
            min=0.0,
            max=top,
            step=top / 1000,
            description=label,
            readout_format=".1f",
            continuous_update=True,
            style={"description_width": "initial"},
        )

    @property
    def n_star(self) -> float | None:
        """N* for the sliders' current values (None when a replay is not faster)."""
        return break_even(self.capture.value, self.eager.value, self.replay.value)

    def _curves(
        self, n_star: float | None
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """x and y of the eager total, the graph total and the N* marker, for the sliders and
        their ``n_star``."""
        c, te, tr = self.capture.value, self.eager.value, self.replay.value
        steps = steps_axis(n_star)
        eager_total, graph_total = cumulative_totals(c, te, tr, steps)
        marker = {"x": [], "y": []} if n_star is None else {"x": [n_star], "y": [n_star * te]}
        return {"x": steps, "y": eager_total}, {"x": steps, "y": graph_total}, marker

    def _redraw(self, change: object = None) -> None:
        n_star = self.n_star
        with self.figure.batch_update():
            for trace, curve in zip(self.figure.data, self._curves(n_star), strict=True):
                trace.update(curve)
        self.readout.value = self._sentence(n_star)

    def static_text(self) -> str:
        c, te, tr = self.capture.value, self.eager.value, self.replay.value
        return _("C = {capture} µs, t_e = {eager} µs, t_r = {replay} µs. {verdict}").format(
            capture=f"{c:,.1f}",
            eager=f"{te:,.1f}",
            replay=f"{tr:,.1f}",
            verdict=html.unescape(self.readout.value),
        )

    def _sentence(self, n_star: float | None) -> str:
        if n_star is None:
            return html.escape(
                _(
                    "A replay is not faster than eager here (t_r ≥ t_e): the graph never pays "
                    "back its capture."
                )
            )
        first = math.floor(n_star) + 1
        return html.escape(
            _(
                "N* = C / (t_e − t_r) = {n_star} steps: from step {first} on, "
                "capture + replay has cost less in total than eager."
            ).format(n_star=f"{n_star:,.1f}", first=f"{first:,}")
        )

    @drawing
    def picture(self) -> Png:
        """The sliders' values, the sentence and the two lines with N* as one PNG."""
        c, te, tr = self.capture.value, self.eager.value, self.replay.value
        n_star = self.n_star
        text = wrap(self.static_text(), WIDTH_PX - 20, FONT)
        title = wrap(_("starting values: {origin}").format(origin=self.origin), WIDTH_PX - 20, FONT)
        top = 10 + (len(text) + len(title)) * LINE + 14
        canvas = Canvas(WIDTH_PX, top + 270)
        y = canvas.lines(10, 10, text, fontweight="bold")
        canvas.lines(10, y + 4, title, color="#444444")
        axes = canvas.axes(80, top, WIDTH_PX - 100, 220)
        steps = steps_axis(n_star)
        eager_total, graph_total = cumulative_totals(c, te, tr, steps)
        axes.plot(steps, eager_total, color=COLOURS["eager"], label=_(NAMES["eager"]))
        axes.plot(steps, graph_total, color=COLOURS["graph"], label=_(NAMES["graph"]))
        if n_star is not None:
            axes.plot([n_star], [n_star * te], "o", color=COLOURS["n_star"], label="N*")
        axes.set_xlim(0, steps[-1])
        axes.set_ylim(bottom=0)
        axes.set_xlabel(_(X_TITLE))
        axes.set_ylabel(_(Y_TITLE))
        axes.ticklabel_format(style="plain", useOffset=False)
        axes.grid(color="#eeeeee", lw=0.8)
        axes.legend(loc="upper left", frameon=False)
        for side in ("top", "right"):
            axes.spines[side].set_visible(False)
        return canvas.png()
