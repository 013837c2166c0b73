"""Turn a CUDA Graph failure into an explanation: what you saw, why, how to fix it, which lesson.

``graphlab.explain(exc)`` matches an exception (or a warning, or a log line such as torch.compile's
"skipping cudagraphs due to ...") against :data:`graphlab.failures.catalogue.CATALOGUE` and returns
an
:class:`Explanation`, which prints as plain text and renders as HTML in a notebook.

It looks at the whole chain of exceptions, not only the last one: a failed ``.item()`` inside
``with torch.cuda.graph(g):`` surfaces as "operation failed due to a previous error during capture"
raised when the block exits, and the mistake to explain is the ``.item()`` underneath it.

Code that runs learners' captures wraps them in :func:`explained`, which adds the explanation to
the exception as a note, so it appears under the traceback without changing the exception's type.

(The module is called ``explainer`` so that ``graphlab.explain`` stays the function: a submodule
of that name would replace it as an attribute of the package as soon as it was imported.)
"""

from __future__ import annotations

import contextlib
import html
import re
import traceback
import warnings
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, cast

from graphlab.language import gettext as _
from graphlab.support.shorten import shorten

from .catalogue import CATALOGUE, Failure

__all__ = ["Explanation", "explain", "explained"]

# Longest excerpt of the original message kept in "what you saw"; PyTorch appends long
# debugging advice and stack traces to CUDA errors.
_SEEN_CHARS = 400
# Characters of each message matched against the catalogue. Some patterns hold ".*", which Python's
# re matches in time growing with the square of the text; the messages graphlab explains state
# their cause near the start (and a crashed child's stderr is kept to its last 8000 characters).
_MATCHED_CHARS = 8000
_NOTE_PREFIX = "graphlab explains: "


@dataclass(frozen=True)
class Explanation:
    """What went wrong, in the learner's terms.

    ``key`` names the catalogue entry (``"unknown"`` when none matched); ``seen`` is the message
    the learner saw, shortened; ``lesson`` is the notebook that covers it ("" when none does).
    """

    key: str
    title: str
    seen: str
    cause: str
    fix: str
    lesson: str

    @property
    def matched(self) -> bool:
        """True when the failure was recognised from the catalogue."""
        return self.key != "unknown"

    def __str__(self) -> str:
        return "\n".join([self.title, *(f"  {name}: {text}" for name, text in self._rows())])

    def _rows(self) -> list[tuple[str, str]]:
        """The explanation's labelled lines, labels in the learner's language."""
        rows = [(_("What you saw"), self.seen), (_("Cause"), self.cause), (_("Fix"), self.fix)]
        if self.lesson:
            rows.append((_("Lesson"), self.lesson))
        return rows

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))  # IPython in a terminal: the readable text, not the dataclass

    def _repr_html_(self) -> str:
        # Every field may carry text from the error message, so every field is escaped.
        body = "".join(
            f"<dt style='font-weight:bold'>{html.escape(name)}</dt>"
            f"<dd style='margin:0 0 0.4em 1em'>{html.escape(text)}</dd>"
            for name, text in self._rows()
        )
        return (
            "<div class='graphlab-explanation' style='border-left:4px solid #c0392b;"
            "padding:0.4em 0.8em'>"
            f"<div style='font-weight:bold'>{html.escape(self.title)}</div>"
            f"<dl style='margin:0.4em 0 0 0'>{body}</dl></div>"
        )


def explain(failure: BaseException | warnings.WarningMessage | Warning | str) -> Explanation:
    """Explain an exception, a warning, or the text of an error or log line.

    Never raises, whatever it is given (bytes are read as UTF-8 text; any other object by its
    ``str``): a failure the catalogue does not know gets an explanation with ``key "unknown"`` and
    general advice. Code of the failure's own that raises while it is read (a ``__str__``, a
    ``__cause__`` property, even one raising SystemExit) is treated as saying nothing; only a
    KeyboardInterrupt, the learner stopping the cell, goes through.
    """
    try:
        return _explain(failure)
    except KeyboardInterrupt:
        raise
    except BaseException:  # the promise is to never raise, SystemExit included
        # Each read of the failure's own code is guarded below; this keeps the promise should a
        # kind of object none of them foresaw raise elsewhere.
        return _unknown("<a failure that raised while graphlab read it>")


def _explain(failure: object) -> Explanation:
    if issubclass(type(failure), BaseException):
        attached = _attribute(failure, "explanation")
        if type(attached) is Explanation:  # an IsolatedFailure carries its child's
            return attached
    chain = _chain(failure)
    for entry in CATALOGUE:
        # Earliest error first: a follow-on error (a capture invalidated by an earlier one) often
        # quotes its cause, and what the learner should see is the cause's own words.
        for text, source in reversed(chain):
            if _matches(entry, text, source):
                return _explanation(entry, text)
    return _unknown(chain[0][0])


def _unknown(text: str) -> Explanation:
    """The explanation of a failure the catalogue does not know."""
    return Explanation(
        key="unknown",
        title=_("graphlab does not recognise this error"),
        seen=_shorten(text),
        cause=_(
            "This message is not in graphlab's catalogue of CUDA Graph failures, so it may have "
            "nothing to do with graphs."
        ),
        fix=_(
            "Run the same code eagerly, without capturing it: if it fails there too, fix that "
            "first. If it only fails inside a capture, compare it with graphlab.failures.catalogue."
        ),
        lesson="",
    )


class explained(contextlib.ContextDecorator):
    """Attach graphlab's explanation to any recognised exception leaving the block.

    Use as ``with explained(): ...`` or as a ``@explained()`` decorator. The exception is re-raised
    unchanged except for a note (PEP 678) holding the explanation; unrecognised exceptions pass
    through untouched.

    It also puts back what a failed capture leaves behind
    (:func:`graphlab.failures.recovery.recover`): the
    stream that was current when the block began becomes current again (``torch.cuda.graph``, and
    the emulator, which copies it, leave their side stream current when ending the capture fails)
    and the memory pool torch keeps for the failed capture is released.
    """

    def __enter__(self) -> explained:
        # Imported here, not at the top: .recovery imports torch, which explain() does without.
        from .recovery import current_stream

        self._stream = current_stream()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        if isinstance(exc, Exception):
            from .recovery import recover

            _attach(exc)
            recover(self._stream)
        return False


def _attach(exc: Exception) -> None:
    notes = getattr(exc, "__notes__", [])
    if any(note.startswith(_NOTE_PREFIX) for note in notes):
        return  # nested helpers: explain once
    explanation = explain(exc)
    if not explanation.matched:
        return
    exc.add_note(_NOTE_PREFIX + str(explanation))


def _chain(failure: object) -> list[tuple[str, str]]:
    """(text, traceback) for the failure and each exception it was raised from or during.

    The traceback is one "file: source line" per frame.
    """
    # type(), not isinstance(): isinstance falls back to the object's own __class__, which may be
    # a property that raises.
    if issubclass(type(failure), warnings.WarningMessage):
        category = _attribute(failure, "category")
        name = _attribute(category, "__name__")
        shown = _text(name) if issubclass(type(name), str) else "Warning"
        return [(f"{shown}: {_text(_attribute(failure, 'message'))}", "")]
    if not issubclass(type(failure), BaseException):
        return [(_text(failure), "")]
    chain: list[tuple[str, str]] = []
    seen_ids: set[int] = set()
    exc = failure
    while issubclass(type(exc), BaseException) and id(exc) not in seen_ids:
        seen_ids.add(id(exc))
        text = f"{_name(type(exc))}: {_text(exc)}"
        cuda_error = _attribute(exc, "cuda_error")
        if cuda_error is not None:
            text += f" [{_text(cuda_error)}]"
        chain.append((text, _source(cast(BaseException, exc))))  # type() checked it
        cause = _attribute(exc, "__cause__")
        exc = cause if cause is not None else _attribute(exc, "__context__")
    return chain


def _text(value: object) -> str:
    """``value`` as a plain str: a str as it is, bytes decoded, anything else by its str(), and
    a placeholder when even that raises.

    A str subclass becomes a plain str (``str.__str__`` copies it without calling the subclass's
    methods), so that its own strip(), split() or __getitem__ never run here.
    """
    kind = type(value)
    if issubclass(kind, str):
        return str.__str__(value)
    try:
        if issubclass(kind, (bytes, bytearray, memoryview)):
            data = cast("bytes | bytearray | memoryview", value)  # type() checked it
            return bytes(data).decode("utf-8", errors="replace")
        text = str(value)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a __str__ that raises (SystemExit too) says nothing
        return f"<{_name(kind)} whose message cannot be shown>"
    return str.__str__(text)  # str() may return a subclass of str, with methods of its own


def _name(kind: type) -> str:
    """A class's own name, read past a metaclass that redefines ``__name__``."""
    name: str = type.__dict__["__name__"].__get__(kind)
    return name


def _attribute(value: object, name: str) -> Any:
    """``getattr(value, name, None)``, None also when the attribute's lookup raises."""
    try:
        return getattr(value, name, None)
    except KeyboardInterrupt:
        raise
    except BaseException:  # the learner's property, raising anything
        return None


def _source(exc: BaseException) -> str:
    """One "file: source line" per frame of the exception's traceback ("" if unreadable)."""
    try:
        frames = traceback.extract_tb(_attribute(exc, "__traceback__"))
        return "\n".join(f"{frame.filename}: {frame.line or ''}" for frame in frames)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a traceback that cannot be read matches nothing
        return ""


def _matches(entry: Failure, text: str, source: str) -> bool:
    text, source = text[:_MATCHED_CHARS], source[-_MATCHED_CHARS:]
    if not any(re.search(p, text, re.IGNORECASE | re.DOTALL) for p in entry.patterns):
        return False
    if not entry.only_if:
        return True
    return any(re.search(p, f"{text}\n{source}", re.IGNORECASE) for p in entry.only_if)


def _explanation(entry: Failure, text: str) -> Explanation:
    return Explanation(
        key=entry.key,
        title=_(entry.title),
        seen=_shorten(text),
        cause=_(entry.cause),
        fix=_(entry.fix),
        lesson=entry.lesson,
    )


def _shorten(text: str) -> str:
    """The first line of a message, at most _SEEN_CHARS characters (whole sentences if cut)."""
    return shorten(text.strip().split("\n")[0].strip(), _SEEN_CHARS)
