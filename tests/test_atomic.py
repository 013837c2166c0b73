"""graphlab.support.atomic: a file is replaced whole or not at all, readable by all, never a
non-file."""

from __future__ import annotations

import os
import stat

import pytest

from graphlab.errors import GraphlabError, RecordingError, TraceError
from graphlab.support.atomic import atomic_writer, write_text_atomically


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
