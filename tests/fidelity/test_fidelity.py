"""Fidelity: the live backend reproduces every outcome recorded on a real H200.

``h200_outcomes.json`` holds what the scenarios in ``scenarios.py`` observed on the GPU (recorded
with ``record_outcomes.py``; its ``meta`` says where and when). Here the same scenarios run on the
live backend -- the CPU emulator in CI, torch.cuda on a GPU -- and every observable outcome must be
equal. Keys starting with ``info_`` (exception class and text) are context, not outcomes.

A CUDA error's name is read from its message with the table in ``scenarios.py``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from scenarios import SCENARIOS, run_all

from graphlab.backend import backend, cuda_module

RECORDED = json.loads((Path(__file__).parent / "h200_outcomes.json").read_text())


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the emulator's one-time difference notes
        return run_all(cuda_module(), backend().device)


def test_the_recording_comes_from_a_gpu():
    meta = RECORDED["meta"]
    assert meta["backend"] == "cuda" and "H200" in meta["gpu"], meta


def test_every_scenario_was_recorded():
    assert sorted(RECORDED["outcomes"]) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(RECORDED["outcomes"]))
def test_live_backend_reproduces_the_gpu(live, name):
    gpu = RECORDED["outcomes"][name]
    assert "scenario_crashed" not in gpu, f"on the GPU the scenario crashed: {gpu}"
    assert observable(live[name]) == observable(gpu)
