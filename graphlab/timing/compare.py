"""Honest timings of eager PyTorch against CUDA graph replay, on a real GPU.

:func:`compare` answers "is the captured version faster, by how much, and after how many
iterations has the capture paid for itself?" :func:`measure_cumulative_totals` measures that last
question directly: the total time of N eager iterations against capture plus N replays.

The method is the one lesson 06 teaches:

- **Warm up before capture, on a side stream.** ``torch.cuda.graph`` documents this requirement:
  lazy initialisation (cuBLAS handles and workspaces, allocator blocks, autotuning) must happen
  before capture, where it is either illegal or would be frozen into the graph.
- **Time capture and the first replay on their own.** They are one-off costs; mixing them into the
  steady state would hide both the cost and the gain.
- **Steady state with CUDA events around a loop of iterations**, after a synchronize so that the
  loop starts on an idle GPU, and reading the events only after the GPU has passed the end event.
  No synchronize between iterations: a baseline that syncs every kernel or every step makes eager
  look worse than it is.
- **End to end with the host clock**: per iteration including what a real loop pays. The replay
  copies fresh inputs into the graph's static input buffers and clones its outputs (the next
  replay overwrites them); eager gets the same fresh inputs. Same inputs, precision and batch.
- **Many repeats**, reported as the median with the 10th and 90th percentile.
- **Break-even** N* = capture / (eager end to end − replay end to end)
  (:func:`graphlab.timing.break_even.break_even`). The first replay's extra cost
  (``first_replay_us`` − ``replay_us``: uploading the graph) is reported apart and is not in N*;
  :func:`measure_cumulative_totals` includes it, as it includes everything a real loop pays.
- **Never from a profiled run**: the profiler roughly doubles eager launch cost on the H200. With
  ``profile=True`` the timelines come from a separate profiled run made after the timing.

Both functions need a CUDA GPU. Elsewhere they raise :class:`~graphlab.errors.NeedsGPUError`
pointing at the recordings made on a real GPU (``graphlab recordings``, ``graphlab.recording``).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlab.errors import CaptureError, GraphlabError, NeedsGPUError
from graphlab.support.capture_errors import first_cuda_error

from .break_even import break_even
from .results import Comparison, CumulativeTotals
from .side_stream import side_stream

if TYPE_CHECKING:
    import torch

    from graphlab.trace.timeline import Timeline

__all__ = [
    "BREAK_EVEN_COUNTS",
    "Captured",
    "capture",
    "compare",
    "event_time_us",
    "host_time_us",
    "measure_cumulative_totals",
    "profile_timelines",
    "profiled_timeline",
    "require_gpu",
    "spread",
]

# How many distinct sets of "fresh" inputs the end-to-end loops cycle through: each iteration
# consumes tensors other than the graph's static buffers, as a real loop would.
FRESH_INPUT_SETS = 4

# Iteration counts at which measure_cumulative_totals reads the clock by default.
BREAK_EVEN_COUNTS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def require_gpu(what: str) -> None:
    """Raise :class:`NeedsGPUError` unless torch sees a CUDA device; ``what`` names the caller."""
    import torch

    if not torch.cuda.is_available():
        raise NeedsGPUError(
            f"{what} measures real GPU time, and torch sees no CUDA device on this machine. "
            "Timings recorded on a real GPU ship with graphlab: list them with "
            "`graphlab recordings` (or graphlab.recordings()) and load one with "
            "graphlab.recording(name)."
        )


def spread(samples: Sequence[float]) -> tuple[float, float, float]:
    """(median, 10th percentile, 90th percentile) of ``samples``, by linear interpolation."""
    p10, p50, p90 = np.percentile(np.asarray(samples, dtype=float), [10, 50, 90])
    return float(p50), float(p10), float(p90)


@dataclass(frozen=True, eq=False)  # compared by identity: it holds tensors and a graph
class Captured:
    """A step captured into a CUDA graph, ready to run both ways; made by :func:`capture`.

    ``static`` holds the graph's input buffers (clones of the inputs given to :func:`capture`):
    a replay always reads these addresses. ``outputs`` are the tensors every replay overwrites.
    ``capture_us`` is what the capture cost on the host clock.
    """

    fn: Callable[..., Any]
    static: tuple[torch.Tensor, ...]
    graph: torch.cuda.CUDAGraph
    outputs: Any
    capture_us: float

    def eager(self, i: int = 0) -> Any:
        """Run ``fn`` eagerly on the static buffers (``i``, an iteration index, is ignored)."""
        return self.fn(*self.static)

    def replay(self, i: int = 0) -> None:
        """Replay the graph once (``i`` is ignored)."""
        self.graph.replay()

    def replay_with(self, inputs: Sequence[torch.Tensor]) -> Any:
        """Copy ``inputs`` into the static buffers, replay, and return clones of the outputs."""
        if len(inputs) != len(self.static):
            raise GraphlabError(
                f"the graph was captured with {len(self.static)} inputs, not {len(inputs)}: "
                "pass one new tensor per captured input, in the same order"
            )
        for buffer, new in zip(self.static, inputs, strict=True):
            buffer.copy_(new)
        self.graph.replay()
        return _clone_outputs(self.outputs)


def capture(fn: Callable[..., Any], *inputs: torch.Tensor, warmup: int = 3) -> Captured:
    """Warm ``fn`` up on a side stream, then capture ``fn(*static)`` on that stream.

    ``inputs`` are CUDA tensors; the graph gets clones of them as its static buffers.
    Raises NeedsGPUError without a GPU and CaptureError when ``fn`` cannot be captured.
    """
    _check_count("warmup", warmup)
    require_gpu("graphlab.timing.compare.capture")
    import torch

    _check_inputs(inputs)
    static = tuple(x.clone() for x in inputs)
    stream = side_stream(torch.cuda)  # one stream, one cuBLAS workspace, however many captures
    _warm_up(fn, static, stream, warmup)
    graph, outputs, capture_us = _capture(fn, static, stream)
    return Captured(fn, static, graph, outputs, capture_us)


def profile_timelines(captured: Captured, iterations: int = 2) -> dict[str, Timeline]:
    """Profiled timelines of ``iterations`` eager calls and of as many replays.

    Returns ``{"eager": Timeline, "graph": Timeline}``. Never time from these: the profiler slows
    the host's launches down (it roughly doubles eager launch cost on the H200).
    """
    _check_count("iterations", iterations)
    timelines = {
        "eager": profiled_timeline(captured.eager, iterations),
        "graph": profiled_timeline(captured.replay, iterations),
    }
    for mode, timeline in timelines.items():
        if not timeline.is_gpu.any():
            raise GraphlabError(
                f"the profiler recorded no GPU work for the {mode} run: CUPTI's activity "
                "tracing did not deliver kernel events in this process. Profile in a fresh "
                "process, before any other profiling session."
            )
    return timelines


def compare(
    fn: Callable[..., Any],
    *inputs: torch.Tensor,
    warmup: int = 3,
    repeats: int = 20,
    iterations: int = 10,
    profile: bool = False,
    profile_iterations: int = 2,
) -> Comparison:
    """Time ``fn(*inputs)`` eagerly and as a captured CUDA graph; see the module docstring.

    Args:
        fn: the step to capture; it must be capturable (no host syncs, no CPU tensors, no
            data-dependent shapes).
        inputs: CUDA tensors. The graph reads clones of them (its static buffers); they are not
            modified.
        warmup: eager runs on a side stream before capture (at least 1).
        repeats: timed repeats of each loop; the result is their median and spread.
        iterations: calls per timed loop (more for short steps, fewer for long ones).
        profile: also record an eager and a graph :class:`~graphlab.trace.timeline.Timeline` in a
            separate profiled run, in ``result.timelines``. Timings never come from it.
        profile_iterations: iterations kept in each profiled timeline.

    Raises:
        NeedsGPUError: no CUDA device (use the recordings instead).
        CaptureError: ``fn`` could not be captured; the message carries CUDA's reason.
    """
    for what, value in [
        ("warmup", warmup),
        ("repeats", repeats),
        ("iterations", iterations),
        ("profile_iterations", profile_iterations),
    ]:
        _check_count(what, value)
    require_gpu("graphlab.compare")
    captured = capture(fn, *inputs, warmup=warmup)
    fresh = [tuple(x.clone() for x in inputs) for _ in range(FRESH_INPUT_SETS)]
    first_replay_us = event_time_us(captured.replay, 1)
    samples = _time_loops(captured, fresh, repeats, iterations)
    timelines = profile_timelines(captured, profile_iterations) if profile else None
    return _comparison(captured, first_replay_us, samples, repeats, iterations, timelines)


def measure_cumulative_totals(
    fn: Callable[..., Any],
    *inputs: torch.Tensor,
    counts: Sequence[int] = BREAK_EVEN_COUNTS,
    repeats: int = 3,
    warmup: int = 3,
) -> CumulativeTotals:
    """Measure, for each N in ``counts``, N eager iterations against capture + N replays.

    One run per mode goes up to ``max(counts)`` iterations and reads the host clock, after a
    synchronize, each time it reaches a count: so the totals are cumulative, as a real loop's
    are. The graph run's clock starts before capture; each replay copies fresh inputs into the
    static buffers and clones the outputs; eager gets the same fresh inputs. Both modes start
    from a process that has already run ``fn`` (the warm-up), so lazy initialisation counts for
    neither. This is the measured counterpart of the model's totals
    (:func:`graphlab.timing.break_even.cumulative_totals`) and N* = C / (t_eager − t_replay).
    """
    counts = tuple(counts)
    if not counts or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in counts):
        raise GraphlabError(f"counts must be positive whole numbers, not {counts!r}")
    if list(counts) != sorted(set(counts)):
        raise GraphlabError(f"counts must be strictly increasing, not {counts!r}")
    _check_count("repeats", repeats)
    _check_count("warmup", warmup)
    require_gpu("graphlab.timing.compare.measure_cumulative_totals")
    import torch

    _check_inputs(inputs)

    static = tuple(x.clone() for x in inputs)
    fresh = [tuple(x.clone() for x in inputs) for _ in range(FRESH_INPUT_SETS)]
    side = side_stream(torch.cuda)
    _warm_up(fn, static, side, warmup)

    eager_runs, graph_runs = [], []
    for _ in range(repeats):
        eager_runs.append(_eager_totals(fn, fresh, counts))
        graph_runs.append(_graph_totals(fn, static, fresh, side, counts))
    return CumulativeTotals(
        counts=counts,
        eager_us=tuple(float(v) for v in np.median(eager_runs, axis=0)),
        graph_us=tuple(float(v) for v in np.median(graph_runs, axis=0)),
        repeats=repeats,
    )


# --------------------------------------------------------------------------------- internals


def _check_count(what: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GraphlabError(f"{what} must be a whole number of at least 1, not {value!r}")


def _check_inputs(inputs: Sequence[Any]) -> None:
    import torch

    for position, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise GraphlabError(
                f"input {position} is a {type(x).__name__}, not a tensor: pass tensors as inputs "
                "and close over other values in fn (a graph freezes them at capture anyway)"
            )
        if x.device.type != "cuda":
            raise GraphlabError(
                f"input {position} is on {x.device}, not on the GPU: move it with x.cuda() "
                "(a CUDA graph can only read GPU memory)"
            )


def _clone_outputs(out: Any) -> Any:
    """Clone every tensor in ``out`` (a tensor, or tuples/lists/dicts of them)."""
    import torch

    if isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, (tuple, list)):
        return type(out)(_clone_outputs(o) for o in out)
    if isinstance(out, dict):
        return {key: _clone_outputs(value) for key, value in out.items()}
    return out


def _warm_up(fn: Callable[..., Any], inputs: tuple, stream: torch.cuda.Stream, times: int) -> None:
    """Run ``fn`` ``times`` times on ``stream``, the stream that will capture it.

    torch.cuda.graph requires warm-up iterations on a side stream before capture: lazy
    initialisation (cuBLAS handles and workspaces, allocator blocks, autotuning) must not
    happen inside the capture. Warming up on the capture stream itself also covers per-stream
    state such as cuBLAS workspaces.
    """
    import torch

    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(times):
            fn(*inputs)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()


def _capture(
    fn: Callable[..., Any], static: tuple, stream: torch.cuda.Stream
) -> tuple[torch.cuda.CUDAGraph, Any, float]:
    """Capture ``fn(*static)``; return the graph, its output tensors and the capture time in µs.

    The host clock runs from an idle GPU to the end of ``torch.cuda.graph`` (which empties the
    allocator cache, captures and instantiates) plus a synchronize: what a user's loop pays.
    """
    import torch

    graph = torch.cuda.CUDAGraph()
    caller_stream = torch.cuda.current_stream()
    torch.cuda.synchronize()
    start = time.perf_counter_ns()
    try:
        with torch.cuda.graph(graph, stream=stream):
            out = fn(*static)
    except RuntimeError as exc:
        # When ending the capture fails, torch.cuda.graph leaves the capture stream current;
        # put the caller's stream back so that later work does not silently run on ours.
        torch.cuda.set_stream(caller_stream)
        raise CaptureError(
            f"fn could not be captured into a CUDA graph: {exc}. Remove host syncs (.item(), "
            "print of a GPU value, .cpu()), CPU tensors and data-dependent shapes from fn; "
            "graphlab.explain(error) says more.",
            cuda_error=first_cuda_error(exc),
        ) from exc
    torch.cuda.synchronize()
    return graph, out, (time.perf_counter_ns() - start) / 1e3


def event_time_us(step: Callable[[int], Any], iterations: int) -> float:
    """GPU time per iteration of ``step(0..iterations-1)``, between two CUDA events, in µs.

    The loop starts on an idle GPU and runs without a synchronize between iterations, as a real
    loop does; the events are read once the GPU has passed the end one. This is the steady-state
    clock of :func:`compare` (``eager_us``, ``replay_us``, ``first_replay_us``); ``step`` gets the
    iteration index. Needs a CUDA GPU.
    """
    import torch

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # Start on an idle GPU: queued earlier work would let the loop's launches hide behind it.
    torch.cuda.synchronize()
    start.record()
    for i in range(iterations):
        step(i)
    end.record()
    # elapsed_time is valid only once the GPU has reached the end event.
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / iterations


def host_time_us(step: Callable[[int], Any], iterations: int) -> float:
    """Host-clock time per iteration of ``step(0..iterations-1)``, in µs, from an idle GPU until
    all the loop's work has finished.

    The end-to-end clock of :func:`compare`: it counts everything the host pays (input copies,
    output clones, launches) as well as the GPU's work. ``step`` gets the iteration index. Needs a
    CUDA GPU.
    """
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter_ns()
    for i in range(iterations):
        step(i)
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - start) / 1e3 / iterations


def _time_loops(
    captured: Captured, fresh: list[tuple], repeats: int, iterations: int
) -> dict[str, list[float]]:
    """``repeats`` samples of µs per iteration of each of the four loops :func:`compare` times.

    "eager" and "replay" run on the static buffers and are timed on the GPU between CUDA events;
    "eager_e2e" and "replay_e2e" consume ``fresh`` inputs (the replay copying them in and cloning
    its outputs) and are timed end to end on the host clock.
    """
    import torch

    loops = {
        "eager": (event_time_us, captured.eager),
        "replay": (event_time_us, captured.replay),
        "eager_e2e": (host_time_us, lambda i: captured.fn(*fresh[i % FRESH_INPUT_SETS])),
        "replay_e2e": (
            host_time_us,
            lambda i: captured.replay_with(fresh[i % FRESH_INPUT_SETS]),
        ),
    }
    # Capture empties the allocator's cache (torch.cuda.graph does so on entry), so run every
    # loop body once, untimed, before the timed repeats.
    for _, step in loops.values():
        step(0)
    torch.cuda.synchronize()

    # Repeats interleave the four loops so that clock or thermal drift affects all of them alike.
    samples: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(repeats):
        for name, (clock, step) in loops.items():
            samples[name].append(clock(step, iterations))
    return samples


def _comparison(
    captured: Captured,
    first_replay_us: float,
    samples: dict[str, list[float]],
    repeats: int,
    iterations: int,
    timelines: dict[str, Timeline] | None,
) -> Comparison:
    """The :class:`Comparison` of :func:`_time_loops`' samples: medians, spreads, break-even."""
    eager_us, eager_p10, eager_p90 = spread(samples["eager"])
    replay_us, replay_p10, replay_p90 = spread(samples["replay"])
    eager_e2e_us = spread(samples["eager_e2e"])[0]
    replay_e2e_us = spread(samples["replay_e2e"])[0]
    return Comparison(
        capture_us=captured.capture_us,
        first_replay_us=first_replay_us,
        eager_us=eager_us,
        replay_us=replay_us,
        eager_end_to_end_us=eager_e2e_us,
        replay_end_to_end_us=replay_e2e_us,
        eager_spread_us=(eager_p10, eager_p90),
        replay_spread_us=(replay_p10, replay_p90),
        repeats=repeats,
        iterations=iterations,
        break_even=break_even(captured.capture_us, eager_e2e_us, replay_e2e_us),
        timelines=timelines,
    )


def _eager_totals(fn: Callable[..., Any], fresh: list[tuple], counts: tuple[int, ...]) -> list:
    """Cumulative host-clock µs of eager iterations, read at each of ``counts``."""
    import torch

    # One untimed call on this stream, so the allocator already holds its blocks here.
    fn(*fresh[0])
    torch.cuda.synchronize()
    totals: list[float] = []
    start = time.perf_counter_ns()
    for i in range(1, counts[-1] + 1):
        fn(*fresh[i % FRESH_INPUT_SETS])
        if i == counts[len(totals)]:
            torch.cuda.synchronize()
            totals.append((time.perf_counter_ns() - start) / 1e3)
    return totals


def _graph_totals(
    fn: Callable[..., Any],
    static: tuple,
    fresh: list[tuple],
    stream: torch.cuda.Stream,
    counts: tuple[int, ...],
) -> list:
    """Cumulative host-clock µs of capture + replays (with input copies and output clones)."""
    import torch

    torch.cuda.synchronize()
    totals: list[float] = []
    start = time.perf_counter_ns()
    captured = Captured(fn, static, *_capture(fn, static, stream))
    for i in range(1, counts[-1] + 1):
        captured.replay_with(fresh[i % FRESH_INPUT_SETS])
        if i == counts[len(totals)]:
            torch.cuda.synchronize()
            totals.append((time.perf_counter_ns() - start) / 1e3)
    return totals


def profiled_timeline(step: Callable[[int], Any], iterations: int) -> Timeline:
    """A Timeline of ``iterations`` back-to-back calls of ``step(i)`` under torch.profiler.

    The calls run as in the timed loops: no synchronize between them, one at the end, so the
    timeline shows the same gaps the timings measured. A profiler schedule first runs the same
    loop once and discards it, so the profiler is fully started before the loop that is kept.
    Never time from it: the profiler slows the host's launches down. Needs a CUDA GPU.
    """
    import torch
    from torch.profiler import ProfilerActivity, schedule
    from torch.profiler import profile as profiler

    from graphlab.trace.timeline import Timeline

    plan = schedule(wait=0, warmup=1, active=1, repeat=1)
    torch.cuda.synchronize()
    with warnings.catch_warnings():
        # The schedule discards the warm-up cycle on purpose; the profiler warns that it does.
        warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)
        with profiler(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=plan
        ) as prof:
            for _ in range(2):
                for i in range(iterations):
                    step(i)
                torch.cuda.synchronize()
                prof.step()
    return Timeline.from_chrome_trace(prof)
