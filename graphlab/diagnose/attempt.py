"""The capture attempt: capture the step for real, then check that a replay equals eager.

The step is warmed up and captured on graphlab's side stream
(:func:`graphlab.timing.side_stream.capture_on_side_stream`), on the live backend: CUDA on a GPU
(where :func:`graphlab.diagnose.diagnose` runs this in a child process, so that a failed capture
cannot spoil the learner's CUDA context), the emulator elsewhere, which fails a capture as CUDA
does. Then a replay with new inputs (copied into the captured ones) is compared with an eager call
on the same inputs from the same starting state: weights, optimizer state and buffers are put back
between the two, in place, so that the graph still reads them. The comparison uses
``torch.testing.assert_close``'s tolerance for each dtype.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

from graphlab.backend import cuda_module
from graphlab.failures.explanation import explain
from graphlab.failures.recovery import current_stream, recover
from graphlab.language import N_
from graphlab.support.shorten import shorten
from graphlab.support.torch_internals import tree_leaves
from graphlab.timing.decoder import pool_bytes
from graphlab.timing.side_stream import capture_on_side_stream

from .words import Text

__all__ = ["fresh_inputs", "state_tensors", "try_capture"]

_WARMUPS = 2
_ERROR_CHARS = 300  # of the error's first line; torch appends long debugging advice


def state_tensors(fn: object, optimizers: Sequence[Any]) -> list[torch.Tensor]:
    """The tensors a call may change besides its outputs: a module's parameters and buffers, and
    each optimizer's parameters, gradients and state."""
    found: list[torch.Tensor] = []
    if isinstance(fn, torch.nn.Module):
        found += [*fn.parameters(), *fn.buffers()]
    for optimizer in optimizers:
        for group in optimizer.param_groups:
            found += group["params"]
            found += [p.grad for p in group["params"] if p.grad is not None]
        found += [v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v)]
    unique = {id(t): t for t in found}
    return list(unique.values())


def fresh_inputs(inputs: Sequence[Any], seed: int = 0) -> tuple[Any, ...]:
    """Inputs of the same shapes and dtypes with other values: float tensors get noise added."""
    generator = torch.Generator().manual_seed(seed)
    fresh = []
    for x in inputs:
        if torch.is_tensor(x) and x.is_floating_point():
            noise = torch.randn(x.shape, generator=generator, dtype=x.dtype)
            fresh.append(x + 0.5 * noise.to(x.device))
        else:
            fresh.append(x.clone() if torch.is_tensor(x) else x)
    return tuple(fresh)


def try_capture(
    fn: Callable[..., Any], inputs: Sequence[Any], state: Sequence[torch.Tensor]
) -> dict[str, Any]:
    """Capture ``fn(*inputs)``; then a replay against an eager call, both on new inputs."""
    cuda = cuda_module()
    static = tuple(x.clone() if torch.is_tensor(x) else x for x in inputs)
    stream = current_stream()
    try:
        with warnings.catch_warnings():
            # The emulator's one-time notes on where it differs from a GPU are about a lesson's
            # code, not about this capture.
            warnings.filterwarnings("ignore", message="graphlab CPU emulator differs")
            graph, out = capture_on_side_stream(cuda, lambda: fn(*static), warmups=_WARMUPS)
            # The segments of the graph's private pool on a GPU; on the emulator, which has no
            # segments, the bytes of the tensors the capture allocated (the report says so).
            pool = pool_bytes(graph.pool(), cuda)
    except Exception as exc:
        # A capture that fails to end leaves its stream current (and, on a GPU, its pool held):
        # put the caller's stream back, as every graphlab helper that captures does.
        recover(stream)
        explanation = explain(exc)
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return {
            "captured": False,
            "error": shorten(error, _ERROR_CHARS),
            "explanation": explanation.title,
        }
    return {"captured": True, "pool_bytes": pool, **_replay_vs_eager(fn, graph, out, static, state)}


def _replay_vs_eager(
    fn: Callable[..., Any],
    graph: Any,
    out: object,
    static: Sequence[Any],
    state: Sequence[torch.Tensor],
) -> dict[str, Any]:
    new = fresh_inputs(static)
    before = [t.detach().clone() for t in state]
    expected = _cloned(fn(*new))
    _restore(state, before)
    for buffer, value in zip(static, new, strict=True):
        if torch.is_tensor(buffer):
            buffer.copy_(value)
    graph.replay()
    replayed = _cloned(out)
    _restore(state, before)
    pairs = list(zip(_leaves(replayed), _leaves(expected), strict=False))
    worst = 0.0
    for got, want in pairs:
        try:
            torch.testing.assert_close(got, want)
        except AssertionError as exc:
            return {"replay_equals_eager": False, "difference": str(exc).splitlines()[0]}
        if got.is_floating_point() and got.numel():
            worst = max(worst, float((got - want).abs().max()))
    return {
        "replay_equals_eager": bool(pairs),
        "difference": Text(
            N_("largest difference {worst:.3g} (torch.testing.assert_close tolerances)"),
            worst=worst,
        ),
    }


def _restore(state: Sequence[torch.Tensor], values: Sequence[torch.Tensor]) -> None:
    with torch.no_grad():
        for tensor, value in zip(state, values, strict=True):
            tensor.copy_(value)


def _cloned(out: object) -> list[torch.Tensor]:
    return [t.detach().clone() for t in _leaves(out)]


def _leaves(out: object) -> list[torch.Tensor]:
    return [x for x in tree_leaves(out) if torch.is_tensor(x)]
