"""The CPU emulator of CUDA graphs, against values worked out by hand.

Each test states the arithmetic it expects; none of the expected values comes from running the
emulator. The comparison with a real GPU lives in tests/fidelity/.
"""

from __future__ import annotations

import copy
import gc

import pytest
import torch
import torch.nn.functional as F

from graphlab import emulator as cuda
from graphlab.emulator import differences, graphs
from graphlab.errors import CaptureError, NeedsGPUError
from graphlab.timing.side_stream import side_stream

pytestmark = [
    pytest.mark.filterwarnings("ignore::graphlab.emulator.EmulatorDifferenceWarning"),
    # a replay of freed memory no test expects is an error (pytest.warns catches expected ones)
    pytest.mark.filterwarnings("error::graphlab.emulator.FreedInputWarning"),
]

UNSUPPORTED = "cudaErrorStreamCaptureUnsupported"
INVALIDATED = "cudaErrorStreamCaptureInvalidated"
UNJOINED = "cudaErrorStreamCaptureUnjoined"


@pytest.fixture(autouse=True)
def default_stream_after():
    yield
    cuda.set_stream(cuda.default_stream())  # a failed capture leaves its side stream current


def capture(fn, **graph_args):
    g = cuda.CUDAGraph()
    with cuda.graph(g, **graph_args):
        out = fn()
    return g, out


# 1. static inputs ------------------------------------------------------------------------------
def test_copy_into_static_input_changes_result_rebinding_does_not():
    x = torch.tensor([1.0, 2.0, 3.0])
    static_x = x
    g, y = capture(lambda: 2 * x + 1)
    g.replay()
    assert y.tolist() == [3.0, 5.0, 7.0]  # 2*[1,2,3] + 1
    x = torch.tensor([100.0, 100.0, 100.0])  # a new tensor under the old name
    g.replay()
    assert y.tolist() == [3.0, 5.0, 7.0]  # the graph still reads static_x
    static_x.copy_(torch.tensor([10.0, 20.0, 30.0]))
    g.replay()
    assert y.tolist() == [21.0, 41.0, 61.0]  # 2*[10,20,30] + 1


def test_capture_runs_nothing_outputs_are_not_computed_until_replay():
    x = torch.tensor([1.0, 2.0])
    g, y = capture(lambda: x * 4)
    assert torch.isnan(y).all()  # allocated, not computed: nothing ran yet
    g.replay()
    assert y.tolist() == [4.0, 8.0]


def _set(t, new):
    t.set_(new)


def _assign_data(t, new):
    t.data = new


@pytest.mark.parametrize("move", [_set, _assign_data], ids=["set_", "data="])
def test_moving_the_static_input_to_new_memory_leaves_the_replay_on_the_captured_memory(move):
    x = torch.tensor([1.0, 2.0, 3.0])
    old = x.view(3)  # a view taken before: it keeps the captured memory allocated
    g, y = capture(lambda: 2 * x + 1)
    move(x, torch.tensor([10.0, 20.0, 30.0]))
    g.replay()
    assert y.tolist() == [3.0, 5.0, 7.0]  # 2*[1,2,3] + 1: the captured memory, not x's new one
    old.copy_(torch.tensor([4.0, 5.0, 6.0]))  # a write through the old view reaches the replay
    g.replay()
    assert y.tolist() == [9.0, 11.0, 13.0]  # 2*[4,5,6] + 1
    x.copy_(torch.tensor([0.0, 0.0, 0.0]))  # x's new memory: the graph never reads it
    g.replay()
    assert y.tolist() == [9.0, 11.0, 13.0]
    assert x.tolist() == [0.0, 0.0, 0.0] and old.tolist() == [4.0, 5.0, 6.0]


def test_moving_an_output_to_new_memory_leaves_the_replay_writing_the_captured_memory():
    x = torch.tensor([1.0, 2.0])
    g, y = capture(lambda: x + 1)
    old_y = y.view(2)
    y.set_(torch.tensor([0.0, 0.0]))
    g.replay()
    assert old_y.tolist() == [2.0, 3.0]  # [1,2] + 1, written where y used to be
    assert y.tolist() == [0.0, 0.0]


def test_replay_leaves_version_counters_alone():
    x = torch.zeros(2)
    g, y = capture(lambda: x.add_(1) * 2)
    versions = (x._version, y._version)
    for _ in range(3):
        g.replay()
    assert x.tolist() == [3.0, 3.0] and y.tolist() == [6.0, 6.0]  # 0 + 3, then (0 + 3) * 2
    assert (x._version, y._version) == versions


def test_a_constant_made_inside_the_block_is_not_an_input():
    x = torch.tensor([1.0, 2.0])
    g, y = capture(lambda: x + torch.tensor(0.5))  # the 0.5 tensor dies after the capture
    g.replay()  # no FreedInputWarning (an error in this module)
    assert y.tolist() == [1.5, 2.5]


def test_an_inplace_view_change_happens_once_at_capture_like_any_host_side_work():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    def fn():
        x.t_()  # changes x's sizes and strides, on the host: no GPU work to replay
        return x * torch.tensor([1.0, 10.0])

    g, y = capture(fn)
    for _ in range(3):
        g.replay()
        assert x.shape == (3, 2)  # transposed once, at capture, not again by each replay
        assert y.tolist() == [[1.0, 40.0], [2.0, 50.0], [3.0, 60.0]]  # x.T times [1, 10]


# 1b. memory the program let go of: a GPU frees it ---------------------------------------------
def test_rebinding_the_only_name_warns_that_a_gpu_would_read_freed_memory():
    x = torch.ones(3)
    g, y = capture(lambda: x * 10)
    g.replay()  # x is still held: no warning (an error in this module)
    x = torch.tensor([7.0, 8.0, 9.0])
    z = torch.full((3,), 100.0)  # on a GPU this takes the freed memory: a replay gives 1000s
    with pytest.warns(cuda.FreedInputWarning, match="use-after-free") as caught:
        g.replay()
    assert "torch.float32 tensor of shape (3,), used by aten.mul.Tensor" in str(caught[0].message)
    assert "check_input_liveness=True" in str(caught[0].message)
    assert y.tolist() == [10.0, 10.0, 10.0]  # the emulator kept the old 1s (see DIFFERENCES)
    assert z.tolist() == [100.0, 100.0, 100.0]
    assert not issubclass(cuda.FreedInputWarning, cuda.EmulatorDifferenceWarning)


def test_the_freed_input_warning_speaks_the_learners_language(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "zh_CN")
    x = torch.ones(3)
    g, _ = capture(lambda: x * 10)
    x = torch.tensor([7.0, 8.0, 9.0])
    with pytest.warns(cuda.FreedInputWarning) as caught:
        g.replay()
    message = str(caught[0].message)
    assert message.startswith(
        "这次重放读取了一个程序已不再持有的输入（捕获时的 torch.float32 tensor of shape (3,), "
        "used by aten.mul.Tensor）：在 GPU 上它的内存已被释放"
    )
    assert "修复：保留图捕获的那个张量，把新值复制进去（static_x.copy_(new)）" in message


def test_the_warning_names_a_notebook_cell_as_ipython_does_not_by_its_temporary_file(
    monkeypatch,
):
    import linecache
    import sys
    import types

    here = __file__

    class Compiler:  # IPython's name for the file that holds a cell's code
        @staticmethod
        def format_code_name(filename):
            return ("Cell", "In[7]") if filename == here else None

    shell = types.SimpleNamespace(compile=Compiler())
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    x = torch.ones(3)
    g, _ = capture(lambda: x * 10)
    x = torch.zeros(3)
    with pytest.warns(cuda.FreedInputWarning) as caught:
        g.replay()  # the learner's line
    assert caught[0].filename == "Cell In[7]"
    assert (
        linecache.getline("Cell In[7]", caught[0].lineno).strip()
        == "g.replay()  # the learner's line"
    )


def _rebind(held):
    held["x"] = torch.zeros(3)


def _delete(held):
    del held["x"]


def _move(held):
    held["x"].set_(torch.zeros(3))


def _move_data(held):
    held["x"].data = torch.zeros(3)


@pytest.mark.parametrize("let_go", [_rebind, _delete, _move, _move_data])
def test_each_way_of_letting_go_of_the_input_warns(let_go):
    held = {"x": torch.ones(3)}
    g, _ = capture(lambda: held["x"] * 10)
    let_go(held)
    with pytest.warns(cuda.FreedInputWarning):
        g.replay()


def test_a_view_or_an_autograd_saved_tensor_keeps_the_memory_as_on_a_gpu():
    x = torch.ones(3, requires_grad=True)
    view = x.detach()[1:]
    loss = (x * x).sum()  # autograd saves x for the backward of x * x
    g, y = capture(lambda: x.detach() * 10)
    x = None
    g.replay()  # the view and the saved tensor hold the memory: no warning
    del view
    g.replay()
    del loss
    with pytest.warns(cuda.FreedInputWarning):
        g.replay()
    assert y.tolist() == [10.0, 10.0, 10.0]


def test_graphs_reading_one_input_each_notice_when_it_is_let_go_of():
    x = torch.ones(2)
    g1, _ = capture(lambda: x * 2)
    g2, y2 = capture(lambda: x * 3)
    g1.reset()  # drops g1's hold on x: g2 still sees x held by the program
    g2.replay()
    g3, _ = capture(lambda: x + 1)
    x = None
    for g in (g2, g3):
        with pytest.warns(cuda.FreedInputWarning):
            g.replay()
    assert y2.tolist() == [3.0, 3.0]


def test_graph_memory_the_program_drops_stays_in_its_pool_without_a_warning():
    handle = cuda.graph_pool_handle()
    x = torch.ones(2)
    g1, out = capture(lambda: {"a": x + 1}, pool=handle)
    g2, b = capture(lambda: out["a"] * 2, pool=handle)
    del out["a"]  # on a GPU its block goes back to the pool, which the graphs keep reserved
    g1.replay()
    g2.replay()  # no FreedInputWarning (an error in this module)
    assert b.tolist() == [4.0, 4.0]  # (1 + 1) * 2


def test_graphed_module_backward_reads_activations_only_the_graphs_hold():
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    reference = copy.deepcopy(module)
    graphed = cuda.make_graphed_callables(module, (torch.randn(5, 3, requires_grad=True),))
    data = torch.randn(5, 3)
    graphed(data.clone().requires_grad_()).sum().backward()  # no FreedInputWarning either
    reference(data).sum().backward()
    assert torch.allclose(module[0].weight.grad, reference[0].weight.grad)


needs_liveness_check = pytest.mark.skipif(
    not graphs._HAS_LIVENESS_CHECK,
    reason=f"torch {torch.__version__} has no check_input_liveness (torch 2.13 added it)",
)


@needs_liveness_check
def test_check_input_liveness_refuses_the_replay_as_torch_does():
    x = torch.ones(3)
    g, y = capture(lambda: x * 10, check_input_liveness=True)
    g.replay()
    x.copy_(torch.full((3,), 2.0))  # a replay that ran would now give 20s
    x = torch.tensor([7.0, 8.0, 9.0])
    with pytest.raises(RuntimeError, match=r"^CUDA graph replay detected 1 dead tensor\(s\)\. "):
        g.replay()
    assert y.tolist() == [10.0, 10.0, 10.0]  # refused before running


@needs_liveness_check
def test_the_error_standing_in_for_torchs_stays_english_in_chinese(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "zh_CN")
    x = torch.ones(3)
    g, _ = capture(lambda: x * 10, check_input_liveness=True)
    x = torch.tensor([7.0, 8.0, 9.0])
    with pytest.raises(RuntimeError, match=r"Fix: Keep the tensor the graph captured and copy"):
        g.replay()


@needs_liveness_check
def test_check_input_liveness_counts_dead_tensors_by_address_like_torch():
    x = torch.arange(4.0)
    g = cuda.CUDAGraph()
    side = cuda.Stream()
    with cuda.stream(side):
        g.capture_begin(check_input_liveness=True)
        y = x[:2] + x[2:]  # two tensors on one storage, at two addresses
        g.capture_end()
    x = None
    with pytest.raises(CaptureError, match="detected 2 dead tensor"):
        g.replay()
    assert torch.isnan(y).all()  # never replayed


def test_check_input_liveness_needs_a_torch_that_has_it(monkeypatch):
    monkeypatch.setattr(graphs, "_HAS_LIVENESS_CHECK", False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'check_input_liveness'"):
        cuda.graph(cuda.CUDAGraph(), check_input_liveness=True)
    with pytest.raises(TypeError, match=r"torch 2\.13 added it"):
        cuda.CUDAGraph().capture_begin(check_input_liveness=True)
    cuda.graph(cuda.CUDAGraph(), check_input_liveness=False)  # the default is always accepted


# 2. outputs ------------------------------------------------------------------------------------
def test_next_replay_overwrites_outputs_and_a_clone_survives():
    x = torch.zeros(2)
    g, y = capture(lambda: x + 1)
    x.copy_(torch.tensor([1.0, 2.0]))
    g.replay()
    first, kept = y, y.clone()
    x.copy_(torch.tensor([5.0, 6.0]))
    g.replay()
    assert first.tolist() == [6.0, 7.0]  # the same tensor, rewritten by the second replay
    assert kept.tolist() == [2.0, 3.0]


def test_replay_rewrites_a_tensor_autograd_saved_silently_as_on_a_gpu():
    x = torch.tensor([1.0, 2.0])
    g, y = capture(lambda: x * 2)
    g.replay()
    w = torch.ones(2, requires_grad=True)
    loss = (y * w).sum()  # autograd saves y for d(loss)/dw
    x.copy_(torch.tensor([5.0, 5.0]))
    g.replay()  # rewrites y under autograd's feet: no version-counter error, as on a GPU
    loss.backward()
    assert w.grad.tolist() == [10.0, 10.0]  # the new y, 2 * 5, not the y the loss saw


def test_graph_captured_in_inference_mode_replays_outside_it():
    lin = torch.nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0]]))
        lin.bias.fill_(0.5)
    with torch.inference_mode():
        x = torch.zeros(1, 2)
        g, y = capture(lambda: lin(x))
        x.copy_(torch.tensor([[3.0, 4.0]]))
    g.replay()
    assert y.tolist() == [[11.5]]  # 1*3 + 2*4 + 0.5


# 3. in-place accumulation ----------------------------------------------------------------------
def test_inplace_add_replayed_five_times_adds_five():
    x = torch.zeros(3)
    g, _ = capture(lambda: x.add_(1))
    assert x.tolist() == [0.0, 0.0, 0.0]  # capture did not run the add
    for _ in range(5):
        g.replay()
    assert x.tolist() == [5.0, 5.0, 5.0]


def test_inplace_write_through_view_is_undone_at_capture_and_redone_by_replay():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    g, _ = capture(lambda: x[1:3].mul_(10))
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0]
    g.replay()
    assert x.tolist() == [1.0, 20.0, 30.0, 4.0]
    g.replay()
    assert x.tolist() == [1.0, 200.0, 300.0, 4.0]


# 4. randomness ---------------------------------------------------------------------------------
def test_dropout_draws_a_fresh_mask_each_replay_and_seeding_reproduces_it():
    x = torch.ones(2000)
    g, y = capture(lambda: F.dropout(x, p=0.5, training=True))
    g.replay()
    first = y.clone()
    g.replay()
    assert not torch.equal(first, y)
    assert set(y.unique().tolist()) <= {0.0, 2.0}  # kept values are scaled by 1/(1-p) = 2
    torch.manual_seed(5)
    g.replay()
    seeded = y.clone()
    torch.manual_seed(5)
    g.replay()
    assert torch.equal(seeded, y)
    torch.manual_seed(5)
    assert torch.equal(F.dropout(x, p=0.5, training=True), y)  # the same draw as eager


def test_capture_consumes_no_random_numbers_and_replay_does():
    torch.manual_seed(3)
    expected = torch.rand(4)
    torch.manual_seed(3)
    g, _ = capture(lambda: torch.rand(8))
    assert torch.equal(torch.rand(4), expected)
    torch.manual_seed(3)
    g.replay()
    assert not torch.equal(torch.rand(4), expected)


# 5. frozen shapes ------------------------------------------------------------------------------
def test_shapes_are_frozen():
    x = torch.ones(4)
    g, y = capture(lambda: x * 2)
    with pytest.raises(RuntimeError):
        x.copy_(torch.ones(8))
    x.copy_(torch.tensor([3.0]))  # one value broadcasts
    g.replay()
    assert y.tolist() == [6.0, 6.0, 6.0, 6.0]


# 6. Python runs once ---------------------------------------------------------------------------
def test_python_branches_and_side_effects_happen_at_capture_only():
    x = torch.ones(2)
    calls = []
    use_double = True

    def fn():
        calls.append("called")
        return x * 2 if use_double else x * 3

    g, y = capture(fn)
    use_double = False
    for _ in range(4):
        g.replay()
    assert calls == ["called"]
    assert y.tolist() == [2.0, 2.0]


# 7. host synchronization -----------------------------------------------------------------------
HOST_CASES = {
    "item": lambda x: x.sum().item(),
    "print": lambda x: print(x),
    "f-string of a scalar": lambda x: f"{x.sum():.2f}",
    "if": lambda x: bool(x.sum() > 0),
    "float": lambda x: float(x.sum()),
    "synchronize": lambda x: cuda.synchronize(),
    "stream synchronize": lambda x: cuda.current_stream().synchronize(),
    "event synchronize": lambda x: cuda.Event().synchronize(),
    "nonzero": lambda x: torch.nonzero(x),
    "unique": lambda x: torch.unique(x),
    "mask index": lambda x: x[x > 0],
    "masked_select": lambda x: torch.masked_select(x, x > 0),
    "mask assign tensor": lambda x: x.clone().__setitem__(x > 0, torch.tensor([1.0, 2.0])),
}


@pytest.mark.parametrize("body", HOST_CASES.values(), ids=HOST_CASES.keys())
def test_host_sync_inside_capture_fails_like_cuda_and_the_process_recovers(body):
    x = torch.tensor([-1.0, 2.0, 3.0])
    with pytest.raises(CaptureError) as info:
        capture(lambda: body(x * 1))
    assert info.value.cuda_error == INVALIDATED
    assert "operation failed due to a previous error during capture" in str(info.value)
    first = info.value.__context__
    assert isinstance(first, CaptureError) and first.cuda_error == UNSUPPORTED
    assert "operation not permitted when stream is capturing" in str(first)
    assert "Fix:" in str(first)
    assert not cuda.is_current_stream_capturing()
    assert cuda.current_stream() != cuda.default_stream()  # as torch.cuda.graph leaves it
    cuda.set_stream(cuda.default_stream())
    g, y = capture(lambda: x + 1)
    g.replay()
    assert y.tolist() == [0.0, 3.0, 4.0]
    assert x.tolist() == [-1.0, 2.0, 3.0]


COPY_CASES = {
    "tolist": lambda y: y.tolist(),
    "cpu": lambda y: y.cpu(),
    "numpy": lambda y: y.numpy(),
}


@pytest.mark.parametrize("copy_out", COPY_CASES.values(), ids=COPY_CASES.keys())
def test_copy_to_host_memory_is_refused_by_torch_and_the_capture_ends_normally(copy_out):
    x = torch.tensor([1.0, 2.0])
    g = cuda.CUDAGraph()
    refused = pytest.raises(CaptureError, match="Cannot copy between CPU and CUDA tensors")
    with refused as info, cuda.graph(g):
        y = x + 1
        copy_out(y)
        y.mul_(10)  # never reached
    assert info.value.cuda_error is None and info.value.__context__ is None
    assert cuda.current_stream() == cuda.default_stream()
    g.replay()  # the graph holds what was captured before the refused copy
    assert y.tolist() == [2.0, 3.0]


def test_mask_assign_of_one_value_is_captured_like_masked_fill():
    x = torch.tensor([-1.0, 2.0, -3.0])

    def fn():
        z = x * 1
        z[z > 0] = 0.0
        return z

    g, z = capture(fn)
    g.replay()
    assert z.tolist() == [-1.0, 0.0, -3.0]
    x.copy_(torch.tensor([4.0, -5.0, 6.0]))
    g.replay()
    assert z.tolist() == [0.0, -5.0, 0.0]


def test_host_reads_outside_capture_work():
    x = torch.tensor([1.5, 2.5])
    assert x.sum().item() == 4.0 and x.tolist() == [1.5, 2.5]
    cuda.synchronize()


# 8. memory pools -------------------------------------------------------------------------------
def pool_bytes(pool):
    return sum(s["total_size"] for s in cuda.memory_snapshot() if s["segment_pool_id"] == pool)


def test_pool_holds_capture_allocations_until_reset():
    x = torch.ones(1024)  # float32: 4096 bytes
    g, y = capture(lambda: x * 2 + 1)  # two new tensors: x*2 and (x*2)+1
    pool = g.pool()
    assert pool_bytes(pool) == 2 * 4096
    del y
    gc.collect()
    assert pool_bytes(pool) == 2 * 4096  # the graph keeps its addresses alive
    g.reset()
    gc.collect()
    assert pool_bytes(pool) == 0


def test_reset_frees_the_pool_at_once_without_a_garbage_collection():
    # On a GPU, reset() returns the pool's memory immediately; no reference cycle may delay it.
    x = torch.ones(1024)  # float32: 4096 bytes
    g, y = capture(lambda: x * 2)
    pool = g.pool()
    del y
    g.reset()
    assert pool_bytes(pool) == 0


def test_output_held_by_user_survives_reset():
    x = torch.ones(256)  # 1024 bytes
    g, y = capture(lambda: x * 3)
    g.replay()
    pool = g.pool()
    g.reset()
    assert pool_bytes(pool) == 1024
    assert y[:2].tolist() == [3.0, 3.0]
    del y
    gc.collect()
    assert pool_bytes(pool) == 0


def test_graphs_share_a_pool_through_a_handle():
    handle = cuda.graph_pool_handle()
    assert handle != cuda.graph_pool_handle()
    x = torch.ones(4)
    g1, g2 = cuda.CUDAGraph(), cuda.CUDAGraph()
    with cuda.graph(g1, pool=handle):
        a = x + 1
    with cuda.graph(g2, pool=g1.pool()):
        b = a * 2
    assert g1.pool() == g2.pool() == handle
    assert pool_bytes(handle) == 2 * 16  # a and b, 4 float32 each
    g1.replay()
    g2.replay()
    assert b.tolist() == [4.0, 4.0, 4.0, 4.0]  # (1 + 1) * 2


# 9. streams ------------------------------------------------------------------------------------
def test_fork_join_across_streams_is_captured():
    x = torch.ones(2)
    side = cuda.Stream()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        main = cuda.current_stream()
        side.wait_stream(main)
        with cuda.stream(side):
            b = x * 3
        a = x * 2
        main.wait_stream(side)
        c = a + b
    x.copy_(torch.tensor([1.0, 10.0]))
    g.replay()
    assert c.tolist() == [5.0, 50.0]  # 2x + 3x


def test_fork_join_with_events():
    x = torch.ones(2)
    side = cuda.Stream()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        forked = cuda.current_stream().record_event()
        side.wait_event(forked)
        with cuda.stream(side):
            b = x - 4
        done = cuda.Event()
        done.record(side)
        done.wait()
        c = b * 2
    g.replay()
    assert c.tolist() == [-6.0, -6.0]  # (1 - 4) * 2


def test_unjoined_fork_fails_capture_end():
    x = torch.ones(2)
    side = cuda.Stream()
    g = cuda.CUDAGraph()
    with pytest.raises(CaptureError) as info, cuda.graph(g):
        side.wait_stream(cuda.current_stream())
        with cuda.stream(side):
            x * 3
    assert info.value.cuda_error == UNJOINED
    assert "wait_stream" in str(info.value)
    assert x.tolist() == [1.0, 1.0]
    assert not cuda.is_current_stream_capturing()


def test_side_stream_joined_through_another_side_stream_counts_as_joined():
    x = torch.ones(1)
    s1, s2 = cuda.Stream(), cuda.Stream()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        main = cuda.current_stream()
        s1.wait_stream(main)
        with cuda.stream(s1):
            a = x + 1
        s2.wait_stream(s1)
        with cuda.stream(s2):
            b = a * 5
        main.wait_stream(s2)  # s2 has seen all of s1, so both are joined
        c = b + 0
    g.replay()
    assert c.tolist() == [10.0]


def test_work_on_a_stream_outside_the_capture_runs_now_and_is_not_captured():
    x = torch.zeros(1)
    other = cuda.Stream()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        with cuda.stream(other):
            x.add_(7)  # not forked from the capture: runs at once
        y = x * 1
    assert x.tolist() == [7.0]
    g.replay()
    g.replay()
    assert x.tolist() == [7.0] and y.tolist() == [7.0]


def test_capture_on_default_stream_is_refused():
    g = cuda.CUDAGraph()
    with pytest.raises(CaptureError, match="non-default stream"):
        g.capture_begin()
    assert not cuda.is_current_stream_capturing()


def test_capture_inside_capture_fails_on_the_synchronize_of_graph_enter():
    x = torch.ones(1)
    outer, inner = cuda.graph(cuda.CUDAGraph()), cuda.graph(cuda.CUDAGraph())
    with pytest.raises(CaptureError) as info, outer, inner:
        x + 1
    assert info.value.cuda_error == INVALIDATED


def test_replay_without_capture_and_second_capture_are_refused():
    with pytest.raises(CaptureError, match="without a preceding successful capture"):
        cuda.CUDAGraph().replay()
    x = torch.ones(1)
    g, _ = capture(lambda: x + 1)
    with pytest.raises(CaptureError, match="already owns a captured graph"), cuda.graph(g):
        pass
    cuda.set_stream(cuda.default_stream())
    g.reset()
    with cuda.graph(g):
        y = x + 2
    g.replay()
    assert y.tolist() == [3.0]


def test_replaying_a_graph_inside_a_capture_records_its_work():
    x = torch.ones(2)
    g1, y = capture(lambda: x + 1)

    def outer():
        g1.replay()
        return y * 2

    g2, z = capture(outer)
    x.copy_(torch.tensor([5.0, 6.0]))
    g2.replay()
    assert z.tolist() == [12.0, 14.0]  # (x + 1) * 2


# 10. training ----------------------------------------------------------------------------------
def test_captured_sgd_step_by_hand():
    w = torch.nn.Parameter(torch.tensor([1.0, 1.0]))
    x = torch.tensor([1.0, 2.0])
    opt = torch.optim.SGD([w], lr=0.5)
    opt.zero_grad(set_to_none=True)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        (w * x).sum().backward()  # d/dw = x
        opt.step()
    assert w.tolist() == [1.0, 1.0]
    for _ in range(3):
        g.replay()
    assert w.tolist() == [-0.5, -2.0]  # 1 - 3 * 0.5 * [1, 2]
    assert w.grad.tolist() == [1.0, 2.0]  # rewritten by each replay, not accumulated


def test_backward_into_existing_grad_accumulates_per_replay():
    w = torch.ones(3, requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0])
    w.grad = torch.zeros(3)
    g, _ = capture(lambda: (w * x).sum().backward())
    assert w.grad.tolist() == [0.0, 0.0, 0.0]
    for _ in range(3):
        g.replay()
    assert w.grad.tolist() == [3.0, 6.0, 9.0]


def test_captured_adam_training_matches_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 1))
    reference = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.1, capturable=True)
    ref_opt = torch.optim.Adam(reference.parameters(), lr=0.1, capturable=True)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(5)]
    static_x, static_y = batches[0][0].clone(), batches[0][1].clone()
    for m, o in ((model, opt), (reference, ref_opt)):  # warm-up creates the optimizer state
        o.zero_grad(set_to_none=True)
        F.mse_loss(m(static_x), static_y).backward()
        o.step()
    opt.zero_grad(set_to_none=True)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        loss = F.mse_loss(model(static_x), static_y)
        loss.backward()
        opt.step()
    for xb, yb in batches:
        static_x.copy_(xb)
        static_y.copy_(yb)
        g.replay()
        ref_opt.zero_grad(set_to_none=True)
        ref_loss = F.mse_loss(reference(xb), yb)
        ref_loss.backward()
        ref_opt.step()
        assert torch.allclose(loss, ref_loss)
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-6)


@pytest.mark.parametrize("warm_up", [False, True])
def test_optimizer_state_created_inside_capture_is_recreated_by_every_replay(warm_up):
    w = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.Adam([w], lr=0.1, capturable=True)
    if warm_up:  # one eager step creates the state (step counter, moments) outside the graph
        w.sum().backward()
        opt.step()
    opt.zero_grad(set_to_none=True)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        w.sum().backward()
        opt.step()
    for _ in range(3):
        g.replay()
    # Without warm-up the captured torch.zeros for the step counter runs again on each replay,
    # so the counter restarts: 0 + 1. With warm-up: 1 eager step + 3 replays.
    assert opt.state[w]["step"].item() == (4.0 if warm_up else 1.0)


def test_make_graphed_callables_matches_eager_forward_and_backward():
    torch.manual_seed(1)
    module = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh())
    reference = copy.deepcopy(module)
    graphed = cuda.make_graphed_callables(module, (torch.randn(2, 4, requires_grad=True),))
    for _ in range(2):
        data = torch.randn(2, 4)
        results = []
        for m in (graphed, reference):
            m.zero_grad(set_to_none=True)
            x = data.clone().requires_grad_()
            out = m(x)
            (out * torch.arange(6.0).view(2, 3)).sum().backward()
            results.append(
                (out.detach().clone(), x.grad.clone(), [p.grad.clone() for p in m.parameters()])
            )
        (out_g, xg_g, pg_g), (out_r, xg_r, pg_r) = results
        assert torch.allclose(out_g, out_r) and torch.allclose(xg_g, xg_r)
        assert all(torch.allclose(a, b) for a, b in zip(pg_g, pg_r, strict=True))


def test_make_graphed_function_of_two_arguments():
    def fn(a, b):
        return a * b + 1

    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    graphed = cuda.make_graphed_callables(fn, (a, b))
    a2 = torch.tensor([4.0], requires_grad=True)
    b2 = torch.tensor([5.0], requires_grad=True)
    out = graphed(a2, b2)
    out.backward()
    assert out.tolist() == [21.0]  # 4 * 5 + 1
    assert a2.grad.tolist() == [5.0] and b2.grad.tolist() == [4.0]


# no timings, honest differences ----------------------------------------------------------------
def test_the_emulator_gives_no_timings():
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    end.record()
    with pytest.raises(NeedsGPUError, match="recording"):
        start.elapsed_time(end)


def test_names_and_availability():
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    with pytest.raises(AttributeError, match="emulates the semantics"):
        cuda.max_memory_allocated  # noqa: B018


@pytest.mark.filterwarnings("default::graphlab.emulator.EmulatorDifferenceWarning")
def test_each_difference_is_announced_once(monkeypatch):
    monkeypatch.setattr(differences, "_warned", set())
    with pytest.warns(cuda.EmulatorDifferenceWarning, match="streams do not run concurrently"):
        cuda.Stream()
    with pytest.warns(cuda.EmulatorDifferenceWarning, match="Philox") as record:
        capture(lambda: torch.rand(2))
        capture(lambda: torch.rand(2))
    assert len([w for w in record if "Philox" in str(w.message)]) == 1


def test_graphlab_reuses_one_side_stream():
    """graphlab's helpers warm up on one shared stream (see graphlab/timing/side_stream.py)."""
    first = side_stream(cuda)
    assert side_stream(cuda) is first
    assert first != cuda.default_stream()
    assert first != cuda.Stream()  # a stream made by hand is a different one
