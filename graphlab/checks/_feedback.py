"""How a check talks to the learner: safe renderings of their values, their own frame in a crash,
and the progress record of each result.

Everything here handles objects the learner made, so nothing here may raise because of them: a
``__repr__`` or ``__str__`` that raises, an integer with thousands of digits, or a message of
megabytes all become a short sentence.
"""

from __future__ import annotations

import re
import sys
import sysconfig
import traceback
import warnings
from pathlib import Path
from types import ModuleType

import torch

import graphlab
from graphlab.errors import GraphlabError
from graphlab.failures.explanation import Explanation, explain
from graphlab.language import gettext as _
from graphlab.support.shorten import shorten

__all__ = [
    "crash_message",
    "is_stub",
    "learner_frame",
    "plain_title",
    "record_result",
    "safe_repr",
    "safe_text",
]

_LIMIT = 120  # characters of a learner's value or message shown in a check's message
# Code that is not the learner's: graphlab, torch, the standard library and installed packages.
_NOT_THEIRS = tuple(
    p.resolve()
    for p in {
        Path(graphlab.__file__).parent,
        Path(torch.__file__).parent,
        *(Path(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")),
    }
)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def plain_title(markdown: str) -> str:
    """A lesson's section title as the learner reads it rendered: without the Markdown marks of
    emphasis and code (``*not*``, ```x```), which feedback printed as text would show as such."""
    return re.sub(r"[*`]", "", markdown)


def safe_repr(value: object, limit: int = _LIMIT) -> str:
    """``repr(value)`` on one line, at most ``limit`` characters, whatever ``value`` is."""
    try:
        text = repr(value)
    except Exception as exc:  # the learner's own __repr__, or an int too long to print
        return (
            f"an object of type {type(value).__name__} that cannot be shown ({type(exc).__name__})"
        )
    return _shorten(text, limit)


def safe_text(exc: BaseException, limit: int = 400) -> str:
    """``str(exc)`` on one line, at most ``limit`` characters, even if its ``__str__`` raises."""
    try:
        text = str(exc)
    except Exception as error:
        return f"(its message cannot be shown: __str__ raised {type(error).__name__})"
    return shorten(" ".join(text.split()), limit)


def _theirs(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return False
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return True
    return not any(path.is_relative_to(folder) for folder in _NOT_THEIRS)


def _where(filename: str, line: int | None) -> str:
    """``Cell In[5], line 3`` for a notebook cell (as IPython names it), else the file's path."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    name = getattr(getattr(shell, "compile", None), "format_code_name", lambda _: None)(filename)
    label = f"{name[0]} {name[1]}" if name else filename
    return _("{place}, line {line}").format(place=label, line=line)


def learner_frame(exc: BaseException) -> str | None:
    """Where in the learner's own code ``exc`` was raised: the innermost frame that is theirs.

    ``"Cell In[5], line 3, in step: return 1 / 0"``, or None when no frame is theirs.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        if _theirs(frame.filename):
            source = f": {frame.line.strip()}" if frame.line else ""
            where = _where(frame.filename, frame.lineno)
            return _("{where}, in {function}{source}").format(
                where=where, function=frame.name, source=source
            )
    return None


def is_stub(exc: NotImplementedError) -> bool:
    """Whether ``exc`` comes from an exercise stub: a ``raise`` statement in the learner's code.

    torch raises NotImplementedError too (an operator missing for a device, a meta tensor read),
    from C++ and so with the learner's calling line innermost; that line is not a ``raise``.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or not _theirs(frames[-1].filename):
        return False
    line = (frames[-1].line or "").strip()
    return not line or line.startswith("raise")


def _chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, outermost first."""
    chain: list[BaseException] = []
    while exc is not None and all(exc is not seen for seen in chain):
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return chain


def _explanation(exc: BaseException) -> Explanation | None:
    """graphlab's explanation of ``exc`` when its catalogue knows it, else None.

    explain() reads the exception's message, which runs the learner's ``__str__``: whatever that
    raises must not replace the learner's error with another one.
    """
    try:
        explanation = explain(exc)
    except Exception:
        return None
    return explanation if explanation.matched else None


def crash_message(name: str, exc: BaseException) -> tuple[str, str]:
    """``(message, lesson)`` for an exception raised by the learner's function ``name``.

    The message names the error, the learner's line that raised it, and, when the catalogue knows
    the error, its cause and fix; ``lesson`` is the lesson that covers it ("" when unknown).
    """
    error = f"{type(exc).__name__}: {safe_text(exc)}"
    lines = [_("{name} raised {error}").format(name=name, error=error)]
    # The first error is the one to point at: a capture spoiled by an .item() fails again when
    # its `with` block ends, and that later error is the one raised.
    where = next(filter(None, map(learner_frame, reversed(_chain(exc)))), None)
    if where:
        lines.append("  " + _("at {where}").format(where=where))
    explanation = _explanation(exc)
    if explanation is None:
        return "\n".join(lines), ""
    lines += [
        explanation.title,
        f"  {_('Cause')}: {explanation.cause}",
        f"  {_('Fix')}: {explanation.fix}",
    ]
    return "\n".join(lines), explanation.lesson


def _progress() -> ModuleType:
    """graphlab.course.progress, imported when a check first records a result rather than with
    the checkers (tests put a stand-in here)."""
    from graphlab.course import progress

    return progress


def record_result(lesson: str, exercise: str, passed: bool) -> None:
    """Store the result of a check in the learner's progress (graphlab.course.progress).

    A failure to store it never changes the check's result: whatever goes wrong in the store (a
    damaged or unreadable file, a full disk, or an error nobody foresaw) is reported as a warning
    of one line, and the verdict stands.
    """
    try:
        _progress().record(lesson, exercise, passed)
    except Exception as exc:
        why = safe_text(exc)
        if not isinstance(exc, (GraphlabError, OSError)):  # unforeseen: its type says more
            why = f"{type(exc).__name__}: {why}"
        message = _("graphlab could not save your progress: {why}").format(why=why)
        warnings.warn(message, stacklevel=3)
