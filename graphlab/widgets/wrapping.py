"""Fit titles and notes to a width in pixels, for plotly figures and matplotlib pictures alike.

Neither plotly nor matplotlib wraps text: a provenance line wider than its figure is cut off at
the edge. Text is wrapped here by a character budget from the font size. The budget assumes a
character is :data:`CHAR_EM` of the font size wide, a little more than the average of the fonts
used (Open Sans in plotly, DejaVu Sans in matplotlib), so wrapped lines fit with room to spare;
the widget tests measure the drawn pictures to hold it to that.
"""

from __future__ import annotations

import html
import textwrap
from typing import Any

__all__ = ["CHAR_EM", "plotly_heading", "wrap"]

CHAR_EM = 0.62


def wrap(text: str, width_px: float, font_px: float, first_line_used_px: float = 0.0) -> list[str]:
    """``text`` cut at spaces into lines at most ``width_px`` wide at ``font_px``.

    ``first_line_used_px`` is room on the first line already taken by something drawn before the
    text (a bold title); the first line is that much shorter. Never returns an empty list.
    """
    chars = max(8, int(width_px / (CHAR_EM * font_px)))
    used = min(chars - 8, round(first_line_used_px / (CHAR_EM * font_px)))
    lines = textwrap.wrap(text, chars, initial_indent=" " * used, break_on_hyphens=False)
    if not lines:
        return [""]
    return [lines[0][used:], *lines[1:]]


def plotly_heading(text: str, plot_px: float, font_px: float) -> tuple[dict[str, Any], int]:
    """A heading over a plotly figure's plot area: an annotation and the top margin it needs.

    ``text`` is escaped (it may carry a GPU name from a trace file, and plotly reads text as
    markup) and wrapped to the plot's width ``plot_px``. An annotation rather than
    ``layout.title``: plotly places a title of several lines partly above the figure.
    """
    lines = wrap(text, plot_px, font_px)
    annotation = {
        "text": "<br>".join(html.escape(line) for line in lines),
        "font": {"size": font_px},
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": 1,
        "xanchor": "left",
        "yanchor": "bottom",
        "align": "left",
        "yshift": 6,
        "showarrow": False,
    }
    return annotation, round(len(lines) * 1.4 * font_px) + 20
