"""What a chain recording shows, reduced to the numbers the simulator's calibration needs.

A chain recording (``graphlab record``: N elementwise kernels in a row) holds unprofiled timings
and a profiled timeline of each mode. :func:`observe` keeps its timings and measures, in the
timelines, the device gaps the simulator models (all in ns):

- :func:`node_gaps`: a kernel's end to the next kernel's start within one replay;
- :func:`queued_gaps`: the same for eager kernels launched before the previous one ended;
- :func:`idle_launch_latencies`: launch-call end to kernel start, when the stream was idle;
- :func:`sync_costs`: what a synchronize call cost beyond waiting for the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphlab.errors import SimulatorError
from graphlab.language import gettext as _

__all__ = [
    "ChainObservation",
    "idle_launch_latencies",
    "node_gaps",
    "observe",
    "queued_gaps",
    "sync_costs",
]


@dataclass(frozen=True)
class ChainObservation:
    """What one chain recording says, reduced to what the fit and the check need.

    Timings in µs; samples from the profiled timelines in ns.
    """

    name: str
    kernels: int
    numel: int
    iterations: int
    eager_us: float
    replay_us: float
    replay_end_to_end_us: float
    capture_us: float
    kernel_us: float
    node_gaps_ns: np.ndarray
    queued_gaps_ns: np.ndarray
    launch_latencies_ns: np.ndarray
    sync_costs_ns: np.ndarray
    meta: dict


def _kernels(t):
    k = t.kind == "kernel"
    return t.start_ns[k], t.end_ns[k], t.correlation[k], t.stream[k]


def node_gaps(t) -> np.ndarray:
    """Kernel end to next kernel start (ns), within one replay (same correlation) and stream."""
    start, end, corr, stream = _kernels(t)
    order = np.lexsort((start, stream, corr))
    start, end, corr, stream = start[order], end[order], corr[order], stream[order]
    same = (corr[1:] == corr[:-1]) & (stream[1:] == stream[:-1]) & (corr[1:] >= 0)
    return (start[1:] - end[:-1])[same]


def _eager_kernels(t):
    """Eager kernels in start order with, for each, its launch call's end (-1 if not found),
    and whether it found its stream idle (its launch ended after the previous kernel ended)."""
    start, end, corr, stream = _kernels(t)
    order = np.lexsort((start, stream))
    start, end, corr, stream = start[order], end[order], corr[order], stream[order]
    launch = (t.kind == "launch") & (t.correlation >= 0)
    ends = dict(zip(t.correlation[launch].tolist(), t.end_ns[launch].tolist(), strict=True))
    launch_end = np.array([ends.get(c, -1) for c in corr.tolist()], dtype=np.int64)
    first_on_stream = np.r_[True, stream[1:] != stream[:-1]]
    previous_end = np.r_[np.iinfo(np.int64).min, end[:-1]]
    idle = first_on_stream | (launch_end >= previous_end)
    return start, previous_end, launch_end, idle & (launch_end >= 0), ~idle & ~first_on_stream


def idle_launch_latencies(t) -> np.ndarray:
    """Launch-call end to kernel start (ns), for eager kernels that found their stream idle."""
    start, _, launch_end, idle, _ = _eager_kernels(t)
    return (start - launch_end)[idle]


def queued_gaps(t) -> np.ndarray:
    """Previous kernel's end to kernel start (ns), for eager kernels that were already queued."""
    start, previous_end, _, _, queued = _eager_kernels(t)
    return (start - previous_end)[queued]


def sync_costs(t) -> np.ndarray:
    """What each synchronize call cost beyond waiting (ns): from the later of its start and the
    end of the GPU work before it, to its return."""
    _, end, _, _ = _kernels(t)
    sync = t.kind == "sync"
    costs = []
    for s_start, s_end in zip(t.start_ns[sync].tolist(), t.end_ns[sync].tolist(), strict=True):
        before = end[end <= s_end]
        gpu_done = int(before.max()) if len(before) else s_start
        costs.append(s_end - max(s_start, gpu_done))
    return np.asarray(costs, dtype=np.int64)


def observe(recording) -> ChainObservation:
    """Reduce a chain :class:`graphlab.timing.recordings.Recording` to what the fit uses."""
    if recording.experiment.get("kind") != "chain":
        raise SimulatorError(
            _("recording {name!r} is not a chain recording").format(name=recording.name)
        )
    eager_t, graph_t = recording.timeline("eager"), recording.timeline("graph")
    timings = recording.timings
    return ChainObservation(
        name=recording.name,
        kernels=int(recording.experiment["kernels"]),
        numel=int(recording.experiment["numel"]),
        iterations=int(timings["iterations"]),
        eager_us=float(timings["eager_us"]),
        replay_us=float(timings["replay_us"]),
        replay_end_to_end_us=float(timings["replay_end_to_end_us"]),
        capture_us=float(timings["capture_us"]),
        kernel_us=float(np.median(eager_t.dur_ns[eager_t.kind == "kernel"])) / 1000,
        node_gaps_ns=node_gaps(graph_t),
        queued_gaps_ns=queued_gaps(eager_t),
        launch_latencies_ns=idle_launch_latencies(eager_t),
        sync_costs_ns=np.r_[sync_costs(eager_t), sync_costs(graph_t)],
        meta=dict(recording.meta),
    )
