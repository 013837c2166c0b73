"""SimulatorPlayground: "what if?" sliders over the simulator, drawn as eager vs graph timelines.

Kernel count, kernel duration, host cost per launch and how often the loop synchronizes: move one
and the simulator (:mod:`graphlab.simulator`) reruns the eager loop and the graph replay, and the
TimelineView below redraws. The other costs (launch latency, graph launch, node gap, sync) stay
at the parameters given, by default the ones calibrated to the bundled GPU recordings.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from graphlab.language import gettext as _
from graphlab.simulator import SimParams, calibrated, chain, eager, graph, simulate
from graphlab.trace.timeline import Timeline

from .display import StaticPicture
from .pictures import Png
from .timeline_view import TimelineView

__all__ = ["MAX_KERNELS", "SimulatorPlayground"]

# Enough to see the pattern; more only slows the redraw a slider drag waits for.
MAX_KERNELS = 2000


class SimulatorPlayground(StaticPicture, widgets.VBox):
    """Sliders for kernel count, kernel µs, host µs per launch and sync-every-k, redrawing an
    eager-vs-graph :class:`~graphlab.widgets.TimelineView` from the simulator.

    Args:
        params: the simulator's :class:`~graphlab.simulator.SimParams`; default
            ``graphlab.simulator.calibrated()`` (SimulatorError, saying what to do, if the
            simulator has no calibration yet).
        kernels, kernel_us, host_us, sync_every: the sliders' starting values. ``host_us``
            defaults to ``params.host_us``; ``sync_every=0`` syncs only at the end.

    Attributes: ``view`` (the TimelineView), the sliders ``kernels``, ``kernel_us``,
    ``host_us``, ``sync_every``, and ``params`` (what the last redraw simulated with).
    """

    def __init__(
        self,
        params: SimParams | None = None,
        *,
        kernels: int = 50,
        kernel_us: float = 2.0,
        host_us: float | None = None,
        sync_every: int = 0,
    ) -> None:
        self._base = params if params is not None else calibrated()
        host = self._base.host_us if host_us is None else host_us
        self.kernels = _slider(
            widgets.IntSlider, _("kernels"), value=kernels, min=1, max=MAX_KERNELS
        )
        self.kernel_us = _microseconds_slider(_("kernel µs"), kernel_us, low=0.1)
        self.host_us = _microseconds_slider(_("host µs per launch"), host, low=0.0)
        self.sync_every = _slider(
            widgets.IntSlider,
            _("sync every k (0: at end)"),
            value=sync_every,
            min=0,
            max=MAX_KERNELS,
        )
        self.view = TimelineView(*self._simulate())
        for slider in (self.kernels, self.kernel_us, self.host_us, self.sync_every):
            slider.observe(self._redraw, names="value")
        controls = widgets.GridBox(
            [self.kernels, self.kernel_us, self.host_us, self.sync_every],
            layout=widgets.Layout(grid_template_columns="repeat(2, 440px)"),
        )
        super().__init__([controls, self.view])

    def _simulate(self) -> tuple[Timeline, Timeline]:
        """Eager and graph timelines for the sliders' current values."""
        self.params = self._base.replace(host_us=self.host_us.value)
        step = chain(self.kernels.value, self.kernel_us.value)
        every = self.sync_every.value or None
        return (
            simulate(eager(step, self.params, sync_every=every)),
            simulate(graph(step, self.params, sync_every=every)),
        )

    def _redraw(self, change: object = None) -> None:
        self.view.set_timelines(*self._simulate())

    def _settings(self) -> str:
        values = {
            "kernels": self.kernels.value,
            "kernel_us": f"{self.kernel_us.value:g}",
            "host_us": f"{self.host_us.value:.4g}",
        }
        if self.sync_every.value:
            return _(
                "Simulated: {kernels} kernels of {kernel_us} µs, host {host_us} µs per launch, "
                "sync every {every}"
            ).format(every=self.sync_every.value, **values)
        return _(
            "Simulated: {kernels} kernels of {kernel_us} µs, host {host_us} µs per launch, "
            "sync every step (at the end)"
        ).format(**values)

    def static_text(self) -> str:
        return f"{self._settings()}\n{self.view.static_text()}"

    def picture(self) -> Png:
        """The timelines as simulated for the sliders' current values, settings on top."""
        return self.view.picture(heading=self._settings())


def _slider(kind: type[widgets.Widget], description: str, **limits: Any) -> widgets.Widget:
    """A playground slider: the label in full, and one redraw on release rather than one per
    step of a drag (each redraw reruns the simulator)."""
    return kind(
        description=description,
        style={"description_width": "initial"},
        continuous_update=False,
        **limits,
    )


def _microseconds_slider(description: str, value: float, low: float) -> widgets.FloatSlider:
    """A duration slider in 0.1 µs steps, up to 50 µs or further when ``value`` is larger."""
    return _slider(
        widgets.FloatSlider,
        description,
        value=value,
        min=low,
        max=max(50.0, value),
        step=0.1,
    )
