"""The lessons the course sidebar lists, with the learner's progress on each.

The lessons are the ``NN_topic.ipynb`` notebooks at the top of the course folder: the server's
root (a learner workspace made by ``graphlab lab``) or, when the root holds none, its
``notebooks/`` folder (a repository checkout, as on Binder). What a lesson holds is
:func:`graphlab.course.lessons.read_lesson`'s reading; the counts are
:func:`graphlab.course.progress.report`'s, the same as ``graphlab progress`` prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphlab.course.lessons import LESSON_NAME, Lesson, read_lesson
from graphlab.course.progress import report
from graphlab.errors import GraphlabError

__all__ = ["course_folder", "lessons_reply"]


def course_folder(root: Path) -> Path:
    """The folder whose ``NN_*.ipynb`` notebooks are the lessons (see the module docstring)."""
    for folder in (root, root / "notebooks"):
        if folder.is_dir() and any(LESSON_NAME.match(p.name) for p in folder.iterdir()):
            return folder
    return root


def _lesson(path: Path) -> Lesson:
    """The lesson at ``path``; a notebook that cannot be read is still listed, without
    exercises and titled by its file name, so that the learner can open it or reset it."""
    try:
        return read_lesson(path)
    except GraphlabError:
        title = path.stem[3:].replace("_", " ").capitalize()
        return Lesson(path.name, path.stem, path.name[:2], title, (), path)


def lessons_reply(root: Path, results: dict[str, Any]) -> dict[str, Any]:
    """The JSON answer of ``GET /graphlab/lessons``: :func:`report`'s rows, each with its
    ``path`` relative to the server root ``root`` (what the browser opens), and the folder."""
    folder = course_folder(root)
    course = [
        _lesson(p) for p in sorted(folder.iterdir()) if LESSON_NAME.match(p.name) and p.is_file()
    ]
    reply = report(course, results)
    for row, lesson in zip(reply["lessons"], course, strict=True):
        row["path"] = lesson.path.relative_to(root).as_posix()
    reply["folder"] = folder.relative_to(root).as_posix() if folder != root else ""
    return reply
