"""graphlab.course: banners say where a result came from; links come from the package metadata."""

from __future__ import annotations

import importlib
import importlib.util
from importlib import metadata
from pathlib import Path

import pytest

import graphlab
from graphlab import course
from graphlab.backend import Backend
from graphlab.errors import GraphlabError


def test_repository_url_is_the_one_in_the_package_metadata():
    urls = metadata.metadata("cuda-graphlab").get_all("Project-URL")
    assert f"Repository, {course.repository_url()}" in urls


def test_banner_of_a_recording_names_gpu_driver_torch_and_date(capsys):
    rec = graphlab.recording("chain_10_k4096")
    course.banner(rec, "a note")
    line = capsys.readouterr().out.strip()
    meta = rec.meta
    assert line.startswith(f"[recorded on {meta['gpu']} (driver {meta['driver']}, torch ")
    assert meta["date"][:10] in line
    assert line.endswith("recording 'chain_10_k4096' - a note]")


def test_banner_of_the_simulator_says_simulated(capsys):
    course.banner("simulated")
    assert capsys.readouterr().out.startswith("[simulated: ")


H200_RUN = {
    "gpu": "NVIDIA H200",
    "torch": "2.11.0+cu130",
    "cuda": "13.0",
    "date": "2026-12-03T12:57:19+00:00",
    "backend": "cuda",
}


def _printed_on_a_gpu(monkeypatch, capsys, note: str = "") -> str:
    """What banner() prints on a machine whose live backend is CUDA on an H200."""
    h200 = Backend("cuda", "cuda", "a test stands in for an H200", gpu="NVIDIA H200")
    monkeypatch.setattr(importlib.import_module("graphlab.course.banner"), "backend", lambda: h200)
    course.banner(None, note)
    return capsys.readouterr().out


def test_a_live_banner_says_live_when_printed_and_recorded_once_stored(monkeypatch, capsys):
    printed = _printed_on_a_gpu(monkeypatch, capsys, "50 steps each")
    assert printed == "[live CUDA on NVIDIA H200 - 50 steps each]\n"
    assert course.as_recorded(printed + "eager: 12.5 us\n", H200_RUN) == (
        "[recorded on NVIDIA H200 (torch 2.11.0+cu130, CUDA 13.0) on 2026-12-03: a stored "
        "output, run the cell for this machine's - 50 steps each]\neager: 12.5 us\n"
    )


def test_as_recorded_leaves_other_lines_and_other_banners_alone():
    text = "[CPU emulator: CUDA graph semantics, no timings]\nlive CUDA on NVIDIA H200\n"
    assert course.as_recorded(text, H200_RUN) == text


def test_stamping_a_stored_lesson_says_its_live_banners_as_recorded(monkeypatch, capsys, tmp_path):
    import nbformat

    spec = importlib.util.spec_from_file_location(
        "stamp_notebooks", Path(__file__).resolve().parents[1] / "tools" / "stamp_notebooks.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    printed = _printed_on_a_gpu(monkeypatch, capsys)
    cell = nbformat.v4.new_code_cell("banner()")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed + "x: 1\n")]
    path = tmp_path / "00_lesson.ipynb"
    tool.write_stamped(nbformat.v4.new_notebook(cells=[cell]), path, H200_RUN)
    stored = nbformat.read(path, as_version=4)
    assert stored.cells[0].outputs[0].text == (
        "[recorded on NVIDIA H200 (torch 2.11.0+cu130, CUDA 13.0) on 2026-12-03: a stored "
        "output, run the cell for this machine's]\nx: 1\n"
    )
    assert stored.metadata["graphlab"] == H200_RUN


def test_banner_refuses_an_unknown_source():
    with pytest.raises(GraphlabError, match="does not know the source 'gpu'"):
        course.banner("gpu")


@pytest.mark.skipif(graphlab.backend().is_cuda, reason="the CPU path of live_or_recorded")
def test_without_a_gpu_live_or_recorded_loads_the_recording_and_never_runs_live(capsys):
    def run_live():
        raise AssertionError("must not run without a GPU")

    rec = course.live_or_recorded(run_live, "chain_100_k4096")
    assert rec.name == "chain_100_k4096"
    assert "recording 'chain_100_k4096'" in capsys.readouterr().out
    assert set(course.timelines(rec)) == {"eager", "graph"}
    assert course.timings(rec) == rec.timings


def test_timelines_of_a_result_without_them_is_refused():
    class Bare:
        timelines = None

    with pytest.raises(GraphlabError, match=r"profile=True"):
        course.timelines(Bare())
