"""Small lesson notebooks for tests: a title, and per exercise a stub, a solution cell in the
course's format and a check."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def solution_cell(exercise: str, body: str = "answer = 42") -> nbformat.NotebookNode:
    """A solution cell exactly as the lessons write it."""
    return new_code_cell(
        f"%%solution {exercise}\n{body}",
        metadata={
            "graphlab": {"role": "solution", "exercise": exercise},
            "jupyter": {"source_hidden": True},
            "tags": ["solution"],
        },
    )


def write_lesson(folder: Path, name: str, title: str, exercises: list[str], note: str = "") -> Path:
    """Write ``folder/name``: lesson ``name[:2]`` called ``title`` with ``exercises``."""
    cells = [new_markdown_cell(f"# Lesson {name[:2]} — {title}\n\n{note}"), new_code_cell("x = 1")]
    for exercise in exercises:
        cells += [
            new_code_cell("def f():\n    raise NotImplementedError"),
            solution_cell(exercise),
            new_code_cell("check(f)"),
        ]
    path = folder / name
    nbformat.write(new_notebook(cells=cells), path)
    return path


def ship_two_lessons(folder: Path, monkeypatch) -> Path:
    """Make ``folder`` hold a course of two lessons and graphlab take it for the shipped one."""
    from graphlab.course import syllabus

    folder.mkdir()
    write_lesson(folder, "00_start_here.ipynb", "Start here", ["busy_fraction"])
    write_lesson(folder, "01_kernel_gaps.ipynb", "Kernel gaps", ["capture_chain", "per_replay"])
    monkeypatch.setattr(syllabus, "shipped_folder", lambda: folder)
    return folder
