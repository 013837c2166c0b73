"""Checks for lesson 15, debugging a capture error: a broken model fixed so that it captures and
replays equal to eager, call after call, on new inputs.

The lesson's broken ``Scaler`` has three bugs a graph cannot live with: its forward reads a GPU
value on the CPU (``.item()``), it keeps a per-call number on the CPU (its call counter, baked into
the graph as a constant when captured), and its caller hands it a new tensor at every call. The
learner writes ``make_model()``, the fixed model, and ``step(graph, static_x, static_out, batch)``,
the replay of one batch. The checker does the capture itself (two warm-up calls on the side
stream, then the capture), so what it judges is the learner's model in a real graph, never a
report about it; then it hands its graph to ``step`` for three new batches and compares every
result with the eager ``Scaler``'s answer for the same call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.errors import CheckFailed
from graphlab.failures.explanation import explain
from graphlab.language import gettext as _

from ._core import call, copy_advice, exercise, fail, fmt, live, passed, same, tensor
from ._observe import Replays, address, shares_memory, warmed_capture
from ._sections import DEBUG_EXERCISE, FIRST_ERROR, WHAT_WAS_CAPTURED

__all__ = ["check_fixed_model", "scaled"]

FEATURES = 6
WARMUPS = 2  # eager calls the checker makes before capturing: the capture is call WARMUPS + 1
# Host syncs and host copies: the catalogue's names for what the first error of a capture says.
_HOST_SYNC = {"host-sync-in-capture", "capture-unsupported", "capture-invalidated"}
_HOST_COPY = "pageable-copy-in-capture"


def scaled(x: torch.Tensor, calls: int) -> torch.Tensor:
    """What the eager ``Scaler`` returns at its ``calls``-th call (1 for the first): ``x`` scaled
    by its largest magnitude, weighed per feature, squashed, then cooled by ``1 / (1 + 0.1 calls)``.
    """
    weight = torch.linspace(0.5, 1.5, FEATURES, device=x.device)
    return torch.tanh(x / x.abs().amax() * weight) / (1 + 0.1 * calls)


def _batches(device: str) -> list[torch.Tensor]:
    """The batch captured with, then three new ones: values that are not round numbers, each with
    another largest magnitude, so that a model reading an old batch or an old peak shows it."""
    generator = torch.Generator().manual_seed(15)
    return [
        (torch.randn(4, FEATURES, generator=generator) * scale).to(device)
        for scale in (1.0, 2.5, 0.7, 4.2)
    ]


@exercise(DEBUG_EXERCISE)
def check_fixed_model(make_model: Callable[..., Any], step: Callable[..., Any]) -> None:
    """Check ``make_model() -> module`` and ``step(graph, static_x, static_out, batch) -> tensor``.

    The checker captures ``static_out = model(static_x)`` itself, after two eager warm-up calls,
    then calls ``step`` with three new batches. The model must capture (no host sync, no copy
    between the CPU and the GPU inside it) and each replay must equal the eager ``Scaler`` at the
    same call (warm-ups 1 and 2, the capture, then replays 3, 4 and 5): a per-call number kept on
    the CPU is frozen at its capture-time value. ``step`` must copy the batch into ``static_x``,
    replay once, and return what the replay wrote as a tensor of its own that later replays leave
    alone (a clone).
    """
    _cuda, device = live()
    first, *new = _batches(device)
    model = call(make_model, name="make_model")
    if not callable(model):
        message = _("make_model should return your fixed model (a torch.nn.Module), not {model}.")
        fail(message.format(model=fmt(model)))
    static_x = first.clone()
    graph, static_out = _capture(model, static_x)
    memory = address(static_x)
    kept: list[tuple[torch.Tensor, torch.Tensor]] = []
    for k, batch in enumerate(new, start=1):
        expected = scaled(batch, WARMUPS + k)
        with Replays([graph]) as replays:
            out = call(step, graph, static_x, static_out, batch.clone(), name="step")
        if out is None:
            fail(_("step returned None: return the replay's output, static_out.clone()."))
        out = tensor(out, _("what step returns"))
        if address(static_x) != memory:
            message = _(
                "static_x now points at other memory (static_x.data = batch or set_): the graph "
                "reads the memory it was captured with; copy the values in with "
                "static_x.copy_(batch)."
            )
            fail(message)
        _judge_replays(replays.of(graph), out, expected)
        if not same(static_x, batch):
            message = _(
                "after step, static_x does not hold the batch: rebinding a name "
                "(static_x = batch) changes nothing the graph reads; copy it in with "
                "static_x.copy_(batch) before graph.replay()."
            )
            fail(message)
        if shares_memory(out, static_out):
            message = _(
                "step returned static_out itself (or a view of it): the next replay writes it "
                "again, so every result you keep becomes the latest one. {advice}"
            )
            fail(message.format(advice=copy_advice("static_out")))
        _judge_values(out, expected, batch, k)
        kept.append((out, expected))
    for k, (out, expected) in enumerate(kept, start=1):
        if not same(out, expected, exact=False):
            message = _(
                "the result step returned for batch {k} changed after later batches: return a "
                "tensor of its own. {advice}"
            )
            fail(message.format(k=k, advice=copy_advice("static_out")))
    what = _("replays of your fixed model equal to eager calls, on new batches")
    passed(what, len(kept), len(new))


def _capture(model: Callable[..., Any], static_x: torch.Tensor) -> tuple[Any, torch.Tensor]:
    """``(graph, static_out)``: the checker's own capture of ``model(static_x)``."""

    def forward() -> Any:
        with torch.no_grad():
            return model(static_x)

    def capture() -> tuple[Any, Any]:
        return warmed_capture(forward, warmups=WARMUPS)

    try:
        graph, static_out = call(capture, name=_("your model"))
    except CheckFailed as failure:
        key = explain(failure).key
        if key in _HOST_SYNC:
            message = _(
                "your model still makes the CPU wait for the GPU inside the capture (.item(), "
                "float(t), print(t) or a data-dependent shape): keep the value on the GPU, "
                "x / x.abs().amax() instead of x / x.abs().max().item()."
            )
            fail(message, FIRST_ERROR)
        if key == _HOST_COPY:
            message = _(
                "your model copies between the CPU and the GPU inside the capture "
                "(torch.tensor(..., device=...), .to(device) or .cpu()): create such tensors once, "
                "on the GPU, in __init__ (a buffer), and update them in place."
            )
            fail(message, FIRST_ERROR)
        raise
    return graph, tensor(static_out, _("what your model returns"))


def _judge_replays(replays: int, out: torch.Tensor, expected: torch.Tensor) -> None:
    """Fail unless ``step`` replayed the graph exactly once for its batch."""
    if replays == 0:
        right = _(" although its numbers are right") if same(out, expected, exact=False) else ""
        message = _(
            "step never replayed the graph (0 replays for this batch), so its answer did not "
            "come from it{although_right}: copy the batch into static_x, call graph.replay(), "
            "return static_out.clone()."
        )
        fail(message.format(although_right=right))
    if replays > 1:
        message = _(
            "step replayed the graph {replays} times for one batch: each replay is one call of "
            "the model and advances its counter; replay once per batch."
        )
        fail(message.format(replays=replays))


def _judge_values(out: torch.Tensor, expected: torch.Tensor, batch: torch.Tensor, k: int) -> None:
    """Fail with the bug behind a wrong replay: a counter frozen at capture, or other values."""
    if same(out, expected, exact=False):
        return
    if same(out, scaled(batch, WARMUPS + 1), exact=False):
        message = _(
            "replay {k} of your model was cooled as the call during capture was: the call "
            "counter is a Python number, baked into the graph as a constant when it was "
            "captured. Keep it in a tensor on the device (self.register_buffer) and count in "
            "place, self.calls.add_(1), so that every replay counts."
        )
        fail(message.format(k=k), WHAT_WAS_CAPTURED)
    message = _(
        "for batch {k} your replay gave {yours}, expected {expected} (the eager Scaler "
        "at call {call}: two warm-ups, the capture, then one call per replay)."
    )
    fail(message.format(k=k, yours=fmt(out), expected=fmt(expected), call=WARMUPS + k))
