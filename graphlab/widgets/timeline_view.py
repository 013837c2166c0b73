"""TimelineView: eager and graph-replay timelines stacked on one zoomable µs axis, with a summary.

The picture is the lesson: eager kernels stand apart with the GPU idle (shaded) between them
while the host launches the next one; a replay packs them together behind one ``cudaGraphLaunch``.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import numpy as np

from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.trace.timeline import Timeline

from .display import StaticPicture
from .figures import (
    lod_min_gap,
    panel_of,
    timeline_layout,
    timeline_traces,
)
from .lanes import device_gaps_ns
from .live_figure import HoldsLiveFigure, LiveFigure
from .sources import pick_timelines

if TYPE_CHECKING:
    from .pictures import Png

__all__ = [
    "HOST_COST_NOTE",
    "PROFILED_NOTE",
    "PROFILED_NOTE_AGAIN",
    "SUMMARY_ROWS",
    "TimelineView",
    "summary_row_values",
]

# (row label, format) of the summary table, in the order summary_row_values() returns them.
# The labels and notes here are English; each is translated where it is shown, _(HOST_COST_NOTE).
SUMMARY_ROWS = (
    (N_("kernels"), "{:d}"),
    (N_("span (µs)"), "{:,.1f}"),
    (N_("busy (µs)"), "{:,.1f}"),
    (N_("idle"), "{:.1%}"),
    (N_("median gap (µs)"), "{:,.3f}"),
    (N_("launch calls"), "{:d}"),
    (N_("host µs per launch call (median)"), "{:,.3f}"),
)

HOST_COST_NOTE = N_(
    "host µs per launch call: the median time the host thread spent inside one launch call, "
    "one cudaLaunchKernel per kernel when eager, one cudaGraphLaunch per replay for a graph."
)

# Shown under the first timeline drawn from a profiler trace (bundled recordings included) in a
# kernel, that is in one lesson; the later ones carry PROFILED_NOTE_AGAIN instead.
PROFILED_NOTE = N_(
    "Launch calls are drawn as measured under the profiler, which slows them: on an H200 a "
    "1,000-node cudaGraphLaunch took 764 µs profiled against 7 µs unprofiled. Take host "
    "timings from unprofiled runs (graphlab.compare). Nsight Systems traces a replay as one "
    "range by default; --cuda-graph-trace=node shows each kernel, as here, with added overhead."
)
PROFILED_NOTE_AGAIN = N_(
    "Launch calls drawn as measured under the profiler, which slows them (the note under this "
    "lesson's first timeline says how much)."
)
_profiled_note_given = False


def profiled_note() -> str:
    """The profiler note for a new profiled timeline: in full the first time in this kernel (one
    lesson), then the one line that points back to it, so a lesson does not repeat a paragraph.
    In English: translated where it is shown."""
    global _profiled_note_given
    if _profiled_note_given:
        return PROFILED_NOTE_AGAIN
    _profiled_note_given = True
    return PROFILED_NOTE


def summary_row_values(timeline: Timeline, summary: dict[str, Any]) -> list[float | None]:
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


def summary_cells(columns: list[tuple[str, Timeline, dict[str, Any]]]) -> list[list[str]]:
    """The summary table as text: a header row (blank corner, one title per timeline), then one
    row per :data:`SUMMARY_ROWS` entry, for (title, timeline, summary dict) columns."""
    values = [summary_row_values(tl, s) for _, tl, s in columns]
    rows = [["", *(title for title, _, _ in columns)]]
    for r, (label, fmt) in enumerate(SUMMARY_ROWS):
        rows.append([_(label), *("–" if v[r] is None else fmt.format(v[r]) for v in values)])
    return rows


# Inline styles: the same table shows inside the widget and in static HTML exports.
_CELL = "padding:2px 8px;line-height:1.4;text-align:right;border-bottom:1px solid #eee"
_NOTE = "font-size:11px;line-height:1.35;color:#555;max-width:340px;margin:6px 0 0 0"
_WARNING = "border-left:3px solid #e0a100;background:#fff8e1;padding:4px 6px;color:#333"


def summary_html(cells: list[list[str]], sources: list[str], note: str | None) -> str:
    """The summary table (cells as from :func:`summary_cells`), what its host row means, the
    profiler ``note`` (None: the timelines were not profiled) and the full provenance lines."""
    head, *body = cells
    header = "".join(f"<th style='{_CELL}'>{html.escape(t)}</th>" for t in head)
    rows = "".join(
        f"<tr><td style='{_CELL};text-align:left'>{html.escape(label)}</td>"
        + "".join(f"<td style='{_CELL}'>{html.escape(v)}</td>" for v in values)
        + "</tr>"
        for label, *values in body
    )
    paragraphs = f"<p style='{_NOTE}'>{html.escape(_(HOST_COST_NOTE))}</p>"
    if note:
        paragraphs += f"<p style='{_NOTE};{_WARNING}'>{html.escape(_(note))}</p>"
    caption = "<br>".join(html.escape(s) for s in sources)
    return (
        "<div class='graphlab-summary-column' style='margin-top:24px'>"
        "<table class='graphlab-summary' style='font-size:12px;border-collapse:collapse'>"
        f"<tr>{header}</tr>{rows}</table>{paragraphs}"
        f"<p style='{_NOTE};color:#777'>{caption}</p></div>"
    )


class TimelineView(StaticPicture, HoldsLiveFigure, widgets.HBox):
    """Eager and graph timelines stacked on one shared, zoomable time axis, with a summary.

    Args:
        eager: a :class:`graphlab.Timeline`, a recording (``graphlab.recording(name)``, which
            then supplies both timelines) or a ``graphlab.compare`` result.
        graph: the graph-replay timeline (same kinds of input). Either one may be left out.

    Each timeline starts at zero. Lanes: host launch calls (and host syncs) on top, one lane per
    GPU stream below; the GPU's idle gaps are shaded; a legend names the colours. Hover a bar for
    the kernel's name, duration and launch latency. Above ``figures.LOD_EVENTS`` events the view
    merges bars closer than a pixel and refines them as you zoom in (level of detail, see
    :mod:`graphlab.widgets.lod`). Timelines from a profiler trace carry a note that their launch
    calls were slowed by the profiler: in full under the kernel's first such view, in one line
    under the later ones (:func:`profiled_note`).

    Attributes: ``figure`` (the plotly FigureWidget), ``panels`` (what is drawn),
    ``summaries`` (title -> ``Timeline.summary().to_dict()``) and ``profiled`` (whether any
    timeline came from a profiler trace).
    """

    def __init__(self, eager: Any = None, graph: Any = None) -> None:
        self._profiled_note: str | None = None
        self._load(pick_timelines(eager, graph))
        self._show_figure(
            LiveFigure(
                data=timeline_traces(self.panels, None, lod_min_gap(self.panels)),
                layout=timeline_layout(self.panels),
            )
        )
        self._summary = widgets.HTML(self._summary_html)
        super().__init__(
            [self.figure, self._summary],
            layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"),
        )

    def _listen_to_figure(self) -> None:
        """Zooming into the figure, the first or one that took a lost one's place, refines its
        bars."""
        ranges = [f"xaxis{'' if i == 0 else i + 1}.range" for i in range(len(self.panels))]
        self.figure.layout.on_change(self._refine, *ranges)

    def _load(self, picked: list[tuple[str, Timeline, str]]) -> None:
        self.summaries = {title: tl.summary().to_dict() for title, tl, _ in picked}
        self.panels = [
            panel_of(title, tl, source, device_gaps_ns(tl)) for title, tl, source in picked
        ]
        self.profiled = any(tl.meta.get("source") == "kineto" for _, tl, _ in picked)
        if self.profiled and self._profiled_note is None:  # chosen once per view
            self._profiled_note = profiled_note()
        note = self._profiled_note if self.profiled else None
        self._cells = summary_cells([(t, tl, self.summaries[t]) for t, tl, _ in picked])
        self._sources = list(dict.fromkeys(source for _, _, source in picked))
        self._summary_html = summary_html(self._cells, self._sources, note)

    @property
    def events(self) -> int:
        """Events drawn, over all panels."""
        return sum(p.events for p in self.panels)

    def set_timelines(self, eager: Any = None, graph: Any = None) -> None:
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

    def _refine(self, layout: Any, *ranges: Any) -> None:
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
        labels, *columns = zip(*self._cells, strict=True)
        # The separator between "kernels 50" and "span (µs) 105.0": a comma in the language.
        comma = _(", ")
        return "\n".join(
            _("{title} ({source}): {figures}").format(
                title=title,
                source=panel.source,
                figures=comma.join(
                    f"{label} {value}" for label, value in zip(labels[1:], values, strict=True)
                ),
            )
            for panel, (title, *values) in zip(self.panels, columns, strict=True)
        )

    def picture(self, heading: str | None = None) -> Png:
        """The whole range of every timeline, the summary and its notes as one PNG (what a
        stored notebook shows where the widget cannot run); ``heading`` goes on top.

        matplotlib is imported here, when the view is first displayed: by then the live figure's
        model has reached the browser, which loads and draws it while the kernel draws this."""
        from .timeline_picture import timeline_picture

        return timeline_picture(
            self.panels,
            self._cells,
            [_(HOST_COST_NOTE), *self._sources],
            _(self._profiled_note) if self.profiled and self._profiled_note else None,
            heading,
        )
