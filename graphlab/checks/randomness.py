"""Checks for lesson 04, randomness: Dropout inside a graph, and reproducible replays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.language import gettext as _

from ._core import call, copy_advice, exercise, fail, live, pair, passed, same, tensor
from ._observe import Replays, shares_memory, warmed_capture
from ._sections import COPIES, SEEDING

__all__ = ["check_reproducible_replays"]

SEEDS = (2026, 1234)  # the last is the one the success line shows


@exercise(SEEDING)
def check_reproducible_replays(two_replays: Callable[..., Any]) -> None:
    """Check ``two_replays(graph, static_out, seed) -> (first, second)``.

    The checker captures ``static_out = dropout(ones(64), p=0.5)``. The learner replays the graph
    twice so that both replays draw the mask ``seed`` gives, and returns both outputs as kept
    copies, in a tuple or a list. Seeding with ``torch.manual_seed`` or ``cuda.manual_seed`` both
    work. The checker counts the replays and tries two seeds, so a seed written into the answer
    cannot pass.
    """
    _cuda, device = live()
    static_in = torch.ones(64, device=device)
    graph, static_out = warmed_capture(
        lambda: torch.nn.functional.dropout(static_in, p=0.5, training=True)
    )
    for seed in SEEDS:
        torch.manual_seed(seed)
        graph.replay()
        expected = static_out.clone()
        with Replays([graph]) as replays:
            result = call(two_replays, graph, static_out, seed, name="two_replays")
        expected_pair = _("two_replays should return a pair (first, second) of outputs")
        first, second = pair(result, expected_pair)
        first = tensor(first, _("the first element"))
        second = tensor(second, _("the second element"))
        _check(static_out, seed, expected, first, second, replays.of(graph))
    kept = int((first != 0).sum())
    what = _("same mask twice with seed {seed} (elements kept)").format(seed=seed)
    passed(what, kept, int((expected != 0).sum()))


def _check(
    static_out: torch.Tensor,
    seed: int,
    expected: torch.Tensor,
    first: Any,
    second: Any,
    replays: int,
) -> None:
    """Fail unless two replays, seeded with ``seed``, gave ``expected`` twice as kept copies."""
    if any(shares_memory(t, static_out) for t in (first, second)) or shares_memory(first, second):
        message = _(
            "you returned static_out itself: both names point at one buffer, which every replay "
            "overwrites, so they are equal whatever the masks were. {advice}"
        )
        fail(message.format(advice=copy_advice("static_out")), COPIES)
    if replays < 2:
        message = _(
            "two_replays replayed the graph {replays} time(s): the exercise is two replays that "
            "draw the same mask. Seed, replay and keep a copy, twice."
        )
        fail(message.format(replays=replays))
    if not same(first, second):
        message = _(
            "your two replays drew different masks: the graph's random number generator advances "
            "on every replay. Call torch.manual_seed(seed) before each replay."
        )
        fail(message)
    if not same(first, expected):
        message = _(
            "both replays drew the same mask, but not the one seed {seed} gives: seed with the "
            "seed you were given, right before each replay."
        )
        fail(message.format(seed=seed))
