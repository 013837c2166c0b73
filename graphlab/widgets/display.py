"""A static picture next to every live widget, for places with no widget front end.

JupyterLab 4 and Notebook 7 with a running kernel render a widget from its
``application/vnd.jupyter.widget-view+json`` output. nbconvert's HTML export (and nbviewer) skip
that output when the notebook holds no widget state and fall back to the next one they know: so
every graphlab widget also puts a plain plotly HTML figure (plotly.js from its CDN) into the same
output, and a plain-text summary for viewers that show text only. No front-end code needs
building at install time.

Not covered: JupyterLab itself, opening a saved notebook without running it, prefers the widget
output and says "model not found" unless the widget state was saved with the notebook.
"""

from __future__ import annotations

import plotly.graph_objects as go

__all__ = ["StaticFallback", "figure_html"]


def figure_html(figure: go.Figure) -> str:
    """A self-contained ``<div>`` drawing ``figure`` with plotly.js loaded from its CDN."""
    return go.Figure(figure).to_html(full_html=False, include_plotlyjs="cdn")


class StaticFallback:
    """Mixin for an ipywidgets container that defines ``static_html() -> str`` and
    ``static_text() -> str``: adds both to the container's display output, next to the widget
    view that live front ends prefer."""

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        data["text/html"] = self.static_html()
        data["text/plain"] = self.static_text()
        return data
