"""NCCL collectives inside a CUDA graph with a process group of one (needs a GPU and NCCL: run
with ``pytest -m cuda`` on the H200).

Each test runs in a child process with a time limit (graphlab.failures.isolated), so a process
group that never forms, or a collective that waits, fails the test instead of hanging the run.
"""

from __future__ import annotations

import pytest

from graphlab.failures import isolated

pytestmark = pytest.mark.cuda


def _captured_all_reduce(replays: int) -> tuple[list[float], list[float]]:
    """x = 3x; all_reduce(x); x -= 2 on 256 floats: eager values, then replayed values."""
    import os
    import tempfile

    import torch
    import torch.distributed as dist

    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")
    dist.init_process_group("nccl", init_method=f"file://{rendezvous}", rank=0, world_size=1)
    x = torch.full((256,), 5.0, device="cuda")

    def step():
        x.mul_(3)
        dist.all_reduce(x)
        x.sub_(2)

    eager = []
    for _ in range(replays):
        step()
        eager.append(x[-1].item())
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        dist.all_reduce(x)
    torch.cuda.current_stream().wait_stream(side)
    x.fill_(5.0)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    assert x[-1].item() == 5.0  # capturing ran nothing
    graphed = []
    for _ in range(replays):
        graph.replay()
        graphed.append(x[-1].item())
    del graph
    dist.destroy_process_group()
    return eager, graphed


def test_a_captured_all_reduce_runs_on_every_replay():
    eager, graphed = isolated(_captured_all_reduce, 4, timeout=120)
    # 5 -> 13 -> 37 -> 109 -> 325 (3x - 2), the same eagerly and replayed.
    assert eager == [13.0, 37.0, 109.0, 325.0]
    assert graphed == [13.0, 37.0, 109.0, 325.0]


def _nccl_version() -> tuple[int, ...]:
    import torch

    return tuple(torch.cuda.nccl.version())


def test_nccl_is_new_enough_to_capture_collectives():
    assert isolated(_nccl_version, timeout=60) >= (2, 9, 6)
