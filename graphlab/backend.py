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

import os
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from graphlab.language import gettext as _

__all__ = ["Backend", "backend"]


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

    forced = os.environ.get("GRAPHLAB_BACKEND", "").strip().lower()
    if forced not in ("", "cuda", "emulator"):
        from .errors import GraphlabError

        raise GraphlabError(
            _(
                "GRAPHLAB_BACKEND={forced} is not a backend: use 'cuda', 'emulator' or "
                "leave it unset."
            ).format(forced=repr(forced))
        )
    has_cuda = torch.cuda.is_available()
    if forced == "emulator":
        return Backend("emulator", "cpu", "GRAPHLAB_BACKEND=emulator was set")
    if has_cuda:
        return Backend(
            "cuda", "cuda", "torch.cuda.is_available() is True", torch.cuda.get_device_name(0)
        )
    if forced == "cuda":
        from .errors import NeedsGPUError

        raise NeedsGPUError(
            _(
                "GRAPHLAB_BACKEND=cuda was set but torch sees no CUDA device: unset it "
                "to use the CPU emulator, or install a CUDA build of torch on a machine "
                "with an NVIDIA GPU."
            )
        )
    why = (
        "this torch build has no CUDA support"
        if torch.version.cuda is None
        else "torch has CUDA support but finds no GPU"
    )
    return Backend("emulator", "cpu", f"{why}; CUDA graph semantics run on the CPU emulator")


def cuda_module() -> ModuleType:
    """``torch.cuda`` on a GPU, :mod:`graphlab.emulator` elsewhere."""
    if backend().is_cuda:
        import torch

        return torch.cuda
    from . import emulator

    return emulator
