"""Putting the process back in order after a capture fails, so the next cell starts clean.

A capture that fails leaves three things behind in the learner's process:

- **The capture stream stays current.** ``torch.cuda.graph`` ends the capture before it switches
  streams back, so when ending the capture raises, its side stream remains the current stream and
  every later cell would run on it.
- **Its memory pool stays reserved** (torch 2.11, measured on the H200 with
  ``benchmarks/failed_capture_memory.py``). Each capture allocates from a private pool. A failed
  capture never ends the allocator's routing into that pool, nor gives back the pool's reference,
  so neither deleting the graph, ``graph.reset()`` nor ``torch.cuda.empty_cache()`` frees it:
  every failed capture kept its segment: 42 MiB stayed reserved after 20 of them.
- **The GPU's random generator stays in capture mode.** Every capture puts the device's default
  generator in capture mode and only a capture that ends well takes it out. After a failure,
  every random op on the GPU (``torch.randn``, dropout) raises "Offset increment outside graph
  capture encountered unexpectedly" until some later capture succeeds.

:func:`recover` undoes all three. ``graphlab.failures.explanation.explained`` and the exercise
checkers call
it after a failure; :func:`release_failed_captures` (``graphlab.release_failed_captures``) undoes
the last two, for code that catches a capture error itself.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from graphlab.support.torch_internals import end_allocate_to_pool, release_pool

__all__ = ["current_stream", "recover", "release_failed_captures"]


def _graph_api() -> Any:
    """The live graph API (torch.cuda or the emulator), or None if CUDA has not been started.

    Never starts CUDA itself: a block that did not touch the GPU has nothing to put back.
    """
    from graphlab.backend import backend, cuda_module

    if backend().is_cuda:
        return torch.cuda if torch.cuda.is_initialized() else None
    return cuda_module()


def current_stream() -> Any:
    """The stream to come back to after a failure: the current one, or None before CUDA starts."""
    api = _graph_api()
    return None if api is None else api.current_stream()


def recover(entry_stream: Any = None) -> None:
    """After a failed capture: make ``entry_stream`` current again and release the lost pools.

    ``entry_stream`` is what :func:`current_stream` returned before the capture (None: the
    default stream). Nothing is done while a capture is still open, which belongs to its owner.
    """
    api = _graph_api()
    if api is None or api.is_current_stream_capturing():
        return
    target = entry_stream if entry_stream is not None else api.default_stream()
    if api.current_stream() != target:
        api.set_stream(target)
    if api is torch.cuda:
        release_failed_captures()


def release_failed_captures() -> int:
    """Give back what failed CUDA graph captures still hold; return how many memory pools it freed.

    Call it after catching a capture error in your own code. It frees the memory pools of failed
    captures, then takes the GPU's random generator out of capture mode
    (:func:`_end_generator_capture_mode`). Live graphs' pools are left alone, and so are
    ``torch.cuda.MemPool`` pools. Returns 0 and does nothing on the CPU, before CUDA starts and
    during a capture.
    """
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return 0
    if torch.cuda.is_current_stream_capturing():
        return 0  # what a capture in progress holds is not ours to end
    # Pools first: the capture that ends the generator's capture mode must not find a failed
    # capture's allocation routing still active.
    released = _release_failed_pools()
    # An error that broke the CUDA context for good (an illegal address) makes this capture fail
    # too; nothing can be saved then, and the learner's own error is the one to see.
    with contextlib.suppress(RuntimeError):
        _end_generator_capture_mode()
    if released:
        torch.cuda.empty_cache()
    return released


def _release_failed_pools() -> int:
    """End the allocator's routing into failed captures' pools and drop their references.

    A pool belongs to a failed capture when the caching allocator is still routing allocations
    into it although no capture is open: a successful capture ends that routing when it ends.
    Ending the routing and dropping the reference the capture took lets ``empty_cache`` return
    the pool's segments to the GPU. On torch versions without these hooks nothing is freed.
    """
    end_routing, release = end_allocate_to_pool(), release_pool()
    if end_routing is None or release is None:
        return 0
    # Only pools holding segments can hold memory. Graph pools' ids are (n, 0): (0, 0) is the
    # ordinary memory and (0, n) a torch.cuda.MemPool, whose routing is on for as long as a
    # `with torch.cuda.use_mem_pool(...)` block runs and must not be ended here.
    pools = {
        (segment["device"], tuple(segment["segment_pool_id"]))
        for segment in torch.cuda.memory_snapshot()
        if segment.get("segment_pool_id", (0, 0))[0] != 0
    }
    released = 0
    for device, pool in sorted(pools):
        try:
            end_routing(device, pool)
        except RuntimeError:
            continue  # "not currently recording to mempool_id": a live graph's pool, keep it
        release(device, pool)
        released += 1
    return released


def _end_generator_capture_mode() -> None:
    """Take the current device's random generator out of the capture mode a failure left it in.

    torch leaves capture mode only at the end of a capture that succeeds, so make one: a fill
    of a tensor that already exists. It draws no random number (the generator's offset, and with
    it the learner's random sequence, is unchanged) and allocates nothing in the graph's pool.
    """
    target = torch.zeros(1, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        target.zero_()
