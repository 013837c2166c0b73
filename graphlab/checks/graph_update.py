"""Checks for lesson 12, changing a graph without recapture: point a graph at a new input.

The learner's ``repoint(graph, fn, new_x)`` must make the checker's own graph (captured once on
another input) compute ``fn(new_x)`` from ``new_x``'s memory, by updating its executable graph
from a second capture, not by capturing into it again. The checker replays *its* graph, not
the learner's, and then changes ``new_x`` in place, allocating nothing, and replays again: only a
graph whose kernels read ``new_x``'s own storage follows (one that reads a copy made inside
``repoint`` returns the old values, even when the copy was freed). It watches the graph's
``capture_begin`` and ``reset`` while the learner's code runs, so a recapture into the same object
is told apart from an update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.errors import CheckFailed, GraphUpdateError
from graphlab.language import gettext as _

from ._core import call, exercise, fail, fmt, live, pair, passed, same, tensor
from ._observe import MethodCalls, warmed_capture
from ._sections import REPOINT_EXERCISE, UPDATE, UPDATE_REFUSED

__all__ = ["check_repoint"]

SIZE = 6


def _work(x: torch.Tensor) -> torch.Tensor:
    """The checker's graph: three kernels, no whole-number results."""
    return torch.tanh(x * 1.5 - 0.25) + 0.125


@exercise(REPOINT_EXERCISE)
def check_repoint(repoint: Callable[..., Any]) -> None:
    """Check ``repoint(graph, fn, new_x) -> (out, source)``.

    ``graph`` is an instantiated graph of ``fn`` captured on another input; afterwards replaying
    ``graph`` must write ``fn(new_x)`` into ``out``, reading ``new_x`` itself (a later change of
    ``new_x`` shows in the next replay), and ``source`` is the kept graph the update came from,
    which the caller keeps alive. Capturing into ``graph`` again is refused.
    """
    cuda, device = live()
    old_x = torch.linspace(-0.9, 1.7, SIZE, device=device)
    # Kept, so that a refused update can be explained from the two graphs' nodes on a GPU too.
    graph, old_out = warmed_capture(lambda: _work(old_x), keep_graph=True)
    graph.instantiate()
    graph.replay()
    new_x = torch.linspace(2.05, -0.65, SIZE, device=device)
    # Made before repoint runs (see _replays_follow): fn(new_x), and new_x's second values.
    first = _work(new_x)
    later = torch.linspace(-1.45, 0.95, SIZE, device=device)
    with MethodCalls([graph], ("capture_begin", "reset")) as watched:
        try:
            result = call(repoint, graph, _work, new_x, name="repoint")
        except CheckFailed as failure:
            if isinstance(failure.__cause__, GraphUpdateError):
                failure.reread = str(UPDATE_REFUSED)
            raise
    if watched.count(graph, "capture_begin") or watched.count(graph, "reset"):
        message = _(
            "repoint captured into the graph it was given (or reset it): that rebuilds its "
            "executable graph, which is what an update avoids. Capture fn(new_x) into a new "
            "cuda.CUDAGraph(keep_graph=True) and update the given graph from it with "
            "update_graph(graph, source)."
        )
        fail(message)
    out, source = pair(result, _("repoint should return a pair (out, source)"))
    out = tensor(out, _("the first element (out)"))
    if not isinstance(source, cuda.CUDAGraph):
        message = _(
            "the second element should be the cuda.CUDAGraph you updated from (the caller must "
            "keep it alive while the graph replays), not {type_name}."
        )
        fail(message.format(type_name=type(source).__name__))
    _replays_follow(graph, out, old_out, new_x, first, later)
    what = _("replays of the given graph that computed fn(new_x) from new_x's memory")
    passed(what, 2, 2)


def _replays_follow(
    graph: Any, out: torch.Tensor, old_out: torch.Tensor, new_x: Any, first: Any, later: Any
) -> None:
    """Replay the checker's graph on ``new_x``, then on ``later``'s values copied into it; fail
    with the reason unless each replay writes ``fn(new_x)`` into ``out`` and no longer into
    ``old_out``.

    ``first`` is ``fn(new_x)`` and ``later`` the second values, both made before ``repoint`` ran,
    so that changing ``new_x`` allocates nothing: memory that ``repoint`` freed (a copy of
    ``new_x`` it captured on, say) keeps what it held, and a graph that reads such a copy is
    caught by its stale result rather than passing on memory that happened to be reused.
    ``old_out`` (the graph's output before the update) is filled with NaN before each replay: a
    replay that writes it again is still running the graph's own capture. Every result is read
    back to the host before it is compared: a comparison on the GPU allocates, and on a GPU that
    allocation can take the very block a freed copy held, so the next replay would read whatever
    the comparison left there instead of the stale copy.
    """
    first = first.cpu()
    for second in (False, True):
        if second:
            new_x.copy_(later)
        old_out.fill_(float("nan"))
        graph.replay()
        written, old_written = out.cpu(), old_out.cpu()
        if not bool(torch.isnan(old_written).all()):
            message = _(
                "replaying the given graph still wrote its own output: the graph was not "
                "updated and still runs its own capture, on its old input. Capture fn(new_x) "
                "into a new cuda.CUDAGraph(keep_graph=True), then update the given graph from "
                "it with update_graph(graph, source)."
            )
            fail(message, UPDATE)
        expected = _work(new_x).cpu() if second else first
        if second and same(written, first, exact=False):
            message = _(
                "after new_x changed in place, the replay still computed fn of new_x's old "
                "values: the updated graph reads a copy of new_x made inside repoint, not "
                "new_x's own memory. Capture fn(new_x) on new_x itself (no clone, no .to())."
            )
            fail(message, UPDATE)
        if not same(written, expected, exact=False):
            message = _(
                "after replaying the given graph, out is {yours}, not fn(new_x) = "
                "{expected}. An updated graph writes where the source's capture put its "
                "output (return that tensor itself, not a copy, not the graph's old output) and "
                "reads what the source's capture read (new_x itself, not a copy of it)."
            )
            fail(message.format(yours=fmt(written), expected=fmt(expected)), UPDATE)
