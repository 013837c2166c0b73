"""LiveFigure: a plotly FigureWidget that draws even where the browser is slow to load its code.

A widget reaches the browser over a channel (a Jupyter comm) that opens with the widget's state;
later changes travel as messages on it. Since plotly 6 the FigureWidget is an anywidget, whose
browser side is 5 MB of JavaScript that each figure loads on its own. anywidget (0.11, with
plotly 7.1) gives that code 2 s from the channel's opening: a message that reaches a widget whose
code took longer is dropped, then and for the rest of the widget's life. On a busy machine (a
shared workshop server, Binder, tests running side by side) loading can take longer. Slowing
chromium's CPU 25 times shows both faults with graphlab's TimelineView.

1. plotly's FigureWidget opens its channel before it has taken in its traces and layout, which
   follow as messages: the figure stayed an empty plot with default axes. A LiveFigure keeps
   its channel shut until the figure is complete, so the opening message holds all of it.
2. A redraw (a slider, a zoom's refinement) is a message. plotly's browser side answers each
   edit of the traces with the edit's number once it has drawn it (and each figure it draws
   with the number of the last edit); a LiveFigure that a browser has drawn, and that hears no
   answer to such an edit within :data:`ANSWER_S`, asks its owner to draw it afresh
   (:class:`HoldsLiveFigure`): a new figure, whose opening message holds the figure as it is now.
   An edit of the layout alone is not watched: plotly 7.1's browser side sends its answer under
   a name the Python side does not read (``_js2py_widget_layoutDelta``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
from traitlets import observe

__all__ = ["ANSWER_S", "HoldsLiveFigure", "LiveFigure"]

#: Seconds a drawn figure waits for the browser to answer an edit before it is drawn afresh.
#: A browser that has the figure's code answers in milliseconds, a busy one within a second.
ANSWER_S = 5.0

# The messages that carry an edit of the traces from Python to the browser: plotly's _send_*_msg
# methods that number it (trace_edit_id), which the browser's answer carries back.
EDITS = (
    "_py2js_addTraces",
    "_py2js_deleteTraces",
    "_py2js_restyle",
    "_py2js_update",
    "_py2js_animate",
)


class LiveFigure(go.FigureWidget):
    """``go.FigureWidget(data, layout)`` that opens its comm only once it holds the figure, and
    calls ``on_lost(self)`` when a browser that drew it stops answering its edits."""

    on_lost: Callable[[LiveFigure], None] | None = None

    def __init__(self, data: Any = None, layout: Any = None, **kwargs: Any) -> None:
        # ipywidgets' Widget.__init__ calls open() part-way through plotly's __init__, before
        # the figure is in the synced state (_widget_data, _widget_layout): hold it until then.
        self._figure_complete = False
        # The last edit a browser answered; -1 until one has drawn the figure (it then answers
        # with the number of the last edit before it drew, 0 or more).
        self._answered = -1
        self._waiting = False  # a check for an answer is scheduled
        super().__init__(data, layout, **kwargs)
        self._figure_complete = True
        self.open()

    def open(self) -> None:
        """Open the comm, with the figure in its first message (see the module's docstring)."""
        if self._figure_complete:
            super().open()

    @observe("_js2py_traceDeltas")
    def _on_answer(self, change: dict[str, Any]) -> None:
        # Each view sends its trace deltas, with the edit's number, when it first draws the
        # figure and after each edit of the traces.
        if change["new"]:
            self._answered = max(self._answered, change["new"]["trace_edit_id"])

    @observe(*EDITS)
    def _on_edit(self, change: dict[str, Any]) -> None:
        if change["new"] is not None:
            self._watch()

    def _watch(self) -> None:
        """Check, :data:`ANSWER_S` from now, that a browser answered the latest edit."""
        if self._answered < 0 or self._waiting or self.on_lost is None:
            return
        try:
            loop = asyncio.get_running_loop()  # a kernel handling a message or running a cell
        except RuntimeError:
            return  # plain Python: no browser to wait for
        self._waiting = True
        loop.call_later(ANSWER_S, self._check, self._last_trace_edit_id)

    def _check(self, edit: int) -> None:
        self._waiting = False
        if self._answered < edit:
            if self.on_lost is not None and self.comm is not None:
                self.on_lost(self)
        elif self._answered < self._last_trace_edit_id:
            self._watch()  # answered; edits made since then are not yet


class HoldsLiveFigure:
    """For a widgets.Box that shows ``self.figure`` among its children: when the browser stops
    answering the figure's edits, a new LiveFigure of the figure as it is now takes its place."""

    figure: LiveFigure
    children: tuple[Any, ...]

    def _show_figure(self, figure: LiveFigure) -> None:
        """Make ``figure`` ``self.figure``: drawn afresh if it is lost, with its listeners."""
        figure.on_lost = self._draw_afresh
        self.figure = figure
        self._listen_to_figure()

    def _draw_afresh(self, lost: LiveFigure) -> None:
        self._show_figure(LiveFigure(lost.data, lost.layout))
        self.children = tuple(self.figure if child is lost else child for child in self.children)
        lost.close()

    def _listen_to_figure(self) -> None:
        """Attach what listens to ``self.figure`` (nothing by default), for each figure
        :meth:`_show_figure` puts in place."""
