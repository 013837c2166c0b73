"""graphlab.support.atomic: a file is replaced whole or not at all, readable by all, never a
non-file."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from graphlab.errors import GraphlabError, RecordingError, TraceError
from graphlab.support.atomic import atomic_writer, write_text_atomically

ROOT = Path(__file__).resolve().parent.parent


def test_writes_the_text_creates_folders_and_returns_the_path(tmp_path):
    target = tmp_path / "a" / "b" / "out.txt"
    assert write_text_atomically(target, "héllo\n") == target
    assert target.read_bytes() == "héllo\n".encode()
    assert os.listdir(target.parent) == ["out.txt"]


def test_replaces_an_existing_file_whole(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old content that is longer than the new one")
    write_text_atomically(str(target), "new")
    assert target.read_text() == "new"


def test_new_file_is_readable_by_everyone_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        write_text_atomically(tmp_path / "out.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o644


def test_a_failure_mid_write_leaves_the_old_file_and_no_temp_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk full"), atomic_writer(target) as out:
        out.write("half of the new")
        out.flush()
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_a_failure_before_the_first_write_creates_nothing(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(KeyboardInterrupt), atomic_writer(target):
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_the_writer_serves_libraries_that_write_to_a_file_object(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title")])
    target = tmp_path / "n.ipynb"
    with atomic_writer(target) as out:
        nbformat.write(notebook, out)
    assert nbformat.read(target, as_version=4).cells[0].source == "# Title"


def _not_regular(tmp_path):
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "file").write_text("keep")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    return [tmp_path / "folder", tmp_path / "pipe", tmp_path / "link"]


@pytest.mark.parametrize("error", [GraphlabError, TraceError, RecordingError])
def test_refuses_destinations_that_are_not_regular_files_with_the_callers_error(tmp_path, error):
    for target in _not_regular(tmp_path):
        with pytest.raises(error, match="exists and is not a regular file") as caught:
            write_text_atomically(target, "x", error)
        assert type(caught.value) is error
    assert (tmp_path / "folder").is_dir()
    assert stat.S_ISFIFO((tmp_path / "pipe").stat().st_mode)
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "file").read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["file", "folder", "link", "pipe"]


def test_a_folder_that_cannot_be_made_is_reported_with_the_callers_error(tmp_path):
    (tmp_path / "file").write_text("keep")
    with pytest.raises(TraceError, match=r"cannot write .*out\.json"):
        write_text_atomically(tmp_path / "file" / "out.json", "x", TraceError)
    assert (tmp_path / "file").read_text() == "keep"


# -- a full disk, a killed writer, permissions ---------------------------------------------------

# Runs in a child whose files may not grow past 4 KiB (RLIMIT_FSIZE): a write then fails with
# EFBIG, as it fails with ENOSPC on a full disk. (Python ignores SIGXFSZ, so it is an OSError.)
_FULL_DISK_CHILD = """
import resource, sys
from graphlab.errors import TraceError
from graphlab.support.atomic import write_text_atomically
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    write_text_atomically(sys.argv[1], "x" * 100_000, TraceError)
except TraceError as exc:
    print(exc)
"""


def _child(code: str, *args, **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], env=env, **popen)


def test_a_write_that_fills_the_disk_is_one_error_and_leaves_the_old_file(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    child = _child(_FULL_DISK_CHILD, target, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = child.communicate(timeout=120)
    assert (child.returncode, err) == (0, b"")  # no traceback: the error was one TraceError
    assert out.decode().startswith(f"could not write {target} (File too large); it is left as")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.json"]


_SLOW_WRITER_CHILD = """
import sys, time
from graphlab.support.atomic import atomic_writer
with atomic_writer(sys.argv[1]) as out:
    out.write("half of the new content")
    out.flush()
    print("writing", flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_writer_leaves_the_old_file_and_no_temp_file(tmp_path, signum):
    target = tmp_path / "out.json"
    target.write_text("old")
    child = _child(_SLOW_WRITER_CHILD, target, stdout=subprocess.PIPE)
    assert child.stdout.readline() == b"writing\n"
    child.send_signal(signum)
    child.wait(timeout=60)
    assert target.read_text() == "old"
    if signum == signal.SIGKILL:
        # Nothing can run at SIGKILL: where the file system has no unnamed temp files, the temp
        # file of the dead writer stays until the next write to the same file removes it.
        write_text_atomically(target, "new")
        assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["out.json"]


def test_a_temp_file_of_a_live_writer_is_left_alone(tmp_path):
    target = tmp_path / "out.json"
    live = tmp_path / f".out.json.{os.getpid()}.0123456789ab.tmp"
    live.write_text("another write in progress")
    write_text_atomically(target, "new")
    assert sorted(os.listdir(tmp_path)) == [live.name, "out.json"]


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "private.json"
    target.write_text("old")
    target.chmod(0o600)
    write_text_atomically(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text() == "new"


def test_an_empty_path_is_refused(tmp_path):
    with pytest.raises(TraceError, match="no file name given"):
        write_text_atomically("", "x", TraceError)
