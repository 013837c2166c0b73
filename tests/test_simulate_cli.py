"""``graphlab simulate``: JSON figures worked out by hand, the Chrome trace, and bad arguments.

Parameters are passed by hand (not GPU measurements) so that the expected values are simple
arithmetic; the calibrated file is replaced by a path that does not exist, or by a fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_cap import HAS_PROC, run_with_memory_cap

from graphlab.cli import main
from graphlab.simulator import params as simulator_params

HAND = [
    "--host-us", "5", "--launch-latency-us", "0", "--graph-launch-us", "3",
    "--node-gap-us", "0.5", "--sync-us", "0",
]  # fmt: skip


@pytest.fixture(autouse=True)
def no_calibration(tmp_path, monkeypatch):
    """Every test starts with no calibrated file, whatever the package holds."""
    monkeypatch.setattr(simulator_params, "CALIBRATED_PATH", tmp_path / "absent.json")


def run(capsys, *argv):
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_figures_for_a_host_bound_chain(capsys):
    argv = ["--kernels", "4", "--kernel-us", "1", "--capture-us", "20", "--json"]
    code, out, err = run(capsys, *argv, *HAND)
    assert code == 0 and err == ""
    result = json.loads(out)
    # eager: kernels at 5-6, 10-11, 15-16, 20-21; the final sync returns at 21.
    assert result["eager"] == {"total_us": 21.0, "per_kernel_us": 5.25, "idle_fraction": 12 / 16}
    # graph: launch 0-3, nodes at 3, 4.5, 6, 7.5 (1 µs each): busy 4 of a 5.5 µs span.
    assert result["graph"] == {"total_us": 8.5, "per_kernel_us": 2.125, "idle_fraction": 1.5 / 5.5}
    assert result["break_even"] == 20 / (21 - 8.5)
    assert result["capture_us"] == 20.0
    assert result["params"]["host_us"] == 5.0
    assert result["calibration"] is None


def test_json_with_sync_every_where_the_graph_does_not_pay(capsys):
    argv = ["--kernels", "4", "--kernel-us", "10", "--sync-every", "2", "--capture-us", "1"]
    hand = [*HAND[:1], "1", *HAND[2:-1], "0.5"]  # host 1 µs, sync 0.5 µs
    code, out, _ = run(capsys, *argv, *hand, "--json")
    assert code == 0
    result = json.loads(out)
    # eager: kernels 1-11, 11-21 | sync returns 21.5 | 22.5-32.5, 32.5-42.5 | sync returns 43.
    assert result["eager"]["total_us"] == 43.0
    assert result["eager"]["idle_fraction"] == 1.5 / 41.5
    # graph: launch 0-3, nodes 3-13, 13.5-23.5 | sync 24 | launch 24-27, 27-37, 37.5-47.5 | 48.
    assert result["graph"]["total_us"] == 48.0
    assert result["graph"]["idle_fraction"] == 4.5 / 44.5
    assert result["break_even"] is None  # the replay is slower here: it never pays


def test_queue_depth_makes_the_eager_host_wait(capsys, tmp_path):
    # host 1, kernels 10, queue of 2: the 4th launch returns at 22 (see test_simulator); the sync
    # then waits for the last kernel (41). The totals do not change: the GPU was the bottleneck.
    hand = [*HAND[:1], "1", *HAND[2:]]
    code, out, _ = run(capsys, "--kernels", "4", "--kernel-us", "10", "--queue-depth", "2", *hand,
                       "--json", "--trace", str(tmp_path / "q.json"))  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert result["eager"]["total_us"] == 41.0
    assert result["workload"]["queue_depth"] == 2


def test_readable_report(capsys):
    code, out, _ = run(capsys, "--kernels", "4", "--kernel-us", "1", *HAND)
    assert code == 0
    assert "eager  total       21.000 µs" in out
    assert "graph  total        8.500 µs" in out
    assert "break-even: unknown" in out


def test_trace_holds_both_timelines_as_two_processes(capsys, tmp_path):
    path = tmp_path / "sim.json"
    code, _, _ = run(capsys, "--kernels", "4", "--kernel-us", "1", *HAND, "--trace", str(path))
    assert code == 0
    events = json.loads(path.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes == {1: "eager", 2: "graph"}
    spans = {
        pid: sorted(
            (e["name"], e["ts"], e["dur"]) for e in events if e["ph"] == "X" and e["pid"] == pid
        )
        for pid in processes
    }
    assert [s for s in spans[1] if s[0] == "kernel"] == [
        ("kernel", 5.0, 1.0), ("kernel", 10.0, 1.0), ("kernel", 15.0, 1.0), ("kernel", 20.0, 1.0)
    ]  # fmt: skip
    assert ("cudaGraphLaunch", 0.0, 3.0) in spans[2]
    assert [s[1] for s in spans[2] if s[0] == "kernel"] == [3.0, 4.5, 6.0, 7.5]
    # Correlation ids stay unique across the two runs: the graph's launch links its own kernels.
    corr = {pid: {e["args"]["correlation"] for e in events if e["ph"] == "X" and e["pid"] == pid
                  and "correlation" in e["args"]} for pid in processes}  # fmt: skip
    assert corr[1].isdisjoint(corr[2]) and len(corr[2]) == 1
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind


def test_without_calibration_every_parameter_must_be_given(capsys):
    code, out, err = run(capsys, "--kernels", "4", "--kernel-us", "1", "--host-us", "5")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "no calibrated parameters" in err
    assert "--launch-latency-us --graph-launch-us --node-gap-us --sync-us" in err


def test_calibrated_file_gives_defaults_and_flags_override(capsys, tmp_path, monkeypatch):
    # A fixture calibration file (made-up numbers, not a GPU's), standing in for the bundled one.
    fixture = tmp_path / "calibrated_fixture.json"
    fixture.write_text(
        json.dumps(
            {
                "params": {
                    "host_us": 5.0,
                    "launch_latency_us": 0.0,
                    "graph_launch_us": 3.0,
                    "node_gap_us": 0.5,
                    "sync_us": 0.0,
                    "capture_base_us": 10.0,
                    "capture_per_kernel_us": 2.5,
                },
                "provenance": {"recordings": ["fixture"], "gpu": "fixture, not a GPU"},
            }
        )
    )
    monkeypatch.setattr(simulator_params, "CALIBRATED_PATH", fixture)
    code, out, _ = run(capsys, "--kernels", "4", "--kernel-us", "1", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["eager"]["total_us"] == 21.0
    assert result["capture_us"] == 10.0 + 4 * 2.5
    assert result["break_even"] == 20 / 12.5
    assert result["calibration"]["recordings"] == ["fixture"]

    code, out, _ = run(capsys, "--kernels", "4", "--kernel-us", "1", "--host-us", "1", "--json")
    assert code == 0
    result = json.loads(out)
    # host 1 µs: kernels run 1-2, 2-3, 3-4, 4-5.
    assert result["eager"]["total_us"] == 5.0
    assert result["params"]["host_us"] == 1.0
    assert result["calibration"]["overridden"] == ["host_us"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kernels", "0", "--kernel-us", "1"], "kernels must be between 1"),
        (["--kernels", "10000000000", "--kernel-us", "1"], "kernels must be between 1"),
        (["--kernels", "4", "--kernel-us", "-1"], "between 0 and"),
        (["--kernels", "4", "--kernel-us", "nan"], "between 0 and"),
        (["--kernels", "4", "--kernel-us", "1", "--sync-every", "0"], "sync_every"),
        (["--kernels", "4", "--kernel-us", "1", "--capture-us", "-5"], "capture_us must be"),
        (["--kernels", "4", "--kernel-us", "1", "--queue-depth", "0"], "queue_depth must be"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_and_no_file(capsys, tmp_path, argv, message):
    path = tmp_path / "out.json"
    code, out, err = run(capsys, *argv, *HAND, "--trace", str(path))
    assert code == 2 and out == ""
    assert err.startswith("graphlab simulate: ") and err.count("\n") == 1
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_negative_host_cost_is_refused(capsys):
    code, _, err = run(capsys, "--kernels", "4", "--kernel-us", "1", *HAND[:-2], "--sync-us", "-1")
    assert code == 2
    assert "sync_us must be between 0" in err


def test_a_trace_path_that_is_not_a_regular_file_is_refused(capsys, tmp_path):
    # Renaming a temp file over a folder (or a device such as /dev/null) would replace it.
    folder = tmp_path / "a_folder"
    folder.mkdir()
    code, out, err = run(
        capsys, "--kernels", "2", "--kernel-us", "1", *HAND, "--trace", str(folder)
    )
    assert code == 2 and out == ""
    assert "is not a regular file" in err
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_unwritable_trace_path_is_a_clear_error(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    trace = blocker / "sub" / "t.json"
    code, out, err = run(capsys, "--kernels", "2", "--kernel-us", "1", *HAND, "--trace", str(trace))
    assert code == 2 and out == ""
    assert "cannot write" in err


def test_default_parameters_are_the_bundled_calibration(capsys, monkeypatch):
    bundled = Path(simulator_params.__file__).with_name("calibrated_h200.json")
    monkeypatch.setattr(simulator_params, "CALIBRATED_PATH", bundled)
    code, out, _ = run(capsys, "--kernels", "4", "--kernel-us", "1", "--json")
    assert code == 0
    result = json.loads(out)
    stored = json.loads(bundled.read_text())
    assert result["params"] == stored["params"]
    assert result["calibration"]["gpu"] == "NVIDIA H200"
    # Host-bound (8 µs launches, 1 µs kernels): 4 launches, the latency, the last kernel and the
    # sync's own cost, each rounded to the nanosecond as the simulator does.
    ns = {k: round(v * 1000) for k, v in stored["params"].items() if v is not None}
    expected = 4 * ns["host_us"] + ns["launch_latency_us"] + 1000 + ns["sync_us"]
    assert result["eager"]["total_us"] == expected / 1000


def test_an_empty_trace_path_is_refused_before_simulating(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "--kernels", "4", "--kernel-us", "1", *HAND, "--trace", "")
    assert code == 2 and out == ""
    assert err == "graphlab simulate: --trace needs a file name, e.g. --trace sim.json\n"
    assert list(tmp_path.iterdir()) == []


def test_the_streamed_trace_matches_the_timelines_event_for_event(capsys, tmp_path):
    from graphlab.simulator.model import HOST_THREAD
    from graphlab.simulator.programs import MAIN_STREAM

    path = tmp_path / "sim.json"
    argv = ["--kernels", "3", "--kernel-us", "1", *HAND, "--sync-every", "2", "--trace", str(path)]
    assert run(capsys, *argv)[0] == 0
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    # Eager: 3 launches, 2 syncs, 3 kernels; graph: 2 graph launches, 2 syncs, 3 kernels.
    assert [sum(e["pid"] == pid for e in events) for pid in (1, 2)] == [8, 7]
    assert {e["tid"] for e in events if e["cat"] == "cuda_runtime"} == {HOST_THREAD}
    assert {e["tid"] for e in events if e["cat"] == "kernel"} == {1000 + MAIN_STREAM}
    assert all(isinstance(e["ts"], float) and isinstance(e["dur"], float) for e in events)


@pytest.mark.skipif(not HAS_PROC, reason="reads Linux's /proc")
def test_ten_million_kernels_that_cannot_fit_are_refused_before_starting(tmp_path):
    trace = tmp_path / "sim.json"
    argv = ["simulate", "--kernels", "10000000", "--kernel-us", "1", *HAND, "--trace", str(trace)]
    result = run_with_memory_cap(512 * 1024**2, *argv)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("graphlab simulate: simulating 10,000,000 kernels needs about")
    assert "simulate at most" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("value", "shown"), [("-5", "-5.0"), ("nan", "nan"), ("inf", "inf")])
def test_a_bad_duration_is_shown_as_a_plain_number(capsys, value, shown):
    # Before: "got np.float64(-5.0)".
    code, out, err = run(capsys, "--kernels", "3", "--kernel-us", value)
    assert (code, out) == (2, "")
    assert err == (
        f"graphlab simulate: kernel duration must be between 0 and 1e+06 µs, got {shown}: pass "
        "non-negative, finite durations\n"
    )
