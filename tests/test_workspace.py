"""graphlab.course.workspace and lessons: the learner's own copy of the course.

Most tests ship a small course of their own (two lessons written by ``write_lesson``) so that
adding, changing and deleting lessons can be tried; the last ones read the real lessons and build
a real wheel to check that a plain install carries them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from lesson_notebooks import ship_two_lessons, write_lesson

from graphlab.course import workspace
from graphlab.course.lessons import Lesson, lessons, read_lesson, shipped_folder
from graphlab.course.workspace import WorkspaceError, ensure, reset_lesson, sync
from graphlab.errors import GraphlabError

ROOT = Path(__file__).resolve().parent.parent
COURSE = [
    ("00_start_here.ipynb", "Start here"),
    ("01_kernel_gaps.ipynb", "Kernel gaps"),
    ("02_static_inputs.ipynb", "Static inputs"),
    ("03_outputs.ipynb", "Outputs"),
    ("04_randomness.ipynb", "Randomness"),
    ("05_dynamic_shapes.ipynb", "Dynamic shapes"),
    ("06_does_it_pay.ipynb", "Does it pay?"),
    ("07_training.ipynb", "Training"),
    ("08_memory.ipynb", "Memory"),
    ("09_multi_stream.ipynb", "Multi-stream capture"),
    ("10_torch_compile.ipynb", "torch.compile's CUDA graphs"),
    ("11_full_vs_piecewise.ipynb", "Full vs piecewise graphs"),
    ("12_changing_a_graph.ipynb", "Changing a graph without recapture"),
    ("13_nccl.ipynb", "NCCL and multiple GPUs"),
    ("14_capture_sizes.ipynb", "Which sizes to capture"),
    ("16_your_own_model.ipynb", "Your own model"),
]


@pytest.fixture
def shipped(tmp_path, monkeypatch) -> Path:
    """A course of two lessons standing in for the shipped one."""
    folder = ship_two_lessons(tmp_path / "shipped", monkeypatch)
    (folder / "conftest.py").write_text("# not a lesson\n")
    (folder / "01_kernel_gaps.backup-20260101T000000Z.ipynb").write_text("{}")
    return folder


def edit(path: Path, text: str = "the learner's own line") -> bytes:
    """Change a notebook as a learner would (a new markdown cell); return its new bytes."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "markdown", "metadata": {}, "source": text})
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path.read_bytes()


# ---------------------------------------------------------------------------- lessons


def test_lessons_reads_number_title_and_exercise_ids_of_each_lesson(shipped):
    assert lessons() == [
        Lesson(
            file="00_start_here.ipynb",
            id="00_start_here",
            number="00",
            title="Start here",
            exercises=("busy_fraction",),
            path=shipped / "00_start_here.ipynb",
        ),
        Lesson(
            file="01_kernel_gaps.ipynb",
            id="01_kernel_gaps",
            number="01",
            title="Kernel gaps",
            exercises=("capture_chain", "per_replay"),
            path=shipped / "01_kernel_gaps.ipynb",
        ),
    ]


def test_a_lesson_without_heading_is_titled_by_its_file_and_a_broken_one_refused(tmp_path):
    path = tmp_path / "07_captured_training.ipynb"
    path.write_text('{"cells": [{"cell_type": "markdown", "source": ["no heading"]}, 3]}')
    assert read_lesson(path).title == "Captured training"
    assert read_lesson(path).exercises == ()
    path.write_text("{not json")
    with pytest.raises(GraphlabError, match=r"cannot read the lesson .*07_captured_training"):
        read_lesson(path)
    with pytest.raises(GraphlabError, match=r"notes.ipynb is not named like a lesson: NN_topic"):
        read_lesson(tmp_path / "notes.ipynb")


def test_the_shipped_lessons_of_a_checkout_are_its_notebooks():
    if (ROOT / "graphlab" / "lessons").is_dir():
        pytest.fail("graphlab/lessons/ exists in the source tree; it is made only in the wheel")
    assert shipped_folder() == ROOT / "notebooks"
    assert [(lesson.file, lesson.title) for lesson in lessons()] == COURSE
    assert [lesson.number for lesson in lessons()] == [file[:2] for file, _ in COURSE]


# -------------------------------------------------------------------------- workspace


def test_ensure_copies_every_lesson_the_first_time(shipped, tmp_path):
    folder = ensure(tmp_path / "course")
    assert folder == (tmp_path / "course").resolve()
    names = sorted(p.name for p in folder.iterdir())
    assert names == [".graphlab", "00_start_here.ipynb", "01_kernel_gaps.ipynb"]
    for name in names[1:]:
        assert (folder / name).read_bytes() == (shipped / name).read_bytes()


def test_ensure_never_overwrites_a_learners_edit(shipped, tmp_path):
    folder = ensure(tmp_path / "course")
    edited = edit(folder / "01_kernel_gaps.ipynb")
    assert sync(folder) == workspace.Sync(folder, added=(), updated=())
    assert (folder / "01_kernel_gaps.ipynb").read_bytes() == edited
    # Even when a new version of that lesson ships.
    edit(shipped / "01_kernel_gaps.ipynb", "a better explanation")
    assert sync(folder).updated == ()
    assert (folder / "01_kernel_gaps.ipynb").read_bytes() == edited


def test_ensure_adds_new_lessons_and_updates_the_untouched_ones(shipped, tmp_path):
    folder = ensure(tmp_path / "course")
    edited = edit(folder / "00_start_here.ipynb")
    write_lesson(shipped, "02_static_inputs.ipynb", "Static inputs", ["step"])
    edit(shipped / "00_start_here.ipynb", "new in this version")
    new_01 = edit(shipped / "01_kernel_gaps.ipynb", "new in this version")
    assert sync(folder) == workspace.Sync(
        folder, added=("02_static_inputs.ipynb",), updated=("01_kernel_gaps.ipynb",)
    )
    assert (folder / "00_start_here.ipynb").read_bytes() == edited
    assert (folder / "01_kernel_gaps.ipynb").read_bytes() == new_01
    assert (folder / "02_static_inputs.ipynb").read_bytes() == (
        shipped / "02_static_inputs.ipynb"
    ).read_bytes()
    assert sync(folder) == workspace.Sync(folder, added=(), updated=())


def test_a_deleted_lesson_stays_deleted_and_a_learners_file_is_never_replaced(shipped, tmp_path):
    folder = ensure(tmp_path / "course")
    (folder / "00_start_here.ipynb").unlink()
    assert sync(folder) == workspace.Sync(folder, added=(), updated=())
    assert not (folder / "00_start_here.ipynb").exists()
    # A folder that already holds a file of that name, which graphlab did not write.
    other = tmp_path / "other"
    other.mkdir()
    (other / "01_kernel_gaps.ipynb").write_text("mine")
    assert sync(other).added == ("00_start_here.ipynb",)
    assert (other / "01_kernel_gaps.ipynb").read_text() == "mine"


def test_a_workspace_that_is_a_file_is_refused_in_one_line(shipped, tmp_path):
    (tmp_path / "course").write_text("")
    with pytest.raises(WorkspaceError, match=r"course is a file: choose a folder") as error:
        ensure(tmp_path / "course")
    assert "\n" not in str(error.value)


class _Clock:
    """Stands in for datetime in the workspace module: now() is always the same instant."""

    @staticmethod
    def now(tz):
        return datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz)


def test_reset_lesson_restores_the_original_and_keeps_the_learners_copy(
    shipped, tmp_path, monkeypatch
):
    monkeypatch.setattr(workspace, "datetime", _Clock)
    folder = ensure(tmp_path / "course")
    lesson = folder / "01_kernel_gaps.ipynb"
    first = edit(lesson, "first try")
    backup = reset_lesson(folder, "01_kernel_gaps.ipynb")
    assert backup == folder / "01_kernel_gaps.backup-20260102T030405Z.ipynb"
    assert backup.read_bytes() == first
    assert lesson.read_bytes() == (shipped / "01_kernel_gaps.ipynb").read_bytes()
    # Within the same second, by its absolute path (as the server passes it).
    second = edit(lesson, "second try")
    backup = reset_lesson(folder, lesson)
    assert backup == folder / "01_kernel_gaps.backup-20260102T030405Z-2.ipynb"
    assert backup.read_bytes() == second
    # The restored lesson counts as untouched: the next version of the course updates it.
    edit(shipped / "01_kernel_gaps.ipynb", "new in this version")
    assert sync(folder).updated == ("01_kernel_gaps.ipynb",)
    # Backups are not lessons.
    assert [lesson.file for lesson in lessons(folder)] == [
        "00_start_here.ipynb",
        "01_kernel_gaps.ipynb",
    ]


def test_reset_lesson_writes_a_deleted_lesson_afresh(shipped, tmp_path):
    folder = ensure(tmp_path / "course")
    (folder / "00_start_here.ipynb").unlink()
    assert reset_lesson(folder, "00_start_here.ipynb") is None
    assert (folder / "00_start_here.ipynb").read_bytes() == (
        shipped / "00_start_here.ipynb"
    ).read_bytes()


def test_reset_lesson_refuses_what_is_not_a_lesson_of_this_workspace(shipped, tmp_path):
    folder = ensure(tmp_path / "course")
    (folder / "notes.ipynb").write_text("{}")
    with pytest.raises(WorkspaceError, match=r"notes.ipynb is not one of the course's lessons"):
        reset_lesson(folder, "notes.ipynb")
    with pytest.raises(WorkspaceError, match=r"is not inside the course workspace"):
        reset_lesson(folder, tmp_path / "00_start_here.ipynb")
    with pytest.raises(WorkspaceError, match=r"is not inside the course workspace"):
        reset_lesson(folder, "../shipped/00_start_here.ipynb")
    with pytest.raises(WorkspaceError, match=r"the course's own copy of the lesson"):
        reset_lesson(shipped, "00_start_here.ipynb")
    assert (folder / "notes.ipynb").read_text() == "{}"


# ------------------------------------------------------------------------------ wheel


def test_a_plain_wheel_install_carries_the_lessons(tmp_path):
    """Build the real wheel, unpack it as pip would install it, and open a workspace from it."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("cuda_graphlab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "site")
    shipped = sorted(n for n in names if n.startswith("graphlab/lessons/"))
    assert shipped == [f"graphlab/lessons/{name}" for name, _ in COURSE]
    assert not [n for n in names if n.startswith("notebooks/") or n.endswith("conftest.py")]
    for name, _ in COURSE:
        packed = (tmp_path / "site" / "graphlab" / "lessons" / name).read_bytes()
        assert packed == (ROOT / "notebooks" / name).read_bytes()
    script = (
        "from graphlab.course import lessons, workspace\n"
        "print(lessons.shipped_folder())\n"
        "print(*sorted(p.name for p in workspace.ensure('ws').glob('*.ipynb')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    shown = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert shown == [
        str(tmp_path / "site" / "graphlab" / "lessons"),
        " ".join(name for name, _ in COURSE),
    ]
