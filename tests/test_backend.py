"""Which backend is live, and what can be said of it without importing torch."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
import torch

from graphlab.backend import Backend, known_without_torch, torch_build
from graphlab.errors import GraphlabError
from graphlab.server.backend_probe import PROBE

NO_CUDA_BUILD = Backend(
    "emulator",
    "cpu",
    "this torch build has no CUDA support; CUDA graph semantics run on the CPU emulator",
)
FORCED = Backend("emulator", "cpu", "GRAPHLAB_BACKEND=emulator was set")
# The module itself: graphlab.backend, as an attribute of graphlab, is the function.
backend_module = importlib.import_module("graphlab.backend")


def fresh_python(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout


def test_torch_build_reads_torchs_version_file_without_importing_torch():
    found = fresh_python(
        "import sys\nfrom graphlab.backend import torch_build\nb = torch_build()\n"
        "print(b['__version__'], b['cuda'], b['hip'], 'torch' in sys.modules)"
    )
    assert found.split() == [
        torch.__version__,
        str(torch.version.cuda),
        str(torch.version.hip),
        "False",
    ]


def test_torch_build_asks_torch_once_it_is_imported():
    assert torch_build()["__version__"] == torch.__version__


@pytest.mark.parametrize(
    ("build", "forced", "expected"),
    [
        ({"__version__": "2.5.1+cpu", "cuda": None, "hip": None}, "", NO_CUDA_BUILD),
        ({"__version__": "2.11.0+cu130", "cuda": "13.0", "hip": None}, "", None),
        ({"__version__": "2.9.0+rocm6.4", "cuda": None, "hip": "6.4.4"}, "", None),
        ({}, "", None),  # no torch, or no version file: leave it to torch
        ({"__version__": "2.11.0+cu130", "cuda": "13.0", "hip": None}, "emulator", FORCED),
        ({"__version__": "2.5.1+cpu", "cuda": None, "hip": None}, " Emulator ", FORCED),
        # A GPU asked for where torch cannot have one: backend() says so, with its error.
        ({"__version__": "2.5.1+cpu", "cuda": None, "hip": None}, "cuda", None),
    ],
)
def test_what_is_known_without_torch(monkeypatch, build, forced, expected):
    monkeypatch.setattr(backend_module, "torch_build", lambda: build)
    monkeypatch.setenv("GRAPHLAB_BACKEND", forced)
    assert known_without_torch() == expected


def test_a_backend_that_is_not_one_is_refused_before_torch_is_asked(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_BACKEND", "gpu")
    with pytest.raises(GraphlabError) as refused:
        known_without_torch()
    assert str(refused.value) == (
        "GRAPHLAB_BACKEND='gpu' is not a backend: use 'cuda', 'emulator' or leave it unset."
    )


def test_the_servers_probe_imports_torch_only_where_torch_must_answer():
    # On a build without CUDA (this machine's) the probe answers from torch's version file; a
    # CUDA build must import torch to ask whether it finds a GPU.
    lines = fresh_python(PROBE + "import sys\nprint('torch' in sys.modules)\n").splitlines()
    assert lines[-1] == str(torch.version.cuda is not None or torch.version.hip is not None)
