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

:func:`capture_on_side_stream` is the usual pattern on that stream: warm a step up there, then
capture it there.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["capture_on_side_stream", "side_stream"]


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


def capture_on_side_stream(
    cuda: Any, fn: Callable[[], Any], *, warmups: int, pool: Any = None, keep_graph: bool = False
) -> tuple[Any, Any]:
    """``(graph, fn())``: ``fn`` run ``warmups`` times on the side stream, then captured there.

    ``cuda`` is ``torch.cuda`` or the emulator; ``pool`` is the memory pool to capture into (a new
    one by default); ``keep_graph=True`` keeps the captured graph's nodes for
    :mod:`graphlab.editing` (torch 2.8+) and leaves the graph to be instantiated later. Warming
    up creates what ``fn`` initialises lazily (cuBLAS handles and workspaces, allocator blocks)
    before capture, where it must not happen, as ``torch.cuda.graph`` asks. Capturing on the
    warmed-up stream keeps its cuBLAS workspace, made during the warm-up, out of the graph's
    pool, and lets graphs that share a pool share it well. The side stream is joined back into
    the caller's stream before the capture, so nothing is left running on it.
    Returns the graph and what ``fn`` returned inside the capture (the tensors each replay writes).
    """
    stream = side_stream(cuda)
    stream.wait_stream(cuda.current_stream())
    with cuda.stream(stream):
        for _ in range(warmups):
            fn()
    cuda.current_stream().wait_stream(stream)
    # torch before 2.8 takes no keep_graph argument at all: pass it only when asked for.
    graph = cuda.CUDAGraph(keep_graph=True) if keep_graph else cuda.CUDAGraph()
    with cuda.graph(graph, pool=pool, stream=stream):
        out = fn()
    return graph, out
