"""Checks for lesson 05, dynamic shapes: size buckets, padding, and the waste they cost."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from graphlab.language import gettext as _

from ._core import (
    call,
    copy_advice,
    exercise,
    fail,
    fmt,
    live,
    not_fixed,
    number,
    passed,
    rounded,
    same,
    tensor,
)
from ._observe import Replays, address, shares_memory, warmed_capture
from ._sections import BUCKETS, COPIES, COPY_IN, WASTE_EXERCISE

__all__ = ["capture_buckets", "check_padding_waste", "check_run_padded"]


FEATURES = 4


def _f(x: torch.Tensor) -> torch.Tensor:
    """Per-row computation of the bucketed graphs: each row's output depends on that row only."""
    return (x * 2).sum(dim=1) + 1


def capture_buckets(
    sizes: Sequence[int] = (2, 4, 8),
) -> dict[int, tuple[Any, torch.Tensor, torch.Tensor]]:
    """One graph per bucket size: ``{size: (graph, static_x, static_y)}``, all in one pool.

    ``static_x`` has shape ``(size, 4)``; ``static_y = (static_x * 2).sum(1) + 1`` has ``(size,)``.
    Each is warmed up on the side stream and captured there, in the order of ``sizes``.
    """
    cuda, device = live()
    pool = cuda.graph_pool_handle()
    graphs: dict[int, tuple[Any, torch.Tensor, torch.Tensor]] = {}
    for size in sizes:
        static_x = torch.zeros(size, FEATURES, device=device)
        graph, static_y = warmed_capture(functools.partial(_f, static_x), pool=pool)
        graphs[size] = (graph, static_x, static_y)
    return graphs


def _requests(device: str) -> list[torch.Tensor]:
    """Requests of 3, 1, 8, 5 rows of values that are not whole numbers, then 2 rows 0..7."""
    rows = [
        torch.arange(n * FEATURES, dtype=torch.float32, device=device).reshape(n, FEATURES)
        for n in (3, 1, 8, 5, 2)
    ]
    return [r * 0.37 - 1.3 + 0.11 * k for k, r in enumerate(rows[:-1])] + rows[-1:]


@exercise(BUCKETS)
def check_run_padded(run_padded: Callable[..., Any]) -> None:
    """Check ``run_padded(graphs, batch) -> output`` for requests of 1 to 8 rows.

    ``graphs`` maps a bucket size to ``(graph, static_x, static_y)``. A correct ``run_padded``
    picks the smallest bucket that holds the batch, copies the batch into the first rows of that
    bucket's ``static_x`` (the rest is padding), replays that graph, and returns a copy of the
    first ``n`` outputs. The checker counts each graph's replays, checks that every ``static_x``
    keeps its memory, and refuses outputs that are views of a ``static_y``, which the next request
    in that bucket overwrites.
    """
    _cuda, device = live()
    graphs = capture_buckets()
    memory = {size: (address(x), address(y)) for size, (_graph, x, y) in graphs.items()}
    for batch in _requests(device):
        n = batch.shape[0]
        expected = _f(batch)
        with Replays(g for g, *_buffers in graphs.values()) as replays:
            out = call(run_padded, graphs, batch, name="run_padded")
        used = [size for size, (g, *_buffers) in graphs.items() if replays.of(g)]
        fits = min(size for size in graphs if size >= n)
        if not used:
            message = _("for a request of {n} rows no graph was replayed: call graph.replay().")
            fail(message.format(n=n))
        if used != [fits]:
            message = _(
                "for a request of {n} rows you replayed the graph(s) of size {used}; the smallest "
                "bucket that holds {n} rows is {fits}: a bigger one computes more padding."
            )
            fail(message.format(n=n, used=used, fits=fits))
        if any(memory[size] != (address(x), address(y)) for size, (_graph, x, y) in graphs.items()):
            message = _(
                "a bucket's static_x now points at other memory (static_x.data = ... or set_()): "
                "its graph keeps reading the memory it was captured with. Copy the batch in: "
                "static_x[:n].copy_(batch)."
            )
            fail(message, COPY_IN)
        _check_output(tensor(out, _("what run_padded returns")), graphs[fits], batch, expected)
    passed(_("padded run of a 2-row request (bucket 2)"), out, expected)


def _check_output(
    out: torch.Tensor,
    bucket: tuple[Any, torch.Tensor, torch.Tensor],
    batch: torch.Tensor,
    expected: torch.Tensor,
) -> None:
    """Fail unless ``out`` is a copy of the real rows' outputs of the ``bucket`` the batch fits."""
    _graph, static_x, static_y = bucket
    n, fits = batch.shape[0], static_x.shape[0]
    if out.shape[:1] == (fits,) and fits != n:
        message = _(
            "you returned {fits} outputs for a request of {n} rows: the last {padding} are "
            "padding. Return only the first {n}: static_y[:{n}].clone()."
        )
        fail(message.format(fits=fits, n=n, padding=fits - n))
    if shares_memory(out, static_y):
        message = _(
            "what you returned shares memory with the bucket's static_y (static_y[:{n}] is a "
            "view of it): the next request in this bucket overwrites it. {advice}"
        )
        fail(message.format(n=n, advice=copy_advice()), COPIES)
    if same(out, expected, exact=False):
        return
    if not same(static_x[:n], batch):
        message = _(
            "after your call the first {n} rows of the bucket's static_x do not hold the batch: "
            "copy it in before replaying, static_x[:{n}].copy_(batch)."
        )
        fail(message.format(n=n), COPY_IN)
    message = _("for a request of {n} rows you returned {yours}, expected {expected}.")
    fail(message.format(n=n, yours=fmt(out), expected=fmt(expected)))


# ((sizes, buckets), expected waste): the lesson's example, two without padding, two whose
# answers are not round numbers.
WASTE_CASES = [
    (([1, 3, 4, 5], [4, 8]), 7 / 20),  # 4 + 4 + 4 + 8 = 20 rows computed for 13 real ones
    (([8, 8], [8]), 0.0),
    (([1, 2, 3, 5, 7, 9], [4, 8, 16]), 17 / 44),  # 4 + 4 + 4 + 8 + 8 + 16 = 44 for 27
    (([1, 2, 3], [1, 2, 3, 4]), 0.0),
    (([3, 3, 5], [4, 6]), 3 / 14),  # 4 + 4 + 6 = 14 for 11
    (([3], [2, 4, 8]), 1 / 4),
]


@exercise(WASTE_EXERCISE)
def check_padding_waste(padding_waste: Callable[..., Any]) -> None:
    """Check ``padding_waste(sizes, buckets) -> float``: padded rows over all rows computed.

    Each request of ``n`` rows runs in the smallest bucket ``>= n``. For requests [1, 3, 4, 5] and
    buckets [4, 8] that is 4 + 4 + 4 + 8 = 20 rows computed for 13 real ones: waste 7 / 20.
    """
    values = []
    for (sizes, buckets), expected in WASTE_CASES:
        yours = call(padding_waste, list(sizes), list(buckets), name="padding_waste")
        values.append(number(yours, _("padding_waste should return a fraction")))
        value = values[-1]
        if abs(value - expected) < 1e-9:
            continue
        computed = sum(min(b for b in buckets if b >= s) for s in sizes)
        if abs(value - (computed - sum(sizes)) / sum(sizes)) < 1e-9:
            message = _(
                "for sizes {sizes} and buckets {buckets} you divided the padding by the real rows "
                "({real}); divide by all rows computed ({computed}): expected {expected:.4g}."
            )
            fail(
                message.format(
                    sizes=sizes,
                    buckets=buckets,
                    real=sum(sizes),
                    computed=computed,
                    expected=expected,
                )
            )
        if rounded(value, expected):
            message = _(
                "padding_waste({sizes}, {buckets}) returned {value:.6g}, which is {expected:.6g} "
                "rounded: return the fraction as is."
            )
            fail(message.format(sizes=sizes, buckets=buckets, value=value, expected=expected))
        not_fixed(values, "padding_waste", _("request mixes"))
        message = _(
            "padding_waste({sizes}, {buckets}) returned {value:.4g}, expected {expected:.4g}."
        )
        fail(message.format(sizes=sizes, buckets=buckets, value=value, expected=expected))
    what = _("padding waste of sizes [1, 3, 4, 5] in buckets [4, 8]")
    passed(what, values[0], WASTE_CASES[0][1])
