"""GapView: how long the GPU sat idle between kernels, eager against graph replay.

Gaps span orders of magnitude (a replay's are a fraction of a µs, an eager run's several µs), so
the histogram uses logarithmic bins on a log x axis, both timelines on the same bins. Above it a
one-line "gap meter" gives the share of the span the GPU was idle, eager -> replay.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go

from .display import StaticFallback, figure_html
from .lanes import device_gaps_ns
from .sources import banner, pick_timelines

__all__ = ["BINS", "GapView", "gap_bins", "gap_meter"]

BINS = 40
COLOURS = {"eager": "#F58518", "graph replay": "#4C78A8"}


def gap_bins(gaps_us: list[np.ndarray], bins: int = BINS) -> np.ndarray:
    """Log-spaced bin edges (µs) covering every gap of every timeline (gaps are > 0)."""
    every = np.concatenate(gaps_us) if gaps_us else np.zeros(0)
    if len(every) == 0:
        return np.zeros(0)
    lo, hi = every.min(), every.max()
    # Widen by half a bin's ratio either side, so equal gaps still get a bin of their own.
    return np.geomspace(lo / 1.25, hi * 1.25, bins + 1)


def gap_meter(columns: list[tuple[str, dict]]) -> str:
    """``GPU idle: 65.5% eager → 10.7% graph replay`` from (title, summary dict) pairs."""
    parts = [
        ("–" if s["idle_fraction"] is None else f"{s['idle_fraction']:.1%}") + f" {title}"
        for title, s in columns
    ]
    return "GPU idle: " + " → ".join(parts)


class GapView(StaticFallback, widgets.VBox):
    """Histogram of the GPU's idle gaps, eager vs graph replay, and the gap meter.

    Takes the same inputs as :class:`~graphlab.widgets.TimelineView` (Timelines, a recording or a
    ``graphlab.compare`` result). Gaps are the device's (all streams together), exactly those the
    gap analysis counts. Attributes: ``figure``, ``edges_us`` (bin edges), ``counts``
    (title -> counts per bin) and ``meter`` (the meter's text).
    """

    def __init__(self, eager=None, graph=None):
        picked = pick_timelines(eager, graph, owner="GapView")
        gaps_us = {}
        for title, timeline, _ in picked:
            start, end = device_gaps_ns(timeline)
            gaps_us[title] = (end - start) / 1000.0
        self.edges_us = gap_bins(list(gaps_us.values()))
        self.counts = {
            title: np.histogram(gaps, self.edges_us)[0] if len(self.edges_us) else np.zeros(0)
            for title, gaps in gaps_us.items()
        }
        self.meter = gap_meter([(title, tl.summary().to_dict()) for title, tl, _ in picked])
        # Banners carry text from the trace file (the GPU name); plotly renders titles as markup.
        sources = " · ".join(dict.fromkeys(html.escape(banner(tl.meta)) for _, tl, _ in picked))
        self.figure = go.FigureWidget(self._traces(), self._layout(sources))
        self._meter = widgets.HTML(f"<b>{html.escape(self.meter)}</b>")
        super().__init__([self._meter, self.figure])

    def _traces(self) -> list[go.Scatter]:
        # A step line over the bin edges (the last count repeated to close the final step).
        return [
            go.Scatter(
                x=self.edges_us,
                y=np.append(counts, counts[-1:]),
                mode="lines",
                line={"shape": "hv", "color": COLOURS.get(title, "#54A24B"), "width": 2},
                fill="tozeroy",
                name=f"{title} ({int(counts.sum())} gaps)",
                hovertemplate="gaps from %{x:.3f} µs: %{y}<extra>" + title + "</extra>",
            )
            for title, counts in self.counts.items()
        ]

    def _layout(self, sources: str) -> dict:
        layout = {
            "height": 320,
            "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
            "xaxis": {"type": "log", "title": {"text": "idle gap between GPU work (µs, log)"}},
            "yaxis": {"title": {"text": "gaps"}, "rangemode": "tozero"},
            "title": {"text": sources, "font": {"size": 12}, "x": 0, "xanchor": "left"},
            "plot_bgcolor": "white",
            "legend": {"x": 1, "xanchor": "right", "y": 1},
        }
        if not len(self.edges_us):
            layout["annotations"] = [
                {
                    "text": "no idle gaps: the GPU never waited",
                    "showarrow": False,
                    "xref": "paper",
                    "yref": "paper",
                    "x": 0.5,
                    "y": 0.5,
                }
            ]
        return layout

    def static_text(self) -> str:
        return self.meter

    def static_html(self) -> str:
        return f"<p><b>{html.escape(self.meter)}</b></p>{figure_html(self.figure)}"
