"""Checks for lesson 02, static inputs: replaying one graph on new data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.language import gettext as _

from ._core import call, exercise, fail, fmt, live, passed, same, tensor
from ._observe import Replays, address, warmed_capture
from ._sections import COPY_IN, REBIND

__all__ = ["check_replay_with_new_inputs"]


def _f(x: torch.Tensor) -> torch.Tensor:
    """The captured computation, also run eagerly for the expected values."""
    return x * 2 + 1


def _batches(device: str) -> list[torch.Tensor]:
    """Three new batches: two of values that are not whole numbers, then 30, 31, 32, 33."""
    return [
        torch.tensor([0.37, -1.42, 2.718, 5.05], device=device),
        torch.tensor([-3.3, 0.125, 7.77, -0.61], device=device),
        torch.arange(4.0, device=device) + 30,
    ]


@exercise(COPY_IN)
def check_replay_with_new_inputs(step: Callable[..., Any]) -> None:
    """Check ``step(graph, static_x, static_y, batch) -> output`` over three new batches.

    The checker captures ``static_y = static_x * 2 + 1`` with a first batch loaded in
    ``static_x``, then asks ``step`` for the outputs of three more batches. A correct step copies
    the batch into ``static_x`` (``copy_`` or ``static_x[:] = batch``), replays, and returns the
    output (``static_y`` itself, or a copy). The checker counts the replays, checks that
    ``static_x`` keeps the memory the graph reads, and uses batches that are not whole numbers.
    """
    _cuda, device = live()
    static_x = torch.arange(4.0, device=device)
    graph, static_y = warmed_capture(lambda: _f(static_x))
    graph.replay()
    memory = address(static_x), address(static_y)
    for k, batch in enumerate(_batches(device), start=1):
        before = static_y.clone()
        with Replays([graph]) as replays:
            out = call(step, graph, static_x, static_y, batch, name="step")
        if out is None:
            fail(_("step returned None: return the graph's output (static_y) after replaying."))
        out = tensor(out, _("what step returns"))
        if (address(static_x), address(static_y)) != memory:
            message = _(
                "static_x (or static_y) now points at other memory (static_x.data = batch, or "
                "static_x.set_(batch)): the graph keeps reading the memory it was captured with, "
                "which nothing holds any more. Copy the values in: static_x.copy_(batch)."
            )
            fail(message, REBIND)
        expected = _f(batch)
        _diagnose(out, before, expected, static_x, batch, replays.of(graph))
        if not same(out, expected):
            message = _("for batch {batch} step returned {yours}, expected {expected}.")
            fail(message.format(batch=k, yours=fmt(out), expected=fmt(expected)))
    passed(_("replay with new inputs (batch {batch})").format(batch=k), out, expected)


def _diagnose(
    out: Any,
    before: torch.Tensor,
    expected: torch.Tensor,
    static_x: torch.Tensor,
    batch: torch.Tensor,
    replays: int,
) -> None:
    """Fail with the mistake behind a wrong ``out``, or a right ``out`` that skipped the graph."""
    if same(out, batch):
        message = _(
            "step returned the batch itself {batch}: return the graph's output "
            "static_y, which the replay computes from static_x."
        )
        fail(message.format(batch=fmt(batch)))
    if same(out, before):
        if same(static_x, batch) and replays == 0:
            message = _(
                "your replay returned the first batch's result although static_x now holds "
                "the new batch: call graph.replay() after copying, then return static_y."
            )
            fail(message)
        message = _(
            "your replay returned the first batch's result: the graph still reads the old "
            "tensor. Rebinding a name (static_x = batch) does not change the address the "
            "graph reads; copy the data in place: static_x.copy_(batch)."
        )
        fail(message, REBIND)
    if replays == 0:
        if same(out, expected):
            message = _(
                "step did not replay the graph (0 replays for this batch), so the answer did not "
                "come from it although its numbers are right: copy the batch into static_x, "
                "call graph.replay(), return static_y."
            )
        else:
            message = _(
                "step did not replay the graph (0 replays for this batch), so the answer did not "
                "come from it: copy the batch into static_x, call graph.replay(), return static_y."
            )
        fail(message)
