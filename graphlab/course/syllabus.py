"""The course's lessons as shipped: where they are and what each one holds.

A lesson is a notebook named ``NN_topic.ipynb``. An installed wheel carries them in
``graphlab/lessons/`` (pyproject.toml maps ``notebooks/*.ipynb`` there); a source checkout or an
editable install reads them from the repository's ``notebooks/`` folder. The translated lessons
are in a folder of their language beside them (``zh_CN/``, :mod:`graphlab.course.languages`).
Nobody edits these copies: a learner works in a workspace of their own
(:mod:`graphlab.course.workspace`).

A lesson's exercises are the ids of its solution cells, the code cells whose metadata holds
``{"graphlab": {"role": "solution", "exercise": ID}}``; its title is its first heading without
the ``Lesson NN —`` prefix (``第 NN 课 —`` in a Chinese lesson). That ``graphlab`` key is defined
once, in the versioned JSON schema :data:`CELL_METADATA_SCHEMA` (``cell_metadata.schema.json``),
which this module, the JupyterLab extension and the tests all read; a cell whose ``graphlab``
metadata does not follow it is not counted as an exercise.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _
from graphlab.support.json_text import parse_json

__all__ = [
    "CELL_METADATA_SCHEMA",
    "LESSON_NAME",
    "Lesson",
    "lesson_paths",
    "lessons",
    "read_lesson",
    "shipped_folder",
    "solution_exercise",
]

#: The JSON schema of a cell's ``graphlab`` metadata (role, exercise, revealed).
CELL_METADATA_SCHEMA = Path(__file__).with_name("cell_metadata.schema.json")

#: The file name of a lesson: two digits, an underscore, a topic (backups such as
#: ``02_static_inputs.backup-20260101T000000Z.ipynb`` do not match).
LESSON_NAME = re.compile(r"^(\d\d)_\w+\.ipynb$")

_HEADING = re.compile(r"^#\s+(?:(?:Lesson\s+\d+|第\s*\d+\s*课)\s*[—–:-]\s*)?(?P<title>\S.*?)\s*$")
_PACKAGE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Lesson:
    """One lesson notebook: its file, id (the file name without ``.ipynb``), two-digit number,
    title and exercise ids in the order the notebook asks them."""

    file: str
    id: str
    number: str
    title: str
    exercises: tuple[str, ...]
    path: Path


def shipped_folder() -> Path:
    """The folder of the lessons as shipped: the wheel's ``graphlab/lessons/``, else a
    checkout's ``notebooks/``."""
    for folder in (_PACKAGE / "lessons", _PACKAGE.parent / "notebooks"):
        if folder.is_dir():
            return folder
    raise GraphlabError(
        _(
            "this installation of graphlab has no lessons ({folder} is missing): "
            "reinstall it with pip install --force-reinstall cuda-graphlab"
        ).format(folder=_PACKAGE / "lessons")
    )


@cache
def _cell_metadata_validator():
    from jsonschema import Draft7Validator

    return Draft7Validator(json.loads(CELL_METADATA_SCHEMA.read_text(encoding="utf-8")))


def solution_exercise(cell: dict) -> str | None:
    """The exercise id of a solution cell, None for any other cell (or one whose ``graphlab``
    metadata does not follow :data:`CELL_METADATA_SCHEMA`)."""
    meta = cell.get("metadata")
    meta = meta.get("graphlab") if isinstance(meta, dict) else None
    if meta is None or not _cell_metadata_validator().is_valid(meta):
        return None
    return meta["exercise"] if meta["role"] == "solution" else None


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def read_lesson(path: str | Path) -> Lesson:
    """The lesson in the notebook at ``path``.

    A notebook that cannot be read as JSON (nested too deeply included) is refused with a
    :class:`GraphlabError`; cells that are not what nbformat writes are skipped, so a damaged
    cell costs its exercise, not the lesson.
    """
    path = Path(path)
    match = LESSON_NAME.match(path.name)
    if not match:
        raise GraphlabError(
            _("{path} is not named like a lesson: NN_topic.ipynb").format(path=path.name)
        )
    advice = "reset the lesson, or move the file away"
    try:
        notebook = parse_json(path.read_bytes(), f"the lesson {path}", GraphlabError, advice)
    except OSError as exc:
        raise GraphlabError(
            _("cannot read the lesson {path}: {exc}").format(path=path, exc=exc)
        ) from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    cells = [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []
    title = path.stem[3:].replace("_", " ").capitalize()
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            heading = next(filter(None, map(_HEADING.match, _source(cell).splitlines())), None)
            if heading:
                title = heading["title"]
                break
    exercises: dict[str, None] = {}  # ordered, without repeats
    for cell in cells:
        exercise = solution_exercise(cell)
        if exercise:
            exercises.setdefault(exercise)
    return Lesson(
        file=path.name,
        id=path.stem,
        number=match.group(1),
        title=title,
        exercises=tuple(exercises),
        path=path,
    )


def lesson_paths(folder: str | Path | None = None) -> list[Path]:
    """The lesson notebooks in ``folder`` (default: the shipped ones), ordered by number, found
    by name alone.

    Enough for copying the course (``graphlab lab``): reading the lessons, as :func:`lessons`
    does, checks their cells' metadata against the schema with jsonschema, whose import alone
    takes a second or more of the time before JupyterLab starts.
    """
    folder = Path(folder) if folder is not None else shipped_folder()
    return sorted(p for p in folder.iterdir() if LESSON_NAME.match(p.name) and p.is_file())


def lessons(folder: str | Path | None = None) -> list[Lesson]:
    """The lessons in ``folder`` (default: the shipped ones), ordered by number."""
    return [read_lesson(p) for p in lesson_paths(folder)]
