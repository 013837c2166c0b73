"""Changing an emulated graph in place, as ``cuGraphExecUpdate`` changes an executable graph.

An emulated graph is its list of recorded steps, one per operation a GPU would run as a kernel,
each bound to the memory it read and wrote at capture. CUDA's update takes every node's
parameters (its addresses and scalars) from another graph of the same shape; here the target takes
the source's steps, under CUDA's conditions: as many steps, each of the same kind (a kernel, or a
copy that a GPU runs as a memcpy node); another operation in a step is accepted, as CUDA 12 and
later accept another kernel function. Like the GPU, the emulator checks only the graph's
shape: the update is the program's promise that the source's memory outlives the target's
replays, and a replay after the source was reset is announced with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphlab.support.graph_updates import (
    GraphNode,
    check_kernel_pair,
    diagnose,
    no_executable,
    no_kept_graph,
)

if TYPE_CHECKING:
    from .graphs import CUDAGraph

__all__ = ["exec_update", "nodes", "set_kernel_node"]

_COPY = "aten.copy_.default"


def _kept(graph: CUDAGraph, role: str) -> tuple[str, ...]:
    """The recorded kernels of a kept, captured graph (the emulator's cudaGraph_t)."""
    if not graph._keep_graph:
        raise no_kept_graph(
            role, "it was created without keep_graph=True, so capture_end() dropped them"
        )
    if graph._steps is None:
        raise no_kept_graph(role, "it has not been captured, or was reset")
    return graph._kernels


def _executable(graph: CUDAGraph, role: str) -> None:
    if graph._steps is None or not graph._instantiated:
        raise no_executable(role, "a kept graph is not instantiated by capture_end()")


def _kind(kernel: str) -> str:
    # A device-to-device copy_ runs as a memcpy node on a GPU; every other recorded op as a kernel.
    return "memcpy" if kernel == _COPY else "kernel"


def _nodes(kernels: Sequence[str]) -> list[GraphNode]:
    return [GraphNode(_kind(k), k if _kind(k) == "kernel" else None) for k in kernels]


def nodes(graph: CUDAGraph) -> list[GraphNode]:
    """One node per recorded operation, named by its aten operation."""
    return _nodes(_kept(graph, "given"))


def exec_update(target: CUDAGraph, source: CUDAGraph) -> None:
    """Give ``target`` the steps of ``source`` if CUDA would update one from the other."""
    _executable(target, "target")
    refused = diagnose(_nodes(target._kernels), _nodes(_kept(source, "source")))
    if refused is not None:
        raise refused
    assert source._steps is not None  # _kept() checked it
    target._steps = list(source._steps)
    target._kernels = source._kernels
    target._inputs = source._inputs
    target._updated_from = source


def set_kernel_node(target: CUDAGraph, source: CUDAGraph, index: int) -> None:
    """Give step ``index`` of ``target`` the memory and scalars of ``source``'s step ``index``."""
    _executable(target, "target")
    ours = _kept(target, "target")
    theirs = _kept(source, "source")
    check_kernel_pair(index, [_kind(k) for k in ours], [_kind(k) for k in theirs])
    assert target._steps is not None and source._steps is not None  # _kept() checked them
    target._steps[index] = source._steps[index]
    target._kernels = (*ours[:index], theirs[index], *ours[index + 1 :])
    target._updated_from = source
