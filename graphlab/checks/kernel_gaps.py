"""Checks for lesson 01, kernel gaps: capturing a chain, and reading a replay in a timeline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.language import gettext as _
from graphlab.trace.timeline import Timeline

from ._core import (
    call,
    exercise,
    fail,
    fmt,
    graph_and_tensor,
    live,
    not_fixed,
    number,
    passed,
    same,
)
from ._observe import address, replay_kernels, shares_memory
from ._sections import ACCUMULATE, CHAIN_EXERCISE, COPY_IN, KERNELS_EXERCISE, NOT_CHANGED, READING

__all__ = ["check_capture_chain", "check_kernels_per_replay", "replay_timeline"]


# (n, elements of static_x): a short chain first, so that an answer hard-wired to the lesson's 50
# cannot pass, then the lesson's own.
CHAINS = ((7, 5), (50, 16))


def _chain(x: torch.Tensor, n: int) -> torch.Tensor:
    for _step in range(n):
        x = x + 1
    return x


def _new_inputs(size: int, device: str) -> list[torch.Tensor]:
    """Values for static_x: two that are not whole numbers, then 0, 1, 2, ... (shown on success)."""
    ramp = torch.arange(size, dtype=torch.float32, device=device)
    return [ramp * 0.37 - 1.9, 2.25 - ramp * 1.13, ramp]


@exercise(CHAIN_EXERCISE)
def check_capture_chain(capture_chain: Callable[..., Any]) -> None:
    """Check ``capture_chain(static_x, n) -> (graph, static_out)``.

    ``static_out`` must be ``static_x + n`` computed by ``n`` separate ``+ 1`` kernels captured in
    ``graph``, so that copying new data into ``static_x`` and replaying updates ``static_out``. The
    checker counts the kernels of a replay (a graph submits the kernels it recorded: it does not
    merge them), checks that ``static_x`` keeps its memory and is not written by the graph, and
    replays on inputs that are not whole numbers, for two lengths of chain.
    """
    cuda, device = live()
    for n, size in CHAINS:
        static_x = torch.zeros(size, device=device)
        before = address(static_x)
        graph, static_out = graph_and_tensor(
            call(capture_chain, static_x, n, name="capture_chain"),
            cuda,
            "capture_chain",
            "static_out",
            "static_out",
        )
        if address(static_x) != before:
            message = _(
                "capture_chain gave static_x other memory (static_x.data = ... or set_()): the "
                "checker copies new inputs into the memory it handed you. Leave static_x as it is "
                "and capture the chain from it."
            )
            fail(message, COPY_IN)
        if shares_memory(static_out, static_x):
            message = _(
                "static_out is static_x itself (or a view of it): in-place additions on the input "
                "are applied again at every replay, to whatever it holds by then. Compute new "
                "tensors, out = out + 1, starting from static_x."
            )
            fail(message, ACCUMULATE)
        for k, new in enumerate(_new_inputs(size, device)):
            _replay_on(graph, static_x, static_out, new, n, count_kernels=k == 0)
    what = _("chain of {n} kernels replayed on new data").format(n=n)
    passed(what, static_out, _chain(new, n))


def _replay_on(
    graph: Any,
    static_x: torch.Tensor,
    static_out: torch.Tensor,
    new: torch.Tensor,
    n: int,
    *,
    count_kernels: bool,
) -> None:
    """Copy ``new`` into ``static_x``, replay, and fail unless the chain ran on it as it should."""
    static_x.copy_(new)
    kernels = None
    if count_kernels:
        kernels = replay_kernels(graph)  # replays once
    else:
        graph.replay()
    if same(static_out, _chain(torch.zeros_like(new), n), exact=False):
        message = _(
            "after copying new data into static_x and replaying, static_out still holds the "
            "result for zeros: compute it inside `with cuda.graph(g):` from static_x itself."
        )
        fail(message, COPY_IN)
    if kernels is not None and kernels < n:
        message = _(
            "one replay of your graph ran {kernels} kernel(s), not the chain's {n}: capture "
            "`out = out + 1` {n} times, each its own kernel. A graph replays exactly the "
            "kernels you launched while capturing; it does not merge them (that is fusion)."
        )
        fail(message.format(kernels=kernels, n=n), NOT_CHANGED)
    if not same(static_x, new):
        message = _(
            "your graph writes into static_x: after a replay it no longer holds the input the "
            "checker copied in. In-place additions on the input are applied again at every "
            "replay; compute new tensors, out = out + 1."
        )
        fail(message, ACCUMULATE)
    expected = _chain(new, n)
    if not same(static_out, expected, exact=False):
        message = _(
            "after a replay on {new} static_out is {yours}, expected {expected}: the chain "
            "should add 1, {n} times."
        )
        fail(message.format(new=fmt(new), yours=fmt(static_out), expected=fmt(expected), n=n))


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


def _launches(calls: list[tuple[str, int]], source: str) -> Timeline:
    """A timeline of host ``calls`` ``(launch call, kernels it submits)``, 10 µs apart.

    Launch i has correlation id 20 + i; its kernels run back to back 2 µs after it starts.
    """
    rows = []  # (kind, name, start, duration, correlation)
    for i, (launch, kernels) in enumerate(calls):
        start = 10_000 * i
        rows.append(("launch", launch, start, 1600, 20 + i))
        rows += [
            ("kernel", f"k{i}_{j}", start + 2000 + 300 * j, 250, 20 + i) for j in range(kernels)
        ]
    host = [r[0] == "launch" for r in rows]
    return Timeline(
        kind=[r[0] for r in rows],
        name=[r[1] for r in rows],
        start_ns=[r[2] for r in rows],
        dur_ns=[r[3] for r in rows],
        device=[-1 if h else 0 for h in host],
        stream=[-1 if h else 7 for h in host],
        thread=[1 if h else -1 for h in host],
        correlation=[r[4] for r in rows],
        meta={"source": source},
    )


def _timelines() -> list[tuple[Timeline, int]]:
    """The lesson's timeline and two more, each with its first replay's kernels counted by hand."""
    graph, eager = "cudaGraphLaunch", "cudaLaunchKernel"
    return [
        (replay_timeline(), 3),
        # an eager kernel, a 5-kernel replay, another eager kernel, a 2-kernel replay: 5
        (_launches([(eager, 1), (graph, 5), (eager, 1), (graph, 2)], "lesson 01, second"), 5),
        # three replays of a 2-kernel graph, then an eager kernel: 2
        (_launches([(graph, 2), (graph, 2), (graph, 2), (eager, 1)], "lesson 01, third"), 2),
    ]


def _diagnose(value: float, t: Timeline) -> None:
    """Fail with what ``value`` counts, when it is a known mistake on ``t``."""
    kernels = t.kind == "kernel"
    graph_launches = (t.kind == "launch") & (t.name == "cudaGraphLaunch")
    replayed = kernels & (t.correlation[:, None] == t.correlation[graph_launches]).any(axis=1)
    if value == kernels.sum():
        message = _(
            "you counted every kernel ({value:g}): keep only those whose correlation id is the "
            "first cudaGraphLaunch's."
        )
        fail(message.format(value=value))
    if value == replayed.sum():
        message = _(
            "you counted the kernels of every replay ({value:g}): keep only the first "
            "cudaGraphLaunch's correlation id."
        )
        fail(message.format(value=value))
    if value in (graph_launches.sum(), (t.kind == "launch").sum()):
        message = _(
            "you got {value:g}: that counts launch calls. A single cudaGraphLaunch submits many "
            "kernels; count the kernel events sharing its correlation id."
        )
        fail(message.format(value=value), READING)


@exercise(KERNELS_EXERCISE)
def check_kernels_per_replay(kernels_per_replay: Callable[..., Any]) -> None:
    """Check ``kernels_per_replay(t) -> int``: kernels submitted by the first graph launch.

    Every kernel of a replay carries the correlation id of its ``cudaGraphLaunch``. Three
    timelines with different answers, so that a constant answer cannot pass.
    """
    counts = []
    for t, expected in _timelines():
        yours = call(kernels_per_replay, t, name="kernels_per_replay")
        should = _("kernels_per_replay should return a number of kernels")
        counts.append(number(yours, should))
        if counts[-1] == expected:
            continue
        not_fixed(counts, "kernels_per_replay", _("timelines"), READING)
        _diagnose(counts[-1], t)
        message = _("kernels_per_replay returned {yours}, expected {expected} for this timeline.")
        fail(message.format(yours=fmt(yours), expected=expected))
    passed(_("kernels in the first replay"), counts[0], 3)
