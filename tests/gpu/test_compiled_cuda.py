"""torch.compile(mode="reduce-overhead") on the lesson 10 MLP: what watch_cudagraphs reports for
each kind of call, and the recording the lesson reads (needs a GPU: ``pytest -m cuda``).

Each scenario compiles in a child process (graphlab.isolated) with a time limit, so that a compile
that hangs fails its test instead of the run, and no test sees another's compiled code.
"""

from __future__ import annotations

import json

import pytest

from graphlab.failures.isolation import isolated
from graphlab.timing import experiments

pytestmark = pytest.mark.cuda

TIMEOUT_S = 240  # a fresh process, a few inductor compiles of a 16-block MLP on the H200


def _mlp():
    from graphlab.timing import workloads

    return workloads.mlp(16, 64, 4, device="cuda")


def _calls_one_by_one(variant: str, sizes: tuple[int, ...] = (4, 4, 4, 4, 4)) -> list[dict]:
    """Compile a variant of the MLP, call it once per batch size, and report each call."""
    import torch

    workload = _mlp()
    fn = workload.fn
    scale = torch.full((1,), 0.5)  # on the CPU

    def mutates_input(x):
        x.mul_(0.5)
        return fn(x)

    def reads_cpu_tensor(x):
        return fn(x) * scale.to(x.device)

    body = {"plain": fn, "mutated": mutates_input, "cpu": reads_cpu_tensor}[variant]
    compiled = torch.compile(body, mode="reduce-overhead")
    seen = []
    with torch._inductor.config.patch(graph_partition=variant != "cpu"):
        for rows in sizes:
            x = torch.randn(rows, 64, device="cuda")
            with experiments.watch_cudagraphs() as calls:
                torch.compiler.cudagraph_mark_step_begin()
                out = compiled(x)
                torch.cuda.synchronize()
            seen.append({**calls.to_dict(), "rows": out.shape[0]})
    return seen


def test_the_compiled_mlp_warms_up_records_then_replays_one_graph_per_call():
    first, second, *steady = isolated(_calls_one_by_one, "plain", timeout=TIMEOUT_S)
    assert first["replays"] == 0 and first["cudagraph_skips"] == 0  # warm-up runs eagerly
    assert second["captures"] >= 1  # the recording
    for call in steady:
        assert (call["captures"], call["replays"], call["cudagraph_skips"]) == (0, 1, 0)
        assert call["log"] == []


def _lines(calls: list[dict]) -> list[str]:
    return [line for call in calls for line in call["log"]]


def test_writing_into_the_input_skips_cudagraphs_with_its_reason():
    calls = isolated(_calls_one_by_one, "mutated", timeout=TIMEOUT_S)
    assert sum(call["replays"] for call in calls) == 0
    assert sum(call["cudagraph_skips"] for call in calls) >= 1
    reasons = _lines(calls)
    assert any(line.startswith("skipping cudagraphs due to mutated inputs") for line in reasons)


def test_a_cpu_tensor_without_partitions_skips_cudagraphs_for_the_cpu_device():
    calls = isolated(_calls_one_by_one, "cpu", timeout=TIMEOUT_S)
    assert sum(call["replays"] for call in calls) == 0
    assert any("skipping cudagraphs due to cpu device" in line for line in _lines(calls))


def test_a_new_batch_size_is_warmed_up_then_recorded_then_replayed():
    sizes = (4, 4, 4, 6, 6, 6, 6)
    calls = isolated(_calls_one_by_one, "plain", sizes, timeout=TIMEOUT_S)
    assert [call["rows"] for call in calls] == list(sizes)
    assert (calls[2]["captures"], calls[2]["replays"]) == (0, 1)  # batch 4 replays
    assert (calls[3]["captures"], calls[3]["replays"]) == (0, 0)  # batch 6: warm-up
    assert calls[4]["captures"] >= 1  # batch 6 recorded
    assert (calls[6]["captures"], calls[6]["replays"]) == (0, 1)  # batch 6 replays


def _keep_every_output() -> dict:
    workload = _mlp()
    return experiments.keep_every_output(workload.fn, *workload.inputs)


def test_only_the_warm_up_and_the_recording_outputs_raise_when_read_after_being_overwritten():
    """torch/_inductor/cudagraph_trees.py (2.5 to 2.13): a call in a new iteration frees and marks
    the previous call's outputs (dealloc_current_path_weakrefs) only when that call warmed up or
    recorded (try_end_curr_warmup, try_end_curr_recording); after a replay,
    try_end_curr_execution marks nothing, and the next replay writes over the kept outputs."""
    kept = isolated(_keep_every_output, timeout=TIMEOUT_S)
    rows = kept["calls"]
    stages = [experiments.kept_output_row(row)[0] for row in rows]
    assert stages == ["warm-up", "recording", "replay", "replay", "replay", "replay"]
    for row in rows[:2]:
        assert "overwritten by a subsequent run" in row["error"]
        assert row["right"] is None
    for row in rows[2:5]:  # silently holding a later call's values
        assert (row["error"], row["right"]) == (None, False)
    assert (rows[5]["error"], rows[5]["right"]) == (None, True)
    assert kept["copies_right"] is True


def _record(folder: str) -> str:
    return str(experiments.record_compiled(folder, command="pytest"))


def test_record_compiled_writes_what_the_lesson_reads(tmp_path):
    path = isolated(_record, str(tmp_path), timeout=TIMEOUT_S)
    data = experiments.load_compiled(tmp_path)
    assert path.endswith("compiled_mlp_l16_w64_b4.json")
    with open(path) as file:
        assert json.loads(file.read()) == data
    timings = data["timings"]
    assert all(timings[key] > 0 for key in ("eager_us", "compiled_us", "manual_graph_us"))
    # the steady calls replayed one graph each, recorded nothing and skipped nothing
    n = data["experiment"]["calls"]
    steady = data["steady"]
    assert (steady["captures"], steady["replays"], steady["cudagraph_skips"]) == (0, n, 0)
    kept = data["kept_outputs"]
    assert [row["call"] for row in kept["calls"]] == [1, 2, 3, 4, 5, 6]
    assert kept["copies_right"] is True
    mutated = data["variants"]["mutated_input"]
    assert mutated["then"]["replays"] == 0
    shapes = data["variants"]["new_shapes"]
    assert shapes["then"]["captures"] >= 9  # the nine sizes after the first are recorded
    assert any("distinct sizes" in line for line in shapes["first"]["log"] + shapes["then"]["log"])
