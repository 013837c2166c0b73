"""Interactive pictures for the course, built on plotly and ipywidgets.

- :class:`TimelineView`: eager and graph-replay timelines on one zoomable µs axis, with a summary.
- :class:`GapView`: the GPU's idle gaps, eager vs replay, as a histogram and a one-line meter.
- :class:`BreakEvenExplorer`: when capture plus replay overtakes eager, with sliders.
- :class:`PlanView`: which batch sizes to capture: the planner's plan, the Pareto front, presets.
- :class:`SimulatorPlayground`: "what if?" sliders over the simulator, drawn as a TimelineView.

Every widget works live in JupyterLab 4 and Notebook 7 (plotly's FigureWidget is an anywidget,
so nothing is built at install time). Its display output also carries a PNG of the same picture,
drawn with matplotlib, which a stored notebook shows where the widget cannot run: JupyterLab
opening a notebook it does not trust, with or without a kernel, nbconvert's HTML, GitHub (see
:mod:`graphlab.widgets.display`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .break_even import BreakEvenExplorer
    from .gap_view import GapView
    from .plan_view import PlanView
    from .playground import SimulatorPlayground
    from .timeline_view import TimelineView

__all__ = ["BreakEvenExplorer", "GapView", "PlanView", "SimulatorPlayground", "TimelineView"]

# Widget -> its module, imported on first access: ``from graphlab.widgets import TimelineView``
# does not pay for the planner and the simulator behind the other widgets, and the Jupyter
# server's trace viewer (graphlab.widgets.figures) for none of ipywidgets, IPython or matplotlib.
_MODULES = {
    "BreakEvenExplorer": ".break_even",
    "GapView": ".gap_view",
    "PlanView": ".plan_view",
    "SimulatorPlayground": ".playground",
    "TimelineView": ".timeline_view",
}


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module 'graphlab.widgets' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
