"""Changing a captured graph without capturing it again (lesson 12).

A captured graph is two objects in CUDA: the graph itself (``cudaGraph_t``, the nodes and edges
that stream capture recorded) and the executable graph (``cudaGraphExec_t``, what
``cudaGraphInstantiate`` built from it and what a replay launches). torch keeps the first only
when asked, ``torch.cuda.CUDAGraph(keep_graph=True)`` (torch 2.8+), and hands out both as raw
handles, ``raw_cuda_graph()`` and ``raw_cuda_graph_exec()`` (torch 2.9+). CUDA can then change an
executable graph in place:

- :func:`update_graph` takes every node's parameters from another graph of the same shape
  (``cudaGraphExecUpdate``): same nodes, same edges, same kernels; other addresses or scalars;
- :func:`set_kernel_node` changes one kernel node only, with the parameters of the matching node
  of another graph (``cudaGraphExecKernelNodeSetParams``).

Neither builds a new executable graph, which is what makes them cheaper than capturing and
instantiating again. On a GPU they go through NVIDIA's ``cuda-bindings`` package
(:mod:`graphlab.editing.cuda_graphs`); on the CPU emulator they do the same to the emulator's
recorded operations (:mod:`graphlab.emulator.updates`), so the lesson's semantics run anywhere.

A graph can also decide on the GPU how often part of it runs: :class:`WhileLoop` builds a WHILE
conditional node (:mod:`graphlab.editing.conditional`).
"""

from __future__ import annotations

import numbers
from typing import Any

import torch

from graphlab.emulator import CUDAGraph as EmulatedGraph
from graphlab.emulator import updates as emulated
from graphlab.errors import GraphUpdateError
from graphlab.language import gettext as _
from graphlab.support.graph_updates import GraphNode

from .conditional import WhileLoop, jacobi_reference

__all__ = [
    "GraphNode",
    "WhileLoop",
    "graph_nodes",
    "jacobi_reference",
    "set_kernel_node",
    "update_graph",
]


def _on_emulator(**graphs: object) -> bool:
    """Whether the graphs (by role: "given", "target", "source") are the emulator's.

    Anything but a graph is refused here, by its role, rather than deep in CUDA's bindings.
    """
    for role, graph in graphs.items():
        if not isinstance(graph, (EmulatedGraph, torch.cuda.CUDAGraph)):
            raise GraphUpdateError(
                _(
                    "The {role} graph is {graph}, not a CUDA graph: pass a "
                    "cuda.CUDAGraph(keep_graph=True) that captured your step (from graphlab "
                    "import cuda)."
                ).format(role=role, graph=_shown(graph))
            )
    kinds = {isinstance(g, EmulatedGraph) for g in graphs.values()}
    if len(kinds) > 1:
        raise GraphUpdateError(
            _(
                "One graph is the emulator's and the other torch's: capture both with "
                "the same `cuda` (from graphlab import cuda)."
            )
        )
    return kinds == {True}


def _shown(value: object) -> str:
    """``value`` and its type, short, for a message."""
    text = repr(value)
    if len(text) > 40:
        text = text[:39] + "…"
    return f"{text} ({type(value).__name__})"


def graph_nodes(graph: Any) -> list[GraphNode]:
    """The nodes of a kept graph, in CUDA's order: each one's kind and, for a kernel, its name.

    ``graph`` must have been created with ``CUDAGraph(keep_graph=True)`` and captured.
    """
    if _on_emulator(given=graph):
        return emulated.nodes(graph)
    from . import cuda_graphs

    return cuda_graphs.nodes(graph)


def update_graph(target: Any, source: Any) -> None:
    """Give ``target``'s executable graph every node parameter of ``source`` (cudaGraphExecUpdate).

    ``target`` must be instantiated (captured, and ``instantiate()`` called if it was kept);
    ``source`` must be a kept graph (``keep_graph=True``) with the same nodes, edges and kernels.
    Afterwards replaying ``target`` reads and writes the memory ``source`` was captured with,
    so keep ``source`` (and its memory pool) alive while ``target`` replays. Raises
    :class:`~graphlab.errors.GraphUpdateError` with CUDA's reason when the graphs differ; the
    target is then left as it was.
    """
    if _on_emulator(target=target, source=source):
        emulated.exec_update(target, source)
        return
    from . import cuda_graphs

    cuda_graphs.exec_update(target, source)


def set_kernel_node(target: Any, source: Any, index: int) -> None:
    """Give kernel node ``index`` of ``target``'s executable graph the parameters of ``source``'s.

    Both graphs must be kept (``keep_graph=True``), ``target`` instantiated, and node ``index``
    (as numbered by :func:`graph_nodes`) a kernel of the same function in both. Only that node
    changes: the other nodes keep reading and writing ``target``'s own memory.
    """
    # bool is an int to Python, but True is no node number; nor is 1.0 or "0".
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise GraphUpdateError(
            _(
                "The node index is {index}: give a node's number as an int, from 0 (as "
                "graph_nodes(graph) numbers them)."
            ).format(index=_shown(index))
        )
    index = int(index)
    if _on_emulator(target=target, source=source):
        emulated.set_kernel_node(target, source, index)
        return
    from . import cuda_graphs

    cuda_graphs.set_kernel_node(target, source, index)
