"""The trace viewer's server side: a profiler trace as its gap report and a level-of-detail figure.

The figures are :meth:`graphlab.Timeline.summary`'s, the very ones ``graphlab gaps`` prints, and
the report says them in the language the browser asks for (:mod:`.translations`), as does the
figure: its lanes, legend and hover text are the widgets' words, said in that language.
The figure is the one TimelineView draws (:mod:`graphlab.widgets.figures`): lanes of bars, idle
gaps shaded, and above ``LOD_EVENTS`` events bars closer than a pixel merged, so a million
events reach the browser as at most a few thousand bars. A zoom asks again with the visible
range and gets that range's bars; the parsed trace stays in a small cache meanwhile, keyed by
the file's path, size and modification time, so an edited file is read afresh. A large trace is
read in two halves at once, the second by a helper process that :func:`warm_up` starts
(:mod:`graphlab.trace.kineto_halves`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go

from graphlab.course.languages import ENGLISH
from graphlab.language import speaking
from graphlab.trace.figures import Summary
from graphlab.trace.kineto_halves import Helper
from graphlab.trace.timeline import Timeline
from graphlab.widgets.figures import Panel, lod_min_gap, panel_of, timeline_layout, timeline_traces
from graphlab.widgets.lanes import device_gaps_ns
from graphlab.widgets.sources import banner

from .translations import words

__all__ = ["TraceCache", "figure_json", "trace_reply", "warm_up"]


# The process that reads the second half of a large trace; None until warm_up has started it.
_helper: Helper | None = None


@dataclass(frozen=True)
class LoadedTrace:
    """A parsed trace ready to answer requests: its timeline, summary and figures, and its
    report and drawing panel in each language asked for so far."""

    title: str
    timeline: Timeline
    summary: Summary
    figures: dict[str, Any]
    gaps: tuple[np.ndarray, np.ndarray]
    reports: dict[str, str] = field(default_factory=dict)
    panels: dict[str, Panel] = field(default_factory=dict)

    @property
    def events(self) -> int:
        return len(self.timeline)

    def report(self, language: str) -> str:
        """The gap report in ``language`` (English where it has no catalog), written once."""
        if language not in self.reports:
            self.reports[language] = self.summary.report(words(language))
        return self.reports[language]

    def panel(self, language: str) -> Panel:
        """The drawing panel, its lanes named in ``language``, built once per language."""
        if language not in self.panels:
            self.panels[language] = _panel(self.title, self.timeline, self.gaps, language)
        return self.panels[language]


def _panel(
    title: str, timeline: Timeline, gaps: tuple[np.ndarray, np.ndarray], language: str
) -> Panel:
    with speaking(language):
        return panel_of(title, timeline, banner(timeline.meta), gaps)


def load(path: Path, title: str, language: str = ENGLISH) -> LoadedTrace:
    """Read and analyse one trace (TraceError with the reader's one-line message if bad), with
    its panel in ``language``.

    The summary is worked out on another thread while the panel is drawn: numpy lets go of
    Python's lock for much of either, so on two cores the two took 0.13-0.28 s less for
    benchmarks/trace_viewer_open.py's million events (0.45-0.64 s instead of 0.61-0.77 s).
    """
    timeline = Timeline.from_chrome_trace(path, _helper)
    with ThreadPoolExecutor(max_workers=1) as pool:
        summarising = pool.submit(timeline.summary)
        gaps = device_gaps_ns(timeline)
        drawn = _panel(title, timeline, gaps, language)
        summary = summarising.result()
    loaded = LoadedTrace(title, timeline, summary, summary.to_dict(), gaps)
    loaded.panels[language] = drawn
    return loaded


class TraceCache:
    """The last few traces read, so that zooming does not parse the file again.

    Thread-safe: requests analyse traces on worker threads. Two traces are kept; a
    million-event timeline holds a few hundred MB, so more would crowd a workshop laptop.
    """

    def __init__(self, size: int = 2):
        self._size = size
        self._entries: OrderedDict[tuple[str, int, int], LoadedTrace] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, title: str, language: str = ENGLISH) -> LoadedTrace:
        """The trace at ``path`` (read now unless cached; its panel drawn in ``language``)."""
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        loaded = load(path, title, language)
        with self._lock:
            self._entries[key] = loaded
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return loaded


def figure_json(
    panel: Panel, x_range: tuple[float, float] | None = None, language: str = ENGLISH
) -> str:
    """The plotly figure (data and layout) as JSON text, for the view ``x_range`` (µs), its
    words in ``language``.

    Arrays travel as plotly's base64 typed arrays. The layout drops TimelineView's fixed width:
    here the figure fills the document tab and follows its size.
    """
    panels = [panel]
    with speaking(language):
        traces = timeline_traces(panels, x_range, lod_min_gap(panels, x_range))
        layout = timeline_layout(panels)
    layout.pop("width")
    layout["autosize"] = True
    text: str = go.Figure(data=traces, layout=layout).to_json()
    return text


def trace_reply(
    loaded: LoadedTrace,
    path: str,
    x_range: tuple[float, float] | None = None,
    language: str = ENGLISH,
) -> str:
    """The JSON answer of ``GET /graphlab/trace``: report (in ``language``), figures, event
    count and figure."""
    panel = loaded.panel(language)
    head = json.dumps(
        {
            "path": path,
            "report": loaded.report(language),
            "figures": loaded.figures,
            "events": loaded.events,
            "lod": lod_min_gap([panel]) > 0,
        }
    )
    return head[:-1] + ', "figure": ' + figure_json(panel, x_range, language) + "}"


def warm_up() -> None:
    """Start the helper process that reads half of a large trace, and draw a one-kernel
    timeline once, as the server starts.

    The helper takes about a second of CPU to start, and plotly builds the validators of each
    kind of trace on the first figure that uses it (a fifth of a second on two cores): the first
    trace opened would otherwise wait for both.
    """
    global _helper
    if _helper is None:
        # A helper that cannot start leaves each trace to this process alone.
        with contextlib.suppress(OSError, EOFError):
            _helper = Helper()
    timeline = Timeline(
        kind=["kernel"],
        name=["k"],
        start_ns=[0],
        dur_ns=[1000],
        device=[0],
        stream=[7],
        thread=[-1],
        correlation=[0],
    )
    figure_json(panel_of("warm-up", timeline, banner(timeline.meta), device_gaps_ns(timeline)))
