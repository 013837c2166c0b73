"""Checks for lesson 16, your own model: the fixed models capture, and replay equal to eager.

The checkers never read a diagnosis: each captures the learner's fixed step itself (warmed up on
graphlab's side stream, as every checker does), copies inputs it makes itself into the captured
ones, replays, and compares each replay with the original model run eagerly on the same input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from graphlab.diagnose.attempt import state_tensors
from graphlab.diagnose.examples import Branchy
from graphlab.language import gettext as _

from ._core import call, exercise, fail, fmt, live, passed, tensor
from ._feedback import safe_repr
from ._observe import warmed_capture
from ._sections import FIX_BRANCHY, FIX_TRAINING

__all__ = ["check_fixed_branchy", "check_fixed_training"]

BATCHES = 3


def _branchy_inputs(model: Branchy, device: str) -> list[torch.Tensor]:
    """Inputs for which the model takes each branch: the first and last double, the middle not.

    Shifting an input along the direction the projection's mean grows with moves the mean past
    zero either way, whatever the weights are.
    """
    generator = torch.Generator().manual_seed(3)
    direction = model.proj.weight.detach().sum(0).cpu()
    direction = direction / direction.norm()
    shifts = (4.0, -4.0, 2.5)
    return [(torch.randn(32, 64, generator=generator) + s * direction).to(device) for s in shifts]


@exercise(FIX_BRANCHY)
def check_fixed_branchy(forward: Callable[..., Any]) -> None:
    """Check ``forward(model, x)``: ``Branchy``'s value for ``x``, with no blocker left.

    The checker captures ``forward(model, static_x)`` itself, then for three new inputs, whose
    means fall on both sides of zero, copies each in, replays, and compares with ``model(x)``.
    """
    _cuda, device = live()
    torch.manual_seed(16)
    model = Branchy().to(device)
    inputs = _branchy_inputs(model, device)
    static = torch.zeros_like(inputs[0])
    graph, out = call(warmed_capture, lambda: forward(model, static), name="forward")
    out = tensor(out, _("forward(model, x)"))
    for x in inputs:
        with torch.no_grad():
            expected = model(x)
            doubled = bool(model.proj(x).mean() > 0)
        static.copy_(x)
        graph.replay()
        if out.shape != expected.shape:
            message = _(
                "forward returned a tensor of shape {shape}, but the model returns "
                "one of shape {expected_shape}: return the sum itself."
            )
            fail(message.format(shape=tuple(out.shape), expected_shape=tuple(expected.shape)))
        if not torch.allclose(out, expected, rtol=1e-4, atol=1e-4):
            branch = _("doubles") if doubled else _("does not double")
            message = _(
                "for an input on which the model {branch} h, the replay gave {yours} and the "
                "model gives {expected}: decide the branch on the device with "
                "torch.where(h.mean() > 0, h * 2, h), and sum the positive values without "
                "selecting them, torch.where(h > 0, h, 0).sum()."
            )
            fail(message.format(branch=branch, yours=fmt(out), expected=fmt(expected)))
    what = _("replays equal to the model on {count} new inputs").format(count=len(inputs))
    passed(what, out, expected)


def _batches(inputs: Sequence[torch.Tensor], device: str) -> list[tuple[torch.Tensor, ...]]:
    generator = torch.Generator().manual_seed(5)
    return [
        tuple(torch.randn(x.shape, generator=generator).to(device) for x in inputs)
        for _ in range(BATCHES)
    ]


@exercise(FIX_TRAINING)
def check_fixed_training(make_step: Callable[..., Any]) -> None:
    """Check ``make_step() -> (step, (x, target))``: a training step that captures.

    The checker captures ``step(*static)`` itself, then runs three new batches twice from the same
    starting state (weights and optimizer state put back in place in between): eagerly, and by
    copying each batch in and replaying. Losses and weights must agree, and the weights must move.
    """
    _cuda, device = live()
    made = call(make_step, name="make_step")
    if not (isinstance(made, (tuple, list)) and len(made) == 2 and len(made[1]) == 2):
        message = _("make_step should return (step, (x, target)), not {made}.")
        fail(message.format(made=safe_repr(made)))
    step, inputs = made[0], tuple(made[1])
    static = tuple(x.clone() for x in inputs)
    seen = []
    hook = register_optimizer_step_pre_hook(lambda optimizer, *_: seen.append(optimizer))
    try:
        graph, out = call(warmed_capture, lambda: step(*static), name="step")
    finally:
        hook.remove()
    if not seen:
        message = _(
            "your step never called an optimizer's step(): a training step updates the weights."
        )
        fail(message)
    out = tensor(out, _("step(x, target)"))
    state = state_tensors(None, list({id(o): o for o in seen}.values()))
    start = [t.detach().clone() for t in state]
    batches = _batches(inputs, device)
    eager_losses = [float(step(*batch)) for batch in batches]
    eager_end = [t.detach().clone() for t in state]
    with torch.no_grad():
        for t, value in zip(state, start, strict=True):
            t.copy_(value)
    replay_losses = []
    for batch in batches:
        for buffer, value in zip(static, batch, strict=True):
            buffer.copy_(value)
        graph.replay()
        replay_losses.append(float(out))
    moved = max(float((a.detach() - b).abs().max()) for a, b in zip(state, start, strict=True))
    if moved == 0.0:
        message = _(
            "the weights did not change in {replays} replays: call optimizer.step() inside the "
            "step, after loss.backward()."
        )
        fail(message.format(replays=BATCHES))
    diff = max(float((a.detach() - b).abs().max()) for a, b in zip(state, eager_end, strict=True))
    if not diff <= 1e-5:
        message = _(
            "after {steps} replays the weights differ from {steps} eager steps by up to "
            "{difference:.3g} (losses: replay {replay_losses}, eager {eager_losses}): zero the "
            "gradients with optimizer.zero_grad(set_to_none=False) inside the step, so that each "
            "replay starts from zero gradients in the same memory."
        )
        losses = {
            "replay_losses": [round(v, 4) for v in replay_losses],
            "eager_losses": [round(v, 4) for v in eager_losses],
        }
        fail(message.format(steps=BATCHES, difference=diff, **losses))
    what = _("loss of the last of {steps} replayed steps").format(steps=BATCHES)
    passed(what, replay_losses[-1], eager_losses[-1])
