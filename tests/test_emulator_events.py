"""The CPU emulator's events inside and around captures, as lesson 09 shows them.

Two rules of CUDA stream capture: a capturing stream may wait only for events recorded inside the
capture (cudaErrorStreamCaptureIsolation otherwise), and an event recorded inside a capture is an
edge of the graph that never happens by itself, so it cannot be queried, waited for on the host or
timed (on the H200 with torch 2.11 CUDA says "invalid argument"). tests/gpu/test_multi_stream_cuda
runs the same scenarios on torch.cuda.
"""

from __future__ import annotations

import pytest
import torch

from graphlab import emulator as cuda
from graphlab.errors import CaptureError, NeedsGPUError
from graphlab.failures.explanation import explain

pytestmark = pytest.mark.filterwarnings("ignore::graphlab.emulator.EmulatorDifferenceWarning")

ISOLATION = "cudaErrorStreamCaptureIsolation"
INVALIDATED = "cudaErrorStreamCaptureInvalidated"


@pytest.fixture(autouse=True)
def default_stream_after():
    yield
    cuda.set_stream(cuda.default_stream())  # a failed capture leaves its side stream current


def recorded_in_a_capture() -> tuple[cuda.Event, cuda.CUDAGraph, torch.Tensor]:
    x = torch.ones(3)
    done = cuda.Event(enable_timing=True)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        x.mul_(2)
        done.record()
    return done, g, x


@pytest.mark.parametrize("call", ["query", "synchronize"])
def test_an_event_recorded_in_a_capture_cannot_be_waited_for_even_after_replays(call):
    done, g, x = recorded_in_a_capture()
    g.replay()
    g.replay()
    assert x.tolist() == [4.0, 4.0, 4.0]  # the graph itself runs: 1 * 2 * 2
    with pytest.raises(CaptureError) as info:
        getattr(done, call)()
    assert info.value.cuda_error == "cudaErrorInvalidValue"
    assert str(info.value).startswith(
        f"CUDA error: invalid argument (cudaErrorInvalidValue). Event.{call}() on an event last "
        "recorded in a capturing stream"
    )
    assert explain(info.value).key == "captured-event"


def test_an_event_recorded_in_a_capture_cannot_be_timed():
    done, g, _ = recorded_in_a_capture()
    start = cuda.Event(enable_timing=True)
    start.record()
    g.replay()
    with pytest.raises(CaptureError, match=r"Event.elapsed_time\(\) on an event last recorded"):
        start.elapsed_time(done)
    with pytest.raises(CaptureError, match=r"Event.elapsed_time\(\) on an event last recorded"):
        done.elapsed_time(start)


def test_recording_the_event_again_outside_a_capture_makes_it_an_ordinary_event():
    done, g, _ = recorded_in_a_capture()
    g.replay()
    done.record()
    assert done.query() is True
    done.synchronize()
    with pytest.raises(NeedsGPUError):  # the emulator has no GPU time to report
        done.elapsed_time(done)


def test_an_event_never_recorded_is_an_ordinary_event():
    never = cuda.Event()
    assert never.query() is True
    never.synchronize()


def test_a_capturing_stream_cannot_wait_for_an_event_recorded_before_the_capture():
    x = torch.ones(4)
    side = cuda.Stream()
    ready = cuda.Event()
    with cuda.stream(side):
        x.mul_(3)
        ready.record(side)
    g = cuda.CUDAGraph()
    with pytest.raises(CaptureError) as info, cuda.graph(g):
        cuda.current_stream().wait_event(ready)
        x.mul_(2)
    # The with block ends the spoiled capture: "invalidated", caused by the isolation error.
    assert info.value.cuda_error == INVALIDATED
    assert info.value.__context__.cuda_error == ISOLATION
    assert "takes part in this capture and was made to wait for an event recorded outside it" in (
        str(info.value.__context__)
    )
    assert explain(info.value).key == "uncaptured-dependency"
    assert x.tolist() == [3.0, 3.0, 3.0, 3.0]  # nothing captured ran


def test_joining_a_stream_that_never_forked_into_the_capture_is_the_same_mistake():
    x = torch.ones(2)
    side = cuda.Stream()
    g = cuda.CUDAGraph()
    with pytest.raises(CaptureError) as info, cuda.graph(g):
        with cuda.stream(side):
            x.add_(1)  # side does not take part: this runs now
        cuda.current_stream().wait_stream(side)
    assert info.value.__context__.cuda_error == ISOLATION
    assert x.tolist() == [2.0, 2.0]


def test_waiting_for_a_never_recorded_event_inside_a_capture_is_no_wait():
    x = torch.ones(2)
    never = cuda.Event()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        cuda.current_stream().wait_event(never)
        y = x * 5
    g.replay()
    assert y.tolist() == [5.0, 5.0]


def test_a_stream_outside_the_capture_may_wait_for_an_ordinary_event_during_it():
    x = torch.ones(2)
    other, ready = cuda.Stream(), cuda.Event()
    ready.record(other)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        other.wait_event(ready)  # neither takes part in the capture
        y = x + 1
    g.replay()
    assert y.tolist() == [2.0, 2.0]
