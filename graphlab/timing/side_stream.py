"""The one side stream graphlab warms up (and captures) on, reused for the life of the process.

PyTorch's graph docs warm a step up on a side stream before capture, and the usual way to get one
is ``torch.cuda.Stream()``. That costs memory when done again and again: PyTorch gives every
stream on which a matmul runs its own cuBLAS workspace and keeps it until the process ends (33 MiB
per stream on the H200, measured with torch 2.11; 32 MiB is cuBLAS's Hopper default).
``torch.cuda.Stream()`` hands out the 32 streams of a per-device pool in turn, so an experiment
that makes a fresh stream on every run leaves a new workspace behind on each of the first 32 runs:
reserved memory climbs by about 1 GiB before it levels off. A workshop reruns the same notebook
cells in one kernel, so graphlab's helpers share a single side stream per device instead and hold
a single workspace.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["side_stream"]


def side_stream(cuda: Any) -> Any:
    """The reusable side stream of ``cuda`` (``torch.cuda`` or the emulator) on its current device.

    Reuse is safe because graphlab never leaves work running on it: every helper joins the side
    stream back into the caller's stream before returning.
    """
    device = cuda.current_device() if hasattr(cuda, "current_device") else 0
    return _stream(cuda, device)


@cache
def _stream(cuda: Any, device: int) -> Any:
    # side_stream passes the current device, so the stream is made on the device it is cached for.
    return cuda.Stream()
