"""Fidelity: the live backend reproduces every outcome recorded on a real H200.

``h200_outcomes.json`` holds what the scenarios in ``scenarios.py`` observed on the GPU (recorded
with ``record_outcomes.py``; its ``meta`` says where and when). Here the same scenarios run on the
live backend -- the CPU emulator in CI, torch.cuda on a GPU -- and every observable outcome must be
equal. Keys starting with ``info_`` (exception class and text) are context, not outcomes.

Two exceptions, each stated and tested: a scenario added after the last GPU recording is skipped
until the GPU records it, and where a GPU replay reads freed memory the emulator, which must keep
that memory to replay at all, replays the kept values and warns instead.

A CUDA error's name is read from its message with the table in ``scenarios.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenarios import SCENARIOS, run_one

from graphlab.backend import backend, cuda_module
from graphlab.emulator import DIFFERENCES, FreedInputWarning

RECORDED = json.loads((Path(__file__).parent / "h200_outcomes.json").read_text())
RECORD_COMMAND = "python tests/fidelity/record_outcomes.py tests/fidelity/h200_outcomes.json"

# Scenarios written after the last GPU recording. Empty this set when the recording that has them
# is committed (test_only_the_new_scenarios_await_a_recording says so).
NOT_YET_RECORDED: set[str] = set()

# How many replays of each scenario read memory that the program let go of: on a GPU, freed
# memory. 05 rebinds its input's only name before one replay; 01e does so in each of 5 trials.
REPLAYS_OF_FREED_MEMORY = {"01e_freed_input_reused": 5, "05_frozen_shapes": 1}

# What the emulator gives where the GPU reads freed memory: the kept input (1s) times 10, and the
# next tensor never gets that memory. On the GPU the next tensor (100s) took it.
EMULATOR_KEEPS_FREED_MEMORY = {
    "01e_freed_input_reused": {
        "y_after_replay": [[10.0, 10.0, 10.0]] * 5,
        "z_given_the_captured_address": [False] * 5,
    }
}


def observable(outcome: dict, prefix: str = "") -> dict:
    """Flatten nested outcomes to ``{"case.key": value}``, leaving out ``info_`` keys."""
    flat = {}
    for key, value in outcome.items():
        if key.startswith("info_"):
            continue
        if isinstance(value, dict):
            flat.update(observable(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@pytest.fixture(scope="module")
def live() -> dict:
    """Name -> (outcome, warnings) of every scenario on the live backend, run in order."""
    cuda, device = cuda_module(), backend().device
    return {name: run_one(name, cuda, device) for name in SCENARIOS}


def test_the_recording_comes_from_a_gpu():
    meta = RECORDED["meta"]
    assert meta["backend"] == "cuda" and "H200" in meta["gpu"], meta


def test_only_the_new_scenarios_await_a_recording():
    recorded = set(RECORDED["outcomes"])
    assert recorded <= set(SCENARIOS), f"recorded scenarios that no longer exist: {recorded}"
    assert set(SCENARIOS) - recorded == NOT_YET_RECORDED, (
        "NOT_YET_RECORDED must name exactly the scenarios the recording lacks"
    )


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_live_backend_reproduces_the_gpu(live, name):
    gpu = RECORDED["outcomes"].get(name)
    if gpu is None:
        assert name in NOT_YET_RECORDED, f"{name} has no GPU recording"
        pytest.skip(f"{name} is not yet recorded on a GPU: run `{RECORD_COMMAND}` on the H200")
    assert "scenario_crashed" not in gpu, f"on the GPU the scenario crashed: {gpu}"
    outcome, _ = live[name]
    if gpu.get("supported") is False and outcome.get("supported"):
        pytest.skip(
            f"recorded with torch {RECORDED['meta']['torch']}, which has no check_input_liveness "
            "(torch 2.13 added it): record on a GPU with torch 2.13+ to compare"
        )
    if name in EMULATOR_KEEPS_FREED_MEMORY and not backend().is_cuda:
        assert outcome == EMULATOR_KEEPS_FREED_MEMORY[name]
        assert observable(gpu) != observable(outcome), "the GPU was expected to reuse the memory"
        assert "freed_inputs" in DIFFERENCES
        return
    assert observable(outcome) == observable(gpu)


def test_the_emulator_warns_on_each_replay_of_freed_memory_and_nowhere_else(live):
    if backend().is_cuda:
        pytest.skip("FreedInputWarning is the emulator's; on a GPU the replay reads the memory")
    warned = {
        name: count
        for name, (_, caught) in live.items()
        if (count := sum(issubclass(w.category, FreedInputWarning) for w in caught))
    }
    assert warned == REPLAYS_OF_FREED_MEMORY
