"""The GPU side of :mod:`graphlab.editing`: a torch graph's nodes and in-place updates, via CUDA.

torch returns the graph and the executable graph as integers (``raw_cuda_graph()``,
``raw_cuda_graph_exec()``); NVIDIA's ``cuda-bindings`` package wraps them into handles and calls
CUDA. Everything here goes through the *driver* API (``cuGraph*``): torch links its own copy of
the CUDA runtime, so the runtime library that ``cuda-bindings`` loads does not know torch's kernels
(asking it for a kernel node's parameters fails with ``cudaErrorInvalidDeviceFunction``, seen with
torch 2.11 and cuda-bindings 13), while the driver is one per process and knows every kernel.
CUDA reports failures as return codes, never exceptions; every call here checks its code and turns
a failure into one sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.errors import GraphlabError, GraphUpdateError
from graphlab.language import gettext as _
from graphlab.support.graph_updates import (
    GraphNode,
    check_kernel_pair,
    diagnose,
    no_executable,
    no_kept_graph,
    short_kernel_name,
)

__all__ = ["exec_update", "nodes", "set_kernel_node"]


def _driver() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError:
        major = (torch.version.cuda or "12").split(".")[0]
        raise GraphlabError(
            _(
                "Changing a graph on the GPU needs NVIDIA's cuda-bindings package, which "
                "is not installed: pip install 'cuda-bindings=={major}.*' (the CUDA "
                "major version of this torch build, {cuda}), then restart the kernel."
            ).format(major=major, cuda=torch.version.cuda)
        ) from None
    return driver


def _call(result: Any, what: str) -> Any:
    """The values a driver call returns after its status, or one clear error."""
    driver = _driver()
    status, *values = result
    if status != driver.CUresult.CUDA_SUCCESS:
        raise GraphUpdateError(
            _("{what} failed with {status}.").format(what=what, status=status.name),
            reason=status.name,
        )
    return values[0] if len(values) == 1 else values


# torch's raw handles: the method, the torch release that added it, what it hands out, and the
# error that says how to get one when the graph has none (torch raises RuntimeError then).
_RAW = {
    "graph": ("raw_cuda_graph", "2.8", "a captured graph", no_kept_graph),
    "executable": ("raw_cuda_graph_exec", "2.9", "an executable graph", no_executable),
}


def _raw(graph: Any, which: str, role: str) -> int:
    method, since, what, missing = _RAW[which]
    if not hasattr(graph, method):
        raise GraphUpdateError(
            _(
                "torch {version} cannot hand out {what}: {method}() arrived in torch "
                "{since} (with CUDAGraph(keep_graph=True), torch 2.8)."
            ).format(version=torch.__version__, what=what, method=method, since=since)
        )
    try:
        handle: int = getattr(graph, method)()
        return handle
    except RuntimeError as error:
        raise missing(role, str(error).splitlines()[0]) from None


def _raw_graph(graph: Any, role: str) -> Any:
    """The kept CUgraph of ``graph``, or a sentence on how to keep it."""
    return _driver().CUgraph(init_value=_raw(graph, "graph", role))


def _raw_exec(graph: Any, role: str) -> Any:
    """The CUgraphExec of ``graph``, or a sentence on how to build it."""
    return _driver().CUgraphExec(init_value=_raw(graph, "executable", role))


def _node_handles(graph: Any, role: str) -> list[Any]:
    driver = _driver()
    raw = _raw_graph(graph, role)
    count = _call(driver.cuGraphGetNodes(raw, numNodes=0), "cuGraphGetNodes")[1]
    handles, count = _call(driver.cuGraphGetNodes(raw, numNodes=count), "cuGraphGetNodes")
    return list(handles[:count])


def _kind(node: Any) -> str:
    kind = _call(_driver().cuGraphNodeGetType(node), "cuGraphNodeGetType")
    return str(kind.name).removeprefix("CU_GRAPH_NODE_TYPE_").lower().replace("_", " ")


def _kernel_name(node: Any) -> str | None:
    """The kernel's function name (cuFuncGetName, CUDA 12.3+); None where the driver lacks it."""
    driver = _driver()
    params = _call(driver.cuGraphKernelNodeGetParams(node), "cuGraphKernelNodeGetParams")
    if not hasattr(driver, "cuFuncGetName"):
        return None
    status, name = driver.cuFuncGetName(params.func)
    if status != driver.CUresult.CUDA_SUCCESS:
        return None
    return short_kernel_name(name.decode() if isinstance(name, bytes) else str(name))


def nodes(graph: Any, role: str = "given") -> list[GraphNode]:
    """Every node of the kept ``graph``: kind, and the kernel's name for kernel nodes."""
    found = []
    for node in _node_handles(graph, role):
        kind = _kind(node)
        found.append(GraphNode(kind, _kernel_name(node) if kind == "kernel" else None))
    return found


def exec_update(target: Any, source: Any) -> None:
    """cuGraphExecUpdate(target's executable graph, source's graph), with the reason it failed.

    cuda-bindings returns no ``CUgraphExecUpdateResultInfo`` when the update fails (seen with
    cuda-bindings 13 on CUDA 13.0), so the reason is read from the two graphs' nodes where the
    target's graph was kept too.
    """
    driver = _driver()
    executable = _raw_exec(target, "target")
    graph = _raw_graph(source, "source")
    status, _info = driver.cuGraphExecUpdate(executable, graph)
    if status == driver.CUresult.CUDA_SUCCESS:
        return
    try:
        refused = diagnose(nodes(target, "target"), nodes(source, "source"))
    except GraphUpdateError:  # the target's graph was not kept: its nodes cannot be compared
        refused = None
    if refused is not None:
        raise refused
    raise GraphUpdateError(
        _(
            "CUDA refused to update the target from the source ({status}): the two "
            "graphs differ in more than their nodes' parameters. Capture the source "
            "by running exactly the same code on tensors of the same shapes and "
            "dtypes (keep the target's graph too, CUDAGraph(keep_graph=True), and "
            "graphlab names the difference)."
        ).format(status=status.name),
        reason=status.name,
    )


def kernel_node_setter(target: Any, source: Any, index: int) -> Callable[[], None]:
    """A call that gives kernel node ``index`` of ``target`` the parameters of ``source``'s.

    Everything is looked up once, here; each call is one cuGraphExecKernelNodeSetParams, which
    is what a program that changes a node often (and a timing of it) wants.
    """
    driver = _driver()
    targets = _node_handles(target, "target")
    sources = _node_handles(source, "source")
    check_kernel_pair(index, [_kind(n) for n in targets], [_kind(n) for n in sources])
    params = _call(driver.cuGraphKernelNodeGetParams(sources[index]), "cuGraphKernelNodeGetParams")
    executable = _raw_exec(target, "target")
    node = targets[index]

    def set_params() -> None:
        status = driver.cuGraphExecKernelNodeSetParams(executable, node, params)[0]
        if status != driver.CUresult.CUDA_SUCCESS:
            raise GraphUpdateError(
                _("CUDA refused to give node {index} the source's parameters ({status}).").format(
                    index=index, status=status.name
                ),
                reason=status.name,
            )

    return set_params


def set_kernel_node(target: Any, source: Any, index: int) -> None:
    """cuGraphExecKernelNodeSetParams for node ``index``, with the parameters of ``source``'s."""
    kernel_node_setter(target, source, index)()
