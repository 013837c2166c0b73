"""The lessons the course sidebar lists, with the learner's progress on each.

A lesson is a notebook named ``NN_topic.ipynb`` at the top of the course folder: the server's
root (a learner workspace made by ``graphlab lab``) or, when the root holds none, its
``notebooks/`` folder (a repository checkout, as on Binder). Its exercises are the ids of its
solution cells (cell metadata ``{"graphlab": {"role": "solution", "exercise": ID}}``); its
title is its first heading without the "Lesson NN —" prefix.

Progress comes from the progress store the kernel writes (:mod:`graphlab.course.progress`):
``load()`` returns ``{lesson id: {exercise id: {"passed": bool, ...}}}``, the lesson id being
the notebook's name without ``.ipynb``. Only exercises the notebook still has are counted, so
a renamed exercise cannot make a lesson read 4/3.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Lesson", "course_folder", "lessons_reply", "progress_store", "read_lesson"]

LESSON_FILE = re.compile(r"^(\d\d)_\w+\.ipynb$")
_HEADING = re.compile(r"^#\s+(?:Lesson\s+\d+\s*[—–:-]\s*)?(?P<title>.+?)\s*$")


@dataclass(frozen=True)
class Lesson:
    """One lesson notebook: where it is, its number, title and exercise ids (in order)."""

    path: str  # relative to the server's root, with forward slashes
    id: str
    number: str
    title: str
    exercises: tuple[str, ...]


def progress_store():
    """The kernel side's progress store module (imported when first needed)."""
    return importlib.import_module("graphlab.course.progress")


def course_folder(root: Path) -> Path:
    """The folder whose ``NN_*.ipynb`` notebooks are the lessons (see the module docstring)."""
    for folder in (root, root / "notebooks"):
        if folder.is_dir() and any(LESSON_FILE.match(p.name) for p in folder.iterdir()):
            return folder
    return root


def read_lesson(path: Path, root: Path) -> Lesson:
    """The lesson in the notebook at ``path``; a notebook that is not valid JSON reads as a
    lesson with no exercises and its file name as title (the sidebar still opens it)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        cells = []
    title = path.stem[3:].replace("_", " ").capitalize()
    exercises: dict[str, None] = {}  # ordered and without repeats
    found_title = False
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "markdown" and not found_title:
            heading = next((m for m in map(_HEADING.match, text.splitlines()) if m), None)
            if heading:
                title, found_title = heading["title"], True
        meta = cell.get("metadata", {}).get("graphlab", {})
        if isinstance(meta, dict) and meta.get("role") == "solution" and meta.get("exercise"):
            exercises.setdefault(str(meta["exercise"]))
    return Lesson(
        path=path.relative_to(root).as_posix(),
        id=path.stem,
        number=path.name[:2],
        title=title,
        exercises=tuple(exercises),
    )


def lessons_reply(root: Path, progress: dict[str, Any]) -> dict[str, Any]:
    """The JSON answer of ``GET /graphlab/lessons`` for the server root ``root``."""
    folder = course_folder(root)
    lessons = [
        read_lesson(p, root)
        for p in sorted(folder.iterdir())
        if LESSON_FILE.match(p.name) and p.is_file()
    ]
    out, done, total = [], 0, 0
    for lesson in lessons:
        results = progress.get(lesson.id, {})
        results = results if isinstance(results, dict) else {}
        passed = [
            e
            for e in lesson.exercises
            if isinstance(results.get(e), dict) and results[e].get("passed") is True
        ]
        done += len(passed)
        total += len(lesson.exercises)
        out.append(
            {
                "path": lesson.path,
                "id": lesson.id,
                "number": lesson.number,
                "title": lesson.title,
                "exercises": list(lesson.exercises),
                "passed": passed,
            }
        )
    return {
        "folder": folder.relative_to(root).as_posix() if folder != root else "",
        "lessons": out,
        "done": done,
        "total": total,
    }
