"""Checks for lesson 01, kernel gaps: capturing a chain, and reading a replay in a timeline."""

from __future__ import annotations

from collections.abc import Callable

import torch

from graphlab.trace.timeline import Timeline

from ._core import call, fail, fmt, live, number, passed, same

__all__ = ["check_capture_chain", "check_kernels_per_replay", "replay_timeline"]


def check_capture_chain(capture_chain: Callable) -> None:
    """Check ``capture_chain(static_x, n) -> (graph, static_out)``.

    ``static_out`` must be ``static_x + n`` computed by ``n`` separate ``+ 1`` kernels captured in
    ``graph``, so that copying new data into ``static_x`` and replaying updates ``static_out``.
    """
    _, device = live()
    n = 50
    static_x = torch.zeros(16, device=device)
    result = call(capture_chain, static_x, n, name="capture_chain")
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("capture_chain should return a pair (graph, static_out).")
    graph, static_out = result
    if not hasattr(graph, "replay"):
        fail(f"the first element should be the captured graph, not {type(graph).__name__}.")
    if not isinstance(static_out, torch.Tensor):
        fail("the second element should be the tensor the graph writes (static_out).")
    new = torch.arange(16.0, device=device)
    static_x.copy_(new)
    graph.replay()
    expected = new + n
    if same(static_out, torch.full((16,), float(n), device=device)):
        fail(
            "after copying new data into static_x and replaying, static_out still holds the "
            "result for zeros: compute it inside `with cuda.graph(g):` from static_x itself."
        )
    if not same(static_out, expected):
        fail(
            f"after a replay on {fmt(new)} static_out is {fmt(static_out)}, expected "
            f"{fmt(expected)}: the chain should add 1, {n} times."
        )
    passed(f"chain of {n} kernels replayed on new data", static_out, expected)


def replay_timeline() -> Timeline:
    """A hand-made timeline: one eager kernel, then two replays of a 3-kernel graph.

    The eager launch and its kernel share correlation 3; the first ``cudaGraphLaunch``
    (correlation 7) submits three kernels, the second (correlation 9) three more.
    """
    launches = ["cudaLaunchKernel", "cudaGraphLaunch", "cudaGraphLaunch"]
    return Timeline(
        kind=["launch"] * 3 + ["kernel"] * 7,
        name=launches + ["scale"] + ["mul", "add", "relu"] * 2,
        start_ns=[0, 5000, 9000, 2000, 7000, 7400, 7800, 11000, 11400, 11800],
        dur_ns=[1500, 1800, 1800, 900, 350, 350, 350, 350, 350, 350],
        device=[-1] * 3 + [0] * 7,
        stream=[-1] * 3 + [7] * 7,
        thread=[1] * 3 + [-1] * 7,
        correlation=[3, 7, 9, 3, 7, 7, 7, 9, 9, 9],
        meta={"source": "hand-made example for lesson 01"},
    )


def check_kernels_per_replay(kernels_per_replay: Callable) -> None:
    """Check ``kernels_per_replay(t) -> int``: kernels submitted by the first graph launch.

    Every kernel of a replay carries the correlation id of its ``cudaGraphLaunch``.
    """
    t = replay_timeline()
    expected = 3
    yours = call(kernels_per_replay, t, name="kernels_per_replay")
    value = number(yours, "kernels_per_replay should return a number of kernels")
    if value == expected:
        passed("kernels in the first replay", yours, expected)
        return
    if value == 7:
        fail(
            "you counted every kernel (7): keep only those whose correlation id is the first "
            "cudaGraphLaunch's."
        )
    if value == 6:
        fail(
            "you counted the kernels of both replays (6): keep only the first cudaGraphLaunch's "
            "correlation id."
        )
    if value in (1, 2):
        fail(
            f"you got {value:g}: that counts launch calls. A single cudaGraphLaunch submits many "
            "kernels; count the kernel events sharing its correlation id."
        )
    fail(f"kernels_per_replay returned {yours!r}, expected {expected}.")
