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

The parts have rooms of their own: capturing a step and the checks before it in
:mod:`graphlab.timing.captured`, the two clocks in :mod:`graphlab.timing.clocks`, the measured
cumulative totals in :mod:`graphlab.timing.cumulative`, the profiled timelines in
:mod:`graphlab.timing.profiled`. Both functions need a CUDA GPU. Elsewhere they raise
:class:`~graphlab.errors.NeedsGPUError` pointing at the recordings made on a real GPU
(``graphlab recordings``, ``graphlab.recording``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .break_even import break_even
from .captured import FRESH_INPUT_SETS, Captured, capture, check_count, require_gpu
from .clocks import event_time_us, host_time_us, spread
from .profiled import profile_timelines
from .results import Comparison

if TYPE_CHECKING:
    import torch

    from graphlab.trace.timeline import Timeline

__all__ = ["compare"]


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
        check_count(what, value)
    require_gpu("graphlab.compare")
    captured = capture(fn, *inputs, warmup=warmup)
    fresh = [tuple(x.clone() for x in inputs) for _ in range(FRESH_INPUT_SETS)]
    first_replay_us = event_time_us(captured.replay, 1)
    samples = _time_loops(captured, fresh, repeats, iterations)
    timelines = profile_timelines(captured, profile_iterations) if profile else None
    return _comparison(captured, first_replay_us, samples, repeats, iterations, timelines)


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
