"""On a GPU: lesson 09's claims, its checker and its workload, against real torch.cuda graphs.

- The checker's right and wrong answers run on the GPU from tests/gpu/test_checks_cuda.py; the
  lesson-09 tests of tests/test_checks_multi_stream.py are collected here again under the
  ``cuda`` mark. A fork before the capture is refused on the GPU too, whichever CUDA error comes
  first.
- The CPU emulator's event rules (tests/test_emulator_events.py) hold on the GPU: each scenario
  runs in a child process (graphlab.isolated) and gives the same outcome as on the emulator.
- A profiled eager step and replay of workloads.fork_join on two streams put their branches on two
  streams, and the replay runs them at once (the eager run may or may not: its overlap is
  printed, not asserted); on one stream, they cannot overlap.

Run on the H200:  python -m pytest tests/gpu/test_multi_stream_cuda.py -v -rs
"""

from __future__ import annotations

import inspect

import pytest
import torch
from test_checks_multi_stream import (  # noqa: F401  (collected here again, under the cuda mark)
    test_an_unjoined_fork_is_told_where_the_join_goes,
    test_the_checker_leaves_the_default_stream_current,
    test_the_one_stream_message_is_the_lessons,
    test_wrong_values_show_yours_against_expected,
)
from wrong_answers import fork_before_capture

from graphlab import checks
from graphlab.errors import CheckFailed
from graphlab.failures.isolation import IsolatedFailure, isolated

pytestmark = pytest.mark.cuda

TIMEOUT_S = 180


@pytest.fixture(autouse=True)
def back_on_the_default_stream():
    """After every test no capture is open, the default stream is current and CUDA still works."""
    yield
    assert not torch.cuda.is_current_stream_capturing()
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    assert torch.ones(3, device="cuda").sum().item() == 3.0


def test_forking_before_the_capture_is_refused():
    """The side stream's work is not captured; which CUDA error comes first (an allocation for it
    outside the capture, or the capturing stream's wait for it) is CUDA's choice."""
    with pytest.raises(CheckFailed):
        checks.check_fork_join(fork_before_capture, record=False)


# -- the emulator's rules, on the GPU, each in a child process ------------------------------------


def side_joins_the_capture_by_waiting() -> list[bool]:
    """Lesson 09 section 1: is the side stream capturing before and after the fork?"""
    side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda")
    seen = []
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        main = torch.cuda.current_stream()
        with torch.cuda.stream(side):
            seen.append(torch.cuda.is_current_stream_capturing())
        side.wait_stream(main)
        with torch.cuda.stream(side):
            seen.append(torch.cuda.is_current_stream_capturing())
            y = x * 3
        main.wait_stream(side)
    seen.append(torch.cuda.is_current_stream_capturing())
    g.replay()
    torch.cuda.synchronize()
    return [*seen, y.tolist() == [3.0] * 4]


def test_a_stream_joins_the_capture_when_it_waits_for_the_capturing_stream():
    assert isolated(side_joins_the_capture_by_waiting, timeout=TIMEOUT_S) == [
        False,
        True,
        False,
        True,
    ]


def event_recorded_in_capture(call: str, external: bool = False):
    """Record an event inside a capture, replay, then use it on the host as ``call`` says."""
    x = torch.ones(4, device="cuda")
    start = torch.cuda.Event(enable_timing=True)
    # torch.cuda.Event(external=...) exists only in newer torch: pass it only when asked for.
    done = torch.cuda.Event(enable_timing=True, **({"external": True} if external else {}))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.mul_(2)
        done.record()
    start.record()
    g.replay()
    torch.cuda.synchronize()
    if call == "query":
        return done.query()
    if call == "synchronize":
        return done.synchronize()
    return start.elapsed_time(done)


# Querying is tests/gpu/test_explain_cuda.py's query_event_recorded_in_capture.
@pytest.mark.parametrize("call", ["synchronize", "elapsed_time"])
def test_an_event_recorded_in_a_capture_cannot_be_waited_for_or_timed(call):
    with pytest.raises(IsolatedFailure) as info:
        isolated(event_recorded_in_capture, call, timeout=TIMEOUT_S)
    assert "CUDA error: invalid argument" in str(info.value)
    assert info.value.explanation.key == "captured-event"


@pytest.mark.skipif(
    "external" not in inspect.signature(torch.cuda.Event.__new__).parameters,
    reason=f"torch {torch.__version__} has no torch.cuda.Event(external=...)",
)
def test_an_external_event_recorded_in_a_capture_happens_at_each_replay():
    assert isolated(event_recorded_in_capture, "query", True, timeout=TIMEOUT_S) is True


def join_a_stream_that_never_forked():
    x = torch.ones(2, device="cuda")
    side = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with torch.cuda.stream(side):
            x.add_(1)  # side does not take part: this runs now
        torch.cuda.current_stream().wait_stream(side)


def test_joining_a_stream_that_never_forked_depends_on_uncaptured_work():
    with pytest.raises(IsolatedFailure) as info:
        isolated(join_a_stream_that_never_forked, timeout=TIMEOUT_S)
    assert info.value.explanation.key == "uncaptured-dependency"


def wait_for_a_never_recorded_event() -> list[float]:
    x = torch.ones(2, device="cuda")
    never = torch.cuda.Event()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.cuda.current_stream().wait_event(never)
        y = x * 5
    g.replay()
    return y.tolist()


def test_waiting_for_a_never_recorded_event_inside_a_capture_is_no_wait():
    assert isolated(wait_for_a_never_recorded_event, timeout=TIMEOUT_S) == [5.0, 5.0]


# -- the workload: overlap kept in the replay ------------------------------------------------------


def profiled_fork_join(streams: int) -> dict:
    """Lane figures of a profiled eager step and replay of the lesson's 1024 workload (in a fresh
    process: nothing was profiled before its capture)."""
    import graphlab
    from graphlab import workloads

    work = workloads.fork_join(4, 1024, streams, device="cuda")
    result = graphlab.compare(
        work.fn, *work.inputs, repeats=3, iterations=5, profile=True, profile_iterations=1
    )
    out = {"same_result": bool(torch.allclose(work(), workloads.fork_join(4, 1024, 1)(), 1e-4))}
    for mode, timeline in result.timelines.items():
        summary = timeline.summary()
        out[mode] = {
            "kernels": summary.kernels,
            "graph_launches": summary.graph_launches,
            "lanes_busy_ns": [s.busy_ns for s in summary.streams if s.kernels],
            "busy_ns": summary.busy_ns,
        }
    return out


def test_two_joined_branches_run_on_two_streams_and_overlap_in_the_replay(record_property):
    lanes = isolated(profiled_fork_join, 2, timeout=TIMEOUT_S)
    assert lanes["same_result"]  # two streams or one: the same numbers
    assert (lanes["eager"]["kernels"], lanes["eager"]["graph_launches"]) == (17, 0)
    assert (lanes["graph"]["kernels"], lanes["graph"]["graph_launches"]) == (17, 1)
    for mode in ("eager", "graph"):
        assert len(lanes[mode]["lanes_busy_ns"]) == 2, mode
        # Busy time is the union of the lanes' kernels: never more than their sum.
        assert lanes[mode]["busy_ns"] <= sum(lanes[mode]["lanes_busy_ns"]), mode
        share = lanes[mode]["busy_ns"] / sum(lanes[mode]["lanes_busy_ns"])
        record_property(f"{mode}_busy_over_lane_sum", round(share, 3))
        print(f"{mode}: busy {lanes[mode]['busy_ns']} ns of {lanes[mode]['lanes_busy_ns']} ns")
    # Eager overlap is not guaranteed: the host launches one kernel at a time, and a run whose
    # first branch ends before the second branch's first launch shows none (the H200, torch
    # 2.11: once 469,984 ns busy, exactly the lanes' sum). The replay hands CUDA both branches
    # at once, so they overlap (the H200, torch 2.11: 826 of 1,587 us of lane time).
    assert lanes["graph"]["busy_ns"] < sum(lanes["graph"]["lanes_busy_ns"])


def test_the_same_kernels_on_one_stream_cannot_overlap():
    lanes = isolated(profiled_fork_join, 1, timeout=TIMEOUT_S)
    for mode in ("eager", "graph"):
        assert lanes[mode]["kernels"] == 17
        assert len(lanes[mode]["lanes_busy_ns"]) == 1
        assert lanes[mode]["busy_ns"] == lanes[mode]["lanes_busy_ns"][0]
