"""LiveFigure: a plotly FigureWidget whose first message to the browser carries the whole figure.

A widget reaches the browser over a channel (a Jupyter comm) that opens with the widget's state.
plotly's FigureWidget opens its channel before it has taken in its traces and layout, so it opens
with an empty figure, and the traces and the layout follow in the next messages. Since plotly 6
the FigureWidget is an anywidget, and its browser side is 5 MB of JavaScript that each figure
loads on its own. anywidget (0.11, with plotly 7.1) gives that code 2 s from the channel's
opening: a message that arrives for a widget whose code took longer is dropped, not delivered
late. On a busy machine (a shared workshop server, Binder, tests running side by side) loading
can take longer, and the figure then stays an empty plot with default axes: no lanes, no bars.
Slowing chromium's CPU 25 times shows it with graphlab's first TimelineView.

A LiveFigure keeps its channel shut until the figure is complete, so the opening message holds
every trace and the layout, and the picture draws however long the code took to load. Later
changes (a slider's redraw, a zoom's refinement) are still messages: where the code took longer
than anywidget's wait, the figure keeps its first picture and running its cell again draws the
new one.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

__all__ = ["LiveFigure"]


class LiveFigure(go.FigureWidget):
    """``go.FigureWidget(data, layout)`` that opens its comm only once it holds the figure."""

    def __init__(self, data: Any = None, layout: Any = None, **kwargs: Any) -> None:
        # ipywidgets' Widget.__init__ calls open() part-way through plotly's __init__, before
        # the figure is in the synced state (_widget_data, _widget_layout): hold it until then.
        self._figure_complete = False
        super().__init__(data, layout, **kwargs)
        self._figure_complete = True
        self.open()

    def open(self) -> None:
        """Open the comm, with the figure in its first message (see the module's docstring)."""
        if self._figure_complete:
            super().open()
