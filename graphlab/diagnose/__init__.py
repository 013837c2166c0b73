"""``graphlab.diagnose``: can a model be captured in a CUDA graph, what blocks it, is it worth it.

:func:`~graphlab.diagnose.diagnosis.diagnose` (also ``graphlab diagnose FILE.py:NAME`` and the
``%%graphlab_diagnose`` cell magic) returns a :class:`Report`; :mod:`.examples` holds lesson 16's
three models.

The package itself is callable, ``graphlab.diagnose(fn, *inputs)``: a package and a function
cannot share the name ``graphlab.diagnose`` otherwise, because importing a submodule
(``graphlab.diagnose.examples``) sets the package as the attribute of ``graphlab``.
"""

import sys
import types
from typing import Any

from . import examples
from .diagnosis import diagnose
from .report import Report

__all__ = ["Report", "diagnose", "examples"]


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Report:
        return diagnose(*args, **kwargs)

    __call__.__doc__ = diagnose.__doc__


sys.modules[__name__].__class__ = _CallablePackage
