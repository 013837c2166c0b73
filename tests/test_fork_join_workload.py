"""workloads.fork_join and its graphlab record experiments, on the CPU (the emulator's streams).

On a GPU the experiments run in tests/gpu/test_multi_stream_cuda.py.
"""

from __future__ import annotations

import pytest
import torch

from graphlab import emulator as cuda
from graphlab.checks.multi_stream import _CapturedOps
from graphlab.errors import GraphlabError
from graphlab.timing import workloads
from graphlab.timing.experiments import experiments, select

pytestmark = pytest.mark.filterwarnings("ignore::graphlab.emulator.EmulatorDifferenceWarning")


def by_hand(x: torch.Tensor, w_a: torch.Tensor, w_b: torch.Tensor, steps: int) -> torch.Tensor:
    a, b = x, x
    for _ in range(steps):
        a, b = torch.tanh(a @ w_a), torch.tanh(b @ w_b)
    return a + b


def weights(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The workload's weights: seeds 1 and 2 on the CPU generator, scaled by 1/sqrt(n)."""
    pair = []
    for offset in (1, 2):
        generator = torch.Generator().manual_seed(seed + offset)
        pair.append(torch.randn((n, n), generator=generator) / n**0.5)
    return pair[0], pair[1]


@pytest.mark.parametrize("streams", [1, 2])
def test_both_layouts_compute_the_two_branches_and_their_sum(streams):
    work = workloads.fork_join(steps=3, n=8, streams=streams, device="cpu")
    w_a, w_b = weights(8)
    (x,) = work.inputs
    assert torch.allclose(work(), by_hand(x, w_a, w_b, 3), rtol=1e-5, atol=1e-6)
    assert work.description["kernels"] == 13  # 2 branches x 3 steps x (matmul, tanh) + the add
    assert work.name == f"fork_join_{'2streams' if streams == 2 else '1stream'}_k3_n8"


def test_two_streams_capture_two_parallel_branches_on_the_emulator():
    work = workloads.fork_join(steps=2, n=4, streams=2, device="cpu")
    (x,) = work.inputs
    static_x = x.clone()
    g = cuda.CUDAGraph()
    with _CapturedOps(cuda) as seen, cuda.graph(g):
        out = work.fn(static_x)
    assert len(seen.streams()) == 2
    (second,) = seen.streams() - seen.streams_of("add")
    assert {"mm", "tanh"} <= {name for stream, name in seen.ops if stream == second}
    new = torch.linspace(-0.9, 1.3, 16).reshape(4, 4)
    static_x.copy_(new)
    g.replay()
    assert torch.allclose(out, by_hand(new, *weights(4), 2), rtol=1e-5, atol=1e-6)


def test_one_stream_captures_everything_on_the_capturing_stream():
    work = workloads.fork_join(steps=2, n=4, streams=1, device="cpu")
    g = cuda.CUDAGraph()
    with _CapturedOps(cuda) as seen, cuda.graph(g):
        work.fn(work.inputs[0].clone())
    assert len(seen.streams()) == 1


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"streams": 3}, "streams must be 1 or 2, not 3"),
        ({"steps": 0}, "steps must be a whole number from 1"),
        ({"n": 2.5}, "n must be a whole number from 1"),
    ],
)
def test_bad_sizes_are_refused_with_one_sentence(kwargs, says):
    with pytest.raises(GraphlabError, match=says):
        workloads.fork_join(device="cpu", **kwargs)


def test_the_plan_records_each_size_on_two_streams_and_on_one():
    plan = {e.name: e for e in experiments() if e.kind == "fork_join"}
    assert list(plan) == [
        "fork_join_2streams_k4_n1024",
        "fork_join_1stream_k4_n1024",
        "fork_join_2streams_k4_n256",
        "fork_join_1stream_k4_n256",
    ]
    for name, experiment in plan.items():
        steps, n = 4, int(name.rsplit("_n", 1)[1])
        streams = 2 if "2streams" in name else 1
        # The recording is named after the workload it times.
        assert workloads.fork_join(steps, n, streams, device="cpu").name == name
        assert experiment.iterations == 2000 // 17  # about 2000 kernels per timed loop
        assert not experiment.quick
    assert [e.name for e in select(experiments(), ["fork_join_1stream_k4_n256"])] == [
        "fork_join_1stream_k4_n256"
    ]
