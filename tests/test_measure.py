"""graphlab.timing (compare, capture, measured cumulative totals), its results, the
break-even formula and graphlab.timing.workloads.

Tests marked ``cuda`` run only on a GPU (the conftest skips them elsewhere); they check relations
that hold on any CUDA GPU (replay of a 200-kernel chain beats eager launches), never a figure.
The other tests check the pure arithmetic with hand-worked values, the messages shown on a
machine without a GPU, and the workloads on the CPU.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from graphlab.errors import CaptureError, GraphlabError, NeedsGPUError
from graphlab.timing import workloads
from graphlab.timing.break_even import break_even
from graphlab.timing.captured import capture
from graphlab.timing.clocks import spread
from graphlab.timing.compare import compare
from graphlab.timing.cumulative import measure_cumulative_totals
from graphlab.timing.results import Comparison, CumulativeTotals

HAS_GPU = torch.cuda.is_available()
no_gpu_only = pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")

COMPARISON_KEYS = {
    "capture_us",
    "first_replay_us",
    "eager_us",
    "replay_us",
    "eager_end_to_end_us",
    "replay_end_to_end_us",
    "eager_spread_us",
    "replay_spread_us",
    "repeats",
    "iterations",
    "break_even",
}


def example_comparison(**changes) -> Comparison:
    """Made-up numbers for checking the arithmetic and the text; not a measurement."""
    values = dict(
        capture_us=1000.0,
        first_replay_us=250.0,
        eager_us=70.0,
        replay_us=12.0,
        eager_end_to_end_us=75.0,
        replay_end_to_end_us=25.0,
        eager_spread_us=(68.0, 74.5),
        replay_spread_us=(11.5, 13.0),
        repeats=20,
        iterations=10,
        break_even=20.0,
    )
    values.update(changes)
    return Comparison(**values)


# --------------------------------------------------------------------------- arithmetic


def test_break_even_is_capture_over_the_saving_per_iteration():
    assert break_even(1000.0, 75.0, 25.0) == 20.0
    assert break_even(90.0, 7.5, 1.5) == 15.0


@pytest.mark.parametrize("eager, replay", [(25.0, 25.0), (20.0, 25.0)])
def test_break_even_is_none_when_replay_is_not_faster(eager, replay):
    assert break_even(1000.0, eager, replay) is None


def test_spread_is_median_and_10th_90th_percentiles():
    # 11 sorted samples 1..11: linear interpolation puts p10 at index 1, p50 at 5, p90 at 9.
    assert spread([7, 1, 11, 3, 5, 9, 2, 4, 6, 8, 10]) == (6.0, 2.0, 10.0)
    # 2 samples 10 and 20: p10 = 10 + 0.1 * 10, p90 = 10 + 0.9 * 10.
    assert spread([20.0, 10.0]) == pytest.approx((15.0, 11.0, 19.0))


def test_comparison_to_dict_has_the_contract_keys_and_round_trips():
    c = example_comparison()
    d = c.to_dict()
    assert set(d) == COMPARISON_KEYS
    assert d["eager_spread_us"] == [68.0, 74.5]
    assert d["break_even"] == 20.0
    assert Comparison.from_dict(d) == c
    assert Comparison.from_dict(example_comparison(break_even=None).to_dict()).break_even is None


def test_comparison_text_shows_every_figure():
    text = str(example_comparison(capture_us=12345.67))
    assert "median of 20 repeats x 10 iterations" in text
    assert "eager                       70.0 µs  [68.0, 74.5]" in text
    assert "replay                      12.0 µs  [11.5, 13.0]" in text
    assert "end to end, replay          25.0 µs  (inputs copied in, outputs cloned)" in text
    assert "capture                 12,345.7 µs  (once)" in text
    assert "first replay               250.0 µs  (once)" in text
    assert "N* = 20.0 iterations" in text


def test_comparison_text_says_never_without_a_break_even():
    assert "never: replay is not faster end to end" in str(example_comparison(break_even=None))


def test_cumulative_crossing_is_the_first_count_where_the_graph_total_is_not_larger():
    totals = CumulativeTotals(
        counts=(1, 2, 5, 10),
        eager_us=(10.0, 20.0, 50.0, 100.0),
        graph_us=(25.0, 27.0, 50.0, 40.0),
        repeats=3,
    )
    assert totals.crossing == 5
    assert totals.to_dict() == {
        "counts": [1, 2, 5, 10],
        "eager_total_us": [10.0, 20.0, 50.0, 100.0],
        "graph_total_us": [25.0, 27.0, 50.0, 40.0],
        "repeats": 3,
        "crossing": 5,
    }


def test_cumulative_crossing_is_none_when_the_graph_never_catches_up():
    totals = CumulativeTotals(counts=(1, 2), eager_us=(1.0, 2.0), graph_us=(5.0, 6.0), repeats=1)
    assert totals.crossing is None


# ------------------------------------------------------------------- without a GPU / bad input


@no_gpu_only
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda w: compare(w.fn, *w.inputs), "graphlab.compare"),
        (lambda w: capture(w.fn, *w.inputs), "graphlab.timing.captured.capture"),
        (
            lambda w: measure_cumulative_totals(w.fn, *w.inputs),
            "graphlab.timing.cumulative.measure_cumulative_totals",
        ),
    ],
)
def test_measuring_without_a_gpu_points_at_the_recordings(call, name):
    w = workloads.chain(3, 16, device="cpu")
    with pytest.raises(NeedsGPUError) as info:
        call(w)
    message = str(info.value)
    assert message.startswith(f"{name} measures real GPU time")
    assert "`graphlab recordings`" in message
    assert "graphlab.recording(name)" in message


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"repeats": 0}, "repeats must be a whole number of at least 1, not 0"),
        ({"iterations": 2.5}, "iterations must be a whole number of at least 1, not 2.5"),
        ({"warmup": True}, "warmup must be a whole number of at least 1, not True"),
    ],
)
def test_compare_refuses_bad_counts(kwargs, message):
    w = workloads.chain(3, 16, device="cpu")
    with pytest.raises(GraphlabError, match=message):
        compare(w.fn, *w.inputs, **kwargs)


@pytest.mark.parametrize(
    "counts, message",
    [
        ((), "positive whole numbers"),
        ((1, 0), "positive whole numbers"),
        ((1, 5, 2), "strictly increasing"),
        ((1, 1, 2), "strictly increasing"),
    ],
)
def test_measure_cumulative_totals_refuses_bad_counts(counts, message):
    w = workloads.chain(3, 16, device="cpu")
    with pytest.raises(GraphlabError, match=message):
        measure_cumulative_totals(w.fn, *w.inputs, counts=counts)


# ----------------------------------------------------------------------------- workloads


def test_chain_adds_one_per_kernel():
    w = workloads.chain(10, 64, device="cpu")
    (x,) = w.inputs
    assert x.shape == (64,) and x.dtype == torch.float32
    torch.testing.assert_close(w(), x + 10, atol=1e-5, rtol=0)
    assert w.name == "chain_10_k64"
    assert w.description["kind"] == "chain"
    assert (w.description["kernels"], w.description["numel"]) == (10, 64)


def test_chain_runs_one_add_per_step():
    w = workloads.chain(7, 32, device="cpu")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        w()
    adds = [e for e in prof.key_averages() if e.key == "aten::add"]
    assert len(adds) == 1 and adds[0].count == 7


def test_workload_inputs_are_seeded():
    first, again = workloads.chain(2, 16, device="cpu"), workloads.chain(2, 16, device="cpu")
    assert torch.equal(first.inputs[0], again.inputs[0])
    other = workloads.chain(2, 16, device="cpu", seed=1)
    assert not torch.equal(first.inputs[0], other.inputs[0])


def test_mlp_is_a_seeded_inference_step():
    w = workloads.mlp(layers=3, width=8, batch=2, device="cpu")
    out = w()
    assert out.shape == (2, 8)
    assert not out.requires_grad
    assert (out >= 0).all()  # the last block ends with a ReLU
    torch.testing.assert_close(workloads.mlp(3, 8, 2, device="cpu")(), out, atol=0, rtol=0)
    assert w.name == "mlp_l3_w8_b2"


def test_mlp_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    workloads.mlp(2, 4, 1, device="cpu")
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: workloads.chain(0, 16, device="cpu"), "kernels must be a whole number from 1"),
        (lambda: workloads.chain(2, -1, device="cpu"), "numel must be a whole number from 1"),
        (lambda: workloads.chain(2, 2**40, device="cpu"), "numel must be a whole number from 1"),
        (lambda: workloads.mlp(width=0, device="cpu"), "width must be a whole number from 1"),
    ],
)
def test_workloads_refuse_bad_sizes(build, message):
    with pytest.raises(GraphlabError, match=message):
        build()


# ---------------------------------------------------------------------------------- on a GPU


@pytest.mark.cuda
def test_compare_on_a_200_kernel_chain_finds_replay_faster():
    w = workloads.chain(200, 4096, device="cuda")
    before = w.inputs[0].clone()
    c = compare(w.fn, *w.inputs, repeats=10, iterations=5)
    assert c.capture_us > 0 and c.first_replay_us > 0
    assert 0 < c.replay_us < c.eager_us
    assert 0 < c.replay_end_to_end_us < c.eager_end_to_end_us
    assert c.break_even > 0
    assert c.break_even == pytest.approx(
        c.capture_us / (c.eager_end_to_end_us - c.replay_end_to_end_us)
    )
    assert c.eager_spread_us[0] <= c.eager_us <= c.eager_spread_us[1]
    assert c.replay_spread_us[0] <= c.replay_us <= c.replay_spread_us[1]
    assert (c.repeats, c.iterations) == (10, 5)
    assert c.timelines is None
    assert torch.equal(w.inputs[0], before)


@pytest.mark.cuda
def test_compare_profile_gives_timelines_of_the_same_kernels():
    w = workloads.chain(50, 4096, device="cuda")
    c = compare(w.fn, *w.inputs, repeats=3, iterations=2, profile=True, profile_iterations=2)
    eager, graph = c.timelines["eager"], c.timelines["graph"]
    assert (eager.kind == "kernel").sum() == 100
    assert (graph.kind == "kernel").sum() == 100
    launches = graph.name == "cudaGraphLaunch"
    assert launches.sum() == 2
    # Every replayed kernel carries the correlation id of one of the two graph launches.
    assert set(graph.correlation[graph.kind == "kernel"]) <= set(graph.correlation[launches])
    # Tiny kernels: the GPU idles between eager launches far more than inside a replay.
    assert eager.summary().idle_fraction > graph.summary().idle_fraction


@pytest.mark.cuda
def test_compare_captures_an_mlp_with_cublas_matmuls():
    w = workloads.mlp(layers=4, width=64, batch=4, device="cuda")
    expected = w()
    c = compare(w.fn, *w.inputs, repeats=3, iterations=5)
    assert 0 < c.replay_us < c.eager_us
    captured = capture(w.fn, *w.inputs)
    torch.testing.assert_close(captured.replay_with(w.inputs), expected)


@pytest.mark.cuda
def test_captured_replay_reads_the_static_buffer():
    w = workloads.chain(5, 1024, device="cuda")
    captured = capture(w.fn, *w.inputs)
    new = torch.full((1024,), 2.0, device="cuda")
    out = captured.replay_with([new])
    torch.testing.assert_close(out, torch.full_like(new, 7.0))
    assert torch.equal(captured.static[0], new)
    # Rebinding a name changes nothing: the graph still reads the static buffer.
    new = torch.zeros(1024, device="cuda")
    captured.replay()
    torch.testing.assert_close(captured.outputs, torch.full_like(new, 7.0))
    with pytest.raises(GraphlabError, match="captured with 1 inputs, not 2"):
        captured.replay_with([new, new])


@pytest.mark.cuda
def test_a_host_sync_inside_capture_is_a_capture_error():
    def syncs(x):
        return x * float(x.sum().item())

    with pytest.raises(CaptureError) as info:
        capture(syncs, torch.ones(8, device="cuda"))
    # The refused copy is the cause; "capture invalidated" when the block ends is its consequence.
    assert info.value.cuda_error == "cudaErrorStreamCaptureUnsupported"
    # CUDA stays usable after the failed capture, on the stream that was current before it.
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    assert torch.ones(4, device="cuda").sum().item() == 4.0


@pytest.mark.cuda
def test_compare_refuses_cpu_inputs_on_a_gpu_machine():
    with pytest.raises(GraphlabError, match=r"input 0 is on cpu, not on the GPU"):
        compare(lambda x: x + 1, torch.ones(4))


@pytest.mark.cuda
def test_measured_cumulative_totals_grow_with_n():
    w = workloads.chain(20, 4096, device="cuda")
    totals = measure_cumulative_totals(w.fn, *w.inputs, counts=(1, 2, 5, 50), repeats=2)
    assert totals.counts == (1, 2, 5, 50)
    for series in (totals.eager_us, totals.graph_us):
        assert len(series) == 4
        assert all(0 < a < b for a, b in itertools.pairwise(series))


def test_a_workload_may_take_half_the_memory_left():
    gib = 2**30
    workloads.check_fits(2 * gib, 4 * gib, "chain", "smaller")  # exactly half: fits
    workloads.check_fits(10**15, None, "chain", "smaller")  # no GPU: nothing to check
    with pytest.raises(GraphlabError) as info:
        workloads.check_fits(3 * gib, 4 * gib, "chain(10, numel=201,326,592)", "use numel <= 5.")
    assert str(info.value) == (
        "chain(10, numel=201,326,592) needs about 3.00 GiB of GPU memory and this process can use "
        "4.00 GiB more, of which a workload may take half: use numel <= 5."
    )


def test_cpu_workloads_are_not_limited_by_gpu_memory():
    assert workloads.usable_gpu_bytes(torch.device("cpu")) is None
