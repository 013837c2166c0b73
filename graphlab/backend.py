"""Which backend is live: real CUDA graphs on a GPU, or the CPU emulator.

Notebooks write ``from graphlab import cuda, DEVICE`` and then use the ``torch.cuda`` API shape.
On a machine with a CUDA device, ``cuda`` *is* ``torch.cuda``; elsewhere it is
:mod:`graphlab.emulator`, which reproduces the semantics of capture and replay on the CPU but never
says anything about speed.

Set ``GRAPHLAB_BACKEND=emulator`` to force the emulator on a GPU machine (useful for checking that a
notebook's semantic cells print the same on both).

Deciding the backend also applies the per-learner GPU memory cap, ``GRAPHLAB_GPU_MEMORY_GB``
(:mod:`graphlab.support.memory_cap`), since this is where a kernel first imports torch for graphlab.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from graphlab.language import gettext as _

__all__ = ["Backend", "backend", "known_without_torch", "torch_build"]


@dataclass(frozen=True)
class Backend:
    """The live backend and the reason it was chosen."""

    name: str  # "cuda" or "emulator"
    device: str  # "cuda" or "cpu": where tensors of the lessons live
    reason: str
    gpu: str | None = None

    @property
    def is_cuda(self) -> bool:
        return self.name == "cuda"

    def __str__(self) -> str:
        where = f" on {self.gpu}" if self.gpu else ""
        return f"{self.name}{where}: {self.reason}"


@cache
def backend() -> Backend:
    """Return the live :class:`Backend`, deciding once per process."""
    import torch

    from .support.memory_cap import apply_from_env

    apply_from_env()

    known = known_without_torch()
    if known is not None:
        return known
    if torch.cuda.is_available():
        return Backend(
            "cuda", "cuda", "torch.cuda.is_available() is True", torch.cuda.get_device_name(0)
        )
    if _forced() == "cuda":
        from .errors import NeedsGPUError

        raise NeedsGPUError(
            _(
                "GRAPHLAB_BACKEND=cuda was set but torch sees no CUDA device: unset it "
                "to use the CPU emulator, or install a CUDA build of torch on a machine "
                "with an NVIDIA GPU."
            )
        )
    why = _NO_CUDA_BUILD if torch.version.cuda is None else _NO_GPU  # a ROCm build, say
    return Backend("emulator", "cpu", f"{why}; {_EMULATED}")


_NO_CUDA_BUILD = "this torch build has no CUDA support"
_NO_GPU = "torch has CUDA support but finds no GPU"
_EMULATED = "CUDA graph semantics run on the CPU emulator"


def known_without_torch() -> Backend | None:
    """The backend where it is decided without importing torch (1.5 s of CPU), else None.

    ``GRAPHLAB_BACKEND=emulator`` chooses the emulator, and so does a torch built without CUDA
    or ROCm (whose ``torch.cuda`` never finds a device), unless ``GRAPHLAB_BACKEND=cuda`` asks
    for a GPU; only torch can say whether a GPU build finds a GPU.
    """
    forced = _forced()
    if forced == "emulator":
        return Backend("emulator", "cpu", "GRAPHLAB_BACKEND=emulator was set")
    build = torch_build()
    if forced == "" and "__version__" in build and not (build.get("cuda") or build.get("hip")):
        return Backend("emulator", "cpu", f"{_NO_CUDA_BUILD}; {_EMULATED}")
    return None


def torch_build() -> dict[str, Any]:
    """What torch's ``torch/version.py`` says: ``__version__``, ``cuda`` (None for a build
    without CUDA), ``hip``; read from the file unless torch is imported already, since importing
    it takes 1.5 s of CPU. Empty where torch is not installed."""
    if "torch" in sys.modules:
        loaded: dict[str, Any] = vars(sys.modules["torch"].version)
        return loaded
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return {}
    version = Path(spec.submodule_search_locations[0]) / "version.py"
    return runpy.run_path(str(version)) if version.is_file() else {}


def _forced() -> str:
    """``GRAPHLAB_BACKEND``, checked: "", "cuda" or "emulator"."""
    forced = os.environ.get("GRAPHLAB_BACKEND", "").strip().lower()
    if forced not in ("", "cuda", "emulator"):
        from .errors import GraphlabError

        raise GraphlabError(
            _(
                "GRAPHLAB_BACKEND={forced} is not a backend: use 'cuda', 'emulator' or "
                "leave it unset."
            ).format(forced=repr(forced))
        )
    return forced


def cuda_module() -> ModuleType:
    """``torch.cuda`` on a GPU, :mod:`graphlab.emulator` elsewhere."""
    if backend().is_cuda:
        import torch

        return torch.cuda
    from . import emulator

    return emulator
