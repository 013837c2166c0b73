"""check_dispatch (lesson 11) against two correct dispatchers and one wrong answer of each kind.

The checker dispatches batches of 5, 13, 16, 24, 35, 1, 32 and 39 tokens over buckets of 8, 16 and
32 tokens, to piecewise graphs and then to full graphs: the right routes are 8, 16, 16, 32,
eager, 8, 32, eager.
"""

from __future__ import annotations

import pytest
import torch

from graphlab import checks
from graphlab.errors import CheckFailed
from graphlab.timing.decoder import describe

ROUTES = "[8, 16, 16, 32, 'eager', 8, 32, 'eager']"


def by_descriptor(graphs, layer, x, seq_lens):
    """The lesson's solution: the batch descriptor names the bucket."""
    bucket = describe(seq_lens, graphs).padded
    if bucket is None:
        return layer(x, seq_lens)
    runner = graphs[bucket]
    n = x.shape[0]
    runner.static_x[:n].copy_(x)
    runner.replay(seq_lens)
    return runner.static_out[:n].clone()


def by_search(graphs, layer, x, seq_lens):
    """Another correct dispatcher: walks the sizes in order, zeroes the padding, assigns by
    slice, and falls back through forward()."""
    n = sum(seq_lens)
    for size in sorted(graphs):
        if size >= n:
            runner = graphs[size]
            runner.static_x.zero_()
            runner.static_x[:n] = x
            runner.replay(list(seq_lens))
            return runner.static_out.narrow(0, 0, n).detach().clone()
    return layer.forward(x, seq_lens)


@pytest.mark.parametrize("dispatch", [by_descriptor, by_search])
def test_correct_dispatchers_pass(dispatch, capsys):
    checks.check_dispatch(dispatch)
    out = capsys.readouterr().out
    assert out == (
        f"PASSED where each batch ran (bucket, or eager): yours {ROUTES} vs expected {ROUTES}\n"
    )


def stub(graphs, layer, x, seq_lens):
    raise NotImplementedError


def always_eager(graphs, layer, x, seq_lens):
    return layer(x, seq_lens)


def largest_bucket(graphs, layer, x, seq_lens):
    n = x.shape[0]
    if n > max(graphs):
        return layer(x, seq_lens)
    runner = graphs[max(graphs)]
    runner.static_x[:n].copy_(x)
    runner.replay(seq_lens)
    return runner.static_out[:n].clone()


def replay_in_bucket(graphs, x, seq_lens):
    """The right replay of the batch; the runner that ran it, or None when no bucket holds it."""
    bucket = describe(seq_lens, graphs).padded
    if bucket is None:
        return None
    graphs[bucket].static_x[: x.shape[0]].copy_(x)
    graphs[bucket].replay(seq_lens)
    return graphs[bucket]


def padded_rows(graphs, layer, x, seq_lens):
    runner = replay_in_bucket(graphs, x, seq_lens)
    return layer(x, seq_lens) if runner is None else runner.static_out.clone()


def view_of_static_out(graphs, layer, x, seq_lens):
    runner = replay_in_bucket(graphs, x, seq_lens)
    return layer(x, seq_lens) if runner is None else runner.static_out[: x.shape[0]]


def forgets_the_input(graphs, layer, x, seq_lens):
    bucket = describe(seq_lens, graphs).padded
    if bucket is None:
        return layer(x, seq_lens)
    graphs[bucket].replay(seq_lens)
    return graphs[bucket].static_out[: x.shape[0]].clone()


def one_prompt(graphs, layer, x, seq_lens):
    """Replays as if the batch were one prompt: attention then mixes the prompts."""
    bucket = describe(seq_lens, graphs).padded
    if bucket is None:
        return layer(x, seq_lens)
    graphs[bucket].static_x[: x.shape[0]].copy_(x)
    graphs[bucket].replay([x.shape[0]])
    return graphs[bucket].static_out[: x.shape[0]].clone()


def cut_to_largest(graphs, layer, x, seq_lens):
    """A batch past the largest bucket: replays the largest graph on its first prompts."""
    bucket = describe(seq_lens, graphs).padded
    if bucket is not None:
        return by_descriptor(graphs, layer, x, seq_lens)
    graphs[max(graphs)].replay(seq_lens[:1])
    return layer(x, seq_lens)


def replay_and_eager(graphs, layer, x, seq_lens):
    out = by_descriptor(graphs, layer, x, seq_lens)
    layer(x, seq_lens)
    return out


def replays_twice(graphs, layer, x, seq_lens):
    replay_in_bucket(graphs, x, seq_lens)
    return by_descriptor(graphs, layer, x, seq_lens)


KEPT = {}


def one_output_buffer(graphs, layer, x, seq_lens):
    """Copies every answer into one buffer of its own, which the next batch overwrites."""
    out = by_descriptor(graphs, layer, x, seq_lens)
    buffer = KEPT.setdefault("rows", torch.empty(64, out.shape[1], device=out.device))
    return buffer[: out.shape[0]].copy_(out)


def no_tensor(graphs, layer, x, seq_lens):
    return by_descriptor(graphs, layer, x, seq_lens).tolist()


@pytest.mark.parametrize(
    ("dispatch", "message"),
    [
        (stub, r"dispatch is still the stub"),
        (always_eager, r"batch of 5 tokens, which fits the bucket of 8, no graph was replayed"),
        (largest_bucket, r"replayed the graph\(s\) of \[32\]; the smallest bucket .* is 8"),
        (padded_rows, r"returned 8 rows for a batch of 5 tokens: the last 3 are padding"),
        (view_of_static_out, r"static_out's own memory, which the next replay overwrites"),
        (forgets_the_input, r"prompts \[3, 2\] your output differs .* Copy x into static_x"),
        (one_prompt, r"prompts \[3, 2\] your output differs .* pass seq_lens to replay"),
        (cut_to_largest, r"35 tokens is larger than the largest bucket \(32\), but you replayed"),
        (replay_and_eager, r"replayed the graph of 8 and also ran the layer eagerly"),
        (replays_twice, r"replayed the graph of 8 2 times"),
        (one_output_buffer, r"batch of 5 tokens changed after later batches"),
        (no_tensor, r"should return a tensor .* not <class 'list'>"),
    ],
)
def test_wrong_dispatchers_fail(dispatch, message):
    KEPT.clear()
    with pytest.raises(CheckFailed, match=message):
        checks.check_dispatch(dispatch)


def test_a_dispatcher_that_fails_on_full_graphs_only_is_refused():
    """The checker runs the full graphs too: skipping the replay's metadata breaks only them."""

    def skips_metadata(graphs, layer, x, seq_lens):
        bucket = describe(seq_lens, graphs).padded
        if bucket is None:
            return layer(x, seq_lens)
        runner = graphs[bucket]
        runner.static_x[: x.shape[0]].copy_(x)
        if hasattr(runner, "static_metadata"):
            runner._graph.replay()  # the graph alone: the metadata of the last batch stays
            runner.replays += 1
        else:
            runner.replay(seq_lens)
        return runner.static_out[: x.shape[0]].clone()

    with pytest.raises(CheckFailed, match=r"prompts \[3, 2\] your output differs"):
        checks.check_dispatch(skips_metadata)
