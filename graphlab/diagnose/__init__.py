"""``graphlab.diagnose``: can a model be captured in a CUDA graph, what blocks it, is it worth it.

:func:`~graphlab.diagnose.diagnosis.diagnose` (also ``graphlab diagnose FILE.py:NAME`` and the
``%%graphlab_diagnose`` cell magic) returns a :class:`Report`; :mod:`.examples` holds lesson 16's
three models.

The package itself is callable, ``graphlab.diagnose(fn, *inputs)``: a package and a function
cannot share the name ``graphlab.diagnose`` otherwise, because importing a submodule
(``graphlab.diagnose.examples``) sets the package as the attribute of ``graphlab``.

The names are loaded when first used, not when the package is imported: its submodule
:mod:`.words` (a report's translatable sentences) serves the workshop's progress pages and
``graphlab progress --hub`` too, which must not pay 1.5 s of CPU for importing torch.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import examples
    from .diagnosis import diagnose
    from .report import Report

__all__ = ["Report", "diagnose", "examples"]

# Public name -> the submodule that holds it.
_LAZY = {"Report": ".report", "diagnose": ".diagnosis", "examples": ".examples"}


def __getattr__(name: str) -> Any:
    if name == "__signature__":  # what inspect and Jupyter's help show for a call
        return inspect.signature(importlib.import_module(".diagnosis", __name__).diagnose)
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name], __name__)
    return module if name == "examples" else getattr(module, name)


class _Diagnosis:
    """The package's ``__call__``: :func:`graphlab.diagnose.diagnosis.diagnose` itself, its
    signature and help included, imported when the package is first called or inspected."""

    def __get__(self, package: object, owner: type | None = None) -> Any:
        from .diagnosis import diagnose

        return diagnose


class _CallablePackage(types.ModuleType):
    __call__ = _Diagnosis()


sys.modules[__name__].__class__ = _CallablePackage
