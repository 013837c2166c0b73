"""Interactive pictures for the course, built on plotly and ipywidgets.

- :class:`TimelineView`: eager and graph-replay timelines on one zoomable µs axis, with a summary.
- :class:`GapView`: the GPU's idle gaps, eager vs replay, as a histogram and a one-line meter.
- :class:`BreakEvenExplorer`: when capture plus replay overtakes eager, with sliders.
- :class:`SimulatorPlayground`: "what if?" sliders over the simulator, drawn as a TimelineView.

Every widget works live in JupyterLab 4 and Notebook 7 (plotly's FigureWidget is an anywidget,
so nothing is built at install time) and also carries a static plotly figure for nbconvert HTML
and notebooks viewed without a kernel.
"""

from __future__ import annotations

from .breakeven import BreakEvenExplorer
from .gap_view import GapView
from .playground import SimulatorPlayground
from .timeline_view import TimelineView

__all__ = ["BreakEvenExplorer", "GapView", "SimulatorPlayground", "TimelineView"]
