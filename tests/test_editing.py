"""graphlab.editing: list a kept graph's nodes, update an executable graph, change one node.

The same tests run on the live backend: the CPU emulator here, torch.cuda and cuda-bindings on a
GPU machine (python -m pytest tests/test_editing.py there), so the emulator's answers are held to
the GPU's. Expected values are worked out by running the same step eagerly.
"""

from __future__ import annotations

import pytest
import torch

from graphlab import DEVICE, backend, cuda
from graphlab.editing import graph_nodes, set_kernel_node, update_graph
from graphlab.errors import GraphUpdateError
from graphlab.support.graph_updates import short_kernel_name
from graphlab.timing.side_stream import capture_on_side_stream


def step(x):
    return torch.tanh(x * 1.5 - 0.25)


def kept(fn, x):
    return capture_on_side_stream(cuda, lambda: fn(x), warmups=1, keep_graph=True)


@pytest.fixture
def inputs():
    return (
        torch.tensor([0.1, 0.4, -0.3, 0.8], device=DEVICE),
        torch.tensor([-1.2, 0.05, 0.9, 2.2], device=DEVICE),
    )


def test_a_kept_graph_lists_one_kernel_node_per_operation(inputs):
    graph, _ = kept(step, inputs[0])
    found = graph_nodes(graph)
    assert [node.kind for node in found] == ["kernel", "kernel", "kernel"]
    if backend().is_cuda:
        assert all("elementwise_kernel" in node.name for node in found)
        assert found[0].name.endswith("<MulFunctor>")
        assert "tanh" in found[2].name
    else:
        assert [node.name for node in found] == [
            "aten.mul.Tensor",
            "aten.sub.Tensor",
            "aten.tanh.default",
        ]


def test_an_update_reads_and_writes_the_source_captures_memory(inputs):
    x_a, x_b = inputs
    target, y_a = kept(step, x_a)
    target.instantiate()
    source, y_b = kept(step, x_b)
    y_a.zero_()
    y_b.zero_()
    update_graph(target, source)
    target.replay()
    assert torch.allclose(y_b, step(x_b))
    assert bool((y_a == 0).all())
    x_b.copy_(torch.tensor([0.3, -0.6, 1.4, -0.2]))
    target.replay()
    assert torch.allclose(y_b, step(x_b))


def test_a_refused_update_says_why_and_leaves_the_target_as_it_was(inputs):
    x_a, x_b = inputs
    target, y_a = kept(step, x_a)
    target.instantiate()
    longer, _ = kept(lambda x: step(x) * 2, x_b)
    with pytest.raises(GraphUpdateError) as info:
        update_graph(target, longer)
    assert info.value.reason == "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED"
    assert "(the target has 3 nodes, the source 4)" in str(info.value)
    y_a.zero_()
    target.replay()
    assert torch.allclose(y_a, step(x_a))


def test_another_kernel_function_in_a_node_is_updated(inputs):
    # CUDA 12+ updates a kernel node to another function (seen on an H200, CUDA 13.0)
    x_a, x_b = inputs
    target, _ = kept(step, x_a)
    target.instantiate()
    source, y_cos = kept(lambda x: torch.cos(x * 1.5 - 0.25), x_b)
    update_graph(target, source)
    y_cos.zero_()
    target.replay()
    assert torch.allclose(y_cos, torch.cos(x_b * 1.5 - 0.25))


def test_a_source_that_was_not_kept_is_refused_with_the_fix(inputs):
    target, _ = kept(step, inputs[0])
    target.instantiate()
    source, _ = capture_on_side_stream(cuda, lambda: step(inputs[1]), warmups=1)
    with pytest.raises(GraphUpdateError, match=r"keep_graph=True\), which keeps them"):
        update_graph(target, source)


def test_a_kept_target_must_be_instantiated_first(inputs):
    target, _ = kept(step, inputs[0])
    source, _ = kept(step, inputs[1])
    with pytest.raises(GraphUpdateError, match="no executable graph yet"):
        update_graph(target, source)


def test_one_kernel_node_takes_the_sources_inputs_and_outputs(inputs):
    x_a, x_b = inputs

    def two_steps(x):
        y1 = x * 1.5
        return y1, torch.tanh(y1)

    target, (y1_a, y2_a) = kept(two_steps, x_a)
    source, (y1_b, y2_b) = kept(two_steps, x_b)
    target.instantiate()
    set_kernel_node(target, source, 0)
    for t in (y1_a, y2_a, y1_b, y2_b):
        t.zero_()
    target.replay()
    assert torch.allclose(y1_b, x_b * 1.5)  # written by the target's node 0
    assert bool((y1_a == 0).all())
    assert bool((y2_a == 0).all())  # node 1 read the target's own (zeroed) y1
    assert bool((y2_b == 0).all())


def test_a_node_outside_the_graph_is_named(inputs):
    target, _ = kept(step, inputs[0])
    source, _ = kept(step, inputs[1])
    target.instantiate()
    with pytest.raises(GraphUpdateError, match="Node 3 does not exist: the target has 3 nodes"):
        set_kernel_node(target, source, 3)


def test_an_emulated_graph_and_another_kind_are_refused_together(inputs):
    from graphlab import emulator

    emulated = emulator.CUDAGraph(keep_graph=True)
    # torch's graph class, made without its constructor, which a machine without a GPU refuses.
    try:  # a CPU build of torch: a Python class over a dummy base
        torch_graph = object.__new__(torch.cuda.CUDAGraph)
    except TypeError:  # a CUDA build (torch 2.5's wheels): its C++ base must make it
        torch_graph = torch._C._CUDAGraph.__new__(torch.cuda.CUDAGraph)
    with pytest.raises(GraphUpdateError, match="the same `cuda`"):
        update_graph(emulated, torch_graph)


@pytest.mark.parametrize("index", ["0", 1.0, None, True, False])
def test_a_node_index_that_is_not_an_int_is_refused(inputs, index):
    # '0', 1.0 and None raised a raw TypeError before; True was taken as node 1.
    target, _ = kept(step, inputs[0])
    source, _ = kept(step, inputs[1])
    target.instantiate()
    with pytest.raises(GraphUpdateError) as caught:
        set_kernel_node(target, source, index)
    assert str(caught.value) == (
        f"The node index is {index!r} ({type(index).__name__}): give a node's number as an int, "
        "from 0 (as graph_nodes(graph) numbers them)."
    )


@pytest.mark.parametrize(
    ("call", "role"),
    [
        (lambda g: graph_nodes(None), "given"),
        (lambda g: update_graph(None, g), "target"),
        (lambda g: update_graph(g, "graph"), "source"),
        (lambda g: set_kernel_node(g, 42, 0), "source"),
    ],
)
def test_what_is_not_a_graph_is_refused_by_its_role(inputs, call, role):
    # graph_nodes(None) said cuda-bindings was missing before.
    graph, _ = kept(step, inputs[0])
    with pytest.raises(GraphUpdateError) as caught:
        call(graph)
    assert str(caught.value).startswith(f"The {role} graph is ")
    assert str(caught.value).endswith(
        ", not a CUDA graph: pass a cuda.CUDAGraph(keep_graph=True) that captured your step "
        "(from graphlab import cuda)."
    )


@pytest.mark.parametrize(
    ("symbol", "name"),
    [
        (
            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_",
            "at::native::vectorized_elementwise_kernel<FillFunctor>",
        ),
        (  # as cuFuncGetName gave it on the H200 for x * 1.5 (torch 2.11)
            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_"
            "internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_",
            "at::native::vectorized_elementwise_kernel<MulFunctor>",
        ),
        (
            "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_16tanh_kernel_cudaERNS_18Tensor"
            "IteratorBaseEENKUlvE_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
            "at::native::vectorized_elementwise_kernel<tanh_kernel_cuda>",
        ),
        ("_ZN4nccl6kernelEv", "nccl::kernel"),
        ("_Z15set_cond_kernelPf", "set_cond_kernel"),
        ("nccl_kernel", "nccl_kernel"),
    ],
)
def test_mangled_kernel_names_are_shortened(symbol, name):
    assert short_kernel_name(symbol) == name
