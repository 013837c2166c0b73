"""Fit titles and notes to a width in pixels, for plotly figures and matplotlib pictures alike.

Neither plotly nor matplotlib wraps text: a provenance line wider than its figure is cut off at
the edge. Text is wrapped here by a character budget from the font size. The budget assumes a
character is :data:`CHAR_EM` of the font size wide, a little more than the average of the fonts
used (Open Sans in plotly, DejaVu Sans in matplotlib), so wrapped lines fit with room to spare;
the widget tests measure the drawn pictures to hold it to that.

Chinese text has no spaces to break at and its characters are full width, a whole em each: a
text holding any full-width character is wrapped by its width in pixels instead, breaking
between any two Chinese characters or at a space, never before closing punctuation (，。：）)
nor after opening punctuation (（「).
"""

from __future__ import annotations

import html
import re
import textwrap
import unicodedata
from typing import Any

__all__ = ["CHAR_EM", "plotly_heading", "wrap"]

CHAR_EM = 0.62


def wrap(text: str, width_px: float, font_px: float, first_line_used_px: float = 0.0) -> list[str]:
    """``text`` cut at spaces into lines at most ``width_px`` wide at ``font_px``.

    ``first_line_used_px`` is room on the first line already taken by something drawn before the
    text (a bold title); the first line is that much shorter. Never returns an empty list.
    """
    if any(_wide(char) for char in text):
        return _wrap_wide(text, width_px, font_px, first_line_used_px)
    chars = max(8, int(width_px / (CHAR_EM * font_px)))
    used = min(chars - 8, round(first_line_used_px / (CHAR_EM * font_px)))
    lines = textwrap.wrap(text, chars, initial_indent=" " * used, break_on_hyphens=False)
    if not lines:
        return [""]
    return [lines[0][used:], *lines[1:]]


# A full-width character on its own; a run of other non-space characters (a word, a number);
# a run of spaces.
_TOKENS = re.compile(r"\s+|[^\s\u1100-\uffff]+|[^\s]")
# Characters that never begin a line: they stay with the character before them.
_NO_BREAK_BEFORE = set("，。、：；！？）》」』’”·…%")
# Characters that never end a line: they go to the next line with the character after them.
_NO_BREAK_AFTER = set("（《「『‘“")


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _width(text: str, font_px: float) -> float:
    """Width of ``text`` in pixels: a full-width character one em, any other :data:`CHAR_EM`."""
    return sum(font_px if _wide(char) else CHAR_EM * font_px for char in text)


def _wrap_wide(text: str, width_px: float, font_px: float, first_line_used_px: float) -> list[str]:
    """:func:`wrap` for text with full-width characters: breaks between them and at spaces."""
    width = max(8 * CHAR_EM * font_px, width_px)
    room = max(8 * CHAR_EM * font_px, width - first_line_used_px)
    lines: list[str] = []
    line = ""
    space = False  # a space between the line so far and the next token
    for token in _TOKENS.findall(text.strip()):
        if token.isspace():
            space = bool(line)
            continue
        joined = line + (" " if space else "") + token
        space = False
        if not line or _width(joined, font_px) <= room:
            line = joined
        elif token in _NO_BREAK_BEFORE:
            # Carry the character before the punctuation to the next line with it.
            keep, carried = (line[:-1], line[-1]) if len(line) > 1 and _wide(line[-1]) else ("", "")
            if keep:
                lines.append(keep.rstrip())
                line = carried + token
            else:
                line = joined
        elif len(line) > 1 and line[-1] in _NO_BREAK_AFTER:
            lines.append(line[:-1].rstrip())
            line = line[-1] + token
        else:
            lines.append(line)
            line = token
        while _width(line, font_px) > room and len(line) > 1:
            # A word wider than the line: cut it where it fills the line.
            cut = next(i for i in range(1, len(line) + 1) if _width(line[:i], font_px) > room) - 1
            lines.append(line[: max(1, cut)])
            line = line[max(1, cut) :]
        if lines:
            room = width
    lines.append(line)
    return lines


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
