"""Checks for lesson 02, static inputs: replaying one graph on new data."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._core import call, fail, fmt, live, passed, same

__all__ = ["check_replay_with_new_inputs"]


def _f(x: torch.Tensor) -> torch.Tensor:
    """The captured computation, also run eagerly for the expected values."""
    return x * 2 + 1


def check_replay_with_new_inputs(step: Callable) -> None:
    """Check ``step(graph, static_x, static_y, batch) -> output`` over three new batches.

    The checker captures ``static_y = static_x * 2 + 1`` with the first batch loaded in
    ``static_x``, then asks ``step`` for the outputs of three more batches. A correct step copies
    the batch into ``static_x``, replays, and returns the output.
    """
    cuda, device = live()
    first = torch.arange(4.0, device=device)
    static_x = first.clone()
    graph = cuda.CUDAGraph()
    with cuda.graph(graph):
        static_y = _f(static_x)
    graph.replay()
    stale = _f(first)
    for k in (1, 2, 3):
        batch = torch.arange(4.0, device=device) + 10 * k
        expected = _f(batch)
        out = call(step, graph, static_x, static_y, batch, name="step")
        if out is None:
            fail("step returned None: return the graph's output (static_y) after replaying.")
        if same(out, batch):
            fail(
                f"step returned the batch itself {fmt(batch)}: return the graph's output "
                "static_y, which the replay computes from static_x."
            )
        if same(out, stale):
            if same(static_x, batch):
                fail(
                    "your replay returned the first batch's result although static_x now holds "
                    "the new batch: call graph.replay() after copying, then return static_y."
                )
            fail(
                "your replay returned the first batch's result: the graph still reads the old "
                "tensor. Rebinding a name (static_x = batch) does not change the address the "
                "graph reads; copy the data in place: static_x.copy_(batch)."
            )
        if not same(out, expected):
            fail(f"for batch {k} step returned {fmt(out)}, expected {fmt(expected)}.")
    passed("replay with new inputs (batch 3)", out, expected)
