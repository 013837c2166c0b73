"""Checks for lesson 03, outputs: the next replay overwrites them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.language import gettext as _

from ._core import call, copy_advice, exercise, fail, fmt, live, passed, same, tensor
from ._observe import Replays, address, shares_memory, warmed_capture
from ._sections import BY_REFERENCE, COPIES, COPY_IN

__all__ = ["check_keep_outputs"]


def _batches(device: str) -> list[torch.Tensor]:
    """Four batches: ones, two of values that are not whole numbers, fours (shown on success)."""
    return [
        torch.full((3,), 1.0, device=device),
        torch.tensor([0.5, -1.5, 2.25], device=device),
        torch.tensor([1.1, 2.7, -3.3], device=device),
        torch.full((3,), 4.0, device=device),
    ]


@exercise(COPIES)
def check_keep_outputs(collect: Callable[..., Any]) -> None:
    """Check ``collect(graph, static_x, static_y, batches) -> list`` keeps every batch's output.

    The checker captures ``static_y = static_x ** 2`` and passes four batches. A correct
    ``collect`` copies each batch in, replays once per batch, and keeps a copy of the output that
    the next replay cannot overwrite (``.clone()``, or ``.cpu()`` on a GPU); it returns a list or
    a tuple. The checker counts the replays and refuses outputs that share memory with the
    graph's buffers, views of ``static_y`` included.
    """
    _cuda, device = live()
    static_x = torch.zeros(3, device=device)
    graph, static_y = warmed_capture(lambda: static_x**2)
    memory = address(static_x)
    batches = _batches(device)
    expected = [b**2 for b in batches]
    with Replays([graph]) as replays:
        kept = call(collect, graph, static_x, static_y, list(batches), name="collect")
    if not isinstance(kept, (list, tuple)) or len(kept) != len(batches):
        message = _("collect should return a list of {count} outputs, one per batch.")
        fail(message.format(count=len(batches)))
    kept = [tensor(t, _("output {i}").format(i=i)) for i, t in enumerate(kept)]
    if address(static_x) != memory:
        message = _(
            "static_x now points at other memory (static_x.data = ... or set_()): the graph "
            "keeps reading the memory it was captured with. Copy each batch in: "
            "static_x.copy_(batch)."
        )
        fail(message, COPY_IN)
    if len(kept) > 1 and all(same(t, expected[-1]) for t in kept):
        message = _(
            "all {count} outputs you kept equal the last batch's {last}: each replay writes the "
            "same static_y buffer, so the tensors you kept were overwritten. {advice}"
        )
        fail(
            message.format(count=len(kept), last=fmt(expected[-1]), advice=copy_advice()),
            BY_REFERENCE,
        )
    aliases = [i for i, t in enumerate(kept) if shares_memory(t, static_y)]
    if aliases:
        message = _(
            "outputs {aliases} share memory with static_y (static_y itself, or a view of it "
            "such as static_y[:]): the next replay will overwrite them. {advice}"
        )
        fail(message.format(aliases=aliases, advice=copy_advice()), BY_REFERENCE)
    if replays.of(graph) < len(batches):
        message = _(
            "collect replayed the graph {replays} time(s) for {batches} batches: each output "
            "must come from the graph. For each batch: copy it into static_x, replay, keep a "
            "copy of static_y."
        )
        fail(message.format(replays=replays.of(graph), batches=len(batches)), COPY_IN)
    for i, (t, e) in enumerate(zip(kept, expected, strict=True)):
        if not same(t, e):
            message = _("output {i} is {yours}, expected {expected} (batch {batch} squared).")
            fail(message.format(i=i, yours=fmt(t), expected=fmt(e), batch=fmt(batches[i])))
    passed(
        _("kept outputs (first and last)"),
        torch.stack([kept[0].to(device), kept[-1].to(device)]),
        torch.stack([expected[0], expected[-1]]),
    )
