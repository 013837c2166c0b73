"""Checks for lesson 10, torch.compile's CUDA graphs: did a compiled call really replay?"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphlab.language import N_
from graphlab.language import gettext as _

from ._core import Section, call, exercise, fail, fmt, passed

__all__ = ["check_compiled_replays"]

PROOF = Section("10_torch_compile", 2, "Did it replay? Counters and log lines")

SKIP_MUTATED = "skipping cudagraphs due to mutated inputs (1 instances)"
SKIP_CPU = "skipping cudagraphs due to cpu device (arg1_1)"

# What graphlab.timing.experiments.watch_cudagraphs reports for one call of a function compiled
# with mode="reduce-overhead", and whether that call ran from CUDA graphs. A call replayed when
# it captured nothing, replayed at least one graph and skipped no compiled region. The cases
# are shaped like the moments of the lesson: a warm-up call, a recording call (CUDAGraph Trees
# replays once right after it records, since a capture runs nothing), steady replays of one graph
# and of several partitions, a skip, and a call whose second compiled region was skipped.
CASES: list[tuple[str, dict[str, Any], bool]] = [
    (
        N_("a steady call of the MLP"),
        {"captures": 0, "replays": 1, "cudagraph_skips": 0, "log": []},
        True,
    ),
    (
        N_("a call whose graph was split into 3 partitions"),
        {"captures": 0, "replays": 3, "cudagraph_skips": 0, "log": []},
        True,
    ),
    (
        N_("the first call (warm-up)"),
        {"captures": 1, "replays": 0, "cudagraph_skips": 0, "log": []},
        False,
    ),
    (
        N_("the second call (recording)"),
        {"captures": 1, "replays": 1, "cudagraph_skips": 0, "log": []},
        False,
    ),
    (
        N_("a call that records 2 partitions"),
        {"captures": 2, "replays": 2, "cudagraph_skips": 0, "log": []},
        False,
    ),
    (
        N_("a call of a function that writes into its input"),
        {"captures": 0, "replays": 0, "cudagraph_skips": 1, "log": [SKIP_MUTATED]},
        False,
    ),
    (
        N_("a call with a graph break, whose second region reads a CPU tensor"),
        {"captures": 0, "replays": 1, "cudagraph_skips": 1, "log": [SKIP_CPU]},
        False,
    ),
    (
        N_("a call that ran eagerly without a word"),
        {"captures": 0, "replays": 0, "cudagraph_skips": 0, "log": []},
        False,
    ),
]


@exercise(PROOF)
def check_compiled_replays(replayed: Callable[..., Any]) -> None:
    """Check ``replayed(calls) -> bool`` on what ``watch_cudagraphs`` saw during one call.

    ``calls`` is a dict with ``captures``, ``replays``, ``cudagraph_skips`` and ``log`` (the
    cudagraphs log lines). The call replayed when it captured nothing, replayed a graph and
    skipped nothing. Eight cases, true and false, so that no constant and no single count passes.
    """
    for what, calls, expected in CASES:
        given = {**calls, "log": list(calls["log"])}
        yours = call(replayed, given, name="replayed")
        if not isinstance(yours, (bool, np.bool_)):
            fail(_("replayed should return True or False, not {value}.").format(value=fmt(yours)))
        if yours != expected:
            fail(_why(what, calls, expected))
    replays = sum(expected for _what, _calls, expected in CASES)
    what = _("calls that really replayed, of {count}").format(count=len(CASES))
    passed(what, replays, replays)


def _why(what: str, calls: dict[str, Any], expected: bool) -> str:
    """The message for a wrong verdict on ``calls``: which evidence was missed."""
    fields = {"what": _(what), "calls": calls}
    if expected:
        message = _(
            "{what} {calls}: this call replayed (no capture, {replays} replay(s), no skip) but "
            "you said it did not. A call may replay several graphs, one per partition."
        )
        return message.format(**fields, replays=calls["replays"])
    if calls["cudagraph_skips"]:
        message = _(
            "{what} {calls}: a compiled region was skipped ({line}), so part of the call "
            "launched its kernels one by one. A skip means False, whatever else replayed."
        )
        return message.format(**fields, line=repr(calls["log"][0]))
    if calls["captures"]:
        message = _(
            "{what} {calls}: this call captured a graph, so it recorded (or warmed up) rather "
            "than replayed; the replay right after a recording produces that call's outputs. "
            "A capture means False."
        )
        return message.format(**fields)
    message = _(
        "{what} {calls}: no graph was replayed, so the compiled code ran without graphs. "
        "No replay means False."
    )
    return message.format(**fields)
