"""Checks for lesson 13, NCCL: which rank hangs when the ranks replay graphs that do not match.

NCCL pairs the collectives of a communicator by their order: the k-th collective a rank launches
meets the k-th collective of every other rank, whichever graph each one sits in. The exercise
models each rank's replays as a list of graphs, each graph the list of its collectives'
signatures (``"all_reduce 4096"``), and asks for the ranks left waiting at the first collective
that does not match everywhere, with the replay (step) each of them is in.

:func:`replay_on_gloo_ranks` acts the same model out with real processes on the CPU: one process
per rank, each running its "graphs" as eager gloo all_reduces. It is not a CUDA graph; it shows the
protocol-level wait that a mismatched replay starts, which needs no GPU.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from graphlab.language import gettext as _

from ._core import call, exercise, fail, fmt, passed
from ._sections import MATCHING

__all__ = ["check_matching_replays", "replay_on_gloo_ranks"]

A, B, G = "all_reduce 4096", "all_reduce 1024", "all_gather 4096"

# (replays of each rank, the ranks that wait for ever -> the step each is in). Worked by hand:
CASES = [
    # The same graph replayed three times everywhere: nothing waits.
    ([[[A], [A], [A]], [[A], [A], [A]]], {}),
    # Rank 1 skips its third replay: rank 0's third all_reduce waits in step 2.
    ([[[A], [A], [A]], [[A], [A]]], {0: 2}),
    # The same collectives, cut into graphs differently (and an empty graph): they still meet.
    ([[[A, B], [], [G]], [[A], [B, G]]], {}),
    # Collective 2 differs (B against G): both ranks launch it and neither completes. Rank 0 is in
    # step 1 (its second graph holds collectives 1 and 2), rank 1 in step 2 (one per graph).
    ([[[A], [A, B]], [[A], [A], [G]]], {0: 1, 1: 2}),
    # Three ranks; rank 2 replays an extra graph with no collective first, so its steps are
    # shifted by one; rank 1 has stopped after one collective. Collective 1: ranks 0 and 2 launch
    # A, rank 1 launches nothing, so ranks 0 (step 1) and 2 (step 2) wait.
    ([[[A], [A]], [[A]], [[], [A], [A]]], {0: 1, 2: 2}),
    # Collective 3 is the first mismatch; before it every rank agrees across different cuts.
    ([[[A, B, A], [B]], [[A], [B], [A], [G]], [[A, B], [A, B]]], {0: 1, 1: 3, 2: 1}),
]


def _first_mismatch(replays: list[list[list[str]]]) -> tuple[int, dict[int, int]]:
    """A worked answer, used to name a wrong answer's mistake: (position, {rank: step}).

    Flatten each rank's replays into its sequence of collectives, each tagged with its step; at
    the first position where the ranks do not all launch the same signature, every rank that
    launched something there waits (a rank with nothing left launches nothing and does not wait
    there). (-1, {}) when every rank launches the same sequence.
    """
    flat = [[(sig, step) for step, graph in enumerate(rank) for sig in graph] for rank in replays]
    for k in range(max((len(f) for f in flat), default=0)):
        launched = {r: f[k] for r, f in enumerate(flat) if k < len(f)}
        if len(launched) < len(flat) or len({sig for sig, _ in launched.values()}) > 1:
            return k, {r: step for r, (_, step) in launched.items()}
    return -1, {}


@exercise(MATCHING)
def check_matching_replays(hangs: Callable[..., Any]) -> None:
    """Check ``hangs(replays) -> dict[rank, step]`` on six hand-worked cases (two and three ranks,
    graphs cut differently, empty graphs, mismatched signatures, a rank that stopped early)."""
    for replays, expected in CASES:
        yours = call(hangs, [[list(g) for g in rank] for rank in replays], name="hangs")
        if yours is None:
            yours = {}
        if not isinstance(yours, dict):
            message = _("hangs should return a dict {{rank: step}}, not {value}.")
            fail(message.format(value=fmt(yours)))
        yours = {int(r): s for r, s in yours.items()}
        if yours != expected:
            fail(_why(replays, yours, expected))
    passed(_("waiting ranks of the last case"), yours, expected)


def _why(replays: list[list[list[str]]], yours: dict[Any, Any], expected: dict[int, int]) -> str:
    """Name the mistake behind a wrong answer when it is one the lesson warns about."""
    shown = _("for replays {replays} you returned {yours}, expected {expected}.").format(
        replays=replays, yours=yours, expected=expected
    )
    if not expected:
        advice = _(
            "{shown} Every rank launches the same collectives in the same order; where the "
            "graphs are cut does not matter, NCCL pairs collectives by their order."
        )
    elif yours == _positions(replays):
        advice = _(
            "{shown} Those are collective positions; return the step, the index of the replay "
            "(graph) that holds the waiting collective on that rank."
        )
    elif set(yours) > set(expected):
        advice = _(
            "{shown} A rank that has no collective left at the mismatch launches nothing there "
            "and does not wait: leave it out."
        )
    elif set(yours) < set(expected):
        advice = _(
            "{shown} Every rank that launched a collective at the first mismatch waits, not "
            "only one of them."
        )
    else:
        return shown
    return advice.format(shown=shown)


def _positions(replays: list[list[list[str]]]) -> dict[int, int]:
    """The waiting ranks mapped to the mismatched collective's position instead of its step."""
    position, waiting = _first_mismatch(replays)
    return dict.fromkeys(waiting, position)


#: How long a rank waits for the others, to meet them (each process imports torch first, seconds
#: apart on a busy machine) and inside a collective, unless ``hold_s`` is longer.
WAIT_S = 60.0

# One rank: join the gloo group, run its graphs' all_reduces (each signature's last word is the
# number of elements), report each finished step, then stay alive for ``hold_s`` as a training
# process that went on to other work would. It exits as soon as its parent is gone, so that
# stopping the parent (a time limit) leaves no rank behind. Its three report lines come in the
# learner's language, translated by the parent. The ranks share one output pipe, so each line goes
# out in one write: print() writes a line's text and its newline separately where Python runs
# unbuffered (PYTHONUNBUFFERED, as some notebook runners set), and another rank's line can land
# between the two.
_RANK_PROGRAM = """
import json, os, sys, threading, time
from datetime import timedelta
rank, world, url, replays, hold_s, wait_s, (launches, done, none_left) = json.loads(sys.argv[1])
parent = os.getppid()
def exit_with_parent() -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(3)
threading.Thread(target=exit_with_parent, daemon=True).start()
import torch
import torch.distributed as dist
dist.init_process_group(
    "gloo", init_method=url, rank=rank, world_size=world, timeout=timedelta(seconds=wait_s)
)
def say(line: str) -> None:
    sys.stdout.write(line + "\\n")
    sys.stdout.flush()
for step, graph in enumerate(replays[rank]):
    say(launches.format(rank=rank, step=step, graph=graph))
    for signature in graph:
        dist.all_reduce(torch.ones(int(signature.split()[-1])))
    say(done.format(rank=rank, step=step))
say(none_left.format(rank=rank))
time.sleep(hold_s)
os._exit(0)
"""


def replay_on_gloo_ranks(replays: list[list[list[str]]], hold_s: float = 60.0) -> list[int]:
    """Run one CPU process per rank, each launching its replays' collectives with gloo.

    Returns the ranks' exit codes when every rank got through its replays and its ``hold_s`` of
    other work. A rank whose collective no other rank launches waits inside it: call this under
    :func:`graphlab.failures.isolated` with a time limit shorter than ``hold_s``, which stops the
    wait (the ranks exit with their parent). Uses a TCP rendezvous on 127.0.0.1, where a rank
    waits :data:`WAIT_S` (or ``hold_s`` if longer) for the others.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    lines = [
        _("rank {rank}: replay {step} launches {graph}"),
        _("rank {rank}: replay {step} done"),
        _("rank {rank}: no replay left"),
    ]
    ranks = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _RANK_PROGRAM,
                json.dumps([r, len(replays), url, replays, hold_s, max(hold_s, WAIT_S), lines]),
            ]
        )
        for r in range(len(replays))
    ]
    return [rank.wait() for rank in ranks]
