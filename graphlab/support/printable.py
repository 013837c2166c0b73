"""Text from files, made safe to print on a terminal.

The names graphlab prints come from files it did not write: a GPU name in a trace's
``deviceProperties``, a recording's ``meta``, a path given on the command line. A control
character in one of them acts on the reader's terminal instead of being shown (``ESC [2J`` clears
the screen, ``ESC ]8`` makes a link, a bidirectional override reorders the rest of the line), so
:func:`printable` spells each one as a visible escape such as ``\\x1b``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["printable", "printable_json"]

# C0 and C1 control characters, DEL, the line/paragraph separators and the bidirectional
# embedding, override and isolate characters.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: object) -> str:
    """``str(text)`` with every control character written as its Python escape."""
    return _UNPRINTABLE.sub(_escape, str(text))


def printable_json(value: Any) -> Any:
    """A parsed JSON value with every string in it (keys included) made :func:`printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_json(k): printable_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable_json(v) for v in value]
    return value
