"""Checks for lesson 04, randomness: Dropout inside a graph, and reproducible replays."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._core import call, fail, live, passed, same

__all__ = ["check_reproducible_replays"]


def check_reproducible_replays(two_replays: Callable) -> None:
    """Check ``two_replays(graph, static_out, seed) -> (first, second)``.

    The checker captures ``static_out = dropout(ones(64), p=0.5)``. The learner replays the graph
    twice so that both replays draw the same mask, and returns both outputs as kept copies.
    """
    cuda, device = live()
    static_in = torch.ones(64, device=device)
    graph = cuda.CUDAGraph()
    with cuda.graph(graph):
        static_out = torch.nn.functional.dropout(static_in, p=0.5, training=True)
    seed = 1234
    torch.manual_seed(seed)
    graph.replay()
    expected = static_out.clone()

    result = call(two_replays, graph, static_out, seed, name="two_replays")
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("two_replays should return a pair (first, second) of outputs.")
    first, second = result
    if not all(isinstance(t, torch.Tensor) for t in result):
        fail("both elements should be tensors: the outputs of the two replays.")
    if first.data_ptr() == second.data_ptr() or static_out.data_ptr() in (
        first.data_ptr(),
        second.data_ptr(),
    ):
        fail(
            "you returned static_out itself: both names point at one buffer, which every replay "
            "overwrites, so they are equal whatever the masks were. Keep static_out.clone()."
        )
    if not same(first, second):
        fail(
            "your two replays drew different masks: the graph's random number generator advances "
            "on every replay. Call torch.manual_seed(seed) before each replay."
        )
    if not same(first, expected):
        fail(
            f"both replays drew the same mask, but not the one seed {seed} gives: seed with the "
            "seed you were given, right before each replay."
        )
    kept = int((first != 0).sum())
    passed(f"same mask twice with seed {seed} (elements kept)", kept, int((expected != 0).sum()))
