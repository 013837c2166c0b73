"""Checks for lesson 08, memory: graphs sharing one memory pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.language import gettext as _

from ._core import call, exercise, fail, fmt, live, passed, same, tensor
from ._feedback import safe_repr
from ._observe import shares_memory
from ._sections import ACCUMULATE, SHARING

__all__ = ["check_shared_pool"]

SIZES = (64, 32, 16)


def _batches(size: int, device: str) -> list[torch.Tensor]:
    """Two inputs for a graph of ``size`` elements, of values that are not whole numbers."""
    ramp = torch.arange(size, dtype=torch.float32, device=device)
    return [ramp * 0.37 - 4.1, 3.3 - ramp * 0.29]


@exercise(SHARING)
def check_shared_pool(capture_all: Callable[..., Any]) -> None:
    """Check ``capture_all(sizes) -> {size: (graph, static_x, static_y)}`` shares one pool.

    Each graph computes ``static_y = static_x * 2 + 1`` on a ``static_x`` of ``size`` elements;
    every capture passes the same pool (``cuda.graph_pool_handle()``, or the first graph's
    ``pool()``), so the graphs draw from one private pool instead of one each. Graphs sharing a
    pool are replayed in the order they were captured, as the checker does here, twice, on inputs
    that are not whole numbers. Each entry may be a tuple or a list.
    """
    cuda, device = live()
    graphs = call(capture_all, list(SIZES), name="capture_all")
    if not isinstance(graphs, dict) or sorted(graphs, key=repr) != sorted(SIZES, key=repr):
        message = _(
            "capture_all should return a dict with one entry per size {sizes}; got {value}."
        )
        fail(message.format(sizes=list(SIZES), value=safe_repr(graphs)))
    entries = {size: _entry(graphs[size], size, cuda) for size in SIZES}
    if len({id(entry[0]) for entry in entries.values()}) < len(SIZES):
        message = _(
            "several sizes share one graph object: capture one graph per size, each with its "
            "own static_x and static_y."
        )
        fail(message)
    for round_ in range(2):
        for size, (graph, static_x, static_y) in entries.items():
            batch = _batches(size, device)[round_]
            static_x.copy_(batch)
            graph.replay()
            if not same(static_y, batch * 2 + 1, exact=False):
                message = _(
                    "the graph of size {size} replayed {yours} for {batch}, expected {expected}: "
                    "capture static_y = static_x * 2 + 1."
                )
                yours, expected = fmt(static_y), fmt(batch * 2 + 1)
                fail(message.format(size=size, yours=yours, batch=fmt(batch), expected=expected))
    pools = {size: entries[size][0].pool() for size in SIZES}
    distinct = set(pools.values())
    if len(distinct) > 1:
        message = _(
            "your {graphs} graphs use {pools} different memory pools: create one handle with "
            "cuda.graph_pool_handle() and pass pool=handle to every cuda.graph(...)."
        )
        fail(message.format(graphs=len(SIZES), pools=len(distinct)))
    passed(_("memory pools used by 3 graphs"), len(distinct), 1)


def _entry(entry: object, size: int, cuda: Any) -> tuple[Any, torch.Tensor, torch.Tensor]:
    """``(graph, static_x, static_y)`` of one size, each checked for what it must be."""
    if not (isinstance(entry, (tuple, list)) and len(entry) == 3):
        fail(_("graphs[{size}] should be a tuple (graph, static_x, static_y).").format(size=size))
    graph, static_x, static_y = entry
    if not isinstance(graph, cuda.CUDAGraph):
        message = _("graphs[{size}][0] should be a cuda.CUDAGraph, not {kind}.")
        fail(message.format(size=size, kind=type(graph).__name__))
    static_x = tensor(static_x, _("static_x of size {size}").format(size=size))
    static_y = tensor(static_y, _("static_y of size {size}").format(size=size))
    for name, t in (("static_x", static_x), ("static_y", static_y)):
        if t.shape != (size,):
            message = _("{name} of size {size} has shape {shape}, expected ({size},).")
            fail(message.format(name=name, size=size, shape=tuple(t.shape)))
    if shares_memory(static_y, static_x):
        message = _(
            "static_y of size {size} is static_x itself: an in-place update of the input is "
            "applied again at every replay. Capture static_y = static_x * 2 + 1, a new tensor."
        )
        fail(message.format(size=size), ACCUMULATE)
    return graph, static_x, static_y
