"""Pure functions from timelines to plotly figures: the fast lane builder behind TimelineView.

Why this shape: a timeline of 100,000 kernels must draw in well under a second. Plotly draws one
WebGL line trace with 100,000 NaN-separated segments quickly, while 100,000 bar shapes or one
trace per kernel freeze the browser (and ``px.timeline`` cannot show microsecond bars at all). So
every lane is one ``go.Scattergl`` line trace per colour, with hover on an invisible trace of
midpoint markers, and idle gaps are one more wide translucent line trace per panel. Arrays stay
float64 numpy, which plotly ships to the browser as binary typed arrays.

The figure has one panel per timeline (eager above graph), all on one shared x axis in µs, each
timeline starting at zero.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.trace.timeline import Timeline

from .lanes import Track, lanes_of
from .lod import Runs, merge_runs, segments, visible_slice
from .sources import banner
from .wrapping import wrap

__all__ = [
    "LOD_EVENTS",
    "LOD_PIXELS",
    "Panel",
    "banner_lines",
    "figure_geometry",
    "full_range",
    "legend_entries",
    "lod_min_gap",
    "panel_of",
    "timeline_layout",
    "timeline_traces",
]

# Geometry in screen pixels. The figure's height is fixed (lanes x LANE_PX plus margins), so a
# lane's height in pixels is known here and bars and gap bands can be drawn as thick lines.
LANE_PX = 30
BAR_PX = 18
# A fixed width keeps the summary table beside the plot (the widget wraps it below when the
# notebook is narrower); plotly's autosize cannot see the width of an ipywidgets flex box.
WIDTH_PX = 600
LEFT_PX = 110
RIGHT_PX = 20
PLOT_PX = WIDTH_PX - LEFT_PX - RIGHT_PX
# Above the panels: the legend's row. Above each panel: its banner, one BANNER_LINE_PX per line
# (the banner is wrapped to the plot's width rather than cut off at the figure's edge).
LEGEND_PX = 30
BANNER_FONT_PX = 12
BANNER_LINE_PX = 17
PANEL_GAP_PX = 14
BOTTOM_PX = 48

# Above this many events in a figure, draw a level-of-detail view (see lod.py) instead of every
# event: the browser then draws at most a few thousand bars per lane, whatever the event count,
# and the zoom callback refines them. Measured in chromium with software WebGL (no GPU), every
# event of a 10,000-kernel pair (30,000 events) already took over a second to draw, so the
# exact picture is kept for the course's sizes (a few thousand events) and a little more.
# LOD_PIXELS is a generous plot width: runs closer than 1/LOD_PIXELS of the view merge.
LOD_EVENTS = 20_000
LOD_PIXELS = 2000

# Hover traces per track: one per distinct name, for the most frequent names; the rest share one.
HOVER_NAMES = 8

COLOURS = {"launch": "#4C78A8", "sync": "#E45756", "gpu": "#F58518"}
GAP_COLOUR = "rgba(214, 39, 40, 0.16)"
GAP_EDGE = "rgba(214, 39, 40, 0.5)"
# Names and labels in English, translated where a figure is built (_(GROUP_NAMES[group])).
GROUP_NAMES = {"launch": N_("launch call"), "sync": N_("host sync"), "gpu": N_("GPU work")}
# What the legend says for each colour ("idle" is the shading of the GPU's idle gaps).
LEGEND_LABELS = {
    "launch": N_("host launch call"),
    "sync": N_("host sync (waits for the GPU)"),
    "gpu": N_("GPU work"),
    "idle": N_("GPU idle"),
}
X_TITLE = N_("time since the timeline's first event (µs)")


@dataclass(frozen=True)
class Panel:
    """One timeline ready to draw: its tracks, lanes, idle gaps and provenance line."""

    title: str
    timeline: Timeline
    source: str
    tracks: list[Track]
    lane_labels: list[str]
    gap_start_us: np.ndarray
    gap_end_us: np.ndarray
    span_us: float
    events: int = 0

    @property
    def gpu_lanes(self) -> list[int]:
        return sorted({t.lane for t in self.tracks if t.group == "gpu"})


def panel_of(
    title: str, timeline: Timeline, source: str, gaps: tuple[np.ndarray, np.ndarray]
) -> Panel:
    """Prepare ``timeline`` for drawing. ``gaps`` are the device's idle gaps as (start, end) in
    ns, as found by the gap analysis; they are shifted to the picture's zero here."""
    tracks = lanes_of(timeline)
    labels: dict[int, str] = {t.lane: t.label for t in tracks}
    t0 = int(timeline.start_ns.min()) if len(timeline) else 0
    span = float((timeline.end_ns.max() - t0) / 1000.0) if len(timeline) else 0.0
    gap_start, gap_end = gaps
    return Panel(
        title=title,
        timeline=timeline,
        source=source,
        tracks=tracks,
        lane_labels=[labels[i] for i in sorted(labels)],
        gap_start_us=(np.asarray(gap_start, dtype=np.int64) - t0) / 1000.0,
        gap_end_us=(np.asarray(gap_end, dtype=np.int64) - t0) / 1000.0,
        span_us=span,
        events=len(timeline),
    )


def banner_lines(panel: Panel) -> list[str]:
    """The panel's banner (its title, then where its numbers came from) wrapped to the plot's
    width; the first line starts with the title, which is drawn bold."""
    return wrap(f"{panel.title} · {banner(panel.timeline.meta)}", PLOT_PX, BANNER_FONT_PX)


def legend_entries(panels: Sequence[Panel]) -> list[str]:
    """The legend's keys (of LEGEND_LABELS) for what these panels draw, in a fixed order."""
    groups = {t.group for p in panels for t in p.tracks}
    idle = any(len(p.gap_start_us) for p in panels)
    return [key for key in LEGEND_LABELS if key in groups or (key == "idle" and idle)]


@dataclass(frozen=True)
class Geometry:
    """Figure height, top margin and each panel's y domain in paper coordinates."""

    height: int
    top: int
    domains: list[tuple[float, float]]


def figure_geometry(panels: Sequence[Panel]) -> Geometry:
    """Figure height and each panel's vertical domain, from its lane count and banner lines."""
    lanes = [max(1, len(p.lane_labels)) for p in panels]
    above = [len(banner_lines(p)) * BANNER_LINE_PX + PANEL_GAP_PX for p in panels]
    # The first panel's banner sits in the top margin, under the legend; the others' in the
    # plot area, between panels.
    plot_px = sum(lanes) * LANE_PX + sum(above[1:])
    domains = []
    top = 0
    for i, n in enumerate(lanes):
        top += above[i] if i else 0
        bottom = top + n * LANE_PX
        domains.append((1 - bottom / plot_px, 1 - top / plot_px))
        top = bottom
    top_px = LEGEND_PX + above[0]
    return Geometry(height=top_px + plot_px + BOTTOM_PX, top=top_px, domains=domains)


def _axis_suffix(i: int) -> str:
    return "" if i == 0 else str(i + 1)


def _banner_markup(panel: Panel) -> str:
    """The banner as plotly text: escaped (the GPU name comes from the trace file), title bold."""
    first, *rest = banner_lines(panel)
    lines = [f"<b>{html.escape(panel.title)}</b>{html.escape(first[len(panel.title) :])}"]
    return "<br>".join(lines + [html.escape(line) for line in rest])


def timeline_layout(panels: Sequence[Panel]) -> dict[str, Any]:
    """Layout: one y axis per panel with lane labels, x axes matched so zoom is shared, a
    legend of the colours in one row above the panels."""
    geo = figure_geometry(panels)
    layout: dict[str, Any] = {
        "height": geo.height,
        "width": WIDTH_PX,
        "margin": {"l": LEFT_PX, "r": RIGHT_PX, "t": geo.top, "b": BOTTOM_PX},
        "showlegend": True,
        "legend": {
            "orientation": "h",
            # From the figure's left edge: the plot's width is too narrow for one row.
            "xref": "container",
            "x": 0,
            "xanchor": "left",
            "y": 1,
            "yref": "container",
            "yanchor": "top",
            # At 10 px the four keys fit in one row of the figure's width.
            "font": {"size": 10},
            # The keys are legend-only traces: hiding one would hide nothing.
            "itemclick": False,
            "itemdoubleclick": False,
        },
        "hovermode": "closest",
        "dragmode": "zoom",
        "plot_bgcolor": "white",
        "annotations": [],
    }
    last = len(panels) - 1
    for i, (panel, (y0, y1)) in enumerate(zip(panels, geo.domains, strict=True)):
        s = _axis_suffix(i)
        n = max(1, len(panel.lane_labels))
        layout[f"yaxis{s}"] = {
            "domain": [y0, y1],
            "range": [n - 0.5, -0.5],
            "tickvals": list(range(n)),
            "ticktext": panel.lane_labels,
            "fixedrange": True,
            "showgrid": False,
            "zeroline": False,
            "anchor": f"x{s}",
        }
        xaxis = {
            "anchor": f"y{s}",
            "showgrid": True,
            "gridcolor": "#eeeeee",
            "zeroline": False,
            "showticklabels": i == last,
        }
        if i:
            xaxis["matches"] = "x"
        if i == last:
            xaxis["title"] = {"text": _(X_TITLE)}
        layout[f"xaxis{s}"] = xaxis
        layout["annotations"].append(
            {
                "text": _banner_markup(panel),
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": y1,
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": BANNER_FONT_PX},
                "align": "left",
            }
        )
    return layout


def _hover_single(track: Track, name: str) -> str:
    """Hover text of one event: its name is baked into the template (one hover trace per name),
    its duration is ``customdata`` and its launch latency rides in ``marker.color``: both 1-D
    float arrays, which reach the browser as binary buffers rather than JSON lists."""
    what = "%{customdata:.3f} µs"
    latency = "%{marker.color:.3f}"
    # No launch call matched anywhere in the track: say nothing rather than "NaN µs".
    known = not np.isnan(track.latency_us).all()
    if known and track.group == "gpu":
        what += "<br>" + _("launch latency {latency} µs").format(latency=latency)
    elif known and track.group == "launch":
        # GPU start minus call end; below zero when an idle GPU starts the work before the call
        # returns, which "starts -1.2 µs after the call" would hide.
        what += "<br>" + _("GPU start − call end: {latency} µs").format(latency=latency)
    return f"<b>{html.escape(name)}</b><br>{what}<extra>{html.escape(track.label)}</extra>"


def _hover_merged(track: Track) -> str:
    merged = _(
        "<b>{count} events</b> merged at this zoom<br>"
        "busy {busy} µs of {span} µs<br>zoom in to see each one"
    ).format(count="%{customdata[0]}", busy="%{customdata[1]:.3f}", span="%{customdata[2]:.3f}")
    return f"{merged}<extra>{html.escape(track.label)}</extra>"


def timeline_traces(
    panels: Sequence[Panel], x_range: tuple[float, float] | None = None, min_gap: float = 0.0
) -> list[dict[str, Any]]:
    """All trace dicts of the figure, in a fixed order that does not depend on the view.

    Per panel: the idle-gap band, then for every track its bars, its single-event hover markers
    (one trace per frequent name) and its merged-run hover markers. Last, the legend's keys.
    With ``x_range`` only what may be visible (plus one view width either side, so a small pan
    shows data at once) is included; with ``min_gap > 0`` bars closer than that are merged
    (level of detail). The defaults give the exact picture.
    """
    traces: list[dict[str, Any]] = []
    groups = {group: _(name) for group, name in GROUP_NAMES.items()}
    for i, panel in enumerate(panels):
        s = _axis_suffix(i)
        axes = {"xaxis": f"x{s}", "yaxis": f"y{s}", "showlegend": False}
        lo, hi = (-np.inf, np.inf) if x_range is None else _with_margin(x_range)
        traces.append(_gap_trace(panel, lo, hi, min_gap) | axes)
        for track in panel.tracks:
            window = visible_slice(track.start_us, track.end_us, lo, hi)
            start, end = track.start_us[window], track.end_us[window]
            runs = merge_runs(start, end, min_gap)
            x, y = segments(runs.start, runs.end, track.lane)
            colour = COLOURS[track.group]
            traces.append(
                {
                    "type": "scattergl",
                    "mode": "lines",
                    "x": x,
                    "y": y,
                    "line": {"color": colour, "width": BAR_PX},
                    "hoverinfo": "skip",
                    "name": _("{lane}: {what}").format(lane=track.label, what=groups[track.group]),
                }
                | axes
            )
            single = runs.count == 1
            idx = runs.first[single] + window.start
            code = track.code[idx]
            for j, name in enumerate(track.names[:HOVER_NAMES]):
                traces.append(_single_trace(track, idx[code == j], name) | axes)
            if len(track.names) > HOVER_NAMES:
                traces.append(_single_trace(track, idx[code >= HOVER_NAMES], None) | axes)
            traces.append(_merged_trace(track, runs, ~single) | axes)
    return traces + [_legend_key(key) for key in legend_entries(panels)]


def _legend_key(key: str) -> dict[str, Any]:
    """A legend-only trace (no points): a square of a lane colour or of the idle shading.

    The bars themselves are drawn as wide lines, which a legend would show as lines."""
    idle = key == "idle"
    return {
        "type": "scatter",
        "mode": "markers",
        "x": [None],
        "y": [None],
        "marker": {
            "symbol": "square",
            "size": 12,
            "color": GAP_COLOUR if idle else COLOURS[key],
            "line": {"width": 1, "color": GAP_EDGE if idle else COLOURS[key]},
        },
        "name": _(LEGEND_LABELS[key]),
        "hoverinfo": "skip",
        "showlegend": True,
    }


def _with_margin(x_range: tuple[float, float]) -> tuple[float, float]:
    x0, x1 = x_range
    width = x1 - x0
    return x0 - width, x1 + width


def _hover_marker(**marker: Any) -> dict[str, Any]:
    """An invisible marker as large as a bar, at an event's middle: it carries the hover.

    Invisible on purpose: any mark drawn per event would paint a lane of sub-pixel kernels solid
    and hide how idle the GPU really was.
    """
    return {"size": BAR_PX, "opacity": 0, **marker}


def _single_trace(track: Track, idx: np.ndarray, name: str | None) -> dict[str, Any]:
    """Hover markers at the middle of single events ``idx`` of ``track``, all named ``name``;
    ``None`` collects the rarer names, which then travel as per-point text."""
    start, end = track.start_us[idx], track.end_us[idx]
    trace = {
        "type": "scattergl",
        "mode": "markers",
        "x": (start + end) / 2,
        "y": np.full(len(idx), float(track.lane)),
        "customdata": end - start,
        "marker": _hover_marker(color=track.latency_us[idx]),
        "hovertemplate": _hover_single(track, name if name is not None else "%{text}"),
        "hoverlabel": {"bgcolor": COLOURS[track.group]},
    }
    if name is None:
        trace["text"] = [html.escape(track.names[c]) for c in track.code[idx]]
    return trace


def _merged_trace(track: Track, runs: Runs, many: np.ndarray) -> dict[str, Any]:
    """Hover markers over merged runs: how many events, how busy."""
    start, end = runs.start[many], runs.end[many]
    return {
        "type": "scattergl",
        "mode": "markers",
        "x": (start + end) / 2,
        "y": np.full(len(start), float(track.lane)),
        # Runs exist only in level-of-detail mode, at most a few thousand per view, so a small
        # 2-D array (sent as nested lists) costs nothing here.
        "customdata": np.column_stack([runs.count[many], runs.busy[many], end - start]),
        "marker": _hover_marker(),
        "hovertemplate": _hover_merged(track),
        "hoverlabel": {"bgcolor": COLOURS[track.group]},
    }


def _gap_trace(panel: Panel, lo: float, hi: float, min_gap: float) -> dict[str, Any]:
    """Idle gaps of the device as one wide translucent band over all GPU lanes of the panel.

    Gaps narrower than ``min_gap`` are left out: at that zoom they are under a pixel wide.
    """
    start, end = panel.gap_start_us, panel.gap_end_us
    keep = (end >= lo) & (start <= hi) & (end - start >= min_gap)
    lanes = panel.gpu_lanes or [0]
    x, y = segments(start[keep], end[keep], (lanes[0] + lanes[-1]) / 2)
    return {
        "type": "scattergl",
        "mode": "lines",
        "x": x,
        "y": y,
        "line": {"color": GAP_COLOUR, "width": len(lanes) * LANE_PX - 4},
        "hoverinfo": "skip",
        "name": _("{title}: idle gaps").format(title=panel.title),
    }


def full_range(panels: Sequence[Panel]) -> tuple[float, float]:
    """The x range that shows every panel whole."""
    return 0.0, max((p.span_us for p in panels), default=0.0) or 1.0


def lod_min_gap(panels: Sequence[Panel], x_range: tuple[float, float] | None = None) -> float:
    """The merge threshold for a view: 0 (exact) for small figures, else one pixel's worth."""
    if sum(p.events for p in panels) <= LOD_EVENTS:
        return 0.0
    x0, x1 = x_range or full_range(panels)
    return (x1 - x0) / LOD_PIXELS
