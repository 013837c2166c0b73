"""The cell metadata ``{"graphlab": {role, exercise, revealed}}``, defined once.

``graphlab/course/cell_metadata.schema.json`` is the definition: :mod:`graphlab.course.syllabus`
counts exercises with it, the ``%%solution`` magic takes its exercise-id pattern, and the
JupyterLab extension imports it (the build copies it next to ``solutions.ts``). These tests read
the same file and check every shipped lesson against it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from graphlab.course import solutions
from graphlab.course.syllabus import CELL_METADATA_SCHEMA, solution_exercise

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads(CELL_METADATA_SCHEMA.read_text(encoding="utf-8"))
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_the_schema_is_a_valid_versioned_draft7_schema():
    Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["version"] == 1
    assert set(SCHEMA["properties"]) == {"role", "exercise", "revealed"}


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_solution_cell_of_every_lesson_follows_the_schema(path):
    validator = Draft7Validator(SCHEMA)
    solutions = 0
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        meta = cell["metadata"].get("graphlab")
        if meta is None:
            continue
        assert not list(validator.iter_errors(meta)), (path.name, meta)
        solutions += 1
        # What goes with the metadata in a hidden solution cell.
        assert cell["cell_type"] == "code"
        assert cell["metadata"]["jupyter"] == {"source_hidden": True}
        assert "solution" in cell["metadata"]["tags"]
        assert "".join(cell["source"]).split("\n")[0] == f"%%solution {meta['exercise']}"
    assert solutions >= 1, path.name


@pytest.mark.parametrize(
    ("meta", "exercise"),
    [
        ({"role": "solution", "exercise": "copy_in"}, "copy_in"),
        ({"role": "solution", "exercise": "copy_in", "revealed": True}, "copy_in"),
        ({"role": "solution", "exercise": "copy_in", "revealed": False}, None),
        ({"role": "solution", "exercise": "copy in"}, None),
        ({"role": "solution"}, None),
        ({"role": "answer", "exercise": "copy_in"}, None),
        ({"role": "solution", "exercise": "copy_in", "hint": "x"}, None),
        ("solution", None),
    ],
)
def test_only_metadata_that_follows_the_schema_makes_an_exercise(meta, exercise):
    assert solution_exercise({"metadata": {"graphlab": meta}}) == exercise


def test_the_magic_and_the_extension_read_the_same_schema():
    assert solutions.EXERCISE_ID.pattern == SCHEMA["properties"]["exercise"]["pattern"]
    source = (ROOT / "widgets" / "src" / "solutions.ts").read_text(encoding="utf-8")
    assert "import schema from './cell_metadata.schema.json';" in source
    assert re.search(r"schema\.properties\.role\.enum\[0\]", source)
