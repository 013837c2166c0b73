"""graphlab.course.progress and ``graphlab progress``: check results kept for the learner.

Every test points GRAPHLAB_PROGRESS at a file of its own, so nobody's real progress is touched.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from lesson_notebooks import ship_two_lessons

from graphlab.cli import main
from graphlab.course import progress
from graphlab.course.progress import ENV, ProgressError, load, record, report, reset, store_path
from graphlab.course.syllabus import lessons
from graphlab.support import backups

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "data" / "progress.json"
    monkeypatch.setenv(ENV, str(path))
    # No solution has run in this "kernel" yet, whatever an earlier test did.
    monkeypatch.setattr(progress, "_solutions_run", set())
    return path


@pytest.fixture
def clock(monkeypatch) -> list[str]:
    """Record times handed out one by one, in order."""
    times = ["2026-12-02T17:40:50+00:00", "2026-12-02T17:41:00+00:00", "2026-12-02T17:42:30+00:00"]
    handed = iter(times)
    monkeypatch.setattr(progress, "_now", lambda: next(handed))
    return times


class FixedClock(datetime):
    """datetime whose now() is 2026-12-03 22:15:00 UTC, for the names of kept files."""

    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 12, 3, 22, 15, 0, tzinfo=UTC)


@pytest.fixture
def course(tmp_path, monkeypatch):
    ship_two_lessons(tmp_path / "shipped", monkeypatch)
    return lessons()


def test_the_default_store_is_in_the_jupyter_data_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))
    assert store_path() == tmp_path / "jupyter-data" / "graphlab" / "progress.json"
    monkeypatch.setenv(ENV, "~/learner-7.json")
    assert store_path() == Path.home() / "learner-7.json"


def test_each_exercise_keeps_its_latest_result(store, clock):
    assert load() == {}
    record("02_static_inputs", "replay_with_new_inputs", False)
    record("00_start_here", "busy_fraction", True)
    record("02_static_inputs", "replay_with_new_inputs", True)
    expected = {
        "00_start_here": {
            "busy_fraction": {
                "lesson": "00_start_here",
                "exercise": "busy_fraction",
                "passed": True,
                "how": "own",
                "when": "2026-12-02T17:41:00+00:00",
            }
        },
        "02_static_inputs": {
            "replay_with_new_inputs": {
                "lesson": "02_static_inputs",
                "exercise": "replay_with_new_inputs",
                "passed": True,
                "how": "own",
                "when": "2026-12-02T17:42:30+00:00",
            }
        },
    }
    assert load() == expected
    on_disk = json.loads(store.read_text(encoding="utf-8"))
    assert on_disk == {"schema": "graphlab.progress/1", "lessons": expected}
    assert sorted(p.name for p in store.parent.iterdir()) == ["progress.json", "progress.json.lock"]


def test_results_are_stamped_with_the_utc_time_of_the_check(store):
    before = datetime.now().astimezone()
    record("00_start_here", "busy_fraction", True)
    after = datetime.now().astimezone()
    when = datetime.fromisoformat(load()["00_start_here"]["busy_fraction"]["when"])
    assert when.utcoffset() == timedelta(0)
    assert before.replace(microsecond=0) <= when <= after


def test_reset_forgets_everything(store, clock):
    record("00_start_here", "busy_fraction", True)
    reset()
    assert not store.exists()
    assert load() == {}
    reset()  # nothing to forget is fine too


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"schema": "graphlab.progress/9", "lessons": {}}',
        '{"schema": "graphlab.progress/1", "lessons": []}',
        '{"schema": "graphlab.progress/1", "lessons": {"a": {"b": {"passed": "yes"}}}}',
        '{"schema": "graphlab.progress/1", "lessons": {"a": {"b": {"lesson": "a", '
        '"exercise": "c", "passed": true, "when": "2026-01-01T00:00:00+00:00"}}}}',
    ],
)
def test_a_damaged_store_is_refused_and_never_overwritten(store, content):
    refused_and_kept(store, content)
    reset()
    assert load() == {}


def refused_and_kept(store: Path, content: str | bytes) -> str:
    """Put ``content`` in the store; check that reading and recording refuse it and leave it
    as it was; return the start of the message."""
    store.parent.mkdir(parents=True)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    store.write_bytes(data)
    message = f"{store} is not a graphlab progress file: move it away, or forget every result "
    with pytest.raises(ProgressError, match=message):
        load()
    with pytest.raises(ProgressError, match=message):
        record("00_start_here", "busy_fraction", True)
    assert store.read_bytes() == data
    return message


@pytest.mark.parametrize(
    ("lesson", "exercise", "passed", "message"),
    [
        ("", "busy_fraction", True, "needs the lesson as a non-empty string, not ''"),
        ("00_start_here", None, True, "needs the exercise as a non-empty string, not None"),
        ("00_start_here", "busy_fraction", 1, "needs passed=True or passed=False, not 1"),
    ],
)
def test_a_malformed_result_is_refused(store, lesson, exercise, passed, message):
    with pytest.raises(ProgressError, match=message):
        record(lesson, exercise, passed)
    assert not store.exists()


def test_an_unwritable_store_folder_is_reported_in_one_line(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(ENV, str(blocker / "progress.json"))
    with pytest.raises(ProgressError, match=r"cannot write the progress store in .*a-file") as e:
        record("00_start_here", "busy_fraction", True)
    assert "\n" not in str(e.value)


# Each writer records 50 results as fast as it can.
WRITER = """
import sys
from graphlab.course.progress import record
for i in range(50):
    record("09_shared", f"{sys.argv[1]}-{i:02d}", i % 3 == 0)
"""


def blocked_on(lock: Path) -> set[int]:
    """The processes that Linux's /proc/locks shows waiting for the flock on ``lock``."""
    inode = str(lock.stat().st_ino)
    waiting = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        # "1: -> FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF" is a waiter.
        if fields[1] == "->" and fields[2] == "FLOCK" and fields[6].split(":")[-1] == inode:
            waiting.add(int(fields[5]))
    return waiting


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads Linux's /proc/locks")
def test_two_kernels_writing_at_once_lose_nothing(store):
    env = {**os.environ, ENV: str(store), "PYTHONPATH": str(ROOT)}
    # The store's lock is held here while both writers start, so both must wait for it: when
    # it is let go one writes while the other still waits, then they take turns.
    with progress._locked(store):
        writers = [
            subprocess.Popen([sys.executable, "-c", WRITER, name], env=env) for name in ("a", "b")
        ]
        lock = store.with_name(store.name + ".lock")
        deadline = time.monotonic() + 120
        while blocked_on(lock) != {writer.pid for writer in writers}:
            assert time.monotonic() < deadline, f"writers waiting: {blocked_on(lock)}"
            assert [writer.poll() for writer in writers] == [None, None]
            time.sleep(0.05)
        assert not store.exists()  # nothing was written past the held lock
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    results = load()["09_shared"]
    assert len(results) == 100
    assert sorted(results) == [f"{name}-{i:02d}" for name in "ab" for i in range(50)]
    assert [results[f"a-{i:02d}"]["passed"] for i in range(6)] == [True, False, False] * 2
    assert sum(entry["passed"] for entry in results.values()) == 2 * 17


def test_report_counts_only_the_exercises_a_lesson_has(store, clock, course):
    record("01_kernel_gaps", "per_replay", False)
    record("01_kernel_gaps", "capture_chain", True)
    record("01_kernel_gaps", "renamed_since", True)
    assert report(course, load()) == {
        "lessons": [
            {
                "file": "00_start_here.ipynb",
                "id": "00_start_here",
                "number": "00",
                "title": "Start here",
                "exercises": ["busy_fraction"],
                "passed": [],
                "revealed": [],
                "failed": [],
            },
            {
                "file": "01_kernel_gaps.ipynb",
                "id": "01_kernel_gaps",
                "number": "01",
                "title": "Kernel gaps",
                "exercises": ["capture_chain", "per_replay"],
                "passed": ["capture_chain"],
                "revealed": [],
                "failed": ["per_replay"],
            },
        ],
        "done": 1,
        "total": 3,
    }


def test_a_pass_after_the_solution_ran_is_revealed_and_an_own_pass_upgrades_it(
    store, clock, course
):
    progress.solution_ran("capture_chain")  # as %%solution capture_chain --revealed does
    record("01_kernel_gaps", "capture_chain", True)
    entry = load()["01_kernel_gaps"]["capture_chain"]
    assert (entry["how"], entry["when"]) == ("revealed", "2026-12-02T17:40:50+00:00")
    row = report(course, load())["lessons"][1]
    assert (row["passed"], row["revealed"]) == (["capture_chain"], ["capture_chain"])

    # The learner hides the solution and restarts the kernel: the next pass is their own.
    progress._solutions_run.clear()
    record("01_kernel_gaps", "capture_chain", True)
    assert load()["01_kernel_gaps"]["capture_chain"]["how"] == "own"
    # Revealing again later does not take an earned pass away.
    progress.solution_ran("capture_chain")
    record("01_kernel_gaps", "capture_chain", True)
    entry = load()["01_kernel_gaps"]["capture_chain"]
    assert (entry["how"], entry["when"]) == ("own", "2026-12-02T17:41:00+00:00")
    assert report(course, load())["lessons"][1]["revealed"] == []


def test_a_store_written_before_how_existed_counts_its_passes_as_own(store, course):
    store.parent.mkdir(parents=True)
    entry = {"lesson": "00_start_here", "exercise": "busy_fraction", "passed": True}
    entry["when"] = "2026-01-01T00:00:00+00:00"
    lessons = {"00_start_here": {"busy_fraction": entry}}
    store.write_text(json.dumps({"schema": "graphlab.progress/1", "lessons": lessons}))
    row = report(course, load())["lessons"][0]
    assert (row["passed"], row["revealed"]) == (["busy_fraction"], [])


# ------------------------------------------------------------------------------ the CLI


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_progress_command_prints_each_lesson(store, clock, course, capsys):
    record("00_start_here", "busy_fraction", True)
    record("01_kernel_gaps", "per_replay", False)
    progress.solution_ran("capture_chain")
    record("01_kernel_gaps", "capture_chain", True)
    code, out, err = run_cli(capsys, "progress")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "00  Start here   1/1",
        "01  Kernel gaps  1/2  (1 after revealing the solution)  (last check failed: per_replay)",
        f"2/3 exercises passed (results in {store})",
    ]


def test_progress_command_json_and_reset(store, clock, course, capsys):
    record("00_start_here", "busy_fraction", True)
    code, out, err = run_cli(capsys, "progress", "--json")
    assert (code, err) == (0, "")
    shown = json.loads(out)
    assert shown == {**report(course, load()), "store": str(store)}
    assert (shown["done"], shown["total"], shown["lessons"][0]["passed"]) == (
        1,
        3,
        ["busy_fraction"],
    )

    code, out, err = run_cli(capsys, "progress", "--reset", "--json")
    assert code == 0
    assert err == f"graphlab progress: forgot every check result ({store})\n"
    assert (json.loads(out)["done"], json.loads(out)["total"]) == (0, 3)
    assert not store.exists()


def test_progress_command_reports_a_damaged_store_in_one_line(store, course, capsys):
    store.parent.mkdir(parents=True)
    store.write_text("{")
    code, out, err = run_cli(capsys, "progress")
    assert (code, out) == (2, "")
    assert err.startswith(f"graphlab progress: {store} is not a graphlab progress file")
    assert err.count("\n") == 1
    assert run_cli(capsys, "progress", "--reset")[0] == 0


# ------------------------------------------------------------- what the progress path names

NESTED = "[" * 100_000 + "]" * 100_000


def device_or_pipe(kind: str, folder: Path) -> Path:
    """A FIFO, or a character device that is /dev/null's own (its device number).

    As root the device is a private node made with mknod, so that a reset that wrongly deletes
    it cannot harm the machine's /dev/null; anyone else gets /dev/null itself, which they could
    not remove or replace anyway.
    """
    path = folder / f"progress-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif os.geteuid() == 0:
        os.mknod(path, stat.S_IFCHR | 0o666, os.stat("/dev/null").st_rdev)
    else:
        path = Path("/dev/null")
    return path


def same_node(path: Path, before: os.stat_result) -> bool:
    after = os.lstat(path)
    return (after.st_mode, after.st_rdev, after.st_ino) == (
        before.st_mode,
        before.st_rdev,
        before.st_ino,
    )


@pytest.mark.parametrize("kind", ["fifo", "char device"])
def test_a_device_or_pipe_means_progress_off_and_is_never_touched(
    kind, tmp_path, monkeypatch, course, capsys
):
    path = device_or_pipe(kind, tmp_path)
    before = os.lstat(path)
    monkeypatch.setenv(ENV, str(path))
    what = "pipe" if kind == "fifo" else "device"
    says = f"progress is off: {path} is a {what}, so no check result is read or kept"
    # Reset first: before this was handled it removed the node (and a read of a FIFO blocks).
    done = reset()
    assert same_node(path, before)
    assert done == f"{says}; nothing to forget"
    assert progress.off() == says
    assert load() == {}
    record("00_start_here", "busy_fraction", True)
    assert same_node(path, before)
    assert not path.with_name(path.name + ".lock").exists()  # nothing written beside it either
    assert run_cli(capsys, "progress") == (0, f"graphlab progress: {says}\n", "")
    assert run_cli(capsys, "progress", "--reset") == (
        0,
        "",
        f"graphlab progress: {says}; nothing to forget\n",
    )
    code, out, err = run_cli(capsys, "progress", "--json")
    assert (code, err, json.loads(out)["done"]) == (0, f"graphlab progress: {says}\n", 0)
    assert same_node(path, before)
    if kind == "char device":
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_reset_keeps_a_file_that_is_not_progress_under_another_name(
    store, monkeypatch, capsys, course
):
    monkeypatch.setattr(backups, "datetime", FixedClock)
    store.parent.mkdir(parents=True)
    foreign = b'{"theme": "dark", "font_size": 14}\n'  # some tool's settings, named by mistake
    store.write_bytes(foreign)
    with pytest.raises(ProgressError, match="is not a graphlab progress file"):
        load()
    kept = store.with_name("progress.damaged-20261203T221500Z.json")
    code, out, err = run_cli(capsys, "progress", "--reset")
    assert (code, out.splitlines()[-1]) == (0, f"0/3 exercises passed (results in {store})")
    assert (
        err == f"graphlab progress: {store} did not hold graphlab progress: it is kept as {kept}\n"
    )
    assert kept.read_bytes() == foreign
    assert not store.exists()
    # A damaged progress file goes aside too, next to the first one, and a real one is removed.
    store.write_text('{"schema": "graphlab.progress/1", "lessons": {"x": 3}}')
    assert reset() == (
        f"{store} did not hold graphlab progress: it is kept as "
        f"{store.with_name('progress.damaged-20261203T221500Z-2.json')}"
    )
    record("00_start_here", "busy_fraction", True)
    assert reset() == f"forgot every check result ({store})"
    assert sorted(p.name for p in store.parent.iterdir()) == [
        "progress.damaged-20261203T221500Z-2.json",
        "progress.damaged-20261203T221500Z.json",
        "progress.json.lock",
    ]
    assert kept.read_bytes() == foreign


def test_reset_refuses_a_folder_or_a_link_at_the_progress_path(store, tmp_path):
    store.mkdir(parents=True)
    with pytest.raises(ProgressError, match="is a folder or a link, not a progress file: nothing"):
        reset()
    assert store.is_dir()
    store.rmdir()
    target = tmp_path / "real.json"
    target.write_text('{"schema": "graphlab.progress/1", "lessons": {}}')
    store.symlink_to(target)
    with pytest.raises(ProgressError, match="is a folder or a link"):
        reset()
    assert store.is_symlink() and target.exists()


@pytest.mark.parametrize(
    "content",
    [
        NESTED,
        '{"schema": "graphlab.progress/1", "lessons": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"schema": "graphlab.progress/1", "lessons": {"a": {"b": {"lesson": "a", "exercise": '
        '"b", "passed": true, "when": "", "x": ' + "[" * 150 + "]" * 150 + "}}}}",
        '{"schema": "graphlab.progress/1", "n": 1' + "0" * 5000 + "}",
        b'\xff\xfe{\x00"\x00}\x00',
    ],
    ids=["nested-100000", "nested-lessons", "nested-150-in-an-entry", "5001-digits", "utf-16"],
)
def test_hostile_json_in_the_store_is_one_line_everywhere(store, course, capsys, content):
    message = refused_and_kept(store, content)
    code, out, err = run_cli(capsys, "progress")
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"graphlab progress: {message}")
    assert reset().startswith(f"{store} did not hold graphlab progress: it is kept as ")
    assert load() == {}


def test_progress_belongs_to_the_user_account_so_two_workspaces_share_it(tmp_path, monkeypatch):
    # What the sidebar says: a learner with two workspaces (two course folders, two JupyterLab
    # servers) sees one progress, kept in the account's Jupyter data directory.
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "account"))
    monkeypatch.setattr(progress, "_solutions_run", set())
    for name in ("workspace-a", "workspace-b"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / "workspace-a")
    record("03_outputs", "check_keep_outputs", True)
    monkeypatch.chdir(tmp_path / "workspace-b")
    assert load()["03_outputs"]["check_keep_outputs"]["passed"] is True
    assert store_path() == tmp_path / "account" / "graphlab" / "progress.json"
