"""GapView: how long the GPU sat idle between kernels, eager against graph replay.

Gaps span orders of magnitude (a replay's are a fraction of a µs, an eager run's several µs), so
the histogram uses logarithmic bins on a log x axis, both timelines on the same bins. The axis
is labelled with plain numbers (0.2, 0.5, 1, 2, ...): plotly's own log ticks label the steps
between decades with a bare mantissa, so 0.26 µs read as "2-3". Above it a one-line "gap meter"
gives the share of the span the GPU was idle, eager -> replay.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import Any, cast

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
from matplotlib.ticker import MaxNLocator

from graphlab.language import N_
from graphlab.language import gettext as _

from .display import StaticPicture
from .lanes import device_gaps_ns
from .live_figure import LiveFigure
from .pictures import FONT, LINE, Canvas, Png, drawing
from .sources import TITLES, banner, pick_timelines
from .wrapping import plotly_heading, wrap

__all__ = ["BINS", "GapView", "gap_bins", "gap_meter", "log_ticks"]

BINS = 40
# By the English title; a translated title finds its colour through _colour().
COLOURS = {"eager": "#F58518", "graph replay": "#4C78A8"}
OTHER_COLOUR = "#54A24B"
WIDTH_PX = 600
TITLE_FONT_PX = 12
# Translated where they are drawn: _(X_TITLE).
X_TITLE = N_("idle gap between GPU work (µs, log scale)")
EMPTY = N_("no idle gaps: the GPU never waited")
Y_TITLE = N_("gaps")
MAX_TICKS = 9


def gap_bins(gaps_us: list[np.ndarray], bins: int = BINS) -> np.ndarray:
    """Log-spaced bin edges (µs) covering every gap of every timeline (gaps are > 0)."""
    every = np.concatenate(gaps_us) if gaps_us else np.zeros(0)
    if len(every) == 0:
        return np.zeros(0)
    lo, hi = every.min(), every.max()
    # Widen by half a bin's ratio either side, so equal gaps still get a bin of their own.
    return np.geomspace(lo / 1.25, hi * 1.25, bins + 1)


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Tick values in ``[lo, hi]`` (µs, lo > 0) for a log axis, and their labels as plain
    numbers.

    1-2-5 in each decade; only the powers of ten when that would crowd the axis (more than
    :data:`MAX_TICKS`); every integer mantissa when 1-2-5 gives fewer than three ticks; on a
    range narrower still, evenly spaced round values (matplotlib's MaxNLocator). Labels carry
    at most three significant digits: 0.25 reads "0.25", never "2.5e-1" or a bare "2".
    """
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)

    def inside(mantissas: Iterable[int]) -> list[float]:
        return [v for d in decades for m in mantissas if lo <= (v := m * 10.0**d) <= hi]

    values = inside((1, 2, 5))
    if len(values) > MAX_TICKS:
        values = inside((1,))
    elif len(values) < 3:
        values = inside(range(1, 10))
    if len(values) < 3:
        values = [v for v in MaxNLocator(nbins=5).tick_values(lo, hi) if lo <= v <= hi]
    values = [float(f"{v:.3g}") for v in values]
    return values, [f"{v:g}" for v in values]


def gap_meter(columns: list[tuple[str, dict[str, Any]]]) -> str:
    """``GPU idle: 65.5% eager → 10.7% graph replay`` from (title, summary dict) pairs."""
    parts = [
        ("–" if s["idle_fraction"] is None else f"{s['idle_fraction']:.1%}") + f" {title}"
        for title, s in columns
    ]
    return _("GPU idle: {shares}").format(shares=" → ".join(parts))


def _colour(title: str) -> str:
    """The colour of a timeline's title, in whatever language it was written."""
    for english in TITLES.values():
        if title in (english, _(english)):
            return COLOURS.get(english, OTHER_COLOUR)
    return OTHER_COLOUR


def _histogram_name(title: str, counts: np.ndarray) -> str:
    return _("{title} ({count} gaps)").format(title=title, count=int(counts.sum()))


class GapView(StaticPicture, widgets.VBox):
    """Histogram of the GPU's idle gaps, eager vs graph replay, and the gap meter.

    Takes the same inputs as :class:`~graphlab.widgets.TimelineView` (Timelines, a recording or a
    ``graphlab.compare`` result). Gaps are the device's (all streams together), exactly those the
    gap analysis counts. Attributes: ``figure``, ``edges_us`` (bin edges), ``counts``
    (title -> counts per bin) and ``meter`` (the meter's text).
    """

    def __init__(self, eager: Any = None, graph: Any = None) -> None:
        picked = pick_timelines(eager, graph, owner="GapView")
        gaps_us: dict[str, np.ndarray] = {}
        for title, timeline, _source in picked:
            start, end = device_gaps_ns(timeline)
            gaps_us[title] = (end - start) / 1000.0
        self.edges_us = gap_bins(list(gaps_us.values()))
        self.counts = {
            title: np.histogram(gaps, self.edges_us)[0] if len(self.edges_us) else np.zeros(0)
            for title, gaps in gaps_us.items()
        }
        self.meter = gap_meter([(title, tl.summary().to_dict()) for title, tl, _ in picked])
        self.sources = " · ".join(dict.fromkeys(banner(tl.meta) for _, tl, _ in picked))
        self.figure = LiveFigure(self._traces(), self._layout())
        self._meter = widgets.HTML(f"<b>{html.escape(self.meter)}</b>")
        super().__init__([self._meter, self.figure])

    def _traces(self) -> list[go.Scatter]:
        # A step line over the bin edges (the last count repeated to close the final step).
        return [
            go.Scatter(
                x=self.edges_us,
                y=np.append(counts, counts[-1:]),
                mode="lines",
                line={"shape": "hv", "color": _colour(title), "width": 2},
                fill="tozeroy",
                name=_histogram_name(title, counts),
                hovertemplate=_("gaps from {start} µs: {count}").format(
                    start="%{x:.3f}", count="%{y}"
                )
                + "<extra>"
                + title
                + "</extra>",
            )
            for title, counts in self.counts.items()
        ]

    def _layout(self) -> dict[str, Any]:
        xaxis: dict[str, Any] = {"type": "log", "title": {"text": _(X_TITLE)}}
        if len(self.edges_us):
            values, labels = log_ticks(self.edges_us[0], self.edges_us[-1])
            xaxis |= {"tickvals": values, "ticktext": labels}
        # The sources line, wrapped to the plot rather than cut off at the figure's edge.
        heading, top = plotly_heading(self.sources, WIDTH_PX - 80, TITLE_FONT_PX)
        annotations = [heading]
        if not len(self.edges_us):
            annotations.append(
                {"text": _(EMPTY), "showarrow": False, "xref": "paper", "yref": "paper",
                 "x": 0.5, "y": 0.5}
            )  # fmt: skip
        return {
            "height": 280 + top,
            "width": WIDTH_PX,
            "margin": {"l": 60, "r": 20, "t": top, "b": 50},
            "xaxis": xaxis,
            "yaxis": {"title": {"text": _(Y_TITLE)}, "rangemode": "tozero"},
            "annotations": annotations,
            "plot_bgcolor": "white",
            "legend": {"x": 1, "xanchor": "right", "y": 1},
        }

    def static_text(self) -> str:
        return self.meter

    @drawing
    def picture(self) -> Png:
        """The meter, the sources and the histogram as one PNG, with the live view's bins and
        ticks."""
        title = wrap(self.sources, WIDTH_PX - 20, FONT)
        top = 10 + LINE + 4 + len(title) * LINE + 10
        canvas = Canvas(WIDTH_PX, top + 250)
        canvas.text(10, 10, self.meter, fontweight="bold", fontsize=FONT + 1)
        canvas.lines(10, 10 + LINE + 4, title, color="#444444")
        axes = canvas.axes(60, top, WIDTH_PX - 80, 200)
        if len(self.edges_us):
            for label, counts in self.counts.items():
                colour = _colour(label)
                axes.stairs(counts, self.edges_us, fill=True, color=colour, alpha=0.25)
                axes.stairs(counts, self.edges_us, color=colour, lw=1.5,
                            label=_histogram_name(label, counts))  # fmt: skip
            axes.set_xscale("log")
            axes.set_xlim(self.edges_us[0], self.edges_us[-1])
            values, labels = log_ticks(self.edges_us[0], self.edges_us[-1])
            axes.set_xticks(values, labels)
            axes.minorticks_off()
            axes.legend(loc="upper right", frameon=False)
        else:
            axes.text(0.5, 0.5, _(EMPTY), ha="center", va="center", transform=axes.transAxes)
            axes.set_xticks([])
        axes.set_ylim(bottom=0)
        # A new axes' y locator is an AutoLocator, which is a MaxNLocator.
        cast(MaxNLocator, axes.yaxis.get_major_locator()).set_params(integer=True)
        axes.set_xlabel(_(X_TITLE))
        axes.set_ylabel(_(Y_TITLE))
        for side in ("top", "right"):
            axes.spines[side].set_visible(False)
        return canvas.png()
