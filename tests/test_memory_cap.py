"""The per-learner GPU memory cap, GRAPHLAB_GPU_MEMORY_GB, on a machine without a GPU: parsing,
the fraction each device gets (with torch.cuda's functions replaced), and that neither
`import graphlab` nor a CPU-only machine pays for it."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
import torch

from graphlab.support import memory_cap
from graphlab.support.memory_cap import ENV, MemoryCapError, cap_from_env, fractions


@pytest.fixture
def fresh(monkeypatch):
    """A process that has not applied the cap yet."""
    monkeypatch.setattr(memory_cap, "_applied", [])
    monkeypatch.delenv(ENV, raising=False)
    return monkeypatch


@pytest.fixture
def two_gpus(fresh):
    """torch.cuda with two devices of 32 GB and 64 GB; returns the fractions set."""
    calls = []
    totals = {0: 32 * 10**9, 1: 64 * 10**9}
    fresh.setattr(torch.cuda, "is_available", lambda: True)
    fresh.setattr(torch.cuda, "device_count", lambda: 2)
    fresh.setattr(torch.cuda, "mem_get_info", lambda i: (totals[i] // 2, totals[i]))
    fresh.setattr(torch.cuda, "set_per_process_memory_fraction", lambda f, i: calls.append((f, i)))
    return calls


def test_unset_or_empty_means_no_cap():
    assert cap_from_env({}) is None
    assert cap_from_env({ENV: "  "}) is None


def test_a_number_of_gb_is_read():
    assert cap_from_env({ENV: "16"}) == 16.0
    assert cap_from_env({ENV: " 2.5 "}) == 2.5


@pytest.mark.parametrize("text", ["16GB", "0", "-4", "nan", "inf", "sixteen"])
def test_anything_else_is_one_clear_error(text):
    with pytest.raises(MemoryCapError) as caught:
        cap_from_env({ENV: text})
    assert str(caught.value) == (
        f"GRAPHLAB_GPU_MEMORY_GB={text!r} is not a number of GB: set it to the GPU memory one "
        "learner may use, for example GRAPHLAB_GPU_MEMORY_GB=16, or unset it for no cap"
    )


def test_fraction_per_device_and_a_cap_larger_than_the_device():
    assert fractions(16, [32 * 10**9, 8 * 10**9, 16 * 10**9]) == [
        (0.5, False),
        (1.0, True),
        (1.0, False),
    ]


def test_every_visible_device_is_capped(two_gpus, fresh):
    fresh.setenv(ENV, "16")
    assert memory_cap.apply_from_env() == 16.0
    assert two_gpus == [(0.5, 0), (0.25, 1)]
    assert memory_cap.apply_from_env() == 16.0  # once per process
    assert two_gpus == [(0.5, 0), (0.25, 1)]


def test_a_cap_above_a_device_warns_and_allows_that_whole_device(two_gpus, fresh):
    fresh.setenv(ENV, "40")
    with pytest.warns(RuntimeWarning) as caught:
        assert memory_cap.apply_from_env() == 40.0
    assert [str(w.message) for w in caught] == [
        "GRAPHLAB_GPU_MEMORY_GB=40 is more than GPU 0 has (32.0 GB): this process may use the "
        "whole GPU"
    ]
    assert two_gpus == [(1.0, 0), (0.625, 1)]


def test_a_bad_value_warns_once_and_caps_nothing(two_gpus, fresh):
    fresh.setenv(ENV, "16GB")
    with pytest.warns(RuntimeWarning) as caught:
        assert memory_cap.apply_from_env() is None
    assert [str(w.message) for w in caught] == [
        "GRAPHLAB_GPU_MEMORY_GB='16GB' is not a number of GB: set it to the GPU memory one "
        "learner may use, for example GRAPHLAB_GPU_MEMORY_GB=16, or unset it for no cap; "
        "no GPU memory cap is applied"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert memory_cap.apply_from_env() is None
    assert two_gpus == []


def test_without_a_gpu_nothing_is_capped_and_cuda_stays_uninitialised(fresh):
    fresh.setenv(ENV, "16")
    assert memory_cap.apply_from_env() is None
    assert not torch.cuda.is_initialized()


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != ENV} | env
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120
    )


def test_import_graphlab_stays_light_with_the_cap_set():
    out = _python("import sys, graphlab; print('torch' in sys.modules)", **{ENV: "16"})
    assert out.stdout.split() == ["False"], out.stderr


def test_a_kernel_that_imported_torch_first_decides_at_import():
    code = (
        "import torch, graphlab\n"
        "from graphlab.support import memory_cap\n"
        "print(memory_cap._applied, torch.cuda.is_initialized())"
    )
    out = _python(code, **{ENV: "16"})
    assert out.stdout.split() == ["[None]", "False"], out.stderr


def test_backend_applies_it_and_a_bad_value_is_one_warning_line():
    out = _python("import graphlab; print(graphlab.backend().name)", **{ENV: "lots"})
    assert out.stdout.split() == ["emulator"]
    warning_lines = [line for line in out.stderr.splitlines() if "Warning" in line]
    assert len(warning_lines) == 1
    assert warning_lines[0].endswith(
        "RuntimeWarning: GRAPHLAB_GPU_MEMORY_GB='lots' is not a number of GB: set it to the GPU "
        "memory one learner may use, for example GRAPHLAB_GPU_MEMORY_GB=16, or unset it for no "
        "cap; no GPU memory cap is applied"
    )
