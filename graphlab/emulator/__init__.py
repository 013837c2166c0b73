"""graphlab's CPU emulator of CUDA graphs: ``graphlab.cuda`` on a machine without a GPU.

It offers the names lessons use from ``torch.cuda`` (``CUDAGraph``, ``graph``, ``Stream``,
``stream``, ``current_stream``, ``Event``, ``synchronize``, ``graph_pool_handle``,
``make_graphed_callables``, ...) with the same *semantics*: capture records the operations of a
block without doing them; each replay re-runs them on the very same memory (not the tensor
objects: ``set_``, ``.data =`` or rebinding a name does not redirect it), so new data must be
copied into the captured inputs, the next replay overwrites the outputs, in-place updates
accumulate, random ops draw fresh numbers, shapes are frozen, Python code ran once at capture,
and anything that needs the host inside a capture fails with the CUDA error a GPU gives.

It never says anything about speed: ``Event.elapsed_time`` raises. Where it cannot behave like a
GPU it warns once (see :mod:`graphlab.emulator.differences`); a replay of memory the program has
let go of, which a GPU would read after freeing it, warns each time with
:class:`FreedInputWarning`.
"""

from __future__ import annotations

from typing import NoReturn

import torch

from graphlab.errors import GraphlabError
from graphlab.support import torch_internals

from .differences import DIFFERENCES, EmulatorDifferenceWarning
from .graphed_callables import make_graphed_callables
from .graphs import CUDAGraph, graph, is_current_stream_capturing
from .optimizers import allow_capturable_optimizers
from .pools import empty_cache, graph_pool_handle, memory_snapshot
from .storages import FreedInputWarning
from .streams import (
    Event,
    Stream,
    current_stream,
    default_stream,
    set_stream,
    stream,
    synchronize,
)

# Fail at import, with the torch versions that work, rather than deep inside a lesson.
torch_internals.check()

__all__ = [
    "DIFFERENCES",
    "CUDAGraph",
    "EmulatorDifferenceWarning",
    "Event",
    "FreedInputWarning",
    "Stream",
    "current_stream",
    "default_stream",
    "device_count",
    "empty_cache",
    "graph",
    "graph_pool_handle",
    "is_available",
    "is_current_stream_capturing",
    "make_graphed_callables",
    "manual_seed",
    "manual_seed_all",
    "memory_snapshot",
    "set_stream",
    "stream",
    "synchronize",
]

allow_capturable_optimizers()


def is_available() -> bool:
    """False: this is the emulator, and there is no CUDA device."""
    return False


def device_count() -> int:
    """0: the emulator runs on the CPU."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the generator random ops in graphs draw from (torch's CPU generator)."""
    torch.manual_seed(seed)


manual_seed_all = manual_seed


def __getattr__(name: str) -> NoReturn:
    if name.startswith("__"):
        raise AttributeError(name)
    from graphlab.language import gettext as _

    raise AttributeError(
        _(
            "graphlab.cuda is the CPU emulator here and has no {name!r}: it emulates the "
            "semantics of CUDA graphs only. On a machine with a GPU, graphlab.cuda is torch.cuda "
            "and has it."
        ).format(name=name)
    )


del GraphlabError
