"""jsonschema's IRI checker, built when a schema first checks an IRI instead of at import.

Both processes that stand between ``graphlab lab`` and a lesson's first picture import jsonschema:
the JupyterLab server (through jupyter_events) and the lesson's kernel (plotly's FigureWidget
imports nbformat, which imports jsonschema). jsonschema's format checkers import
``rfc3987_syntax`` (rfc3987-syntax 1.1, installed with ``jsonschema[format-nongpl]``, which
Jupyter asks for), and that package builds about 35 Earley parsers of the RFC 3987 grammar with
lark as it is imported: 2.8 s of CPU on a 2-core machine, paid twice before the first picture,
for a format ("iri", "iri-reference") that neither Jupyter's schemas nor plotly's use.

:func:`defer` puts a stand-in for ``rfc3987_syntax`` in ``sys.modules`` before jsonschema is
imported. It has the one function jsonschema takes from it, ``is_valid_syntax``; the first call
of it, or the first use of any other name, imports the real package and hands over to it, so a
schema that does check an IRI gets the same answer, a few seconds later. Where the package is
not installed, or is already imported, nothing changes.

It is called first by every graphlab process that imports jsonschema: ``graphlab lab``'s server
(:mod:`graphlab.cli.lab_server`), the lesson's kernel (its warm-up and ``%load_ext graphlab``),
the command line before it runs a command, and the learners' servers of the workshop hub
(``deploy/graphlab_hub.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

__all__ = ["PACKAGE", "defer"]

#: The package whose import builds the parsers.
PACKAGE = "rfc3987_syntax"

# Two threads may check an IRI at once (the kernel warms up on a thread of its own): one imports.
_importing = threading.Lock()


def defer() -> bool:
    """Put the stand-in for :data:`PACKAGE` in place; ``True`` if it was put there now."""
    if PACKAGE in sys.modules:
        return False
    spec = importlib.util.find_spec(PACKAGE)  # finds the package without running it
    if spec is None:  # not installed: jsonschema goes without the IRI formats, as it would
        return False
    stand_in = ModuleType(PACKAGE, __doc__)
    stand_in.__spec__ = spec
    stand_in.__path__ = list(spec.submodule_search_locations or [])
    # inspect.getmodule, which torch's import calls, asks every module in sys.modules for it.
    stand_in.__file__ = spec.origin

    def real() -> ModuleType:
        """The real package, imported the first time it is needed."""
        with _importing:
            if sys.modules.get(PACKAGE) is stand_in:
                del sys.modules[PACKAGE]
                try:
                    importlib.import_module(PACKAGE)
                except BaseException:
                    sys.modules[PACKAGE] = stand_in
                    raise
        return sys.modules[PACKAGE]

    def is_valid_syntax(term: str, value: str) -> bool:
        """Whether ``value`` is a valid ``term`` ("iri", "iri_reference", ...) of RFC 3987."""
        return bool(real().is_valid_syntax(term, value))

    def __getattr__(name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # a probe (copy, pickle, inspect)
            raise AttributeError(name)
        return getattr(real(), name)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[PACKAGE] = stand_in
    return True
