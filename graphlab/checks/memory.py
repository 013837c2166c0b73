"""Checks for lesson 08, memory: graphs sharing one memory pool."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._core import call, fail, fmt, live, passed, same

__all__ = ["check_shared_pool"]


def check_shared_pool(capture_all: Callable) -> None:
    """Check ``capture_all(sizes) -> {size: (graph, static_x, static_y)}`` shares one pool.

    Each graph computes ``static_y = static_x * 2 + 1`` on a ``static_x`` of ``size`` elements;
    every capture passes the same ``pool=`` handle, so the graphs draw from one private pool
    instead of one each. Graphs sharing a pool are replayed in the order they were captured.
    """
    _, device = live()
    sizes = [64, 32, 16]
    graphs = call(capture_all, list(sizes), name="capture_all")
    if not isinstance(graphs, dict) or sorted(graphs) != sorted(sizes):
        fail(f"capture_all should return a dict with one entry per size {sizes}; got {graphs!r}.")
    for size in sizes:
        entry = graphs[size]
        if not (isinstance(entry, tuple) and len(entry) == 3):
            fail(f"graphs[{size}] should be a tuple (graph, static_x, static_y).")
        graph, static_x, static_y = entry
        if static_x.shape != (size,):
            fail(f"static_x of size {size} has shape {tuple(static_x.shape)}, expected ({size},).")
        batch = torch.arange(float(size), device=device)
        static_x.copy_(batch)
        graph.replay()
        if not same(static_y, batch * 2 + 1):
            fail(
                f"the graph of size {size} replayed {fmt(static_y)} for {fmt(batch)}, expected "
                f"{fmt(batch * 2 + 1)}: capture static_y = static_x * 2 + 1."
            )
    pools = {size: graphs[size][0].pool() for size in sizes}
    distinct = set(pools.values())
    if len(distinct) > 1:
        fail(
            f"your {len(sizes)} graphs use {len(distinct)} different memory pools: create one "
            "handle with cuda.graph_pool_handle() and pass pool=handle to every cuda.graph(...)."
        )
    passed("memory pools used by 3 graphs", len(distinct), 1)
