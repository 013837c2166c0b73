"""graphlab.course.workspace and lessons: the learner's own copy of the course.

Most tests ship a small course of their own (two lessons written by ``write_lesson``) so that
adding, changing and deleting lessons can be tried; the last ones read the real lessons and build
a real wheel to check that a plain install carries them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from lesson_notebooks import ship_chinese_lessons, ship_two_lessons, write_lesson

from graphlab.cli import lab, main
from graphlab.course import workspace
from graphlab.course.syllabus import Lesson, lesson_paths, lessons, read_lesson, shipped_folder
from graphlab.course.workspace import WorkspaceError, ensure, reset_lesson, sync
from graphlab.errors import GraphlabError
from graphlab.support import backups

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
    ("15_debugging_capture.ipynb", "Debugging a capture error"),
    ("16_your_own_model.ipynb", "Your own model"),
]


@pytest.fixture
def shipped(tmp_path, monkeypatch) -> Path:
    """A course of two lessons standing in for the shipped one (``graphlab lab`` starts no
    JupyterLab here)."""
    monkeypatch.setattr(lab.subprocess, "call", lambda command, env: 0)
    folder = ship_two_lessons(tmp_path / "shipped", monkeypatch)
    (folder / "conftest.py").write_text("# not a lesson\n")
    (folder / "01_kernel_gaps.backup-20260101T000000Z.ipynb").write_text("{}")
    return folder


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


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
    with pytest.raises(GraphlabError, match=r"lesson .*07_captured_training.ipynb is not valid"):
        read_lesson(path)
    with pytest.raises(GraphlabError, match=r"notes.ipynb is not named like a lesson: NN_topic"):
        read_lesson(tmp_path / "notes.ipynb")


def test_the_shipped_lessons_of_a_checkout_are_its_notebooks():
    if (ROOT / "graphlab" / "lessons").is_dir():
        pytest.fail("graphlab/lessons/ exists in the source tree; it is made only in the wheel")
    assert shipped_folder() == ROOT / "notebooks"
    assert [(lesson.file, lesson.title) for lesson in lessons()] == COURSE
    assert [lesson.number for lesson in lessons()] == [file[:2] for file, _ in COURSE]


def test_lesson_paths_finds_the_lessons_by_name_without_reading_them(shipped):
    (shipped / "02_static_inputs.ipynb").write_text("{not json")
    (shipped / "03_outputs.ipynb").mkdir()  # a folder is not a lesson
    assert lesson_paths() == [
        shipped / "00_start_here.ipynb",
        shipped / "01_kernel_gaps.ipynb",
        shipped / "02_static_inputs.ipynb",
    ]


def test_copying_the_course_does_not_import_jsonschema(tmp_path):
    # Checking the cells' metadata needs jsonschema, a second or more to import: graphlab lab
    # copies the lessons before JupyterLab starts, and needs only their names.
    code = (
        "import sys; from graphlab.course.workspace import sync; "
        f"print(len(sync({str(tmp_path / 'course')!r}).added), 'jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(len(COURSE)), "False"]


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
    """Stands in for datetime where backups are named: now() is always the same instant."""

    @staticmethod
    def now(tz):
        return datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz)


def test_reset_lesson_restores_the_original_and_keeps_the_learners_copy(
    shipped, tmp_path, monkeypatch
):
    monkeypatch.setattr(backups, "datetime", _Clock)
    folder = ensure(tmp_path / "course")
    lesson = folder / "01_kernel_gaps.ipynb"
    first = edit(lesson, "first try")
    backup = reset_lesson(folder, "01_kernel_gaps.ipynb").backup
    assert backup == folder / "01_kernel_gaps.backup-20260102T030405Z.ipynb"
    assert backup.read_bytes() == first
    assert lesson.read_bytes() == (shipped / "01_kernel_gaps.ipynb").read_bytes()
    # Within the same second, by its absolute path (as the server passes it).
    second = edit(lesson, "second try")
    backup = reset_lesson(folder, lesson).backup
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
    assert reset_lesson(folder, "00_start_here.ipynb") == workspace.LessonReset(None)
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


# ------------------------------------------------------------------------ Chinese lessons


def test_a_chinese_lesson_is_titled_by_its_chinese_heading(shipped):
    folder = ship_chinese_lessons(shipped)
    assert [(x.number, x.title, x.exercises) for x in lessons(folder)] == [
        ("00", "从这里开始", ("busy_fraction",)),
        ("01", "内核空隙", ("capture_chain", "per_replay")),
    ]


def test_sync_adds_the_chinese_lessons_beside_the_english_ones_when_asked(shipped, tmp_path):
    chinese = ship_chinese_lessons(shipped)
    folder = ensure(tmp_path / "course")
    assert not (folder / "zh_CN").exists()
    done = sync(folder, ("zh_CN",))
    assert done == workspace.Sync(
        folder, added=("zh_CN/00_start_here.ipynb", "zh_CN/01_kernel_gaps.ipynb"), updated=()
    )
    for name in ("00_start_here.ipynb", "01_kernel_gaps.ipynb"):
        assert (folder / "zh_CN" / name).read_bytes() == (chinese / name).read_bytes()
    # Kept as the English ones are: an edit stays, an untouched lesson follows the course.
    edited = edit(folder / "zh_CN" / "00_start_here.ipynb")
    edit(chinese / "00_start_here.ipynb", "新版本")
    new_01 = edit(chinese / "01_kernel_gaps.ipynb", "新版本")
    assert sync(folder).updated == ()  # English only: the Chinese lessons are not looked at
    assert sync(folder, ("zh_CN",)).updated == ("zh_CN/01_kernel_gaps.ipynb",)
    assert (folder / "zh_CN" / "00_start_here.ipynb").read_bytes() == edited
    assert (folder / "zh_CN" / "01_kernel_gaps.ipynb").read_bytes() == new_01


def test_sync_asked_for_chinese_lessons_that_are_not_shipped_copies_the_english_only(
    shipped, tmp_path
):
    folder = tmp_path / "course"
    assert sync(folder, ("zh_CN",)).added == ("00_start_here.ipynb", "01_kernel_gaps.ipynb")
    assert not (folder / "zh_CN").exists()


def test_reset_of_a_chinese_lesson_restores_the_chinese_one(shipped, tmp_path, monkeypatch):
    monkeypatch.setattr(backups, "datetime", _Clock)
    chinese = ship_chinese_lessons(shipped)
    folder = sync(tmp_path / "course", ("zh_CN",)).folder
    lesson = folder / "zh_CN" / "01_kernel_gaps.ipynb"
    mine = edit(lesson, "我的答案")
    done = reset_lesson(workspace.course_root(lesson), lesson)
    assert done == workspace.LessonReset(
        folder / "zh_CN" / "01_kernel_gaps.backup-20260102T030405Z.ipynb"
    )
    assert done.backup.read_bytes() == mine
    assert lesson.read_bytes() == (chinese / "01_kernel_gaps.ipynb").read_bytes()
    # Recorded under its path in the workspace: untouched again, so a new version updates it.
    edit(chinese / "01_kernel_gaps.ipynb", "新版本")
    assert sync(folder, ("zh_CN",)).updated == ("zh_CN/01_kernel_gaps.ipynb",)
    assert workspace.course_root(folder / "01_kernel_gaps.ipynb") == folder


# ------------------------------------------------------------------------------ wheel


def source_tree(target: Path) -> Path:
    """A copy of what the wheel is built from, with Chinese lessons in ``notebooks/zh_CN/``
    (lesson 00 with a Chinese heading, unless the checkout has them already) and a file there
    that is not a lesson."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    for name in ("graphlab", "notebooks"):
        shutil.copytree(ROOT / name, target / name, ignore=ignore)
    chinese = target / "notebooks" / "zh_CN"
    if not chinese.is_dir():
        chinese.mkdir()
        text = (ROOT / "notebooks" / "00_start_here.ipynb").read_text(encoding="utf-8")
        (chinese / "00_start_here.ipynb").write_text(
            text.replace("# Lesson 00 — Start here", "# 第 00 课 — 从这里开始", 1), encoding="utf-8"
        )
    (chinese / "notes.txt").write_text("not a lesson")
    return target


def test_a_plain_wheel_install_carries_the_lessons(tmp_path):
    """Build the wheel, unpack it as pip would install it, and open a workspace from it."""
    source = source_tree(tmp_path / "source")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("cuda_graphlab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "site")
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entry_points = archive.read(entry_points).decode()
    shipped = sorted(n for n in names if n.startswith("graphlab/lessons/"))
    chinese = sorted(p.name for p in (source / "notebooks" / "zh_CN").glob("*.ipynb"))
    assert shipped == [f"graphlab/lessons/{name}" for name, _ in COURSE] + [
        f"graphlab/lessons/zh_CN/{name}" for name in chinese
    ]
    assert not [n for n in names if n.startswith("notebooks/") or n.endswith("conftest.py")]
    for name, _ in COURSE:
        packed = (tmp_path / "site" / "graphlab" / "lessons" / name).read_bytes()
        assert packed == (ROOT / "notebooks" / name).read_bytes()
    # The extension's translations ship in the package, where the entry point sends JupyterLab.
    assert "graphlab/server/locale/zh_CN/LC_MESSAGES/cuda_graphlab.json" in names
    assert "[jupyterlab.locale]\ncuda_graphlab = graphlab.server\n" in entry_points
    script = (
        "from graphlab.course import syllabus, workspace\n"
        "print(syllabus.shipped_folder())\n"
        "folder = workspace.sync('ws', ('zh_CN',)).folder\n"
        "print(*sorted(p.name for p in folder.glob('*.ipynb')))\n"
        "print(*sorted(p.name for p in folder.glob('zh_CN/*')))\n"
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
        " ".join(chinese),
    ]


# ------------------------------------------------------------- kills, damage and odd paths

# Resets 01_kernel_gaps.ipynb in the workspace argv[2], the shipped course being argv[1], and
# dies at once (os._exit: no cleanup runs, as under SIGKILL) just before the argv[3]-th change
# it makes to the file system. argv[4] == "nolinks" stands for a file system without hard links.
# An open for reading changes nothing (dying there leaves what dying at the next change does), so
# it is not counted: the modules the reset imports on its way open hundreds of files, and a run
# per such open would only repeat the state before the next change.
KILLED_RESET = """
import os, sys
from pathlib import Path
from graphlab.course import syllabus, workspace
from graphlab.support import atomic
syllabus.shipped_folder = lambda: Path(sys.argv[1])
if sys.argv[4] == "nolinks":
    def no_links(*args, **kwargs):
        raise OSError(1, "Operation not permitted")
    os.link = no_links
CHANGES = {"open", "os.link", "os.rename", "os.remove", "os.chmod", "os.mkdir", "os.truncate"}
WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
left = int(sys.argv[3])
def die_at_the_chosen_change(event, args):
    global left
    if event == "open" and not args[2] & WRITES:
        return
    if event in CHANGES:
        if left == 0:
            os._exit(9)
        left -= 1
sys.addaudithook(die_at_the_chosen_change)
workspace.reset_lesson(sys.argv[2], "01_kernel_gaps.ipynb")
"""


def everything_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.slow  # a fresh Python per change the reset makes
@pytest.mark.parametrize("links", ["links", "nolinks"])
def test_a_reset_killed_at_any_step_never_loses_the_lesson(shipped, tmp_path, links):
    template = ensure(tmp_path / "template")
    mine = edit(template / "01_kernel_gaps.ipynb", "my answer")
    original = (shipped / "01_kernel_gaps.ipynb").read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outcomes, step = set(), 0
    while True:
        folder = tmp_path / f"killed-at-{step}"
        shutil.copytree(template, folder)
        run = subprocess.run(
            [sys.executable, "-c", KILLED_RESET, str(shipped), str(folder), str(step), links],
            env=env,
            capture_output=True,
            text=True,
        )
        assert run.returncode in (0, 9), run.stderr
        lesson = folder / "01_kernel_gaps.ipynb"
        kept = [b for name, b in everything_in(folder).items() if ".backup-" in name]
        if links == "links":
            assert lesson.read_bytes() in (mine, original), step  # never absent, never half
        elif not lesson.exists():
            # Killed between renaming the learner's copy and writing the shipped one: sync ends
            # the reset that was asked for.
            assert kept == [mine], step
            assert sync(folder).restored == ("01_kernel_gaps.ipynb",)
            assert lesson.read_bytes() == original
            outcomes.add("restored by sync")
        assert mine in [lesson.read_bytes(), *kept], step  # the learner's answer is kept
        outcomes.add("reset" if lesson.read_bytes() == original else "not yet")
        if run.returncode == 0:
            break
        step += 1
    assert kept == [mine] and lesson.read_bytes() == original
    assert step >= 3  # it was killed at every change it makes, and there are several
    expected = {"reset", "not yet"} | ({"restored by sync"} if links == "nolinks" else set())
    assert outcomes == expected


def test_sync_finishes_a_reset_left_without_the_lesson_once(shipped, tmp_path, capsys):
    folder = ensure(tmp_path / "course")
    lesson = folder / "01_kernel_gaps.ipynb"
    mine = edit(lesson, "my answer")
    # What a reset killed between its two steps left before: the copy renamed, nothing written.
    backup = folder / "01_kernel_gaps.backup-20261203T221500Z.ipynb"
    os.replace(lesson, backup)
    code, out, err = run_cli(capsys, "lab", "--workspace", str(folder), "--no-browser")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "graphlab lab: restored 01_kernel_gaps.ipynb as shipped, finishing a reset that was "
        "interrupted (your copy is in the newest .backup- file beside it)"
    )
    assert lesson.read_bytes() == (shipped / "01_kernel_gaps.ipynb").read_bytes()
    assert backup.read_bytes() == mine
    # Deleted by the learner afterwards: that backup is known, so the lesson stays deleted.
    lesson.unlink()
    assert sync(folder) == workspace.Sync(folder, added=(), updated=())
    assert not lesson.exists()
    # And a lesson deleted after a finished reset stays deleted too.
    reset_lesson(folder, "00_start_here.ipynb")
    (folder / "00_start_here.ipynb").unlink()
    assert sync(folder) == workspace.Sync(folder, added=(), updated=())
    assert not (folder / "00_start_here.ipynb").exists()


def test_a_reset_whose_record_cannot_be_written_still_says_it_reset(shipped, tmp_path):
    folder = ensure(tmp_path / "course")
    lesson = folder / "01_kernel_gaps.ipynb"
    mine = edit(lesson, "my answer")
    record = folder / ".graphlab" / "workspace.json"
    record.unlink()
    record.mkdir()  # a folder where the record goes: it cannot be written (even as root)
    done = reset_lesson(folder, lesson)
    assert lesson.read_bytes() == (shipped / "01_kernel_gaps.ipynb").read_bytes()
    assert done.backup.read_bytes() == mine
    assert done.warning.startswith(
        "01_kernel_gaps.ipynb is reset, but the workspace record could not be updated ("
    )
    assert done.warning.endswith(
        "graphlab lab will leave this lesson as it is when the course is updated"
    )
    assert "\n" not in done.warning


@pytest.mark.parametrize(
    "record",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"schema": "graphlab.workspace/1", "lessons": {"00_start_here.ipynb": '
        + "[" * 5000
        + "]" * 5000
        + "}}",
        '{"schema": "graphlab.workspace/1", "lessons": {"x": {"a": 1' + "0" * 5000 + "}}}",
    ],
    ids=["nested-100000", "nested-entry", "5001-digits"],
)
def test_a_hostile_workspace_record_counts_as_nothing_copied(shipped, tmp_path, capsys, record):
    folder = ensure(tmp_path / "course")
    edited = edit(folder / "00_start_here.ipynb")
    (folder / ".graphlab" / "workspace.json").write_text(record)
    code, out, err = run_cli(capsys, "lab", "--workspace", str(folder), "--no-browser")
    assert (code, err) == (0, "")
    assert out == f"graphlab lab: opening {folder} in JupyterLab (Ctrl-C to stop)\n"
    assert (folder / "00_start_here.ipynb").read_bytes() == edited  # taken for the learner's
    assert sync(folder) == workspace.Sync(folder, added=(), updated=())


@pytest.mark.parametrize("given", ["", "   "])
def test_an_empty_workspace_path_is_refused_in_one_line(
    shipped, tmp_path, monkeypatch, capsys, given
):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "lab", "--workspace", given)
    assert (code, out) == (2, "")
    assert err == (
        "graphlab lab: no folder given for the course workspace (the path is empty): name one "
        "with --workspace DIR, or leave the option out for ~/graphlab-course\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shipped"]  # nothing copied here
    with pytest.raises(WorkspaceError, match="no folder given"):
        ensure(given)


@pytest.mark.parametrize(
    ("given", "says"),
    [("a\x00b", "(embedded null byte)"), ("a" * 300, "(File name too long)")],
    ids=["nul", "too-long"],
)
def test_a_workspace_path_no_file_system_takes_is_one_line(shipped, tmp_path, given, says):
    with pytest.raises(WorkspaceError) as error:
        ensure(tmp_path / given)
    message = str(error.value)
    assert message.startswith("cannot create the course workspace ")
    assert message.endswith(f"{says}: choose a folder you can write with --workspace DIR")
    assert "\n" not in message and "\x00" not in message
