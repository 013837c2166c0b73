"""Checks for lesson 07, training: forward, backward and optimizer step in one graph."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch

from graphlab.errors import CheckFailed
from graphlab.language import gettext as _

from ._core import call, exercise, fail, graph_and_tensor, live, passed
from ._feedback import safe_repr
from ._observe import address
from ._sections import RECIPE

__all__ = ["check_captured_training", "make_model"]

STEPS = 3


def make_model(device: str) -> torch.nn.Module:
    """The small regression model of the exercise, with fixed initial weights."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    return model.to(device)


def _batches(device: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(1)
    return [
        (
            torch.randn(32, 8, generator=generator).to(device),
            torch.randn(32, 1, generator=generator).to(device),
        )
        for _ in range(STEPS + 1)
    ]


def _max_param_diff(a: torch.nn.Module, b: torch.nn.Module) -> float:
    with torch.no_grad():
        return max(
            float((p - q).abs().max()) for p, q in zip(a.parameters(), b.parameters(), strict=True)
        )


def _check_warm_up(steps_capturing: list[bool], error: Exception | None = None) -> None:
    """Fail if the first optimizer step the learner ran was inside the capture."""
    if steps_capturing and steps_capturing[0]:
        message = _(
            "optimizer.step() ran for the first time inside the capture: warm up first. Run a "
            "few ordinary steps on a side stream before capturing, so that the optimizer creates "
            "its state (and autograd its buffers) outside the graph; otherwise the graph would "
            "re-initialise that state on every replay."
        )
        failure = CheckFailed(message)
        failure.reread = str(RECIPE)
        raise failure from error


@exercise(RECIPE)
def check_captured_training(
    capture_step: Callable[..., Any], make_optimizer: Callable[..., Any]
) -> None:
    """Check ``capture_step(model, optimizer, static_x, static_y) -> (graph, static_loss)``.

    ``make_optimizer(params)`` builds the optimizer (the learner chooses its settings). The graph
    must hold a whole training step: forward, MSE loss, backward and ``optimizer.step()``. After
    capture, the checker copies three new batches in and replays; a copy of the model and
    optimizer, taken right after capture, runs the same three steps eagerly. Losses and weights
    must agree. The pair may be a tuple or a list; the optimizer may be any whose step can be
    captured (Adam or AdamW with ``capturable=True``, SGD, ...).
    """
    cuda, device = live()
    batches = _batches(device)
    model = make_model(device)
    optimizer = call(make_optimizer, model.parameters(), name="make_optimizer")
    if not isinstance(optimizer, torch.optim.Optimizer):
        message = _("make_optimizer should return a torch.optim optimizer, not {value}.")
        fail(message.format(value=safe_repr(optimizer)))
    # Record, for each optimizer.step(), whether it ran inside a capture.
    steps_capturing: list[bool] = []
    hook = optimizer.register_step_pre_hook(
        lambda *_: steps_capturing.append(bool(cuda.is_current_stream_capturing()))
    )
    static_x, static_y = (t.clone() for t in batches[0])
    memory = address(static_x), address(static_y)
    try:
        result = call(capture_step, model, optimizer, static_x, static_y, name="capture_step")
    except CheckFailed as error:
        _check_warm_up(steps_capturing, error)
        raise
    finally:
        hook.remove()
    _check_warm_up(steps_capturing)
    into = _("you captured the step into")
    graph, static_loss = graph_and_tensor(
        result, cuda, "capture_step", "static_loss", _("the loss"), into=into
    )
    if static_loss.numel() != 1:
        fail(_("the second element should be the loss tensor computed inside the capture."))
    if (address(static_x), address(static_y)) != memory:
        message = _(
            "static_x or static_y now points at other memory (.data = ... or set_()): the graph "
            "reads the memory the checker copies each batch into. Leave them as they are."
        )
        fail(message)

    eager_model = copy.deepcopy(model)
    eager_optimizer = type(optimizer)(eager_model.parameters(), **optimizer.defaults)
    eager_optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))  # no shared state
    before = copy.deepcopy(model)

    graph_losses, eager_losses = [], []
    for x, y in batches[1:]:
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        graph_losses.append(float(static_loss.detach()))
        eager_optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(eager_model(x), y)
        loss.backward()
        eager_optimizer.step()
        eager_losses.append(float(loss.detach()))

    if _max_param_diff(model, before) == 0.0:
        message = _(
            "the weights did not change in {steps} replays: put optimizer.step() inside the "
            "captured region, after loss.backward()."
        )
        fail(message.format(steps=STEPS))
    if len(set(graph_losses)) == 1:
        message = _(
            "the loss was the same for every batch: compute it inside the capture from static_x "
            "and static_y, the tensors the checker copies each batch into."
        )
        fail(message)
    diff = _max_param_diff(model, eager_model)
    if not diff <= 1e-5:  # also catches NaN
        message = _(
            "after {steps} replays the weights differ from {steps} eager steps by up to "
            "{diff:.3g} (losses: graph {graph_losses}, eager {eager_losses}). If the gap grows "
            "each step, gradients accumulate across replays: call "
            "optimizer.zero_grad(set_to_none=True) right before capture, so backward writes "
            "fresh gradients in every replay."
        )
        fail(
            message.format(
                steps=STEPS,
                diff=diff,
                graph_losses=[round(v, 4) for v in graph_losses],
                eager_losses=[round(v, 4) for v in eager_losses],
            )
        )
    what = _("loss after {steps} replayed training steps").format(steps=STEPS)
    passed(what, round(graph_losses[-1], 4), round(eager_losses[-1], 4))
