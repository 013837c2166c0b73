"""Text laid out in a terminal's columns, where a Chinese character takes two.

A terminal shows each CJK character and full-width punctuation mark two columns wide, so
``str.ljust`` and :mod:`textwrap`, which count characters, misalign a table or overflow a line of
Chinese text. These helpers count columns instead; on ASCII text they give exactly what
``str.ljust`` and ``str.rjust`` give.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["columns", "has_wide", "ljust", "rjust", "wrap"]

# Punctuation that may not start a line, and punctuation that may not end one.
_CLOSING = "，。、；：？！）」』》〉】…"
_OPENING = "（「『《〈【"
# Characters between which a line of Chinese text may break (with no space between them): the
# CJK ideographs and syllabaries, their punctuation and the full-width forms.
_WIDE = (
    "\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
)
# What a line may break between: a space, or a word or a wide character, each with the
# punctuation that must stay on its line.
_PIECE = re.compile(rf"[{_OPENING}]*(?:[{_WIDE}]|[^\s{_WIDE}]+)[{_CLOSING}]*|\s+")
_HAS_WIDE = re.compile(f"[{_WIDE}]")


def columns(text: str) -> int:
    """How many columns ``text`` takes in a terminal."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def ljust(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (as ``str.ljust``, by columns)."""
    return text + " " * (width - columns(text))


def rjust(text: str, width: int) -> str:
    """``text`` after spaces up to ``width`` columns (as ``str.rjust``, by columns)."""
    return " " * (width - columns(text)) + text


def has_wide(text: str) -> bool:
    """Whether ``text`` holds a character a line may break after without a space."""
    return _HAS_WIDE.search(text) is not None


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken at spaces and between wide
    characters (never before a closing or after an opening mark), its spaces collapsed. A word
    longer than a line gets a line of its own."""
    lines: list[str] = []
    line = ""
    for piece in _PIECE.findall(" ".join(text.split())):
        if piece.isspace():
            line += " " if line else ""
        elif line and columns(line + piece) > width:
            lines.append(line.rstrip())
            line = piece
        else:
            line += piece
    if line:
        lines.append(line.rstrip())
    return lines
