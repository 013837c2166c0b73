"""Lesson 11's decoder layer, runners and record experiment on a real GPU (``pytest -m cuda``).

The runners must give the eager layer's result on CUDA as on the emulator, the full graph's pool
must hold its square attention matrices, and ``graphlab record --only decoder_full_vs_piecewise``
must write a recording the loader and the lesson read.
"""

from __future__ import annotations

import pytest
import torch
from test_decoder import graph_launches

from graphlab.timing import experiments
from graphlab.timing.decoder import DecoderLayer, FullGraph, PiecewiseGraphs, pool_bytes
from graphlab.timing.recordings import recording

pytestmark = pytest.mark.cuda

MIB = 2**20


@pytest.fixture(scope="module")
def layer():
    return DecoderLayer(device="cuda")


def run(runner, x, seq_lens, *args):
    rows = x.shape[0]
    runner.static_x[:rows].copy_(x)
    runner.replay(seq_lens, *args)
    return runner.static_out[:rows].clone()


def batch(tokens: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(tokens, 256, generator=generator) * 0.8 + 0.1).cuda()


def test_every_runner_gives_the_eager_result_on_the_gpu(layer):
    full, piecewise = FullGraph(layer, 64), PiecewiseGraphs(layer, 64)
    for seed, seq_lens in enumerate(([48], [5, 11, 7, 13, 5, 7], [1] * 30, [33, 31], [2])):
        x = batch(sum(seq_lens), seed)
        expected = layer(x, seq_lens)
        torch.testing.assert_close(layer(x, seq_lens, "masked"), expected, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(run(full, x, seq_lens), expected, rtol=1e-4, atol=1e-4)
        for how in ("loop", "masked"):
            got = run(piecewise, x, seq_lens, how)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    assert (full.replays, piecewise.replays) == (5, 10)


def test_the_full_graph_pool_holds_its_square_attention_matrices(layer):
    """2048 rows, 4 heads: the scores and their softmax are 64 MiB each, and both are alive at
    once while the capture runs, so the full graph's pool holds at least 128 MiB."""
    full, piecewise = FullGraph(layer, 2048), PiecewiseGraphs(layer, 2048)
    full_bytes, piecewise_bytes = pool_bytes(full.pool), pool_bytes(piecewise.pool)
    assert full_bytes >= 2 * 4 * 2048**2 * 4
    assert 0 < piecewise_bytes < full_bytes


def test_measure_decoder_modes_times_every_way_in_every_bucket():
    modes = experiments.measure_decoder_modes(buckets=(16, 64), repeats=2, iterations=2)
    assert modes["buckets"] == [16, 64]
    assert [(c["bucket"], c["mode"], c["graphs"]) for c in modes["captures"]] == [
        (16, "full", 1),
        (16, "piecewise", 2),
        (64, "full", 1),
        (64, "piecewise", 2),
    ]
    assert all(c["capture_us"] > 0 and c["pool_bytes"] > 0 for c in modes["captures"])
    steps = modes["steps"]
    assert len(steps) == 2 * 2 * len(experiments.DECODER_STEPS)
    assert {(s["bucket"], s["batch"], s["tokens"], s["prompts"]) for s in steps} == {
        (16, "one prompt", 12, 1),
        (16, "short prompts", 12, 2),
        (64, "one prompt", 48, 1),
        (64, "short prompts", 48, 6),
    }
    for s in steps:
        low, high = s["spread_us"]
        assert 0 < low <= s["us"] <= high
        assert s["peak_bytes"] >= 0


def test_record_writes_the_decoder_recording_the_lesson_reads(tmp_path):
    name = experiments.DECODER_NAME
    experiments.record(out_dir=tmp_path, only=[name], command="graphlab record (test)")
    rec = recording(name, tmp_path)
    assert rec.experiment["kind"] == "decoder"
    assert rec.timings["modes"]["buckets"] == list(experiments.DECODER_BUCKETS)
    assert len(rec.timings["modes"]["steps"]) == 5 * 2 * len(experiments.DECODER_STEPS)
    timelines = experiments.recorded_decoder_timelines(rec)
    iterations = rec.experiment["profile_iterations"]
    assert graph_launches(timelines) == {
        "eager": 0,
        "graph": iterations,
        "piecewise": 2 * iterations,
    }
    assert all(timeline.is_gpu.any() for timeline in timelines.values())
    assert timelines["piecewise"].meta["recording"] == name
