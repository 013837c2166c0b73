"""Graph memory pools: where the tensors allocated during a capture live, and how big a pool is.

On a GPU every tensor allocated while a graph is captured comes from that graph's *private memory
pool*. The graph's kernels read and write those exact addresses on every replay, so the pool keeps
them reserved for as long as the graph exists; ``CUDAGraph.reset()`` (or deleting the graph) gives
them back once no tensor uses them. Graphs can share one pool (``graph_pool_handle()``), which is
how several graphs avoid each reserving their own memory.

The emulator's graphs hold the storages they replay into, so a pool here is the set of storages
allocated during captures into it; its size is their bytes. ``memory_snapshot()`` reports them in
the shape of ``torch.cuda.memory_snapshot()`` (one segment per storage, with
``segment_pool_id``), so the same code measures a pool on both backends.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .differences import warn_once

if TYPE_CHECKING:
    import torch

__all__ = [
    "Pool",
    "empty_cache",
    "get_pool",
    "graph_pool_handle",
    "in_a_pool",
    "memory_snapshot",
    "new_pool",
]

_ids = itertools.count(1)
_pools: dict[tuple[int, ...], Pool] = {}


class Pool:
    """The storages allocated in one pool, held weakly: the graphs hold them strongly."""

    def __init__(self, pool_id: tuple[int, ...]):
        self.id = pool_id
        self._storages: dict[int, weakref.ref[torch.UntypedStorage]] = {}

    def add(self, storage: torch.UntypedStorage) -> None:
        self._storages[storage.data_ptr()] = weakref.ref(storage)

    def storages(self) -> list[torch.UntypedStorage]:
        """The storages of this pool that are still alive (a graph or a user holds them)."""
        alive = {ptr: ref for ptr, ref in self._storages.items() if ref() is not None}
        self._storages = alive
        return [storage for ref in alive.values() if (storage := ref()) is not None]

    def nbytes(self) -> int:
        return sum(s.nbytes() for s in self.storages())

    def has(self, storage: torch.UntypedStorage) -> bool:
        """Whether ``storage`` was allocated in this pool (by a capture into it)."""
        ref = self._storages.get(storage.data_ptr())
        return ref is not None and ref() is storage  # torch keeps one Python object per storage


def graph_pool_handle() -> tuple[int, int]:
    """A new pool id to pass as ``pool=`` to several captures, so that their graphs share it."""
    pool_id = (0, next(_ids))
    _pools[pool_id] = Pool(pool_id)
    return pool_id


def new_pool() -> Pool:
    """A graph's own private pool (what ``CUDAGraph.pool()`` returns the id of)."""
    pool_id = (next(_ids), 0)
    _pools[pool_id] = Pool(pool_id)
    return _pools[pool_id]


def get_pool(pool_id: Sequence[int]) -> Pool:
    """The pool with id ``pool_id`` (from ``graph_pool_handle()`` or another graph's ``pool()``)."""
    key = tuple(pool_id)
    if key not in _pools:
        _pools[key] = Pool(key)
    return _pools[key]


def in_a_pool(storage: torch.UntypedStorage) -> bool:
    """Whether ``storage`` was allocated during a capture: graph memory, not the program's."""
    return any(pool.has(storage) for pool in _pools.values())


def memory_snapshot() -> list[dict[str, Any]]:
    """The live pool storages as segments, in the shape of ``torch.cuda.memory_snapshot()``."""
    warn_once("memory_sizes")
    segments: list[dict[str, Any]] = []
    for pool in _pools.values():
        for storage in pool.storages():
            size = storage.nbytes()
            segments.append(
                {
                    "device": 0,
                    "address": storage.data_ptr(),
                    "total_size": size,
                    "allocated_size": size,
                    "active_size": size,
                    "requested_size": size,
                    "stream": 0,
                    "segment_type": "small" if size <= 1 << 20 else "large",
                    "segment_pool_id": pool.id,
                    "is_expandable": False,
                    "frames": [],
                    "blocks": [{"size": size, "requested_size": size, "state": "active_allocated"}],
                }
            )
    return segments


def empty_cache() -> None:
    """Forget pools that hold nothing. (The CPU frees a tensor's memory as soon as it dies.)"""
    for pool_id in [key for key, pool in _pools.items() if not pool.storages()]:
        del _pools[pool_id]
