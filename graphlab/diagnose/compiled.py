"""torch.compile(mode="reduce-overhead") on the same step: did its CUDA graphs really replay?

A compile that succeeds proves nothing about graphs (lesson 10). The evidence is counted while
the compiled step runs (:func:`graphlab.timing.experiments.torch_compile.watch_cudagraphs`):
captures and replays of ``torch.cuda.CUDAGraph``, CUDAGraph Trees' skips and the reasons it
logged. Three first calls compile, warm up and record; the steady calls after them are the ones
counted and timed, end to end on the host clock as the manual graph's replay is. The replays per
steady call are the graph's partitions. Needs a GPU: CUDAGraph Trees only runs on CUDA.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["compiled_run"]

_FIRST_CALLS = 3  # compile + warm-up, record, first replay


def compiled_run(fn: Callable[..., Any], inputs: Sequence[Any], steps: int) -> dict[str, Any]:
    """Compile ``fn`` with reduce-overhead and watch ``steps`` steady calls (needs CUDA)."""
    import torch

    from graphlab.timing.clocks import host_time_us
    from graphlab.timing.experiments.torch_compile import watch_cudagraphs

    torch._dynamo.reset()
    compiled = torch.compile(fn, mode="reduce-overhead")

    def call(i: int = 0) -> Any:
        # Each call is a new iteration: CUDAGraph Trees may reuse the last call's output memory.
        torch.compiler.cudagraph_mark_step_begin()
        return compiled(*inputs)

    try:
        with watch_cudagraphs() as first:
            for _ in range(_FIRST_CALLS):
                call()
            torch.cuda.synchronize()
        with watch_cudagraphs() as steady:
            for _ in range(steps):
                call()
            torch.cuda.synchronize()
        per_step_us = host_time_us(call, steps)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}".splitlines()[0][:300]}
    finally:
        torch._dynamo.reset()
    reasons = sorted({line for line in first.log + steady.log if "skipping cudagraphs" in line})
    return {
        "replays": steady.replays,
        "captures": first.captures + steady.captures,
        "skips": first.cudagraph_skips + steady.cudagraph_skips,
        "skip_reasons": reasons,
        "partitions": steady.replays / steps,
        "replayed_every_call": steady.replays >= steps and not steady.cudagraph_skips,
        "per_step_us": per_step_us,
    }
