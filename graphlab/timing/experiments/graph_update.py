"""Lesson 12's recording: what changing a graph in place costs against capturing it again.

``update_costs.json`` is written by :func:`record_update_costs`, not by ``graphlab record``'s
plan, in its own schema, ``graphlab.update_costs/1``: per-operation host times for chains of
elementwise kernels of a few lengths, rather than a Comparison and two timelines::

    {"schema": "graphlab.update_costs/1", "name": "update_costs", "meta": <machine_meta>,
     "experiment": {"kernels": [...], "numel", "repeats"},
     "rows": [{"kernels", "recapture_us", "capture_us", "instantiate_us", "update_us",
               "set_node_us", "replay_us", "update_correct", "refused"}, ...]}

Each time is the median of ``repeats`` runs of one operation, from ``torch.cuda.synchronize()``
before it to ``torch.cuda.synchronize()`` after it (all of them are host work that ends when
the call returns, except a replay, which the second synchronize waits for):

- ``recapture_us``: capture into a new ``CUDAGraph()``, which instantiates at the end;
- ``capture_us``: capture into a kept ``CUDAGraph(keep_graph=True)``, not instantiated;
- ``instantiate_us``: ``instantiate()`` of such a kept graph;
- ``update_us``: :func:`graphlab.editing.update_graph` from a kept graph of the same chain;
- ``set_node_us``: one ``cuGraphExecKernelNodeSetParams`` of node 0 (its handles looked up
  beforehand, see :func:`graphlab.editing.cuda_graphs.kernel_node_setter`);
- ``replay_us``: one replay of the updated graph.

``update_correct`` says whether the updated graph's replay wrote the source's result into the
source's output; ``refused`` is the reason given for refusing an update from a chain one kernel
longer.

``while_loop.json`` (schema ``graphlab.while_loop/1``, :func:`record_while_loop`) times a WHILE
conditional node's loop against the same loop driven from the host (see
:func:`measure_while_loop`).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.editing import update_graph
from graphlab.editing.cuda_graphs import kernel_node_setter
from graphlab.errors import GraphUpdateError

from ..captured import require_gpu
from ..clocks import host_time_us
from ..recordings import RECORDINGS_DIR
from ..side_stream import capture_on_side_stream
from .recorder import load_own_schema, record_own_schema, writable_folder

__all__ = [
    "UPDATE_DIR",
    "UPDATE_NAME",
    "UPDATE_SCHEMA",
    "WHILE_NAME",
    "load_update_costs",
    "load_while_loop",
    "measure_update_costs",
    "measure_while_loop",
    "record_update_costs",
    "record_while_loop",
]

UPDATE_NAME = "update_costs"
UPDATE_SCHEMA = "graphlab.update_costs/1"
# A folder of its own: every JSON file directly in RECORDINGS_DIR must be a graphlab.recording/1.
UPDATE_DIR = RECORDINGS_DIR / "graph_update"


def _chain(x, kernels: int):
    """``kernels`` elementwise additions, one kernel each."""
    for _ in range(kernels):
        x = x + 1e-4
    return x


def _median_us(operation: Callable[[], Any], repeats: int) -> float:
    """Median over ``repeats`` runs of ``operation``, each timed on its own by
    :func:`~graphlab.timing.compare.host_time_us` (from an idle GPU until its work is done)."""
    return round(
        statistics.median(host_time_us(lambda _: operation(), 1) for _ in range(repeats)), 1
    )


def _row(kernels: int, numel: int, repeats: int) -> dict[str, Any]:
    import torch

    cuda = torch.cuda
    x_a = torch.rand(numel, device="cuda")
    x_b = torch.rand(numel, device="cuda")

    def kept(x, length=kernels, warmups=1):
        return capture_on_side_stream(
            cuda, lambda: _chain(x, length), warmups=warmups, keep_graph=True
        )

    target, _ = kept(x_a)
    target.instantiate()
    source, source_out = kept(x_b)
    row: dict[str, Any] = {"kernels": kernels}
    row["recapture_us"] = _median_us(
        lambda: capture_on_side_stream(cuda, lambda: _chain(x_b, kernels), warmups=0), repeats
    )
    row["capture_us"] = _median_us(lambda: kept(x_b, warmups=0), repeats)
    spares = [kept(x_b)[0] for _ in range(repeats)]
    row["instantiate_us"] = _median_us(lambda: spares.pop().instantiate(), repeats)
    row["update_us"] = _median_us(lambda: update_graph(target, source), repeats)
    row["set_node_us"] = _median_us(kernel_node_setter(target, source, 0), repeats)
    update_graph(target, source)
    source_out.zero_()
    row["replay_us"] = _median_us(target.replay, repeats)
    row["update_correct"] = bool(torch.allclose(source_out, _chain(x_b, kernels)))
    longer, _ = kept(x_b, kernels + 1)
    try:
        update_graph(target, longer)
        row["refused"] = None
    except GraphUpdateError as refusal:
        row["refused"] = refusal.reason
    return row


def measure_update_costs(
    kernels: tuple[int, ...] = (10, 100, 1000), numel: int = 4096, repeats: int = 20
) -> dict[str, Any]:
    """Time recapture, capture, instantiate, update and one-node update (see the module doc)."""
    require_gpu("measure_update_costs")
    rows = [_row(k, numel, repeats) for k in kernels]
    return {
        "experiment": {"kernels": list(kernels), "numel": numel, "repeats": repeats},
        "rows": rows,
    }


def record_update_costs(
    out_dir: str | os.PathLike | None = None,
    command: str = "graphlab.timing.experiments.graph_update.record_update_costs()",
) -> Path:
    """Measure :func:`measure_update_costs` and write ``update_costs.json`` atomically, by
    default into the bundled ``recorded/graph_update`` folder."""
    folder = writable_folder(out_dir if out_dir is not None else UPDATE_DIR)
    return record_own_schema(folder, UPDATE_SCHEMA, UPDATE_NAME, command, measure_update_costs())


def load_update_costs(directory: str | os.PathLike | None = None) -> dict[str, Any]:
    """The bundled ``update_costs.json`` recording, checked; RecordingError if it is missing or
    not one."""
    path = Path(directory if directory is not None else UPDATE_DIR) / f"{UPDATE_NAME}.json"
    how = "on a GPU, write it with graphlab.timing.experiments.graph_update.record_update_costs()"
    return load_own_schema(path, UPDATE_SCHEMA, ("meta", "experiment", "rows"), how)


WHILE_NAME = "while_loop"
WHILE_SCHEMA = "graphlab.while_loop/1"


def measure_while_loop(
    tolerances: tuple[float, ...] = (1e-1, 1e-2, 1e-3, 1e-4), n: int = 32, repeats: int = 20
) -> dict[str, Any]:
    """Time a WHILE node's loop against the host-driven loop, per tolerance.

    For each tolerance, :class:`graphlab.editing.WhileLoop` on ``n`` points: ``graph_us`` is one
    :meth:`~graphlab.editing.WhileLoop.run_graph` (reset, one launch, one wait) and ``host_us``
    one :meth:`~graphlab.editing.WhileLoop.run_host` (a launch and a read-back per sweep), each
    the median of ``repeats`` runs on the host clock. ``sweeps`` is what each loop ran and
    ``reference_sweeps`` what :func:`graphlab.editing.jacobi_reference` runs in NumPy.
    """
    import torch

    from graphlab.editing import WhileLoop, jacobi_reference

    require_gpu("measure_while_loop")
    rows = []
    for tol in tolerances:
        loop = WhileLoop(n=n, tol=tol)
        graph, host = loop.run_graph(), loop.run_host()
        reference = jacobi_reference(n=n, tol=tol)
        rows.append(
            {
                "tol": tol,
                "graph_sweeps": graph.sweeps,
                "host_sweeps": host.sweeps,
                "reference_sweeps": reference.sweeps,
                "graph_residual": graph.residual,
                "same_u": bool(np.array_equal(graph.u, host.u)),
                "graph_us": _median_us(loop.run_graph, repeats),
                "host_us": _median_us(loop.run_host, repeats),
            }
        )
        loop.close()
    return {
        "experiment": {
            "n": n,
            "repeats": repeats,
            "torch_cuda": torch.version.cuda,
            "kernel": "graphlab.editing.conditional.KERNEL_SOURCE",
        },
        "rows": rows,
    }


def record_while_loop(
    out_dir: str | os.PathLike | None = None,
    command: str = "graphlab.timing.experiments.graph_update.record_while_loop()",
) -> Path:
    """Measure :func:`measure_while_loop` and write ``while_loop.json`` atomically, by default
    into the bundled ``recorded/graph_update`` folder."""
    folder = writable_folder(out_dir if out_dir is not None else UPDATE_DIR)
    return record_own_schema(folder, WHILE_SCHEMA, WHILE_NAME, command, measure_while_loop())


def load_while_loop(directory: str | os.PathLike | None = None) -> dict[str, Any]:
    """The bundled ``while_loop.json`` recording, checked; RecordingError if it is missing."""
    path = Path(directory if directory is not None else UPDATE_DIR) / f"{WHILE_NAME}.json"
    how = "on a GPU, write it with graphlab.timing.experiments.graph_update.record_while_loop()"
    return load_own_schema(path, WHILE_SCHEMA, ("meta", "experiment", "rows"), how)
