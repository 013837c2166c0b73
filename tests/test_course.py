"""graphlab.course: banners say where a result came from; links come from the package metadata."""

from __future__ import annotations

from importlib import metadata

import pytest

import graphlab
from graphlab import course
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
