"""JSON that someone else wrote (a progress file, a lesson, a workspace record), read safely.

``json.loads`` raises more than ``ValueError`` on hostile text: a document nested a hundred
thousand deep (``[[[[...]]]]``) raises ``RecursionError``, and one Python can still parse may be
too deep to write back or to walk later (``json.dump`` recurses too, from wherever it is called).
:func:`parse_json` and :func:`read_json` turn every such failure into the caller's own
:class:`~graphlab.errors.GraphlabError` with one line that names the file, what is wrong with it
and what to do, and they refuse a document nested deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graphlab.errors import GraphlabError

from .printable import printable

__all__ = ["MAX_DEPTH", "parse_json", "read_json"]

#: How deeply lists and objects may nest. A notebook nests about ten deep and a progress file
#: four; a hundred leaves room for any output a lesson holds, and far more recursion than that
#: is left for whoever writes or walks the value afterwards.
MAX_DEPTH = 100


def parse_json(text: str | bytes, source: str, error: type[GraphlabError], advice: str) -> Any:
    """The value of the JSON ``text`` read from ``source`` (a path, for the message).

    Anything wrong with it raises ``error("<source> <what is wrong>: <advice>")``: not JSON, a
    number too long for Python, text that is not UTF-8, or nesting deeper than :data:`MAX_DEPTH`.
    """
    try:
        value = json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except RecursionError:
        problem = "is JSON nested too deeply to read"
    except json.JSONDecodeError as exc:
        problem = f"is not valid JSON ({exc})"
    except UnicodeError:
        problem = "is not UTF-8 text"
    except ValueError:  # int() refuses a number of more than 4300 digits
        problem = "holds a number too long to read"
    else:
        if not _deeper_than(value, MAX_DEPTH):
            return value
        problem = f"is JSON nested more than {MAX_DEPTH} levels deep"
    raise error(f"{printable(source)} {problem}: {advice}")


def read_json(path: str | os.PathLike[str], error: type[GraphlabError], advice: str) -> Any:
    """The value of the JSON file at ``path``, or ``error`` with one line (see
    :func:`parse_json`); a file that cannot be read at all says why. A missing file raises
    ``FileNotFoundError`` as it is, for callers to whom that means "nothing yet"."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"cannot read {printable(path)} ({exc.strerror or exc}): {advice}") from None
    return parse_json(data, str(path), error, advice)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and dicts nest more than ``limit`` deep in ``value`` (walked without
    recursion, so that the check itself cannot overflow the stack)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
