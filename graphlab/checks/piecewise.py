"""Checks for lesson 11, full vs piecewise graphs: a dispatcher over captured buckets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.language import gettext as _
from graphlab.timing.decoder import DecoderLayer, FullGraph, PiecewiseGraphs, describe

from ._core import call, copy_advice, exercise, fail, live, passed, same, tensor
from ._observe import shares_memory
from ._sections import COPIES, DISPATCHER, MAKE_UP

__all__ = ["BUCKETS", "capture_runners", "check_dispatch"]

BUCKETS = (8, 16, 32)
# The batches the checker dispatches, as prompt lengths: 5, 13, 16, 24, 35, 1, 32 and 39 tokens.
# Non-round sizes that fit a bucket, one filling a bucket exactly, one at the largest bucket's
# size, and two larger than the largest bucket.
BATCHES = ([3, 2], [7, 1, 5], [16], [9, 11, 4], [20, 15], [1], [30, 2], [19, 14, 6])
HIDDEN = 32
RUNNERS = {"piecewise": PiecewiseGraphs, "full": FullGraph}


def capture_runners(kind: str, layer: DecoderLayer) -> dict[int, Any]:
    """``{size: runner}`` for every bucket size in :data:`BUCKETS`; ``kind``: "piecewise" or
    "full"."""
    return {size: RUNNERS[kind](layer, size) for size in BUCKETS}


def _batch(seq_lens: list[int], device: str, seed: int) -> torch.Tensor:
    """Hidden states of a batch, from a fixed seed: values that are not round numbers."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    return (torch.randn(sum(seq_lens), HIDDEN, generator=generator) * 0.7 + 0.3).to(device)


@exercise(DISPATCHER)
def check_dispatch(dispatch: Callable[..., Any]) -> None:
    """Check ``dispatch(graphs, layer, x, seq_lens) -> output rows of the batch``.

    ``graphs`` maps a bucket size (tokens) to a runner of :mod:`graphlab.timing.decoder` captured
    for ``layer``: piecewise graphs, then full graphs, for buckets of 8, 16 and 32 tokens. For each
    batch a correct ``dispatch`` replays the graph of the smallest bucket that holds the batch once
    (its rows copied into ``static_x`` first, ``seq_lens`` passed to ``replay``) and returns a copy
    of the batch's rows of ``static_out``; a batch larger than every bucket runs eagerly,
    ``layer(x, seq_lens)``. The checker counts each runner's replays and the layer's eager calls,
    and compares every output with the eager layer's.
    """
    _cuda, device = live()
    layer = DecoderLayer(hidden=HIDDEN, heads=2, ffn=64, device=device, seed=11)
    eager_calls = []
    layer.register_forward_hook(lambda *_: eager_calls.append(1))
    routes: dict[str, list[Any]] = {}
    for kind in RUNNERS:
        graphs = capture_runners(kind, layer)
        kept = []
        for seed, seq_lens in enumerate(BATCHES):
            x = _batch(seq_lens, device, seed)
            expected = layer(x, seq_lens)
            before = {size: runner.replays for size, runner in graphs.items()}
            calls = len(eager_calls)
            out = call(dispatch, graphs, layer, x, list(seq_lens), name="dispatch")
            replays = {
                size: r.replays - before[size]
                for size, r in graphs.items()
                if r.replays > before[size]
            }
            bucket = _check_route(seq_lens, replays, len(eager_calls) > calls, kind)
            out = tensor(out, _("what dispatch returns"))
            _check_rows(out, expected, seq_lens, bucket, graphs)
            routes.setdefault(kind, []).append("eager" if bucket is None else bucket)
            kept.append((out, expected, seq_lens))
        for out, expected, seq_lens in kept:
            if not same(out, expected, exact=False):
                message = _(
                    "the output you returned for the batch of {tokens} tokens changed "
                    "after later batches: it is memory that later calls overwrite. Return a copy "
                    "of the batch's rows of static_out, made for this batch."
                )
                fail(message.format(tokens=sum(seq_lens)), COPIES)
    what = _("where each batch ran (bucket, or eager)")
    passed(what, routes["piecewise"], _expected_routes())


def _expected_routes() -> list[Any]:
    routes = [describe(seq_lens, BUCKETS).padded for seq_lens in BATCHES]
    return ["eager" if bucket is None else bucket for bucket in routes]


def _check_route(
    seq_lens: list[int], replays: dict[int, int], ran_eagerly: bool, kind: str
) -> int | None:
    """The bucket the batch belongs to, after failing unless exactly that graph was replayed once
    (or, for a batch larger than every bucket, none was)."""
    tokens = sum(seq_lens)
    bucket = describe(seq_lens, BUCKETS).padded
    if bucket is None:
        if replays:
            message = _(
                "a batch of {tokens} tokens is larger than the largest bucket ({largest}), "
                "but you replayed the graph(s) of {replayed}: a graph cannot take more "
                "rows than it was captured with. Run such a batch eagerly: layer(x, seq_lens)."
            )
            fail(message.format(tokens=tokens, largest=max(BUCKETS), replayed=sorted(replays)))
        return None
    if not replays:
        message = _(
            "for a batch of {tokens} tokens, which fits the bucket of {bucket}, no graph was "
            "replayed ({kind} graphs): copy the rows into graphs[{bucket}].static_x[:{tokens}] "
            "and call graphs[{bucket}].replay(seq_lens)."
        )
        fail(message.format(tokens=tokens, bucket=bucket, kind=kind))
    if list(replays) != [bucket]:
        message = _(
            "for a batch of {tokens} tokens you replayed the graph(s) of {replayed}; the "
            "smallest bucket that holds {tokens} tokens is {bucket}: a larger one computes more "
            "padding, a smaller one cannot hold the batch."
        )
        fail(message.format(tokens=tokens, replayed=sorted(replays), bucket=bucket))
    if replays[bucket] > 1:
        message = _(
            "for a batch of {tokens} tokens you replayed the graph of {bucket} "
            "{times} times: one replay computes the whole batch."
        )
        fail(message.format(tokens=tokens, bucket=bucket, times=replays[bucket]))
    if ran_eagerly:
        message = _(
            "for a batch of {tokens} tokens you replayed the graph of {bucket} and also ran the "
            "layer eagerly: the replay does all the work, so return its rows."
        )
        fail(message.format(tokens=tokens, bucket=bucket))
    return bucket


def _check_rows(
    out: torch.Tensor,
    expected: torch.Tensor,
    seq_lens: list[int],
    bucket: int | None,
    graphs: dict[int, Any],
) -> None:
    """Fail unless ``out`` is a copy of the batch's rows with the eager layer's values."""
    tokens = sum(seq_lens)
    if bucket is not None and out.shape[0] == bucket != tokens:
        message = _(
            "you returned {bucket} rows for a batch of {tokens} tokens: the last "
            "{padding} are padding, which means nothing. Return the batch's rows only: "
            "static_out[:{tokens}]."
        )
        fail(message.format(bucket=bucket, tokens=tokens, padding=bucket - tokens), MAKE_UP)
    if tuple(out.shape) != tuple(expected.shape):
        message = _(
            "for a batch of {tokens} tokens you returned a tensor of shape {shape}; "
            "the layer's output has shape {expected_shape}, one row per token."
        )
        shapes = {"shape": tuple(out.shape), "expected_shape": tuple(expected.shape)}
        fail(message.format(tokens=tokens, **shapes))
    if not same(out, expected, exact=False):
        message = _(
            "for the batch of prompts {seq_lens} your output differs from the layer's (largest "
            "difference {difference:.3g}). Copy x into static_x[:{tokens}] before the replay and "
            "pass seq_lens to replay(): the graph needs both the rows and how they split into "
            "prompts."
        )
        difference = _largest_difference(out, expected)
        fail(message.format(seq_lens=seq_lens, difference=difference, tokens=tokens), MAKE_UP)
    if bucket is not None and shares_memory(out, graphs[bucket].static_out):
        message = _(
            "the output for the batch of {tokens} tokens shares memory with the bucket's "
            "static_out, which the next replay overwrites. {advice}"
        )
        advice = copy_advice(f"static_out[:{tokens}]")
        fail(message.format(tokens=tokens, advice=advice), COPIES)


def _largest_difference(out: torch.Tensor, expected: torch.Tensor) -> float:
    return float((out.detach().to("cpu", expected.dtype) - expected.to("cpu")).abs().max())
