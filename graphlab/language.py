"""Which language graphlab speaks to the learner, and its translations of what it says.

graphlab's messages are written in English, each marked for translation where it is written
(``_("not right yet")``). A translation is a gettext catalog,
``graphlab/locale/<language>/LC_MESSAGES/graphlab.po``, compiled to ``graphlab.mo`` beside it by
``tools/message_catalog.py``; Python's own :mod:`gettext` reads the compiled file.

The language is ``GRAPHLAB_LANG`` when it is set (``zh_CN`` or ``en``), otherwise the locale's,
found the way Python's gettext finds it: the first of ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``
and ``LANG`` that is set decides (it may list choices, separated by colons). Simplified Chinese
is ``zh_CN``, and also ``zh``, ``zh_SG`` and ``zh_Hans``; every other locale gets English, the
language every message exists in. The language is read again for each message, so
``%env GRAPHLAB_LANG=zh_CN`` in a notebook takes effect at the next check, without restarting
the kernel. A server that answers each request in the language the request asks for says its
messages inside :func:`speaking`, which overrides both for the thread or task it runs in.

This module is graphlab's bottom layer: every other part may import it, and it imports nothing of
graphlab's.
"""

from __future__ import annotations

import gettext as _gettext
import os
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path

__all__ = [
    "DOMAIN",
    "ENV",
    "LANGUAGES",
    "LOCALE_DIR",
    "N_",
    "gettext",
    "language",
    "ngettext",
    "speaking",
]

ENV = "GRAPHLAB_LANG"
#: The languages graphlab speaks: English, in which every message is written, and its catalogs'.
LANGUAGES = ("en", "zh_CN")
DOMAIN = "graphlab"
LOCALE_DIR = Path(__file__).with_name("locale")

_LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
# The language a block of code says its messages in (speaking()); None outside such a block. A
# context variable: each thread, and each asyncio task, has its own.
_SPOKEN: ContextVar[str | None] = ContextVar("graphlab_spoken", default=None)
# A locale name: language, then an optional script or territory, then encoding and modifier.
_LOCALE = re.compile(r"^(?P<language>[A-Za-z]{2,3})(?:[_-](?P<region>[A-Za-z]{2,4}))?")
_SIMPLIFIED = {None, "CN", "SG", "HANS"}


def _from_locale(name: str) -> str | None:
    """The language graphlab speaks for a locale name (``zh_CN.UTF-8``), None for none of its."""
    match = _LOCALE.match(name.strip())
    if match is None:
        return None
    lang, region = match["language"].lower(), match["region"]
    if lang == "zh" and (region.upper() if region else None) in _SIMPLIFIED:
        return "zh_CN"
    return "en" if lang == "en" else None


@cache
def _warn_unknown(value: str) -> None:
    warnings.warn(
        f"{ENV}={value!r} is not a language graphlab speaks; set it to one of "
        f"{', '.join(LANGUAGES)} (graphlab speaks English meanwhile)",
        stacklevel=3,
    )


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Say every message in ``lang`` inside the ``with`` block (English for a language graphlab
    does not speak), whatever ``GRAPHLAB_LANG`` and the locale say, in this thread or task only."""
    token = _SPOKEN.set(lang if lang in LANGUAGES else "en")
    try:
        yield
    finally:
        _SPOKEN.reset(token)


def language() -> str:
    """The language of graphlab's messages now: one of :data:`LANGUAGES`."""
    spoken = _SPOKEN.get()
    if spoken is not None:
        return spoken
    chosen = os.environ.get(ENV, "").strip()
    if chosen:
        found = _from_locale(chosen)
        if found is None:
            _warn_unknown(chosen)
            return "en"
        return found
    for variable in _LOCALE_VARIABLES:
        value = os.environ.get(variable, "")
        if value:  # the first one set decides, as in Python's gettext; it may list choices
            for name in value.split(":"):
                found = _from_locale(name)
                if found is not None:
                    return found
            return "en"
    return "en"


@cache
def _translations(lang: str) -> _gettext.NullTranslations:
    if lang == "en":
        return _gettext.NullTranslations()
    return _gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


def gettext(message: str) -> str:
    """``message`` in the current :func:`language` (itself when it has no translation)."""
    return _translations(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of ``singular``/``plural`` for ``n``, in the current :func:`language`."""
    return _translations(language()).ngettext(singular, plural, n)


def N_(message: str) -> str:
    """``message`` itself: marks text that is defined once, at import, for the catalogue, and is
    translated with :func:`gettext` where it is shown, in the language of that moment."""
    return message
