"""TimelineView: eager and graph-replay timelines stacked on one zoomable µs axis, with a summary.

The picture is the lesson: eager kernels stand apart with the GPU idle (shaded) between them
while the host launches the next one; a replay packs them together behind one ``cudaGraphLaunch``.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np

from .display import StaticFallback, figure_html
from .figures import (
    lod_min_gap,
    panel_of,
    timeline_figure,
    timeline_layout,
    timeline_traces,
)
from .lanes import device_gaps_ns
from .sources import pick_timelines

__all__ = ["SUMMARY_ROWS", "TimelineView", "summary_row_values"]

# (row label, format) of the summary table, in the order summary_row_values() returns them
SUMMARY_ROWS = (
    ("kernels", "{:d}"),
    ("span (µs)", "{:,.1f}"),
    ("busy (µs)", "{:,.1f}"),
    ("idle", "{:.1%}"),
    ("median gap (µs)", "{:,.3f}"),
    ("launch calls", "{:d}"),
    ("host µs per launch (median)", "{:,.3f}"),
)


def summary_row_values(timeline, summary: dict) -> list:
    """The numbers of one summary column, in :data:`SUMMARY_ROWS` order (None where unknown).

    All but the last two come straight from ``Timeline.summary().to_dict()``; the host cost is
    the median duration of the host launch calls, which the gap analysis does not report.
    """
    launch_ns = timeline.dur_ns[timeline.kind == "launch"]
    return [
        summary["kernels"],
        summary["span_us"],
        summary["busy_us"],
        summary["idle_fraction"],
        summary["gaps"]["median_us"],
        len(launch_ns),
        float(np.median(launch_ns)) / 1000 if len(launch_ns) else None,
    ]


# Inline styles: the same table shows inside the widget and in static HTML exports.
_CELL = "padding:2px 8px;line-height:1.4;text-align:right;border-bottom:1px solid #eee"


def summary_html(columns: list[tuple[str, object, dict, str]]) -> str:
    """An HTML table, one column per timeline (title, timeline, summary dict, source line), with
    the full provenance lines as its caption."""
    head = "".join(f"<th style='{_CELL}'>{html.escape(t)}</th>" for t, _, _, _ in columns)
    values = [summary_row_values(tl, s) for _, tl, s, _ in columns]
    rows = []
    for r, (label, fmt) in enumerate(SUMMARY_ROWS):
        cells = "".join(
            f"<td style='{_CELL}'>" + ("–" if v[r] is None else fmt.format(v[r])) + "</td>"
            for v in values
        )
        rows.append(
            f"<tr><td style='{_CELL};text-align:left'>{html.escape(label)}</td>{cells}</tr>"
        )
    sources = dict.fromkeys(source for _, _, _, source in columns)
    caption = "<br>".join(html.escape(s) for s in sources)
    return (
        "<table class='graphlab-summary' style='font-size:12px;border-collapse:collapse;"
        f"margin-top:24px'><tr><th></th>{head}</tr>{''.join(rows)}"
        f"<caption style='caption-side:bottom;font-size:11px;color:#666;max-width:340px;"
        f"text-align:left;padding-top:4px'>{caption}</caption></table>"
    )


class TimelineView(StaticFallback, widgets.HBox):
    """Eager and graph timelines stacked on one shared, zoomable time axis, with a summary.

    Args:
        eager: a :class:`graphlab.Timeline`, a recording (``graphlab.recording(name)``, which
            then supplies both timelines) or a ``graphlab.compare`` result.
        graph: the graph-replay timeline (same kinds of input). Either one may be left out.

    Each timeline starts at zero. Lanes: host launch calls (and host syncs) on top, one lane per
    GPU stream below; the GPU's idle gaps are shaded. Hover a bar for the kernel's name, duration
    and launch latency. Above ``figures.LOD_EVENTS`` events the view merges bars closer than a
    pixel and refines them as you zoom in (level of detail, see :mod:`graphlab.widgets.lod`).

    Attributes: ``figure`` (the plotly FigureWidget), ``panels`` (what is drawn) and
    ``summaries`` (title -> ``Timeline.summary().to_dict()``).
    """

    def __init__(self, eager=None, graph=None):
        self._load(pick_timelines(eager, graph))
        self.figure = timeline_figure(self.panels, widget=True)
        ranges = [f"xaxis{'' if i == 0 else i + 1}.range" for i in range(len(self.panels))]
        self.figure.layout.on_change(self._refine, *ranges)
        self._summary = widgets.HTML(self._summary_html)
        super().__init__(
            [self.figure, self._summary],
            layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"),
        )

    def _load(self, picked: list[tuple]) -> None:
        self.summaries = {title: tl.summary().to_dict() for title, tl, _ in picked}
        self.panels = [
            panel_of(title, tl, source, device_gaps_ns(tl)) for title, tl, source in picked
        ]
        self._summary_html = summary_html(
            [(t, tl, self.summaries[t], source) for t, tl, source in picked]
        )

    @property
    def events(self) -> int:
        """Events drawn, over all panels."""
        return sum(p.events for p in self.panels)

    def set_timelines(self, eager=None, graph=None) -> None:
        """Redraw in place with new timelines (what the simulator playground's sliders do)."""
        self._load(pick_timelines(eager, graph))
        traces = timeline_traces(self.panels, None, lod_min_gap(self.panels))
        with self.figure.batch_update():
            self.figure.update_layout(timeline_layout(self.panels))
            if len(traces) == len(self.figure.data):
                for trace, new in zip(self.figure.data, traces, strict=True):
                    trace.update(new)
            else:
                self.figure.data = ()
                self.figure.add_traces(traces)
        self._summary.value = self._summary_html

    def _refine(self, layout, *ranges) -> None:
        """Zoom callback: in level-of-detail mode, redraw the bars for the new visible range."""
        if lod_min_gap(self.panels) == 0:
            return  # every event is drawn already
        x_range = next((tuple(r) for r in ranges if r is not None), None)
        traces = timeline_traces(self.panels, x_range, lod_min_gap(self.panels, x_range))
        with self.figure.batch_update():
            for trace, new in zip(self.figure.data, traces, strict=True):
                for key in ("x", "y", "customdata", "text", "marker"):
                    if key in new:
                        setattr(trace, key, new[key])

    def static_text(self) -> str:
        """The summary as plain text: one line per timeline."""
        return "\n".join(
            f"{panel.title} ({panel.source}): "
            + ", ".join(
                f"{label} " + ("–" if v is None else fmt.format(v))
                for (label, fmt), v in zip(
                    SUMMARY_ROWS,
                    summary_row_values(panel.timeline, self.summaries[panel.title]),
                    strict=True,
                )
            )
            for panel in self.panels
        )

    def static_html(self) -> str:
        """The picture as plain plotly HTML plus the summary table (no widget front end needed).

        Large timelines get the level-of-detail view of the whole range, as the widget starts.
        """
        figure = timeline_figure(self.panels, min_gap=lod_min_gap(self.panels))
        return (
            "<div style='display:flex;flex-wrap:wrap;align-items:flex-start;gap:12px'>"
            f"<div>{figure_html(figure)}</div>{self._summary_html}</div>"
        )
