"""The recordings loader, ``graphlab recordings`` and the recording writer of ``graphlab record``.

Every recording used here is a FIXTURE written into pytest's tmp_path by ``fixture_recording``:
its numbers are made up for the test and its GPU is labelled as a test fixture. Real recordings
come only from ``graphlab record`` on a GPU (the cuda-marked test at the end runs it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pickle
import stat
import subprocess
import sys

import pytest
import torch

from graphlab.cli import recordings as recordings_command
from graphlab.errors import GraphlabError, NeedsGPUError, RecordingError
from graphlab.timing.experiments import (
    Experiment,
    experiments,
    record,
    select,
    write_recording,
)
from graphlab.timing.experiments.recorder import _Phases
from graphlab.timing.recordings import (
    RECORDINGS_DIR,
    SCHEMA,
    Recording,
    list_recordings,
    recording,
    scan_recordings,
)
from graphlab.timing.results import Comparison
from graphlab.trace.timeline import Timeline

FIXTURE_GPU = "NVIDIA H200 (test fixture)"


def fixture_timeline(mode: str) -> Timeline:
    """Two launches and their kernels (eager), or one graph launch and two kernels (graph)."""
    if mode == "eager":
        return Timeline(
            kind=["launch", "kernel", "launch", "kernel"],
            name=["cudaLaunchKernel", "add", "cudaLaunchKernel", "add"],
            start_ns=[0, 5_000, 7_000, 12_000],
            dur_ns=[4_000, 1_000, 4_000, 1_000],
            device=[-1, 0, -1, 0],
            stream=[-1, 7, -1, 7],
            thread=[1, -1, 1, -1],
            correlation=[1, 1, 2, 2],
        )
    return Timeline(
        kind=["launch", "kernel", "kernel"],
        name=["cudaGraphLaunch", "add", "add"],
        start_ns=[0, 6_000, 7_300],
        dur_ns=[5_000, 1_000, 1_000],
        device=[-1, 0, 0],
        stream=[-1, 7, 7],
        thread=[1, -1, -1],
        correlation=[3, 3, 3],
    )


def fixture_recording(name: str = "chain_2_k8", **changes) -> dict:
    data = {
        "schema": SCHEMA,
        "name": name,
        "meta": {
            "gpu": FIXTURE_GPU,
            "driver": "000.00 (fixture)",
            "torch": "0.0 (fixture)",
            "cuda": "0.0",
            "python": "3.11.0",
            "date": "2026-12-02T16:00:00+00:00",
            "graphlab": "0.1.0",
            "command": "tests/test_recordings.py fixture",
        },
        "experiment": {"kind": "chain", "kernels": 2, "numel": 8},
        "timings": Comparison(
            capture_us=100.0,
            first_replay_us=20.0,
            eager_us=12.0,
            replay_us=3.0,
            eager_end_to_end_us=14.0,
            replay_end_to_end_us=4.0,
            eager_spread_us=(11.0, 13.0),
            replay_spread_us=(2.5, 3.5),
            repeats=5,
            iterations=10,
            break_even=10.0,
        ).to_dict(),
        "timelines": {mode: fixture_timeline(mode).to_dict() for mode in ("eager", "graph")},
    }
    data.update(changes)
    return data


def write_json(folder, name: str, data) -> None:
    (folder / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")


def assert_refused(folder, data, match: str) -> None:
    """Store ``data`` as chain_2_k8.json in ``folder``; loading it must raise RecordingError."""
    write_json(folder, "chain_2_k8", data)
    with pytest.raises(RecordingError, match=match):
        recording("chain_2_k8", folder)


# ------------------------------------------------------------------------------ loading


def test_recording_loads_a_fixture_with_its_fields(tmp_path):
    data = fixture_recording()
    write_recording(data, tmp_path)
    rec = recording("chain_2_k8", tmp_path)
    assert isinstance(rec, Recording)
    assert rec.name == "chain_2_k8"
    assert rec.meta == data["meta"]
    assert rec.experiment == {"kind": "chain", "kernels": 2, "numel": 8}
    assert rec.timings == data["timings"]
    assert rec.date == "2026-12-02"
    assert rec.path == tmp_path / "chain_2_k8.json"
    assert rec.to_dict() == data


FIXTURE_FACTS = (
    "recorded on NVIDIA H200 (test fixture) (driver 000.00 (fixture), torch 0.0 (fixture), "
    "2026-12-02)"
)


@pytest.mark.parametrize(
    ("command", "made_by"),
    [
        ("graphlab record", "by `graphlab record`"),
        # The arguments name the recording machine's folders and a list of names: left out.
        ("graphlab record --out /tmp/tmp.Qy/recordings --only chain_2_k8", "by `graphlab record`"),
        # Lesson 09 records live into a temporary folder: its label must not claim the CLI.
        ("lesson 09, live", "in lesson 09, live"),
        ("graphlab recordings", "in graphlab recordings"),
        ("tests/test_recordings.py fixture", "in tests/test_recordings.py fixture"),
    ],
)
def test_label_names_gpu_driver_torch_date_and_what_recorded(tmp_path, command, made_by):
    data = fixture_recording()
    data["meta"]["command"] = command
    write_recording(data, tmp_path)
    assert recording("chain_2_k8", tmp_path).label == f"{FIXTURE_FACTS} {made_by}"


def test_label_in_chinese(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "zh_CN")
    facts = (
        "录制于 NVIDIA H200 (test fixture)（驱动 000.00 (fixture)，torch 0.0 (fixture)，"
        "2026-12-02）"
    )
    data = fixture_recording()
    data["meta"]["command"] = "graphlab record --out /tmp/r"
    write_recording(data, tmp_path)
    assert recording("chain_2_k8", tmp_path).label == f"{facts}，命令为 `graphlab record`"
    data["meta"]["command"] = "lesson 09, live"
    write_recording(data, tmp_path)
    assert recording("chain_2_k8", tmp_path).label == f"{facts}，来自 lesson 09, live"


def test_timeline_rebuilds_the_stored_table_and_carries_the_label(tmp_path):
    write_recording(fixture_recording(), tmp_path)
    rec = recording("chain_2_k8", tmp_path)
    graph = rec.timeline("graph")
    assert list(graph.kind) == ["launch", "kernel", "kernel"]
    assert list(graph.name) == ["cudaGraphLaunch", "add", "add"]
    assert list(graph.start_ns) == [0, 6_000, 7_300]
    assert list(graph.correlation) == [3, 3, 3]
    assert graph.meta["label"] == rec.label
    assert graph.meta["recording"] == "chain_2_k8"
    eager = rec.timeline("eager")
    assert list(eager.end_ns) == [4_000, 6_000, 11_000, 13_000]


def test_comparison_and_cumulative_rebuild_the_timings(tmp_path):
    write_recording(fixture_recording(), tmp_path)
    chain = recording("chain_2_k8", tmp_path)
    comparison = chain.comparison
    assert (comparison.capture_us, comparison.eager_us, comparison.replay_us) == (100.0, 12.0, 3.0)
    assert comparison.replay_spread_us == (2.5, 3.5)
    assert comparison.break_even == 10.0
    assert chain.cumulative is None

    data = fixture_recording("break_even_x", experiment={"kind": "break_even"})
    data["timings"]["cumulative"] = {
        "counts": [1, 2, 5],
        "eager_total_us": [10.0, 20.0, 50.0],
        "graph_total_us": [30.0, 35.0, 45.0],
        "repeats": 3,
        "crossing": 5,
    }
    write_recording(data, tmp_path)
    cumulative = recording("break_even_x", tmp_path).cumulative
    assert cumulative.counts == (1, 2, 5)
    assert cumulative.graph_us == (30.0, 35.0, 45.0)
    assert cumulative.crossing == 5


def test_damaged_timings_are_a_recording_error(tmp_path):
    data = fixture_recording()
    data["timings"]["eager_spread_us"] = [11.0]
    write_recording(data, tmp_path)
    with pytest.raises(RecordingError, match="timings of recording 'chain_2_k8' are damaged"):
        _ = recording("chain_2_k8", tmp_path).comparison


def test_timeline_of_an_unknown_mode_is_refused(tmp_path):
    write_recording(fixture_recording(), tmp_path)
    with pytest.raises(RecordingError, match=r"no timeline 'replay'.*'eager', 'graph'"):
        recording("chain_2_k8", tmp_path).timeline("replay")


def test_damaged_timeline_is_a_recording_error(tmp_path):
    data = fixture_recording()
    data["timelines"]["graph"] = {"schema": "graphlab.timeline/1", "names": [], "events": {}}
    write_json(tmp_path, "chain_2_k8", data)
    rec = recording("chain_2_k8", tmp_path)
    with pytest.raises(RecordingError, match="graph timeline of recording 'chain_2_k8' is damaged"):
        rec.timeline("graph")


def test_unknown_name_lists_the_available_ones(tmp_path):
    for name in ("chain_10_k8", "chain_2_k8"):
        write_recording(fixture_recording(name), tmp_path)
    with pytest.raises(RecordingError) as info:
        recording("chain_3_k8", tmp_path)
    assert "no recording named 'chain_3_k8'" in str(info.value)
    assert str(info.value).endswith("available: chain_2_k8, chain_10_k8")


def test_unknown_name_in_an_empty_folder_says_how_recordings_are_made(tmp_path):
    with pytest.raises(RecordingError, match=r"available: none yet .*`graphlab record`"):
        recording("chain_10_k4096", tmp_path)


@pytest.mark.parametrize("name", ["../chain_2_k8", "", "chain_2_k8.json"])
def test_names_that_are_not_plain_recording_names_are_refused(tmp_path, name):
    write_recording(fixture_recording(), tmp_path)
    with pytest.raises(RecordingError, match="no recording named"):
        recording(name, tmp_path)


def test_list_recordings_sorts_numbers_naturally(tmp_path):
    for name in ("chain_1000_k8", "chain_10_k8", "break_even_x", "chain_100_k8"):
        write_recording(fixture_recording(name), tmp_path)
    names = [rec.name for rec in list_recordings(tmp_path)]
    assert names == ["break_even_x", "chain_10_k8", "chain_100_k8", "chain_1000_k8"]


def test_list_recordings_of_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(RecordingError, match="is not a folder of recordings"):
        list_recordings(tmp_path / "nowhere")


def bundled(name: str) -> Recording:
    """A recording bundled with graphlab (a missing one fails the test: RecordingError)."""
    return recording(name)


def test_every_experiment_of_a_full_run_is_bundled():
    # `graphlab record` on the H200 wrote one recording per experiment of the full plan.
    assert [rec.name for rec in list_recordings()] == [
        "break_even_chain_10_k4096",
        "break_even_chain_20_k16777216",
        "break_even_chain_100_k262144",
        "break_even_chain_1000_k4096",
        "break_even_mlp_l16_w64_b4",
        "chain_10_k4096",
        "chain_10_k262144",
        "chain_10_k16777216",
        "chain_100_k4096",
        "chain_100_k262144",
        "chain_100_k16777216",
        "chain_1000_k4096",
        "chain_1000_k262144",
        "chain_1000_k16777216",
        "decoder_full_vs_piecewise",
        "fork_join_1stream_k4_n256",
        "fork_join_1stream_k4_n1024",
        "fork_join_2streams_k4_n256",
        "fork_join_2streams_k4_n1024",
    ]
    assert {rec.name for rec in list_recordings()} == {e.name for e in experiments()}


def test_bundled_recordings_all_load_and_come_from_a_full_run():
    for rec in list_recordings():
        assert rec.path.parent == RECORDINGS_DIR
        assert rec.label.startswith(f"recorded on {rec.meta['gpu']} (driver ")
        assert rec.experiment["quick"] is False, f"{rec.name} is from `graphlab record --quick`"
        assert rec.meta["command"].startswith("graphlab record")


@pytest.mark.parametrize("numel", [4096, 262144, 16777216])
def test_bundled_chain_timelines_hold_the_chain_kernels(numel):
    rec = bundled(f"chain_1000_k{numel}")
    iterations = rec.experiment["profile_iterations"]
    for mode in ("eager", "graph"):
        assert (rec.timeline(mode).kind == "kernel").sum() == 1000 * iterations
    assert (rec.timeline("graph").name == "cudaGraphLaunch").sum() == iterations


def test_bundled_1000_tiny_kernels_leave_eager_idle_and_replay_busy():
    # The foundation issue's acceptance: on the GPU, eager launches leave the GPU mostly idle
    # between tiny kernels; one replay submits them all and keeps it mostly busy.
    rec = bundled("chain_1000_k4096")
    assert rec.timings["replay_us"] < rec.timings["eager_us"]
    assert rec.timeline("eager").summary().idle_fraction > 0.5
    assert rec.timeline("graph").summary().idle_fraction < 0.5


def test_bundled_break_even_totals_are_cumulative():
    rec = bundled("break_even_chain_10_k4096")
    totals = rec.cumulative
    assert totals.counts[0] == 1
    for series in (totals.eager_us, totals.graph_us):
        assert all(0 < a < b for a, b in itertools.pairwise(series))


@pytest.mark.parametrize("first", ["import graphlab", "import graphlab.timing.experiments"])
def test_graphlab_recordings_lists_whatever_was_imported_first(tmp_path, first):
    # graphlab.recordings is the listing function whatever was imported first (the loader module
    # lives in graphlab.timing, so no import can shadow it). A fresh interpreter controls that.
    write_recording(fixture_recording(), tmp_path)
    code = (
        f"{first}; import graphlab, sys; "
        "print([r.name for r in graphlab.recordings(sys.argv[1])]); "
        "print(graphlab.recording('chain_2_k8', sys.argv[1]).name)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert result.stdout == "['chain_2_k8']\nchain_2_k8\n"


# ----------------------------------------------------------------------- bad recordings


def test_truncated_file_is_reported_with_its_position(tmp_path):
    text = json.dumps(fixture_recording())
    (tmp_path / "chain_2_k8.json").write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(RecordingError, match=r"is not valid JSON \(truncated or damaged at line 1"):
        recording("chain_2_k8", tmp_path)


@pytest.mark.parametrize(
    "text, found",
    [("[" * 100_000, "RecursionError"), ('{"schema": ' + "7" * 5000 + "}", "ValueError")],
)
def test_json_too_deep_or_too_long_for_python_is_a_recording_error(tmp_path, text, found):
    (tmp_path / "chain_2_k8.json").write_text(text, encoding="utf-8")
    with pytest.raises(RecordingError, match=f"is not a recording \\({found}: "):
        recording("chain_2_k8", tmp_path)


def test_a_pickle_is_never_unpickled(tmp_path):
    (tmp_path / "chain_2_k8.json").write_bytes(pickle.dumps(fixture_recording()))
    with pytest.raises(RecordingError, match="never unpickles"):
        recording("chain_2_k8", tmp_path)


def test_json_that_is_not_an_object_is_refused(tmp_path):
    assert_refused(tmp_path, [1, 2, 3], "not a graphlab recording")


def test_wrong_schema_is_refused(tmp_path):
    assert_refused(
        tmp_path,
        fixture_recording(schema="graphlab.recording/0"),
        r"schema is 'graphlab.recording/0', expected",
    )


def test_missing_meta_gpu_is_refused(tmp_path):
    data = fixture_recording()
    del data["meta"]["gpu"]
    assert_refused(tmp_path, data, "meta lacks gpu")


@pytest.mark.parametrize("gpu", ["cpu", "  ", "Emulator", "unknown"])
def test_meta_that_names_no_real_gpu_is_refused(tmp_path, gpu):
    data = fixture_recording()
    data["meta"]["gpu"] = gpu
    assert_refused(tmp_path, data, "names no real GPU")


def test_bad_date_is_refused(tmp_path):
    data = fixture_recording()
    data["meta"]["date"] = "yesterday"
    assert_refused(tmp_path, data, "'yesterday' is not an ISO date")


def test_missing_timing_keys_are_named(tmp_path):
    data = fixture_recording()
    del data["timings"]["break_even"], data["timings"]["capture_us"]
    assert_refused(tmp_path, data, "timings lack capture_us, break_even")


@pytest.mark.parametrize("key", ["experiment", "timelines", "meta", "name"])
def test_missing_sections_are_named(tmp_path, key):
    data = fixture_recording()
    del data[key]
    assert_refused(tmp_path, data, f"missing or malformed '{key}'")


def test_missing_graph_timeline_is_refused(tmp_path):
    data = fixture_recording()
    del data["timelines"]["graph"]
    assert_refused(tmp_path, data, "no 'graph' timeline")


def test_file_must_be_named_after_its_recording(tmp_path):
    assert_refused(
        tmp_path,
        fixture_recording("chain_3_k8"),
        r"holds recording 'chain_3_k8'.*\(chain_3_k8.json\)",
    )


# ------------------------------------------------------------------------------ writing


def test_write_recording_writes_compact_json_readable_by_all(tmp_path):
    path = write_recording(fixture_recording(), tmp_path / "new")
    assert path == tmp_path / "new" / "chain_2_k8.json"
    assert json.loads(path.read_text(encoding="utf-8")) == fixture_recording()
    assert ", " not in path.read_text(encoding="utf-8")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["chain_2_k8.json"]


def test_write_recording_refuses_bad_data_and_leaves_the_old_file(tmp_path):
    write_recording(fixture_recording(), tmp_path)
    before = (tmp_path / "chain_2_k8.json").read_bytes()
    bad = fixture_recording()
    bad["meta"]["gpu"] = "cpu"
    with pytest.raises(RecordingError, match="names no real GPU"):
        write_recording(bad, tmp_path)
    nan = fixture_recording()
    nan["timings"]["eager_us"] = float("nan")
    with pytest.raises(RecordingError, match="'chain_2_k8' cannot be stored as JSON"):
        write_recording(nan, tmp_path)
    assert (tmp_path / "chain_2_k8.json").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["chain_2_k8.json"]


@pytest.mark.parametrize("name", ["../escape", "a/b", ".hidden", "", "chain 2"])
def test_write_recording_refuses_names_that_are_not_file_names(tmp_path, name):
    with pytest.raises(RecordingError, match="is not a recording name"):
        write_recording(fixture_recording(name), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []


def test_write_recording_does_not_replace_a_folder_or_a_link(tmp_path):
    (tmp_path / "chain_2_k8.json").mkdir()
    with pytest.raises(RecordingError, match="exists and is not a regular file"):
        write_recording(fixture_recording(), tmp_path)
    (tmp_path / "target.txt").write_text("keep", encoding="utf-8")
    (tmp_path / "chain_3_k8.json").symlink_to(tmp_path / "target.txt")
    with pytest.raises(RecordingError, match="exists and is not a regular file"):
        write_recording(fixture_recording("chain_3_k8"), tmp_path)
    assert (tmp_path / "target.txt").read_text(encoding="utf-8") == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "chain_2_k8.json",
        "chain_3_k8.json",
        "target.txt",
    ]


def test_write_recording_into_a_file_is_a_recording_error(tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(RecordingError, match="cannot create the folder"):
        write_recording(fixture_recording(), blocker / "inside")


# --------------------------------------------------------------------------- the commands


def run_recordings_command(capsys, *argv: str) -> str:
    parser = argparse.ArgumentParser()
    recordings_command.add_arguments(parser)
    assert recordings_command.run(parser.parse_args(argv)) == 0
    return capsys.readouterr().out


def test_recordings_command_prints_a_table(tmp_path, capsys):
    write_recording(fixture_recording("chain_2_k8"), tmp_path)
    extra = fixture_recording("break_even_x")
    extra["experiment"] = {"kind": "break_even"}
    extra["meta"]["date"] = "2026-11-30T23:59:59Z"
    write_recording(extra, tmp_path)
    out = run_recordings_command(capsys, "--dir", str(tmp_path))
    assert out.splitlines() == [
        "name          experiment  gpu                         date",
        "break_even_x  break_even  NVIDIA H200 (test fixture)  2026-11-30",
        "chain_2_k8    chain       NVIDIA H200 (test fixture)  2026-12-02",
    ]


def test_recordings_command_json(tmp_path, capsys):
    write_recording(fixture_recording(), tmp_path)
    out = run_recordings_command(capsys, "--dir", str(tmp_path), "--json")
    assert json.loads(out) == [
        {"name": "chain_2_k8", "experiment": "chain", "gpu": FIXTURE_GPU, "date": "2026-12-02"}
    ]


def test_recordings_command_on_an_empty_folder(tmp_path, capsys):
    out = run_recordings_command(capsys, "--dir", str(tmp_path))
    assert out == f"no recordings in {tmp_path} yet: they are made on a GPU by `graphlab record`\n"
    assert json.loads(run_recordings_command(capsys, "--dir", str(tmp_path), "--json")) == []


def test_record_command_row_shows_medians_per_iteration_and_per_kernel(tmp_path):
    from graphlab.cli.record import _row

    write_recording(fixture_recording(), tmp_path)
    cells = _row(recording("chain_2_k8", tmp_path)).split()
    # name, eager/it, replay/it, eager/kernel (12/2), replay/kernel (3/2), e2e eager, e2e replay,
    # capture, first replay, N*, crossing (none: not a break-even recording)
    assert cells == [
        *("chain_2_k8", "12.0", "3.0", "6.00", "1.50", "14.0", "4.0", "100.0", "20.0", "10.0", "-")
    ]
    assert _row(None).split()[:3] == ["name", "eager/it", "replay/it"]


# ------------------------------------------------------------------------ the experiments


def test_full_plan_covers_the_chains_and_break_even_workloads():
    plan = {e.name: e for e in experiments()}
    chains = {name for name, e in plan.items() if e.kind == "chain"}
    assert chains == {
        f"chain_{kernels}_k{numel}"
        for kernels in (10, 100, 1000)
        for numel in (4096, 262144, 16777216)
    }
    break_even = [e for e in plan.values() if e.kind == "break_even"]
    assert len(break_even) >= 3
    assert all(e.counts[0] == 1 and e.counts == tuple(sorted(e.counts)) for e in break_even)
    assert not any(e.quick for e in plan.values())


def test_quick_plan_is_small_and_marked():
    plan = experiments(quick=True)
    assert 1 <= len(plan) <= 4
    assert all(e.quick and e.repeats <= 5 for e in plan)


def test_select_keeps_plan_order_and_refuses_unknown_names():
    plan = experiments()
    chosen = select(plan, ["chain_1000_k4096", "chain_10_k4096"])
    assert [e.name for e in chosen] == ["chain_10_k4096", "chain_1000_k4096"]
    assert select(plan, []) == plan
    with pytest.raises(GraphlabError, match=r"named chain_7_k1; choose from chain_10_k4096, "):
        select(plan, ["chain_10_k4096", "chain_7_k1"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without a GPU")
def test_record_without_gpu_says_where_recordings_are_and_writes_nothing(tmp_path):
    with pytest.raises(NeedsGPUError, match=r"`graphlab recordings`.*graphlab.recording\(name\)"):
        record(out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


class ListProgress:
    """Stands in for record's tqdm bar: counts the steps and keeps the lines written."""

    def __init__(self):
        self.steps = 0
        self.lines: list[str] = []

    def update(self, n: int = 1) -> None:
        self.steps += n

    def set_postfix_str(self, text: str) -> None:
        pass

    def write(self, line: str) -> None:
        self.lines.append(line)


def test_record_phases_skip_an_experiment_that_failed_and_keep_the_others():
    plan = [Experiment(name, "chain", build=lambda: None, iterations=1) for name in "abc"]
    progress = ListProgress()
    phases = _Phases(progress)

    def timing(experiment):
        if experiment.name == "b":
            raise RuntimeError("out of memory")
        return experiment.name.upper()

    measured = phases.run(plan, "timing", timing)
    seen: list[str] = []
    written = phases.run(
        plan, "writing", lambda e: measured[e.name] + ".json", among=measured, then=seen.append
    )
    assert measured == {"a": "A", "c": "C"}
    assert written == {"a": "A.json", "c": "C.json"}
    assert seen == ["A.json", "C.json"]
    assert phases.failures == {"b": "timing: RuntimeError: out of memory"}
    assert progress.lines == ["graphlab record: b failed while timing: out of memory"]
    assert progress.steps == 6  # one per experiment and phase, the skipped one included


@pytest.mark.cuda
def test_quick_record_writes_recordings_the_loader_accepts(tmp_path):
    paths = record(out_dir=tmp_path, quick=True, command="graphlab record --quick (test)")
    recs = list_recordings(tmp_path)
    assert sorted(p.stem for p in paths) == sorted(r.name for r in recs)
    assert {e.name for e in experiments(quick=True)} == {r.name for r in recs}
    for rec in recs:
        assert rec.meta["gpu"] == torch.cuda.get_device_name(0)
        assert rec.meta["command"] == "graphlab record --quick (test)"
        assert rec.experiment["quick"] is True
        for mode in ("eager", "graph"):
            assert rec.timeline(mode).is_gpu.any()
    chain = recording("chain_100_k4096", tmp_path)
    assert 0 < chain.timings["replay_us"] < chain.timings["eager_us"]
    graph = chain.timeline("graph")
    assert (graph.name == "cudaGraphLaunch").sum() == chain.experiment["profile_iterations"]
    assert (graph.kind == "kernel").sum() == 100 * chain.experiment["profile_iterations"]
    cumulative = recording("break_even_chain_10_k4096", tmp_path).timings["cumulative"]
    assert cumulative["counts"] == [1, 2, 5, 10, 20]
    eager = cumulative["eager_total_us"]
    assert eager == sorted(eager) and len(set(eager)) == len(eager)


# ------------------------------------------------------------------ hostile recording folders


def run_recordings_cli(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``graphlab recordings ARGV`` in a fresh process (a hang fails the test, not the suite)."""
    return subprocess.run(
        [sys.executable, "-m", "graphlab", "recordings", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_pipe_named_like_a_recording_is_named_not_waited_on(tmp_path):
    write_recording(fixture_recording(), tmp_path)
    os.mkfifo(tmp_path / "a_pipe.json")  # nothing will ever write to it
    result = run_recordings_cli("--dir", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout.splitlines()[1].startswith("chain_2_k8  chain  ")
    assert result.stderr.count("\n") == 1
    assert "a_pipe.json is not a regular file" in result.stderr
    with pytest.raises(RecordingError, match="not a regular file"):
        list_recordings(tmp_path)


def test_one_bad_file_does_not_hide_the_good_ones(tmp_path, capsys):
    write_recording(fixture_recording(), tmp_path)
    (tmp_path / "broken.json").write_text('{"schema": ')
    (tmp_path / "folder.json").mkdir()
    parser = argparse.ArgumentParser()
    recordings_command.add_arguments(parser)
    assert recordings_command.run(parser.parse_args(["--dir", str(tmp_path), "--json"])) == 2
    out, err = capsys.readouterr()
    assert [row["name"] for row in json.loads(out)] == ["chain_2_k8"]
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("graphlab recordings: skipped ") and "broken.json" in lines[0]
    assert "folder.json is not a regular file" in lines[1]
    good, bad = scan_recordings(tmp_path)
    assert [rec.name for rec in good] == ["chain_2_k8"] and len(bad) == 2


ESCAPE = "\x1b[2J\x1b]8;;https://example.invalid\x07"  # clear the screen, start a link


def test_control_characters_in_a_recording_never_reach_the_terminal(tmp_path):
    data = fixture_recording()
    data["meta"]["gpu"] = f"NVIDIA H200{ESCAPE}"
    write_recording(data, tmp_path)
    result = run_recordings_cli("--dir", str(tmp_path))
    assert result.returncode == 0
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "NVIDIA H200\\x1b[2J\\x1b]8;;https://example.invalid\\x07" in result.stdout
    assert "\x1b" not in recording("chain_2_k8", tmp_path).label


def test_a_recorded_timeline_with_times_near_2_63_is_damaged(tmp_path):
    data = fixture_recording()
    data["timelines"]["eager"]["events"]["start_ns"] = [2**63 - 40, 2**63 - 30, -10, 2**63 - 1]
    write_recording(data, tmp_path)
    with pytest.raises(RecordingError, match=r"eager timeline .* is damaged"):
        recording("chain_2_k8", tmp_path).timeline("eager")


@pytest.mark.parametrize("progress", [True, False])
def test_record_shows_a_progress_bar_only_when_asked(monkeypatch, tmp_path, capsys, progress):
    # Lesson 09 records live with progress=False: a stored notebook output would keep the bar's
    # first frame ("0/12") for ever. No GPU here: every experiment fails in its timing phase.
    from graphlab.errors import GraphlabError
    from graphlab.timing.experiments import recorder

    def no_gpu(experiment):
        raise GraphlabError("no GPU in this test")

    monkeypatch.setattr(recorder, "require_gpu", lambda what: None)
    monkeypatch.setattr(recorder, "_prime_graphs", lambda: None)
    monkeypatch.setattr(recorder, "machine_meta", lambda command: {"command": command})
    monkeypatch.setattr(recorder, "measure_experiment", no_gpu)
    name = recorder.experiments(False)[0].name
    with pytest.raises(GraphlabError, match="1 of 1 experiments failed"):
        recorder.record(out_dir=tmp_path, only=[name], progress=progress)
    assert ("graphlab record:" in capsys.readouterr().err) is progress
