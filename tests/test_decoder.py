"""The toy decoder layer of lesson 11 and its runners, on the live backend (the CPU emulator here).

Expected values are worked out by hand: the metadata rows from the prompt lengths, the buckets from
the sizes, and the emulator's pool bytes from the shapes of the tensors a capture allocates.
"""

from __future__ import annotations

import pytest
import torch
from test_recordings import fixture_recording, fixture_timeline

from graphlab import DEVICE, cuda
from graphlab.errors import GraphlabError, NeedsGPUError, RecordingError
from graphlab.timing import experiments
from graphlab.timing.decoder import (
    BatchDescriptor,
    DecoderLayer,
    FullGraph,
    PiecewiseGraphs,
    describe,
    metadata,
    pool_bytes,
)
from graphlab.timing.experiments import write_recording
from graphlab.timing.recordings import RECORDINGS_DIR, recording
from graphlab.timing.side_stream import side_stream
from graphlab.trace.events import GRAPH_LAUNCH_CALLS, call_name

HIDDEN, HEADS = 32, 2


@pytest.fixture(scope="module")
def layer():
    return DecoderLayer(hidden=HIDDEN, heads=HEADS, ffn=64, device=DEVICE, seed=3)


def batch(tokens: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(tokens, HIDDEN, generator=generator) * 0.9 - 0.2).to(DEVICE)


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a.cpu(), b.cpu(), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------ metadata, buckets


def test_metadata_numbers_prompts_and_positions_and_gives_each_padding_row_its_own_prompt():
    assert metadata([3, 2], 7).tolist() == [
        [0, 0, 0, 1, 1, -1, -2],
        [0, 1, 2, 0, 1, 0, 0],
    ]
    assert metadata([1, 1, 2]).tolist() == [[0, 1, 2, 2], [0, 0, 0, 1]]
    assert metadata([4]).dtype == torch.int64


@pytest.mark.parametrize(
    ("seq_lens", "size", "message"),
    [
        ([], None, r"non-empty list of prompt lengths"),
        ([3, 0], None, r"whole numbers >= 1\), not \[3, 0\]"),
        ([2, True], None, r"not \[2, True\]"),
        ([2.0], None, r"not \[2.0\]"),
        (5, None, r"not 5"),
        ([5, 4], 8, r"a batch of 9 tokens does not fit a graph of 8 tokens"),
    ],
)
def test_bad_prompt_lengths_are_refused_in_one_sentence(seq_lens, size, message):
    with pytest.raises(GraphlabError, match=message):
        metadata(seq_lens, size)


def test_describe_pads_to_the_smallest_bucket_that_holds_the_batch():
    assert describe([3, 2], [8, 16, 32]) == BatchDescriptor(5, 8)
    assert describe([3, 2], [8, 16, 32]).padding == 3
    assert describe([16], {32: "a", 16: "b", 8: "c"}) == BatchDescriptor(16, 16)
    assert describe([16], [8, 16]).padding == 0
    over = describe([20, 15], [8, 16, 32])
    assert over == BatchDescriptor(35, None)
    assert over.padding == 0


# ---------------------------------------------------------------------------- the layer


def test_the_layer_is_the_same_for_the_same_seed_and_leaves_the_global_random_stream_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    a = DecoderLayer(hidden=8, heads=2, ffn=16, device=DEVICE, seed=5)
    assert torch.equal(torch.rand(1), expected_next)
    b = DecoderLayer(hidden=8, heads=2, ffn=16, device=DEVICE, seed=5)
    c = DecoderLayer(hidden=8, heads=2, ffn=16, device=DEVICE, seed=6)
    assert torch.equal(a.qkv.weight, b.qkv.weight)
    assert not torch.equal(a.qkv.weight, c.qkv.weight)
    assert not a.qkv.weight.requires_grad


def test_bad_layer_sizes_are_refused():
    with pytest.raises(GraphlabError, match=r"hidden \(30\) must be a multiple of heads \(4\)"):
        DecoderLayer(hidden=30, heads=4)
    with pytest.raises(GraphlabError, match=r"ffn must be a whole number >= 1, not 0"):
        DecoderLayer(ffn=0)


def test_loop_and_masked_attention_agree(layer):
    x = batch(23)
    assert close(layer(x, [5, 11, 7], "loop"), layer(x, [5, 11, 7], "masked"))
    with pytest.raises(GraphlabError, match=r"attention must be one of \('loop', 'masked'\)"):
        layer(x, [23], "flash")


def test_only_attention_depends_on_how_the_batch_splits_into_prompts(layer):
    x = batch(23, seed=1)
    # The parts before and after attention treat each row on its own: rows 5..15 computed alone
    # equal the same rows computed in the whole batch.
    assert close(layer.before_attention(x[5:16]), layer.before_attention(x)[5:16])
    # Attention mixes the rows of a prompt: the same rows split differently give other outputs,
    # except for the first prompt, which both splits begin with.
    a, b = layer(x, [5, 11, 7]), layer(x, [5, 18])
    assert close(a[:5], b[:5])
    assert not close(a[5:], b[5:])


def test_the_rows_must_add_up_to_the_prompts(layer):
    with pytest.raises(GraphlabError, match=r"seq_lens add up to 9 tokens but x has 10 rows"):
        layer(batch(10), [4, 5])


# ---------------------------------------------------------------------------- the runners


def run(runner, x, seq_lens, *args):
    rows = x.shape[0]
    runner.static_x[:rows].copy_(x)
    runner.replay(seq_lens, *args)
    return runner.static_out[:rows].clone()


@pytest.mark.parametrize("kind", ["full", "piecewise-loop", "piecewise-masked"])
def test_a_runner_gives_the_eager_result_for_every_make_up_that_fits(layer, kind):
    if kind == "full":
        runner = FullGraph(layer, 32)
    else:
        runner = PiecewiseGraphs(layer, 32, attention=kind.split("-")[1])
    for seed, seq_lens in enumerate(([5, 11, 7], [23], [1] * 9, [16, 16], [2, 19, 3])):
        x = batch(sum(seq_lens), seed)
        assert close(run(runner, x, seq_lens), layer(x, seq_lens))
    assert runner.replays == 5


def test_padding_rows_never_change_the_real_rows(layer):
    full = FullGraph(layer, 16)
    x = batch(9, seed=4)
    clean = run(full, x, [4, 5])
    full.static_x[9:] = 1e3  # whatever the padding holds
    assert torch.equal(run(full, x, [4, 5]), clean)


def test_a_piecewise_replay_can_switch_attention_and_refuses_a_batch_too_large(layer):
    runner = PiecewiseGraphs(layer, 16)
    x = batch(13, seed=2)
    assert runner.graphs == 2 and FullGraph.graphs == 1
    assert close(run(runner, x, [6, 7], "masked"), layer(x, [6, 7]))
    assert runner.attention == "loop"
    with pytest.raises(GraphlabError, match=r"a batch of 17 tokens does not fit a graph of 16"):
        runner.replay([9, 8])
    with pytest.raises(GraphlabError, match=r"a batch of 17 tokens does not fit a graph of 16"):
        FullGraph(layer, 16).replay([17])
    with pytest.raises(GraphlabError, match=r"whole number of tokens >= 1, not 0"):
        PiecewiseGraphs(layer, 0)


def test_capturing_the_loop_freezes_the_split_of_the_batch_it_saw(layer):
    """Why the full graph needs masked attention: a capture of the loop runs the capture's split
    again on every replay, silently, whatever the new batch's prompts are."""
    static_x = torch.zeros(23, HIDDEN, device=DEVICE)
    stream = side_stream(cuda)
    stream.wait_stream(cuda.current_stream())
    with cuda.stream(stream):
        layer(static_x, [5, 11, 7])
    cuda.current_stream().wait_stream(stream)
    graph = cuda.CUDAGraph()
    with cuda.graph(graph, stream=stream):
        out = layer(static_x, [5, 11, 7])
    x = batch(23, seed=5)
    static_x.copy_(x)
    graph.replay()
    assert close(out, layer(x, [5, 11, 7]))
    assert not close(out, layer(x, [16, 7]))


def test_the_full_graph_pool_grows_with_the_square_of_the_bucket_and_the_piecewise_one_linearly(
    layer,
):
    """On the emulator a pool's bytes are those of the tensors its captures allocated. In a full
    graph of S rows, attention allocates per head an S x S float32 score matrix and its softmax
    (8 bytes per pair and head) and three S x S bool masks (3 bytes per pair); everything else
    grows with S. So full(2S) - 2 full(S) = 2 (8 heads + 3) S^2, and piecewise(2S) = 2 piecewise(S).
    """
    # The runners are kept: a pool holds its memory as long as a graph of it lives.
    runners = {
        kind: {size: kind(layer, size) for size in (16, 32)}
        for kind in (FullGraph, PiecewiseGraphs)
    }
    full, piecewise = (
        {size: pool_bytes(r.pool) for size, r in by_size.items()} for by_size in runners.values()
    )
    assert full[32] - 2 * full[16] == 2 * (8 * HEADS + 3) * 16**2
    assert piecewise[32] == 2 * piecewise[16] > 0


# ---------------------------------------------------------------------------- the experiment


def test_decoder_batches_fill_three_quarters_of_the_bucket():
    assert experiments.decoder_batches(16) == {"one prompt": [12], "short prompts": [5, 7]}
    assert experiments.decoder_batches(64) == {
        "one prompt": [48],
        "short prompts": [5, 11, 7, 13, 5, 7],
    }
    short = experiments.decoder_batches(2048)["short prompts"]
    assert sum(short) == 1536 and len(short) == 172 and short[-1] == 1


def test_the_record_plan_holds_the_decoder_experiment():
    plan = {e.name: e for e in experiments.experiments()}
    assert plan["decoder_full_vs_piecewise"].kind == "decoder"
    assert "decoder_full_vs_piecewise" not in {e.name for e in experiments.experiments(quick=True)}


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without a GPU")
def test_measuring_the_decoder_needs_a_gpu():
    with pytest.raises(NeedsGPUError, match=r"measure_decoder_modes measures real GPU time"):
        experiments.measure_decoder_modes()


def test_recorded_decoder_timelines_reads_all_three_with_their_provenance(tmp_path):
    data = fixture_recording("decoder_fixture", experiment={"kind": "decoder"})
    data["timelines"]["piecewise"] = fixture_timeline("eager").to_dict()
    write_recording(data, tmp_path)
    rec = recording("decoder_fixture", tmp_path)
    timelines = experiments.recorded_decoder_timelines(rec)
    assert list(timelines) == ["eager", "graph", "piecewise"]
    assert len(timelines["piecewise"]) == 4  # the fixture's two launches and two kernels
    assert timelines["piecewise"].meta["label"] == rec.label
    assert timelines["piecewise"].meta["recording"] == "decoder_fixture"

    del data["timelines"]["piecewise"]
    write_recording(data, tmp_path)
    with pytest.raises(RecordingError, match=r"'decoder_fixture' has no readable piecewise"):
        experiments.recorded_decoder_timelines(recording("decoder_fixture", tmp_path))


def test_the_bundled_decoder_recording_covers_every_bucket_batch_and_way():
    rec = recording(experiments.DECODER_NAME)  # a missing recording fails: RecordingError
    assert rec.path == RECORDINGS_DIR / "decoder_full_vs_piecewise.json"
    modes = rec.timings["modes"]
    assert modes["buckets"] == list(experiments.DECODER_BUCKETS)
    assert {(s["bucket"], s["batch"], s["mode"], s["attention"]) for s in modes["steps"]} == {
        (size, batch, *way)
        for size in experiments.DECODER_BUCKETS
        for batch in ("one prompt", "short prompts")
        for way in experiments.DECODER_STEPS
    }
    pools = {(c["bucket"], c["mode"]): c["pool_bytes"] for c in modes["captures"]}
    # 2048 rows, 4 heads: the full graph's scores and their softmax alone are 128 MiB.
    assert pools[(2048, "full")] >= 2 * 4 * 2048**2 * 4 > pools[(2048, "piecewise")]
    iterations = rec.experiment["profile_iterations"]
    assert graph_launches(experiments.recorded_decoder_timelines(rec)) == {
        "eager": 0,
        "graph": iterations,
        "piecewise": 2 * iterations,
    }


def graph_launches(timelines) -> dict[str, int]:
    """How many graph launches the host made in each timeline, by name."""
    return {
        name: sum(call_name(n) in GRAPH_LAUNCH_CALLS for n in tl.name[tl.kind == "launch"])
        for name, tl in timelines.items()
    }
