"""``make_graphed_callables``: a function or module whose forward and backward are each a graph.

Same contract as ``torch.cuda.make_graphed_callables``: warm each callable up on a side stream,
capture its forward into one graph and its backward (``torch.autograd.grad`` of the outputs with
respect to the inputs and parameters that require grad) into another, all in one memory pool,
then return callables that copy new arguments into the captured inputs, replay, and hand back the
captured outputs, inside one autograd node whose backward replays the backward graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from graphlab.errors import CaptureError
from graphlab.support.torch_internals import arg_tree_leaves, tree_flatten, tree_unflatten

from .graphs import CUDAGraph, graph
from .pools import graph_pool_handle
from .streams import Stream, current_stream, stream, synchronize

__all__ = ["make_graphed_callables"]


def make_graphed_callables(
    callables: Any,
    sample_args: tuple[Any, ...],
    num_warmup_iters: int = 3,
    allow_unused_input: bool = False,
    pool: Sequence[int] | None = None,
) -> Any:
    """Return graphed versions of ``callables`` (one callable, or a tuple of them).

    ``sample_args`` holds the argument tensors of each callable (a tuple, or a tuple of tuples
    for several callables); their shapes, dtypes and ``requires_grad`` are frozen into the graphs.
    """
    single = not isinstance(callables, tuple)
    funcs = (callables,) if single else callables
    all_args = (sample_args,) if single else sample_args
    pool = graph_pool_handle() if pool is None else pool
    parts = []
    for func, args in zip(funcs, all_args, strict=True):
        flat = tuple(arg_tree_leaves(*args))
        if not all(isinstance(a, torch.Tensor) for a in flat):
            raise CaptureError("make_graphed_callables: sample_args must contain only tensors.")
        params = tuple(func.parameters()) if isinstance(func, torch.nn.Module) else ()
        parts.append(_Part(func, args, flat, params, allow_unused_input))

    # Warm up on a side stream, so that lazy initialisation happens before any capture.
    synchronize()
    side = Stream(_internal=True)
    side.wait_stream(current_stream())
    with stream(side):
        for part in parts:
            for _ in range(num_warmup_iters):
                part.run_once()
    current_stream().wait_stream(side)
    synchronize()

    # Capture forwards in order, then backwards in reverse order: the order they will run in,
    # which keeps replays from overwriting memory another graph of the shared pool still needs.
    for part in parts:
        part.capture_forward(pool)
    for part in reversed(parts):
        part.capture_backward(pool)
    graphed = tuple(part.graphed() for part in parts)
    return graphed[0] if single else graphed


class _Part:
    """One callable being graphed: its static inputs, outputs and gradients."""

    def __init__(
        self,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        flat_args: tuple[torch.Tensor, ...],
        params: tuple[torch.Tensor, ...],
        allow_unused: bool,
    ):
        self.func, self.args, self.params = func, args, params
        self.n_user = len(flat_args)
        self.inputs = flat_args + params  # every tensor the graphs read at a fixed address
        self.allow_unused = allow_unused
        self.fwd, self.bwd = CUDAGraph(), CUDAGraph()

    def _grad(
        self, outputs: Sequence[torch.Tensor], grad_outputs: Sequence[torch.Tensor]
    ) -> tuple[torch.Tensor | None, ...]:
        needs = tuple(o for o in outputs if o.requires_grad)
        wrt = tuple(i for i in self.inputs if i.requires_grad)
        if not needs or not wrt:
            return ()
        return torch.autograd.grad(
            needs, wrt, grad_outputs, only_inputs=True, allow_unused=self.allow_unused
        )

    def run_once(self) -> None:
        outputs = tree_flatten(self.func(*self.args))[0]
        self._grad(outputs, tuple(torch.empty_like(o) for o in outputs if o.requires_grad))

    def capture_forward(self, pool: Sequence[int]) -> None:
        with graph(self.fwd, pool=pool):
            result = self.func(*self.args)
        outputs, self.spec = tree_flatten(result)
        self.outputs: tuple[torch.Tensor, ...] = tuple(outputs)

    def capture_backward(self, pool: Sequence[int]) -> None:
        self.grad_outputs = tuple(
            torch.empty_like(o) if o.requires_grad else None for o in self.outputs
        )
        with graph(self.bwd, pool=pool):
            grads = iter(
                self._grad(self.outputs, tuple(g for g in self.grad_outputs if g is not None))
            )
        # One slot per input: its captured gradient, or None where it needs none.
        self.grad_inputs = tuple(next(grads) if i.requires_grad else None for i in self.inputs)

    def graphed(self) -> Callable[..., Any]:
        part = self

        class Graphed(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
                for static, new in zip(part.inputs[: part.n_user], inputs, strict=False):
                    if static.data_ptr() != new.data_ptr():
                        static.copy_(new)  # new data goes to the address the graph reads
                part.fwd.replay()
                return tuple(o.detach() for o in part.outputs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
                for static, grad in zip(part.grad_outputs, grads, strict=True):
                    if static is not None and static.data_ptr() != grad.data_ptr():
                        static.copy_(grad)
                part.bwd.replay()
                return tuple(g.detach() if g is not None else None for g in part.grad_inputs)

        def run(*user_args: Any) -> Any:
            flat = tuple(arg_tree_leaves(*user_args))
            outputs = Graphed.apply(*flat, *part.params)  # type: ignore[no-untyped-call]
            return tree_unflatten(list(outputs), part.spec)

        if not isinstance(self.func, torch.nn.Module):
            return run
        module, training, eager_forward = self.func, self.func.training, self.func.forward

        def forward(*user_args: Any) -> Any:
            # As in torch: the graph was captured in one train/eval mode; the other runs eagerly.
            if module.training == training:
                return run(*user_args)
            return eager_forward(*user_args)

        module.forward = forward
        return module
