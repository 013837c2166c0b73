"""What the GPU and the emulator both say when a graph is listed or changed in place.

:mod:`graphlab.editing` changes torch's graphs through CUDA and :mod:`graphlab.emulator.updates`
changes the emulator's the same way; both report nodes as :class:`GraphNode` and refuse an update
with the same sentences, written once here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphlab.errors import GraphUpdateError

__all__ = [
    "GraphNode",
    "check_kernel_pair",
    "diagnose",
    "no_executable",
    "no_kept_graph",
    "refusal",
    "short_kernel_name",
]


@dataclass(frozen=True)
class GraphNode:
    """One node: its kind (``kernel``, ``memcpy``, ``memset``, ``conditional``...) and name.

    ``name`` is the kernel's function for a kernel node (on the emulator, the aten operation that
    stands for it) and None for other kinds.
    """

    kind: str
    name: str | None = None

    def __str__(self) -> str:
        return self.kind if self.name is None else f"{self.kind} {self.name}"


# A C++ kernel's symbol is mangled: "_ZN2at6native29vectorized_elementwise_kernelILi4E...". Its
# qualified name is the run of <length><identifier> pieces after "_ZN" (or "_Z" for a function
# outside any namespace), up to the template arguments ("I") or the end of the name ("E").
_PIECE = re.compile(r"(\d+)")
# PyTorch's elementwise kernels are one template; what tells them apart is the functor (or the
# lambda's enclosing function) among their template arguments: MulFunctor, tanh_kernel_cuda...
_TELLING = re.compile(r"Functor|_kernel_cuda$")


def short_kernel_name(symbol: str) -> str:
    """``at::native::vectorized_elementwise_kernel<MulFunctor>`` from its mangled symbol.

    The qualified name, plus the last functor (or ``*_kernel_cuda`` function) named in the
    template arguments when there is one; the other template arguments and the parameter types
    are left out: they make names hundreds of characters long. Other names are returned as given.
    """
    if symbol.startswith("_ZN"):
        pos = 3
    elif symbol.startswith("_Z"):
        pos = 2
    else:
        return symbol
    pieces = []
    while pos < len(symbol):
        match = _PIECE.match(symbol, pos)
        if match is None:
            break
        length = int(match.group(1))
        start = match.end()
        pieces.append(symbol[start : start + length])
        pos = start + length
        if not symbol.startswith("N", 2) and pieces:
            break
    if not pieces:
        return symbol
    telling = [name for name in _identifiers(symbol[pos:]) if _TELLING.search(name)]
    return "::".join(pieces) + (f"<{telling[-1]}>" if telling else "")


def _identifiers(mangled: str) -> list[str]:
    """Every <length><identifier> that can be read in ``mangled``, in order (some are noise)."""
    found = []
    for match in re.finditer(r"(?<!\d)(\d+)", mangled):
        length = int(match.group(1))
        name = mangled[match.end() : match.end() + length]
        if len(name) == length and name.isidentifier():
            found.append(name)
    return found


# What each verdict of cuGraphExecUpdate means for graphs captured from PyTorch.
_REASONS = {
    "TOPOLOGY_CHANGED": "the graphs differ in their nodes or edges (a different number of "
    "operations, or operations connected differently)",
    "NODE_TYPE_CHANGED": "a node changed kind (for example a kernel in one graph is a memcpy in "
    "the other)",
    "FUNCTION_CHANGED": "a kernel node runs another kernel function in a way CUDA cannot update",
    "PARAMETERS_CHANGED": "a node's parameters changed in a way CUDA cannot update (for "
    "example a memcpy between other kinds of memory)",
    "NOT_SUPPORTED": "the graph holds a kind of node CUDA cannot update",
    "UNSUPPORTED_FUNCTION_CHANGE": "a kernel changed function in a way CUDA cannot update",
    "ATTRIBUTES_CHANGED": "a kernel node's launch attributes changed",
}


def refusal(verdict: str, detail: str = "") -> GraphUpdateError:
    """The error for an update CUDA refused with ``verdict`` (``CU_GRAPH_EXEC_UPDATE_ERROR_*``)."""
    why = _REASONS.get(verdict.removeprefix("CU_GRAPH_EXEC_UPDATE_ERROR_"), verdict)
    return GraphUpdateError(
        f"CUDA refused to update the target from the source ({verdict}): {why}{detail}. Capture "
        "the source by running exactly the same code on tensors of the same shapes and dtypes.",
        reason=verdict,
    )


def no_kept_graph(role: str, detail: str) -> GraphUpdateError:
    """The error for a graph whose nodes were not kept after capture (``detail``: torch's words)."""
    return GraphUpdateError(
        f"The {role} graph's nodes are gone ({detail}): capture it with "
        "cuda.CUDAGraph(keep_graph=True), which keeps them after capture_end()."
    )


def no_executable(role: str, detail: str) -> GraphUpdateError:
    """The error for a graph that has no executable graph yet (``detail``: torch's words)."""
    return GraphUpdateError(
        f"The {role} graph has no executable graph yet ({detail}): a kept graph is "
        "instantiated by its first replay or by calling instantiate()."
    )


def check_kernel_pair(index: int, target_kinds: list[str], source_kinds: list[str]) -> None:
    """Refuse node ``index`` unless it exists in both graphs and is a kernel in both."""
    if not 0 <= index < min(len(target_kinds), len(source_kinds)):
        raise GraphUpdateError(
            f"Node {index} does not exist: the target has {len(target_kinds)} nodes and the "
            f"source {len(source_kinds)} (graph_nodes(g) lists them, numbered from 0)."
        )
    kinds = (target_kinds[index], source_kinds[index])
    if kinds != ("kernel", "kernel"):
        raise GraphUpdateError(
            f"Node {index} is a {kinds[0]} in the target and a {kinds[1]} in the source: only "
            "kernel nodes take new kernel parameters."
        )


def diagnose(ours: list[GraphNode], theirs: list[GraphNode]) -> GraphUpdateError | None:
    """Why CUDA refuses to update a graph of nodes ``ours`` from one of nodes ``theirs``, if the
    nodes show it: another number of nodes, or a node of another kind at the same place.

    Another kernel function in a kernel node is no reason: CUDA 12 and later update it (seen on
    an H200 with CUDA 13.0), within limits the nodes do not show (same context, same kind of
    launch), which CUDA itself checks.
    """
    if len(ours) != len(theirs):
        return refusal(
            "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED",
            f" (the target has {len(ours)} nodes, the source {len(theirs)})",
        )
    for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        if mine.kind != other.kind:
            return refusal(
                "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED",
                f" (node {index} is a {mine.kind} in the target and a {other.kind} in the source)",
            )
    return None
