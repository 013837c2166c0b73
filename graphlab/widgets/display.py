"""Every widget's display output: the live view, a PNG of the same picture, and a text summary.

A widget's output is a bundle of representations; each front end shows the first it can:

- JupyterLab 4 and Notebook 7 with the kernel running, in a trusted notebook: the live widget,
  from ``application/vnd.jupyter.widget-view+json``.
- An untrusted notebook (one this user did not run and save: a fresh clone, a download), with or
  without a kernel: JupyterLab renders an untrusted output only with a renderer it marks safe;
  the widget renderer is not, so it shows the first safe one in its order: ``image/png``. A
  ``text/html`` output would come before it and show sanitised, without its scripts, so the
  bundle has none.
- nbconvert's HTML export and GitHub: the PNG, as ``<img src="data:image/png;base64,...">``
  (without saved widget state nbconvert has no widget to draw).
- Text-only viewers: ``text/plain``, the numbers.

The PNG is drawn with matplotlib (:mod:`graphlab.widgets.pictures`) when the widget is
displayed, so it shows the widget as it first appeared, and adds tens of kB to a stored
notebook instead of half a MB of plotly HTML. Nothing loads from a CDN and no widget state is
saved.

Not covered: a notebook JupyterLab trusts (this user ran and saved it) opened later. JupyterLab
then picks the widget view for any kernel state; with no kernel it stays at "Loading
widget...", with a fresh kernel it says "Error displaying widget: model not found" until the
cell runs again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .pictures import Png

__all__ = ["StaticPicture"]


class StaticPicture:
    """Mixin for an ipywidgets container that defines ``picture() -> pictures.Png`` and
    ``static_text() -> str``: both join the widget view in the container's display output."""

    # Provided by the class that mixes this in (declared here, defined there).
    picture: Callable[[], Png]
    static_text: Callable[[], str]

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        # The ipywidgets container after this mixin in the class's bases has it; mypy sees
        # only object above a mixin.
        data: dict[str, Any] = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        png = self.picture()
        data["image/png"] = png.base64
        data["text/plain"] = self.static_text()
        return data, {"image/png": png.metadata}
