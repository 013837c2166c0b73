"""Every exercise checker, against a reference solution (passes) and a typical mistake (fails).

The checkers run on the live backend: the CPU emulator here, torch.cuda on a GPU. The expected
success lines hold values worked out by hand from each exercise's setup.
"""

from __future__ import annotations

import pytest
import torch
from wrong_answers import collect_references, rebinding_step

from graphlab import DEVICE, checks, cuda
from graphlab.errors import CheckFailed

# --- lesson 00: reading a timeline ----------------------------------------------------------


def busy_fraction(t):
    gpu = t.select(t.is_gpu)
    return gpu.dur_ns.sum() / (gpu.end_ns.max() - gpu.start_ns.min())


def test_busy_fraction_passes(capsys):
    checks.check_busy_fraction(busy_fraction)
    assert "yours 0.5 vs expected 0.5" in capsys.readouterr().out


def test_busy_fraction_counting_host_calls_fails():
    def with_host(t):
        return t.dur_ns.sum() / (t.end_ns.max() - t.start_ns.min())

    with pytest.raises(CheckFailed, match="counted the host launch calls"):
        checks.check_busy_fraction(with_host)


def test_busy_fraction_stub_fails():
    def stub(t):
        raise NotImplementedError

    with pytest.raises(CheckFailed, match="still the stub"):
        checks.check_busy_fraction(stub)


# --- lesson 01: capture a chain; kernels of a replay -----------------------------------------


def capture_chain(static_x, n):
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x
        for _ in range(n):
            out = out + 1
    return g, out


def test_capture_chain_passes(capsys):
    checks.check_capture_chain(capture_chain)
    # new input 0..15 plus 50 additions
    assert "yours [50, 51, 52, 53, 54, 55, ...] vs expected [50, 51" in capsys.readouterr().out


def test_capture_chain_computed_outside_the_graph_fails():
    def eager_result(static_x, n):
        out = static_x + n  # computed once, eagerly, from the zeros
        g = cuda.CUDAGraph()
        with cuda.graph(g):
            static_x * 1
        return g, out

    with pytest.raises(CheckFailed, match="still holds the result for zeros"):
        checks.check_capture_chain(eager_result)


@pytest.mark.filterwarnings("ignore:graphlab CPU emulator differs")  # about CPU tensors: none here
def test_capture_chain_failing_inside_its_capture_is_explained_and_recovered():
    def reads_the_sum(static_x, n):
        g = cuda.CUDAGraph()
        with cuda.graph(g):
            out = static_x + n
            print(f"captured sum {out.sum().item()}")  # a host read: not allowed in a capture
        return g, out

    with pytest.raises(CheckFailed) as info:
        checks.check_capture_chain(reads_the_sum)
    message = str(info.value)
    assert message.startswith("capture_chain raised ")
    # The catalogue's explanation of the .item() under the failed capture follows the error.
    assert "\nThe CPU waited for the GPU inside a capture\n" in message
    assert message.endswith("Lesson: 01_kernel_gaps")
    # The failed capture left its side stream current; the checker put the default one back.
    assert cuda.current_stream() == cuda.default_stream()


def kernels_per_replay(t):
    first = t.correlation[(t.kind == "launch") & (t.name == "cudaGraphLaunch")][0]
    return int(((t.kind == "kernel") & (t.correlation == first)).sum())


def test_kernels_per_replay_passes(capsys):
    checks.check_kernels_per_replay(kernels_per_replay)
    assert "yours 3 vs expected 3" in capsys.readouterr().out


def test_kernels_per_replay_counting_every_kernel_fails():
    with pytest.raises(CheckFailed, match="counted every kernel"):
        checks.check_kernels_per_replay(lambda t: int((t.kind == "kernel").sum()))


@pytest.mark.parametrize("answer", [torch.tensor([]), torch.tensor([3, 3]), "3"], ids=repr)
def test_kernels_per_replay_not_a_number_fails(answer):
    # An empty tensor used to escape as "Boolean value of Tensor with no values is ambiguous".
    with pytest.raises(CheckFailed, match="should return a number of kernels, not "):
        checks.check_kernels_per_replay(lambda t: answer)


# --- lesson 02: static inputs --------------------------------------------------------------


def copy_step(graph, static_x, static_y, batch):
    static_x.copy_(batch)
    graph.replay()
    return static_y


def test_replay_with_new_inputs_passes(capsys):
    checks.check_replay_with_new_inputs(copy_step)
    # batch 3 is [30, 31, 32, 33]; times 2 plus 1
    assert "yours [61, 63, 65, 67] vs expected [61, 63, 65, 67]" in capsys.readouterr().out


def test_rebinding_the_input_fails_with_stale_message():
    with pytest.raises(CheckFailed, match="returned the first batch's result: the graph still"):
        checks.check_replay_with_new_inputs(rebinding_step)


def test_copy_without_replay_fails():
    def no_replay(graph, static_x, static_y, batch):
        static_x.copy_(batch)
        return static_y

    with pytest.raises(CheckFailed, match=r"call graph\.replay\(\) after copying"):
        checks.check_replay_with_new_inputs(no_replay)


# --- lesson 03: outputs --------------------------------------------------------------------


def collect_clones(graph, static_x, static_y, batches):
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y.clone())
    return kept


def test_keep_outputs_passes(capsys):
    checks.check_keep_outputs(collect_clones)
    assert "yours [1, 1, 1, 16, 16, 16] vs expected [1, 1, 1, 16, 16, 16]" in (
        capsys.readouterr().out
    )


def test_keeping_references_fails_with_overwritten_message():
    with pytest.raises(CheckFailed, match=r"all 4 outputs you kept equal the last batch's \[16"):
        checks.check_keep_outputs(collect_references)


# --- lesson 04: randomness -----------------------------------------------------------------


def seeded_replays(graph, static_out, seed):
    kept = []
    for _ in range(2):
        torch.manual_seed(seed)
        graph.replay()
        kept.append(static_out.clone())
    return kept[0], kept[1]


def test_reproducible_replays_passes(capsys):
    checks.check_reproducible_replays(seeded_replays)
    out = capsys.readouterr().out
    assert out.startswith("PASSED same mask twice with seed 1234")


def test_seeding_once_fails_with_different_masks():
    def seed_once(graph, static_out, seed):
        torch.manual_seed(seed)
        graph.replay()
        first = static_out.clone()
        graph.replay()
        return first, static_out.clone()

    with pytest.raises(CheckFailed, match="drew different masks"):
        checks.check_reproducible_replays(seed_once)


def test_returning_the_output_buffer_twice_fails():
    def aliases(graph, static_out, seed):
        torch.manual_seed(seed)
        graph.replay()
        return static_out, static_out

    with pytest.raises(CheckFailed, match="returned static_out itself"):
        checks.check_reproducible_replays(aliases)


# --- lesson 05: dynamic shapes -------------------------------------------------------------


def run_padded(graphs, batch, trim=True):
    n = batch.shape[0]
    size = min(s for s in graphs if s >= n)
    graph, static_x, static_y = graphs[size]
    static_x.zero_()
    static_x[:n].copy_(batch)
    graph.replay()
    return static_y[:n].clone() if trim else static_y.clone()


def test_run_padded_passes(capsys):
    checks.check_run_padded(run_padded)
    # last request: rows [0..3] and [4..7]; 2 * row sum + 1 = 13 and 45
    assert "yours [13, 45] vs expected [13, 45]" in capsys.readouterr().out


def test_returning_the_padding_fails():
    def whole_bucket(graphs, batch):
        return run_padded(graphs, batch, trim=False)  # the padding rows too

    with pytest.raises(CheckFailed, match="returned 4 outputs for a request of 3 rows"):
        checks.check_run_padded(whole_bucket)


def test_always_using_the_largest_bucket_fails():
    def largest(graphs, batch):
        n = batch.shape[0]
        graph, static_x, static_y = graphs[max(graphs)]
        static_x.zero_()
        static_x[:n].copy_(batch)
        graph.replay()
        return static_y[:n].clone()

    with pytest.raises(CheckFailed, match="smallest bucket that holds 3 rows is 4"):
        checks.check_run_padded(largest)


def padding_waste(sizes, buckets):
    computed = sum(min(b for b in buckets if b >= n) for n in sizes)
    return (computed - sum(sizes)) / computed


def test_padding_waste_passes(capsys):
    checks.check_padding_waste(padding_waste)
    assert "yours 0.35 vs expected 0.35" in capsys.readouterr().out


def test_padding_over_real_rows_fails():
    def over_real(sizes, buckets):
        computed = sum(min(b for b in buckets if b >= n) for n in sizes)
        return (computed - sum(sizes)) / sum(sizes)

    with pytest.raises(CheckFailed, match="divide by all rows computed"):
        checks.check_padding_waste(over_real)


# --- lesson 06: does it pay? ---------------------------------------------------------------


def break_even(t):
    saving = t["eager_end_to_end_us"] - t["replay_end_to_end_us"]
    return t["capture_us"] / saving if saving > 0 else None


def test_break_even_passes(capsys):
    checks.check_break_even(break_even)
    assert "yours 400 vs expected 400" in capsys.readouterr().out


def test_break_even_from_gpu_only_times_fails():
    def gpu_only(t):
        saving = t["eager_us"] - t["replay_us"]
        return t["capture_us"] / saving if saving > 0 else None

    with pytest.raises(CheckFailed, match="that uses eager_us and replay_us"):
        checks.check_break_even(gpu_only)


def test_break_even_without_none_fails():
    def never_none(t):
        return t["capture_us"] / (t["eager_end_to_end_us"] - t["replay_end_to_end_us"] + 1e-9)

    with pytest.raises(CheckFailed, match="return None"):
        checks.check_break_even(never_none)


# --- lesson 07: training -------------------------------------------------------------------


def adam(params):
    return torch.optim.Adam(params, lr=0.01, capturable=True)


def capture_step(model, optimizer, static_x, static_y):
    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        loss.backward()
        optimizer.step()

    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        for _ in range(3):
            step()
    cuda.current_stream().wait_stream(side)

    optimizer.zero_grad(set_to_none=True)
    return capture_only(model, optimizer, static_x, static_y)


def capture_only(model, optimizer, static_x, static_y, step=True):
    """Capture forward, backward and (unless ``step`` is False) the optimizer step, as is."""
    graph = cuda.CUDAGraph()
    with cuda.graph(graph):
        static_loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        static_loss.backward()
        if step:
            optimizer.step()
    return graph, static_loss


def test_captured_training_passes(capsys):
    checks.check_captured_training(capture_step, adam)
    out = capsys.readouterr().out
    assert out.startswith("PASSED loss after 3 replayed training steps")


def test_gradients_accumulating_across_replays_fails():
    def keeps_gradients(model, optimizer, static_x, static_y):
        for _ in range(3):  # warm-up (on the current stream: enough for the emulator's check)
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.mse_loss(model(static_x), static_y).backward()
            optimizer.step()
        # No zero_grad(set_to_none=True) before capturing: .grad exists, so backward adds to it.
        return capture_only(model, optimizer, static_x, static_y)

    with pytest.raises(CheckFailed, match="gradients accumulate across replays"):
        checks.check_captured_training(keeps_gradients, adam)


def test_capturing_without_warm_up_fails():
    with pytest.raises(CheckFailed, match="ran for the first time inside the capture: warm up"):
        checks.check_captured_training(capture_only, adam)  # captures straight away


def test_step_outside_the_graph_fails():
    def forward_only(model, optimizer, static_x, static_y):
        optimizer.zero_grad(set_to_none=True)
        return capture_only(model, optimizer, static_x, static_y, step=False)

    with pytest.raises(CheckFailed, match=r"weights did not change"):
        checks.check_captured_training(forward_only, adam)


# --- lesson 08: memory ---------------------------------------------------------------------


def capture_all(sizes, shared=True):
    pool = cuda.graph_pool_handle() if shared else None
    graphs = {}
    for size in sizes:
        static_x = torch.zeros(size, device=DEVICE)
        graph = cuda.CUDAGraph()
        with cuda.graph(graph, pool=pool):
            static_y = static_x * 2 + 1
        graphs[size] = (graph, static_x, static_y)
    return graphs


def test_shared_pool_passes(capsys):
    checks.check_shared_pool(capture_all)
    assert "yours 1 vs expected 1" in capsys.readouterr().out


def test_private_pools_fail():
    with pytest.raises(CheckFailed, match="your 3 graphs use 3 different memory pools"):
        checks.check_shared_pool(lambda sizes: capture_all(sizes, shared=False))
