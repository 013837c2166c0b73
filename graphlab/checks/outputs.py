"""Checks for lesson 03, outputs: the next replay overwrites them."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._core import call, fail, fmt, live, passed, same

__all__ = ["check_keep_outputs"]


def check_keep_outputs(collect: Callable) -> None:
    """Check ``collect(graph, static_x, static_y, batches) -> list`` keeps every batch's output.

    The checker captures ``static_y = static_x ** 2`` and passes four batches. A correct
    ``collect`` copies each batch in, replays, and keeps a copy of the output that the next replay
    cannot overwrite.
    """
    cuda, device = live()
    static_x = torch.zeros(3, device=device)
    graph = cuda.CUDAGraph()
    with cuda.graph(graph):
        static_y = static_x**2
    batches = [torch.full((3,), float(k), device=device) for k in (1, 2, 3, 4)]
    expected = [b**2 for b in batches]
    kept = call(collect, graph, static_x, static_y, batches, name="collect")
    if not isinstance(kept, (list, tuple)) or len(kept) != len(batches):
        fail(
            f"collect should return a list of {len(batches)} outputs, one per batch; got {kept!r}."
        )
    if any(not isinstance(t, torch.Tensor) for t in kept):
        fail("every element collect returns should be a tensor (the output for that batch).")
    aliases = [i for i, t in enumerate(kept) if t.data_ptr() == static_y.data_ptr()]
    if all(same(t, expected[-1]) for t in kept):
        fail(
            f"all {len(kept)} outputs you kept equal the last batch's {fmt(expected[-1])}: each "
            "replay writes the same static_y buffer, so the tensors you kept were overwritten. "
            "Keep static_y.clone() instead of static_y."
        )
    if aliases:
        fail(
            f"outputs {aliases} are static_y itself: the next replay will overwrite them. "
            "Keep static_y.clone()."
        )
    for i, (t, e) in enumerate(zip(kept, expected, strict=True)):
        if not same(t, e):
            fail(f"output {i} is {fmt(t)}, expected {fmt(e)} (batch {fmt(batches[i])} squared).")
    passed(
        "kept outputs (first and last)",
        torch.stack([kept[0], kept[-1]]),
        torch.stack([expected[0], expected[-1]]),
    )
