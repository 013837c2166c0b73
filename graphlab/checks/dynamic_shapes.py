"""Checks for lesson 05, dynamic shapes: size buckets, padding, and the waste they cost."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._core import call, fail, fmt, live, number, passed, same

__all__ = ["CountingGraph", "capture_buckets", "check_padding_waste", "check_run_padded"]

FEATURES = 4


def _f(x: torch.Tensor) -> torch.Tensor:
    """Per-row computation of the bucketed graphs: each row's output depends on that row only."""
    return (x * 2).sum(dim=1) + 1


class CountingGraph:
    """A captured graph that counts its replays, so the checker sees which bucket was used."""

    def __init__(self, graph):
        self._graph = graph
        self.replays = 0

    def replay(self) -> None:
        self.replays += 1
        self._graph.replay()


def capture_buckets(sizes=(2, 4, 8)) -> dict[int, tuple[CountingGraph, torch.Tensor, torch.Tensor]]:
    """One graph per bucket size: ``{size: (graph, static_x, static_y)}``, all in one pool.

    ``static_x`` has shape ``(size, 4)``; ``static_y = (static_x * 2).sum(1) + 1`` has ``(size,)``.
    """
    cuda, device = live()
    pool = cuda.graph_pool_handle()
    graphs = {}
    for size in sizes:
        static_x = torch.zeros(size, FEATURES, device=device)
        graph = cuda.CUDAGraph()
        with cuda.graph(graph, pool=pool):
            static_y = _f(static_x)
        graphs[size] = (CountingGraph(graph), static_x, static_y)
    return graphs


def check_run_padded(run_padded: Callable) -> None:
    """Check ``run_padded(graphs, batch) -> output`` for requests of 1 to 8 rows.

    ``graphs`` maps a bucket size to ``(graph, static_x, static_y)``. A correct ``run_padded``
    picks the smallest bucket that holds the batch, copies the batch into the first rows of that
    bucket's ``static_x`` (the rest is padding), replays, and returns the first ``n`` outputs.
    """
    _, device = live()
    graphs = capture_buckets()
    for n in (3, 1, 8, 5, 2):
        batch = torch.arange(n * FEATURES, dtype=torch.float32, device=device).reshape(n, FEATURES)
        expected = _f(batch)
        before = {size: g.replays for size, (g, _, _) in graphs.items()}
        out = call(run_padded, graphs, batch, name="run_padded")
        used = [size for size, (g, _, _) in graphs.items() if g.replays > before[size]]
        fits = min(size for size in graphs if size >= n)
        if not used:
            fail(f"for a request of {n} rows no graph was replayed: call graph.replay().")
        if used != [fits]:
            fail(
                f"for a request of {n} rows you replayed the graph(s) of size {used}; the smallest "
                f"bucket that holds {n} rows is {fits}: a bigger one computes more padding."
            )
        if not isinstance(out, torch.Tensor):
            fail(f"run_padded should return a tensor, not {type(out).__name__}.")
        if out.shape[0] == fits and fits != n:
            fail(
                f"you returned {fits} outputs for a request of {n} rows: the last {fits - n} are "
                f"padding. Return only the first {n}: static_y[:{n}]."
            )
        if not same(out, expected):
            fail(f"for a request of {n} rows you returned {fmt(out)}, expected {fmt(expected)}.")
    passed("padded run of a 2-row request (bucket 2)", out, expected)


def check_padding_waste(padding_waste: Callable) -> None:
    """Check ``padding_waste(sizes, buckets) -> float``: padded rows over all rows computed.

    Each request of ``n`` rows runs in the smallest bucket ``>= n``. For requests [1, 3, 4, 5] and
    buckets [4, 8] that is 4 + 4 + 4 + 8 = 20 rows computed for 13 real ones: waste 7 / 20.
    """
    cases = [
        (([1, 3, 4, 5], [4, 8]), 7 / 20),
        (([8, 8], [8]), 0.0),
        (([1, 2, 3], [1, 2, 3, 4]), 0.0),
        (([3], [2, 4, 8]), 1 / 4),
    ]
    first = None
    for (sizes, buckets), expected in cases:
        yours = call(padding_waste, list(sizes), list(buckets), name="padding_waste")
        value = number(yours, "padding_waste should return a fraction")
        if abs(value - expected) < 1e-9:
            first = value if first is None else first
            continue
        computed = sum(min(b for b in buckets if b >= s) for s in sizes)
        if abs(value - (computed - sum(sizes)) / sum(sizes)) < 1e-9:
            fail(
                f"for sizes {sizes} and buckets {buckets} you divided the padding by the real rows "
                f"({sum(sizes)}); divide by all rows computed ({computed}): "
                f"expected {expected:.4g}."
            )
        fail(f"padding_waste({sizes}, {buckets}) returned {value:.4g}, expected {expected:.4g}.")
    passed("padding waste of sizes [1, 3, 4, 5] in buckets [4, 8]", first, cases[0][1])
