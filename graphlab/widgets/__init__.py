"""Interactive pictures for the course, built on plotly and ipywidgets.

- :class:`TimelineView`: eager and graph-replay timelines on one zoomable µs axis, with a summary.

Every widget works live in JupyterLab 4 and Notebook 7 (plotly's FigureWidget is an anywidget,
so nothing is built at install time) and also carries a static plotly figure for nbconvert HTML
and notebooks viewed without a kernel.
"""

from __future__ import annotations

from .timeline_view import TimelineView

__all__ = ["TimelineView"]
