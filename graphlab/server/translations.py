"""The extension's catalogs read on the server: the words of the trace viewer's report.

The trace viewer shows the gap report the server writes (:meth:`graphlab.trace.figures.Summary
.report`), so the server words it in the language the browser asks for, from the same catalog
the browser reads for the rest (``locale/<lang>/LC_MESSAGES/cuda_graphlab.json``, made by
``tools/extension_catalog.py``). A language without a catalog gets English.
"""

from __future__ import annotations

import gettext
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

from graphlab.course.languages import TRANSLATED
from graphlab.support.words import ENGLISH, Words, fill

__all__ = ["Catalog", "catalog_file", "words"]

LOCALE = Path(__file__).with_name("locale")
_PLURAL = re.compile(r"plural\s*=\s*([^;]+)")


def catalog_file(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / "cuda_graphlab.json"


class Catalog:
    """Words from a catalog's JSON (JupyterLab's form: metadata under ``""``, then each text's
    forms under its singular text); a text it lacks stays English."""

    def __init__(self, data: dict[str, object]) -> None:
        metadata = data[""]
        assert isinstance(metadata, dict)
        self._forms = {text: forms for text, forms in data.items() if text}
        found = _PLURAL.search(str(metadata["plural_forms"]))
        self._plural: Callable[[int], int] = gettext.c2py(found[1] if found else "n != 1")

    def gettext(self, text: str, *args: object) -> str:
        forms = self._forms.get(text)
        return fill(forms[0] if isinstance(forms, list) else text, *args)

    def ngettext(self, singular: str, plural: str, n: int, *args: object) -> str:
        forms = self._forms.get(singular)
        if not isinstance(forms, list):
            return ENGLISH.ngettext(singular, plural, n, *args)
        return fill(forms[self._plural(n)], n, *args)


@cache
def words(language: str) -> Words:
    """The report's words in ``language``: its catalog's, or English."""
    path = catalog_file(language)
    if language not in TRANSLATED or not path.is_file():
        return ENGLISH
    return Catalog(json.loads(path.read_text(encoding="utf-8")))
