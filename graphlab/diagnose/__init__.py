"""``graphlab.diagnose``: can a model be captured in a CUDA graph, what blocks it, is it worth it.

:func:`diagnose` (also ``graphlab diagnose FILE.py:NAME`` and the ``%%graphlab_diagnose`` cell
magic) returns a :class:`Report`; :mod:`.examples` holds lesson 16's three models.
"""

from .diagnosis import diagnose
from .report import Report

__all__ = ["Report", "diagnose"]
