"""The words of a report, in a language: what :meth:`graphlab.trace.figures.Summary.report` asks
for its sentences, and English, which it uses unless told otherwise.

The conventions are JupyterLab's translator's, since the trace viewer shows the report beside the
extension's own words and both come from one catalog (``tools/extension_catalog.py``): numbered
placeholders ``%1``, ``%2``, … and, in a text with a plural, the count as ``%1``.
:mod:`graphlab.server.translations` reads a catalog into such words.
"""

from __future__ import annotations

import re
from typing import Protocol

__all__ = ["ENGLISH", "English", "Words", "fill"]

_PLACEHOLDER = re.compile(r"%(\d+)")


def fill(text: str, *args: object) -> str:
    """``text`` with each ``%N`` replaced by the N-th of ``args``."""
    return _PLACEHOLDER.sub(lambda found: str(args[int(found[1]) - 1]), text)


class Words(Protocol):
    """A report's sentences in one language."""

    def gettext(self, text: str, *args: object) -> str:
        """``text`` in this language, its placeholders filled with ``args``."""
        ...

    def ngettext(self, singular: str, plural: str, n: int, *args: object) -> str:
        """The form for ``n`` of a text with a plural; ``%1`` is ``n``, ``args`` follow."""
        ...


class English:
    """The sentences as written."""

    def gettext(self, text: str, *args: object) -> str:
        return fill(text, *args)

    def ngettext(self, singular: str, plural: str, n: int, *args: object) -> str:
        return fill(singular if n == 1 else plural, n, *args)


ENGLISH = English()
