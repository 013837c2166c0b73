"""The plan of ``graphlab record``: every lesson's experiments, found among this package's modules.

A module of this package that defines ``LESSON`` (a
:class:`~graphlab.timing.experiments.experiment.Lesson`) adds its experiments to the plan; no
list elsewhere names it. The plan runs lessons in ascending ``LESSON.position``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from functools import cache

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

from .experiment import Experiment, Lesson

__all__ = ["experiments", "lesson_of", "lessons", "select"]


@cache
def lessons() -> tuple[Lesson, ...]:
    """The ``LESSON`` of every module of this package that has one, in ascending position.

    Raises GraphlabError when two lessons share a kind or a position: the plan's order and what
    :func:`lesson_of` finds would then depend on the order of files in a folder.
    """
    package = importlib.import_module(__package__)
    found = []
    for module in pkgutil.iter_modules(package.__path__):
        lesson = getattr(importlib.import_module(f"{__package__}.{module.name}"), "LESSON", None)
        if isinstance(lesson, Lesson):
            found.append(lesson)
    for what in ("kind", "position"):
        values = [getattr(lesson, what) for lesson in found]
        shared = sorted({value for value in values if values.count(value) > 1})
        if shared:
            raise GraphlabError(
                _(
                    "two experiment lessons share the {what} {shared}: give each module's "
                    "LESSON a {what} of its own"
                ).format(what=what, shared=repr(shared[0]))
            )
    return tuple(sorted(found, key=lambda lesson: lesson.position))


def lesson_of(kind: str) -> Lesson:
    """The lesson whose experiments are of ``kind``; for a kind no lesson has (an experiment made
    by hand), a lesson of the default steps."""
    for lesson in lessons():
        if lesson.kind == kind:
            return lesson
    return Lesson(kind=kind, position=0, plan=lambda quick: [])


def experiments(quick: bool = False) -> list[Experiment]:
    """The experiments ``graphlab record`` runs, in order (``quick``: a small, fast subset)."""
    return [experiment for lesson in lessons() for experiment in lesson.plan(quick)]


def select(plan: list[Experiment], names: Sequence[str]) -> list[Experiment]:
    """The experiments of ``plan`` named in ``names`` (all of them when ``names`` is empty)."""
    known = [experiment.name for experiment in plan]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise GraphlabError(
            _("no experiment named {unknown}; choose from {known}").format(
                unknown=", ".join(unknown), known=", ".join(known)
            )
        )
    return [experiment for experiment in plan if not names or experiment.name in names]
