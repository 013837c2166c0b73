"""On a GPU: the exercise checkers against real torch.cuda graphs.

The tests of tests/test_checks.py that run a checker are collected here a second time, under the
``cuda`` mark, so that the same right answers pass and the same wrong answers fail with the same
messages on the GPU. Below them, what only a GPU has: replays counted on ``torch.cuda.CUDAGraph``
itself, kernels counted by the profiler and from a kept graph's nodes, and ``.cpu()`` as a correct
way to keep an output.

Run on the H200:  python -m pytest tests/gpu/test_checks_cuda.py -v -rs
"""

from __future__ import annotations

import pytest
import torch
from right_answers import collect_on_the_host
from test_checks import (  # noqa: F401  (collected here again, under the cuda mark)
    test_a_crash_shows_the_learners_own_line,
    test_a_failed_capture_points_at_its_first_error_explains_it_and_recovers,
    test_an_untouched_stub_is_not_attempted,
    test_odd_answers_get_a_sentence,
    test_one_kernel_instead_of_a_chain_is_named_exactly,
    test_rebinding_message_is_the_lessons,
    test_right_answers_pass,
    test_torchs_own_not_implemented_error_is_a_crash_not_a_stub,
    test_wrong_answers_fail,
)

from graphlab import checks
from graphlab.checks._observe import Replays, replay_kernels, warmed_capture

pytestmark = pytest.mark.cuda


@pytest.fixture(autouse=True)
def back_on_the_default_stream():
    """After every test no capture is open and the default stream is current again."""
    yield
    assert not torch.cuda.is_current_stream_capturing()
    assert torch.cuda.current_stream() == torch.cuda.default_stream()


def chain(graph: torch.cuda.CUDAGraph, x: torch.Tensor, n: int) -> torch.Tensor:
    with torch.cuda.graph(graph):
        out = x
        for _ in range(n):
            out = out + 1
    return out


def test_replays_are_counted_on_the_cuda_graph_itself():
    x = torch.zeros(4, device="cuda")
    graph, y = warmed_capture(lambda: x + 1)
    with Replays([graph]) as replays:
        graph.replay()
        graph.replay()
    assert replays.of(graph) == 2
    assert "replay" not in vars(graph)  # the class's own replay again
    x.fill_(2.0)
    graph.replay()
    torch.cuda.synchronize()
    assert y.tolist() == [3.0, 3.0, 3.0, 3.0]


def test_the_profiler_counts_the_kernels_of_a_replay():
    x = torch.arange(5.0, device="cuda")
    seven, one = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    out = chain(seven, x, 7)
    with torch.cuda.graph(one):
        fused = x + 7
    assert replay_kernels(seven) == 7
    assert replay_kernels(one) == 1
    torch.cuda.synchronize()
    assert out.tolist() == fused.tolist() == [7.0, 8.0, 9.0, 10.0, 11.0]


def test_a_kept_graph_is_counted_from_its_nodes():
    pytest.importorskip("cuda.bindings", reason="counting nodes needs the cuda-bindings package")
    try:
        graph = torch.cuda.CUDAGraph(keep_graph=True)
    except TypeError:
        pytest.skip(f"torch {torch.__version__} has no keep_graph (torch 2.8 added it)")
    from graphlab.checks._observe import _kernel_nodes

    x = torch.arange(5.0, device="cuda")
    out = chain(graph, x, 7)
    assert _kernel_nodes(graph) == 7
    assert replay_kernels(graph) == 7  # the nodes, then one replay
    torch.cuda.synchronize()
    assert out.tolist() == [7.0, 8.0, 9.0, 10.0, 11.0]


# --- .cpu() copies an output to the host on a GPU: a correct way to keep it ---------------------


def two_replays_on_the_host(graph, static_out, seed):
    kept = []
    for _ in range(2):
        torch.cuda.manual_seed(seed)
        graph.replay()
        kept.append(static_out.cpu())
    return kept


def run_padded_on_the_host(graphs, batch):
    n = batch.shape[0]
    graph, static_x, static_y = graphs[min(s for s in graphs if s >= n)]
    static_x[:n].copy_(batch)
    graph.replay()
    return static_y[:n].cpu()


@pytest.mark.parametrize(
    ("checker", "answer", "success"),
    [
        (checks.check_keep_outputs, collect_on_the_host, "PASSED kept outputs (first and last): "),
        (checks.check_reproducible_replays, two_replays_on_the_host, "PASSED same mask twice "),
        (checks.check_run_padded, run_padded_on_the_host, "PASSED padded run of a 2-row request"),
    ],
    ids=lambda v: getattr(v, "__name__", "")[:30],
)
def test_outputs_copied_to_the_host_are_kept(checker, answer, success, capsys):
    checker(answer)
    assert capsys.readouterr().out.startswith(success)
