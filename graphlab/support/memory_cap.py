"""A per-process cap on GPU memory, so learners sharing a GPU cannot starve each other.

A workshop host sets ``GRAPHLAB_GPU_MEMORY_GB`` (decimal gigabytes, 10**9 bytes, as GPU vendors
count) in every learner's environment. When graphlab decides its backend in a kernel that has a
GPU, each visible device gets ``torch.cuda.set_per_process_memory_fraction(cap / total)``: the
caching allocator then refuses to hold more than the cap on that device, and an experiment that
asks for more fails with PyTorch's out-of-memory error in this kernel instead of in a neighbour's.

The cap binds the caching allocator only. The CUDA context (a few hundred MB the driver keeps per
process) comes on top, and each kernel is a process of its own: a learner with two lessons open
holds two caps.

Nothing here imports torch or touches CUDA by itself. :func:`apply_from_env` is called by
:func:`graphlab.backend.backend` (which imports torch anyway) and by ``import graphlab`` only when
torch is already imported, so ``import graphlab`` stays light and a machine without a GPU never
initialises CUDA for the cap.

A value that is not a positive number is refused with :class:`MemoryCapError` by
:func:`cap_from_env` (``graphlab doctor`` reports it); a kernel only warns, once, and runs
uncapped, so a typo in the hub's settings never stops a lesson from starting.
"""

from __future__ import annotations

import math
import os
import warnings

from graphlab.errors import GraphlabError

__all__ = ["ENV", "GB", "MemoryCapError", "apply_from_env", "cap_from_env", "fractions"]

#: Environment variable holding the cap, in GB.
ENV = "GRAPHLAB_GPU_MEMORY_GB"
#: Bytes in one GB of the cap (decimal, like the "16 GB" on a card's box).
GB = 10**9

_applied: list[float | None] = []  # what apply_from_env decided, once per process


class MemoryCapError(GraphlabError, ValueError):
    """``GRAPHLAB_GPU_MEMORY_GB`` is set to something that is not a positive number of GB."""


def cap_from_env(environ: dict[str, str] | None = None) -> float | None:
    """The cap in GB from ``GRAPHLAB_GPU_MEMORY_GB``; None when it is unset or empty."""
    text = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise MemoryCapError(
            f"{ENV}={text!r} is not a number of GB: set it to the GPU memory one learner may "
            f"use, for example {ENV}=16, or unset it for no cap"
        )
    return value


def fractions(cap_gb: float, totals: list[int]) -> list[tuple[float, bool]]:
    """For each device's total memory in bytes: the fraction the cap allows, and whether the cap
    was larger than the device (then the fraction is 1, the whole device)."""
    return [(min(cap_gb * GB / total, 1.0), cap_gb * GB > total) for total in totals]


def apply_from_env() -> float | None:
    """Cap every visible GPU at ``GRAPHLAB_GPU_MEMORY_GB``; return the cap applied (GB) or None.

    Runs once per process; later calls return the first answer. Does nothing, and initialises
    nothing, when the variable is unset or torch sees no GPU.
    """
    if _applied:
        return _applied[0]
    try:
        cap = cap_from_env()
    except MemoryCapError as exc:
        warnings.warn(f"{exc}; no GPU memory cap is applied", RuntimeWarning, stacklevel=2)
        cap = None
    if cap is not None:
        cap = _cap_devices(cap)
    _applied.append(cap)
    return cap


def _cap_devices(cap_gb: float) -> float | None:
    import torch

    if not torch.cuda.is_available():
        return None
    count = torch.cuda.device_count()
    totals = [torch.cuda.mem_get_info(i)[1] for i in range(count)]
    for i, (fraction, larger) in enumerate(fractions(cap_gb, totals)):
        if larger:
            warnings.warn(
                f"{ENV}={cap_gb:g} is more than GPU {i} has ({totals[i] / GB:.1f} GB): this "
                "process may use the whole GPU",
                RuntimeWarning,
                stacklevel=3,
            )
        torch.cuda.set_per_process_memory_fraction(fraction, i)
    return cap_gb
