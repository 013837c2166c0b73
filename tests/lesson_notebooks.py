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


def write_lesson(
    folder: Path, name: str, title: str, exercises: list[str], note: str = "", heading: str = ""
) -> Path:
    """Write ``folder/name``: lesson ``name[:2]`` called ``title`` with ``exercises``, headed
    ``# Lesson NN — title`` unless ``heading`` gives the line."""
    heading = heading or f"# Lesson {name[:2]} — {title}"
    cells = [new_markdown_cell(f"{heading}\n\n{note}"), new_code_cell("x = 1")]
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


def ship_chinese_lessons(shipped: Path) -> Path:
    """Add to ``ship_two_lessons``' course its Chinese lessons, in ``shipped/zh_CN``: the same
    files and exercises under Chinese headings."""
    folder = shipped / "zh_CN"
    folder.mkdir()
    write_lesson(
        folder, "00_start_here.ipynb", "", ["busy_fraction"], heading="# 第 00 课 — 从这里开始"
    )
    write_lesson(
        folder,
        "01_kernel_gaps.ipynb",
        "",
        ["capture_chain", "per_replay"],
        heading="# 第 01 课 — 内核空隙",
    )
    return folder
