"""Checks for lesson 11, full vs piecewise graphs: a dispatcher over captured buckets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphlab.timing.decoder import DecoderLayer, FullGraph, PiecewiseGraphs, describe

from ._core import call, fail, live, passed, same

__all__ = ["BUCKETS", "capture_runners", "check_dispatch"]

BUCKETS = (8, 16, 32)
# The batches the checker dispatches, as prompt lengths: 5, 13, 16, 24, 35, 1, 32 and 39 tokens.
# Non-round sizes that fit a bucket, one filling a bucket exactly, one at the largest bucket's
# size, and two larger than the largest bucket.
BATCHES = ([3, 2], [7, 1, 5], [16], [9, 11, 4], [20, 15], [1], [30, 2], [19, 14, 6])
HIDDEN = 32
RUNNERS = {"piecewise": PiecewiseGraphs, "full": FullGraph}

# The sections a failure sends the learner back to, as the notebooks title them.
DISPATCHER = 'lesson 11, section 5 "A dispatcher and its key"'
MAKE_UP = 'lesson 11, section 3 "A full graph: the make-up as data"'
COPIES = 'lesson 03, section 3 "Keep copies"'


def _fail(message: str, section: str) -> None:
    """Stop the check: ``message`` says what is wrong and how to fix it, ``section`` where to
    read why."""
    fail(f"{message} Reread {section}.")


def capture_runners(kind: str, layer: DecoderLayer) -> dict[int, Any]:
    """``{size: runner}`` for every bucket size in :data:`BUCKETS`; ``kind``: "piecewise" or
    "full"."""
    return {size: RUNNERS[kind](layer, size) for size in BUCKETS}


def _batch(seq_lens: list[int], device: str, seed: int) -> torch.Tensor:
    """Hidden states of a batch, from a fixed seed: values that are not round numbers."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    return (torch.randn(sum(seq_lens), HIDDEN, generator=generator) * 0.7 + 0.3).to(device)


def check_dispatch(dispatch: Callable) -> None:
    """Check ``dispatch(graphs, layer, x, seq_lens) -> output rows of the batch``.

    ``graphs`` maps a bucket size (tokens) to a runner of :mod:`graphlab.timing.decoder` captured
    for ``layer``: piecewise graphs, then full graphs, for buckets of 8, 16 and 32 tokens. For each
    batch a correct ``dispatch`` replays the graph of the smallest bucket that holds the batch once
    (its rows copied into ``static_x`` first, ``seq_lens`` passed to ``replay``) and returns a copy
    of the batch's rows of ``static_out``; a batch larger than every bucket runs eagerly,
    ``layer(x, seq_lens)``. The checker counts each runner's replays and the layer's eager calls,
    and compares every output with the eager layer's.
    """
    _, device = live()
    layer = DecoderLayer(hidden=HIDDEN, heads=2, ffn=64, device=device, seed=11)
    eager_calls = []
    layer.register_forward_hook(lambda *_: eager_calls.append(1))
    where: list[Any] = []
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
            _check_rows(out, expected, seq_lens, bucket, graphs)
            where.append("eager" if bucket is None else bucket)
            kept.append((out, expected, seq_lens))
        for out, expected, seq_lens in kept:
            if not same(out, expected, exact=False):
                _fail(
                    f"the output you returned for the batch of {sum(seq_lens)} tokens changed "
                    "after later batches: it is memory the next replay overwrites. Return a copy "
                    "of the rows: static_out[:n].clone().",
                    COPIES,
                )
    passed("where each batch ran (bucket, or eager)", where[: len(BATCHES)], _expected_routes())


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
            _fail(
                f"a batch of {tokens} tokens is larger than the largest bucket ({max(BUCKETS)}), "
                f"but you replayed the graph(s) of {sorted(replays)}: a graph cannot take more "
                "rows than it was captured with. Run such a batch eagerly: layer(x, seq_lens).",
                DISPATCHER,
            )
        return None
    if not replays:
        _fail(
            f"for a batch of {tokens} tokens, which fits the bucket of {bucket}, no graph was "
            f"replayed ({kind} graphs): copy the rows into graphs[{bucket}].static_x[:{tokens}] "
            f"and call graphs[{bucket}].replay(seq_lens).",
            DISPATCHER,
        )
    if list(replays) != [bucket]:
        _fail(
            f"for a batch of {tokens} tokens you replayed the graph(s) of {sorted(replays)}; the "
            f"smallest bucket that holds {tokens} tokens is {bucket}: a larger one computes more "
            "padding, a smaller one cannot hold the batch.",
            DISPATCHER,
        )
    if replays[bucket] > 1:
        _fail(
            f"for a batch of {tokens} tokens you replayed the graph of {bucket} "
            f"{replays[bucket]} times: one replay computes the whole batch.",
            DISPATCHER,
        )
    if ran_eagerly:
        _fail(
            f"for a batch of {tokens} tokens you replayed the graph of {bucket} and also ran the "
            "layer eagerly: the replay does all the work, so return its rows.",
            DISPATCHER,
        )
    return bucket


def _check_rows(
    out: Any,
    expected: torch.Tensor,
    seq_lens: list[int],
    bucket: int | None,
    graphs: dict[int, Any],
) -> None:
    """Fail unless ``out`` is a copy of the batch's rows with the eager layer's values."""
    tokens = sum(seq_lens)
    if not isinstance(out, torch.Tensor):
        _fail(
            f"dispatch should return a tensor (the batch's output rows), not {type(out)!r}.",
            DISPATCHER,
        )
    if bucket is not None and out.shape[0] == bucket != tokens:
        _fail(
            f"you returned {bucket} rows for a batch of {tokens} tokens: the last "
            f"{bucket - tokens} are padding, which means nothing. Return the batch's rows only: "
            f"static_out[:{tokens}].",
            MAKE_UP,
        )
    if tuple(out.shape) != tuple(expected.shape):
        _fail(
            f"for a batch of {tokens} tokens you returned a tensor of shape {tuple(out.shape)}; "
            f"the layer's output has shape {tuple(expected.shape)}, one row per token.",
            DISPATCHER,
        )
    if not same(out, expected, exact=False):
        _fail(
            f"for the batch of prompts {seq_lens} your output differs from the layer's (largest "
            f"difference {_largest_difference(out, expected):.3g}). Copy x into static_x[:"
            f"{tokens}] before the replay and pass seq_lens to replay(): the graph needs both "
            "the rows and how they split into prompts.",
            MAKE_UP,
        )
    if bucket is not None and _shares_memory(out, graphs[bucket].static_out):
        _fail(
            f"the output for the batch of {tokens} tokens is static_out's own memory, which the "
            "next replay overwrites: return static_out[:n].clone(). (On the CPU emulator .cpu() "
            "returns the very same tensor, not a copy.)",
            COPIES,
        )


def _largest_difference(out: torch.Tensor, expected: torch.Tensor) -> float:
    return float((out.detach().to("cpu", expected.dtype) - expected.to("cpu")).abs().max())


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.device != b.device:
        return False
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
