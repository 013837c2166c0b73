"""Checks for lesson 09, multi-stream capture: a fork and a join inside one capture.

The checker watches which stream each captured operation was submitted to (a torch dispatch mode
that notes the current stream of every operation issued while that stream is capturing: the same
observation on a GPU and on the CPU emulator), so it can tell a graph with two parallel branches
from one whose branches were captured one after the other on a single stream, which computes the
same numbers but can never overlap them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch

from graphlab.errors import CheckFailed
from graphlab.language import gettext as _
from graphlab.support.capture_errors import first_cuda_error
from graphlab.support.torch_internals import DispatchMode
from graphlab.timing.side_stream import side_stream

from ._core import call, exercise, fail, fmt, graph_and_tensor, live, passed, same
from ._sections import FORK_JOIN, FORK_JOIN_EXERCISE, UNJOINED

__all__ = ["check_fork_join"]

SIZE = 7
# Inputs the checker replays on after the capture: none of them whole numbers.
NEW_INPUTS = (
    [0.37 * k - 1.21 for k in range(SIZE)],
    [2.5 - 0.83 * k for k in range(SIZE)],
    [((-1) ** k) * (0.11 + 0.29 * k) for k in range(SIZE)],
)


def _fork_join(x: torch.Tensor) -> torch.Tensor:
    """What the captured graph must compute, run eagerly for the expected values."""
    return x.sin() * 2 + x.cos() * 3


class _CapturedOps(DispatchMode):
    """Notes ``(stream, op name)`` for every operation submitted while its stream is capturing.

    Operations on a stream that does not take part in a capture run at once and are not noted.
    """

    def __init__(self, cuda: Any):
        super().__init__()  # type: ignore[no-untyped-call]  # torch's is unannotated
        self.cuda = cuda
        self.ops: list[tuple[Any, str]] = []

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        if self.cuda.is_current_stream_capturing():
            self.ops.append((self.cuda.current_stream(), func.overloadpacket.__name__))
        return func(*args, **(kwargs or {}))

    def streams_of(self, op: str) -> set[Any]:
        """The streams on which ``op`` (an aten name such as ``"sin"``) was captured."""
        return {stream for stream, name in self.ops if name == op}

    def streams(self) -> set[Any]:
        """Every stream that captured at least one operation."""
        return {stream for stream, _ in self.ops}


@exercise(FORK_JOIN_EXERCISE)
def check_fork_join(capture_fork_join: Callable[..., Any]) -> None:
    """Check ``capture_fork_join(static_x, side) -> (graph, static_out)``.

    The graph must compute ``static_out = static_x.sin() * 2 + static_x.cos() * 3`` as two
    branches on two streams: ``sin`` on the capturing stream, ``cos`` on ``side`` (or the other
    way round, or on a stream of the learner's own), forked from the capturing stream and joined
    back into it. The checker requires the capture to succeed (an unjoined fork fails it, as on a
    GPU), the two branches to be captured on different streams, and the replay to be right on
    three new inputs that are not whole numbers.
    """
    cuda, device = live()
    with warnings.catch_warnings():
        # The emulator's one-time note that its streams run one after the other is about the
        # learner's code, not the stream the checker hands over.
        warnings.filterwarnings("ignore", message="graphlab CPU emulator differs")
        side = side_stream(cuda)
    first = torch.linspace(-1.3, 2.1, SIZE, device=device)
    static_x = first.clone()
    with _CapturedOps(cuda) as seen:
        result = _captured(capture_fork_join, static_x, side)
    graph, static_out = graph_and_tensor(
        result, cuda, "capture_fork_join", "static_out", "static_out"
    )
    streams = _branch_streams(seen, side)
    for values in NEW_INPUTS:
        new = torch.tensor(values, device=device)
        static_x.copy_(new)
        graph.replay()
        expected = _fork_join(new)
        if same(static_out, _fork_join(first), exact=False):
            message = _(
                "after copying new values into static_x and replaying, static_out still holds "
                "the result for the first input: compute it inside the capture, from static_x."
            )
            fail(message)
        if not same(static_out, expected, exact=False):
            message = _(
                "after a replay on {new} static_out is {yours}, expected {expected} "
                "(static_x.sin() * 2 + static_x.cos() * 3)."
            )
            fail(message.format(new=fmt(new), yours=fmt(static_out), expected=fmt(expected)))
    what = _(
        "fork/join captured, replayed on 3 new inputs: streams the sin and cos branches were "
        "captured on"
    )
    passed(what, streams, 2)


def _captured(capture_fork_join: Callable[..., Any], static_x: torch.Tensor, side: Any) -> Any:
    """Call the learner's function; a capture CUDA refuses for a lesson-09 reason gets its fix."""
    try:
        return call(capture_fork_join, static_x, side, name="capture_fork_join")
    except CheckFailed as failure:
        error = first_cuda_error(failure)
        if error == "cudaErrorStreamCaptureUnjoined":
            message = _(
                "the capture failed: work forked to another stream was never joined back "
                "(CUDA's 'capturing stream has unjoined work'). After the side stream's last "
                "captured operation, and before the `with cuda.graph(...)` block ends, make the "
                "capturing stream wait for it: cuda.current_stream().wait_stream(side), or "
                "record an Event on side and wait on it."
            )
            fail(message, UNJOINED)
        if error == "cudaErrorStreamCaptureIsolation":
            message = _(
                "the capture failed: the capturing stream waited for work on a stream that is "
                "not part of the capture (CUDA's 'dependency created on uncaptured work in "
                "another stream'). Fork inside the capture, before side's work: "
                "side.wait_stream(cuda.current_stream())."
            )
            fail(message, FORK_JOIN)
        raise


def _branch_streams(seen: _CapturedOps, side: Any) -> int:
    """How many streams the sin and the cos branch were captured on; fail unless both were
    captured, on different streams."""
    sin, cos = seen.streams_of("sin"), seen.streams_of("cos")
    for op, where, branch in (
        ("sin", sin, "a = static_x.sin() * 2"),
        ("cos", cos, "b = static_x.cos() * 3"),
    ):
        if not where:
            message = _(
                "the graph computes no {op}: the branch {branch} must be computed inside "
                "the capture (work done before it, or on a stream that never waited for the "
                "capturing stream, is not in the graph)."
            )
            fail(message.format(op=op, branch=branch), FORK_JOIN)
    if len(sin | cos) > 1:
        return len(sin | cos)
    stream = "side" if sin == {side} else _("the capturing stream")
    message = _(
        "both branches were captured on one stream ({stream}), so the graph runs one after the "
        "other and they can never overlap. Fork: side.wait_stream(cuda.current_stream()); put "
        "b = static_x.cos() * 3 in `with cuda.stream(side):` and keep a on the capturing stream; "
        "join: cuda.current_stream().wait_stream(side) before a + b."
    )
    fail(message.format(stream=stream), FORK_JOIN)
