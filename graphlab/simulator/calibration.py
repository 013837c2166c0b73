"""Fit the simulator's parameters to real GPU recordings, and check the fit.

Input: the ``chain`` recordings made by ``graphlab record`` (N elementwise kernels in a row, at
three tensor sizes). Each holds timings measured without the profiler (``eager_us`` and
``replay_us``: GPU time per iteration between two CUDA events around a loop of ``iterations``
calls, started on an idle GPU) and a profiled timeline of each mode. Output: a
:class:`~graphlab.simulator.params.SimParams` and the provenance of every number.

Device gaps are measured in the profiled timelines (the profiler slows the host, far less the
GPU); host costs are fitted to the unprofiled timings. How each number is found:

- **kernel durations**: not parameters. Each recording is simulated with the median kernel
  duration of its own profiled *eager* timeline, in both modes. (The same kernels read about
  0.1 µs longer in profiled replays; the unprofiled replay timings do not show that.)
- **node_gap_us**: median, over every chain recording, of the time from one kernel's end to the
  next kernel's start within the same profiled replay.
- **kernel_gap_us**: the same for eager kernels that were already queued (launched before the
  previous kernel ended), in the profiled eager timelines.
- **launch_latency_us**: median launch-call end to kernel start, for eager launches that found
  their stream idle (the previous kernel had ended before the call returned).
- **sync_us**: median time a synchronize call in the profiled timelines took beyond waiting for
  the GPU (from the later of its start and the GPU's last kernel end, to its return).
- **host_us**: an eager loop counts as host-bound when its measured time exceeds the GPU work
  its timelines show (N kernels and the gaps between them) by more than ``HOST_BOUND_MARGIN``
  (10%); closer than that, the GPU may be what sets the pace, and the loop says nothing about
  the host. For each host-bound eager loop (R iterations of N kernels of d µs, event-timed),
  the host cost h_r at which the *simulated* loop takes the measured time, found by bisection
  (about ``(eager_us*R - d) / (N*R)``). The fit is the h with the least squared relative error
  over those loops, ``h/h_r - 1``: ``h = sum(1/h_r) / sum(1/h_r**2)``.
- **graph_launch_us**: every recorded replay loop is GPU-bound (a replay costs the host less
  than the GPU), so those timings cannot show G. The end-to-end replay loop shows it better: per
  iteration it copies the input in, replays and clones the output, about ``2*h + G`` of host
  time. For each such loop, the G at which the simulated loop (with the fitted h) takes the
  measured time: where the host sets the pace that is G itself; where the GPU does, only an
  upper bound. The fit is the smallest, the largest G that every loop allows. It assumes the
  copy and the clone cost the host one eager op each, like ``x + 1.0``.
- **replay_gap_us**: the replay loops' measured times are a little longer than their nodes and
  node gaps, by a roughly fixed amount per replay. Each simulated loop is ``A + c*X`` in the
  replay gap X (A and c from simulating with X = 0 and 1 µs); the fit is the least-squares X for
  the relative error, ``sum(c*(P - A)/P**2) / sum(c**2/P**2)`` (P measured).
- **capture**: a line ``capture_us = base + N * per_kernel`` through the measured capture times,
  fitted robustly (Theil-Sen: the slope is the median of the slopes between every two recordings
  with different N, the base the median of ``capture_us - slope * N``), because the first
  capture in a process also pays one-off initialisation.

The check (:func:`check`) simulates every recording's timed loops with the fitted parameters,
through the simulator itself rather than the formulas above, and reports measured vs simulated
per-iteration times (eager, replay, and the end-to-end replay loop) and the relative errors.

The observations come from :mod:`.observations`, the simulated loops from :mod:`.timed_loops`,
the check from :mod:`.calibration_check`. ``graphlab calibrate`` prints the fit and the table from
the bundled recordings (or ``--recordings DIR``); ``--write`` stores the parameters in
``calibrated_h200.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.errors import SimulatorError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.support.atomic import write_text_atomically

from .calibration_check import CheckRow, check
from .observations import ChainObservation, observe
from .params import SimParams
from .timed_loops import end_to_end_replay_us, timed_loop_us

__all__ = ["HOST_BOUND_MARGIN", "SCHEMA", "Fit", "calibrate", "fit", "provenance", "write"]

SCHEMA = "graphlab.simulator.calibration/1"

# How far an eager loop's measured time must exceed its GPU work to count as host-bound.
HOST_BOUND_MARGIN = 1.1


@dataclass(frozen=True)
class Fit:
    """Fitted parameters, how each was found (``method``), and the per-recording values behind
    the host costs (``samples``: recording name -> µs)."""

    params: SimParams
    method: dict[str, str]
    samples: dict[str, dict[str, float]]


def _median_us(values_ns: Iterable[np.ndarray], what: str) -> float:
    values = np.concatenate([np.asarray(v, dtype=np.float64) for v in values_ns])
    if not len(values):
        raise SimulatorError(
            _("the recordings hold no samples of {what}: cannot calibrate it").format(what=_(what))
        )
    return float(np.median(values)) / 1000


def _theil_sen(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Robust line ``y = base + slope * x``: median pairwise slope, then median intercept."""
    i, j = np.triu_indices(len(x), k=1)
    different = x[i] != x[j]
    slope = float(np.median((y[j] - y[i])[different] / (x[j] - x[i])[different]))
    return float(np.median(y - slope * x)), slope


def _solve(simulated, target_us: float) -> float:
    """The least x >= 0 (µs) at which ``simulated(x)`` (non-decreasing) reaches ``target_us``.

    Bisection down to the nanosecond the simulator works in; 0 if even x = 0 simulates longer.
    """
    if simulated(0.0) >= target_us:
        return 0.0
    low, high = 0, int(np.ceil(target_us * 1000))  # whole nanoseconds
    while simulated(high / 1000) < target_us:
        high *= 2
    while high - low > 1:
        middle = (low + high) // 2
        if simulated(middle / 1000) < target_us:
            low = middle
        else:
            high = middle
    return high / 1000


def _fit_replay_gap(observations: Sequence[ChainObservation], params: SimParams) -> float:
    """The replay gap X minimising the squared relative errors of the simulated replay loops.

    Each loop's simulated time is ``A + c*X`` (A: simulated with X = 0; c: its change for
    X = 1 µs, about (R-1)/R when the loop is GPU-bound, 0 when the host sets the pace), so the
    least-squares X is ``sum(c*(P - A)/P^2) / sum(c^2/P^2)`` with P the measured time.
    """
    numerator = denominator = 0.0
    for o in observations:
        args = (o.kernels, o.kernel_us)
        a = timed_loop_us("graph", *args, params, o.iterations)
        c = timed_loop_us("graph", *args, params.replace(replay_gap_us=1.0), o.iterations) - a
        numerator += c * (o.replay_us - a) / o.replay_us**2
        denominator += c * c / o.replay_us**2
    return max(numerator / denominator, 0.0) if denominator else 0.0


def fit(observations: Sequence[ChainObservation]) -> Fit:
    """Fit the parameters to chain observations (see the module docstring for each step)."""
    if not observations:
        raise SimulatorError(
            _("no chain recordings to calibrate from: record them on a GPU with `graphlab record`")
        )
    from_timelines, kernel_gap = _fit_device_costs(observations)
    hosts = _host_costs(observations, from_timelines, kernel_gap)
    # The h with the least squared relative error h/h_r - 1 over the loops.
    inverse = 1 / np.array(list(hosts.values()))
    params = from_timelines.replace(host_us=float(inverse.sum() / (inverse**2).sum()))
    launches = _graph_launch_costs(observations, params)
    tightest = min(launches, key=launches.get)
    params = params.replace(graph_launch_us=launches[tightest])
    params = params.replace(
        replay_gap_us=_fit_replay_gap(observations, params), **_fit_capture(observations)
    )
    samples = {"host_us": hosts, "graph_launch_us": launches}
    return Fit(params, _method(hosts, tightest), samples)


def _fit_device_costs(observations: Sequence[ChainObservation]) -> tuple[SimParams, float]:
    """Parameters read off the profiled timelines (medians; the host costs left at 0), and the
    median queued-kernel gap itself, before it is clipped at 0."""
    node_gap = _median_us((o.node_gaps_ns for o in observations), N_("in-replay node gaps"))
    kernel_gap = _median_us(
        (o.queued_gaps_ns for o in observations), N_("queued eager kernel gaps")
    )
    latency = _median_us((o.launch_latencies_ns for o in observations), N_("launch latency"))
    sync = _median_us((o.sync_costs_ns for o in observations), N_("synchronize calls"))
    from_timelines = SimParams(
        host_us=0.0,
        launch_latency_us=max(latency, 0.0),
        graph_launch_us=0.0,
        node_gap_us=max(node_gap, 0.0),
        sync_us=max(sync, 0.0),
        kernel_gap_us=max(kernel_gap, 0.0),
    )
    return from_timelines, kernel_gap


def _host_costs(
    observations: Sequence[ChainObservation], from_timelines: SimParams, kernel_gap: float
) -> dict[str, float]:
    """For each host-bound eager loop, the host cost h_r at which the simulated loop takes the
    measured time (recording name -> µs)."""
    # A loop counts as host-bound only when its measured time clearly exceeds the GPU work the
    # timelines show; closer than HOST_BOUND_MARGIN, the GPU may be what sets its pace.
    hosts = {}
    for o in observations:
        if o.eager_us > HOST_BOUND_MARGIN * o.kernels * (o.kernel_us + kernel_gap):
            hosts[o.name] = _solve(
                lambda h, o=o: timed_loop_us(
                    "eager", o.kernels, o.kernel_us, from_timelines.replace(host_us=h), o.iterations
                ),
                o.eager_us,
            )
    if not hosts:
        raise SimulatorError(_("no recording's eager loop is host-bound: cannot fit host_us"))
    return hosts


def _graph_launch_costs(
    observations: Sequence[ChainObservation], params: SimParams
) -> dict[str, float]:
    """For each end-to-end replay loop, the graph launch cost G at which the simulated loop (with
    ``params``' host cost) takes the measured time (recording name -> µs).

    A loop the GPU paces bounds G only loosely; the fit is the smallest, the largest value every
    loop allows.
    """
    launches = {}
    for o in observations:

        def end_to_end(g, o=o):
            with_g = params.replace(graph_launch_us=g)
            return end_to_end_replay_us(o.kernels, o.kernel_us, with_g, o.iterations)

        if end_to_end(0.0) < o.replay_end_to_end_us:
            launches[o.name] = _solve(end_to_end, o.replay_end_to_end_us)
    if not launches:
        raise SimulatorError(
            _(
                "every end-to-end replay loop is already longer in the simulator without any "
                "graph launch cost: cannot fit graph_launch_us"
            )
        )
    return launches


def _fit_capture(observations: Sequence[ChainObservation]) -> dict[str, float]:
    """``capture_base_us`` and ``capture_per_kernel_us`` (Theil-Sen, clipped at 0), or nothing
    when every recording has the same number of kernels."""
    kernels = np.array([o.kernels for o in observations], dtype=np.float64)
    if len(set(kernels.tolist())) < 2:
        return {}
    captures = np.array([o.capture_us for o in observations], dtype=np.float64)
    base, per_kernel = _theil_sen(kernels, captures)
    return {"capture_base_us": max(base, 0.0), "capture_per_kernel_us": max(per_kernel, 0.0)}


def _method(hosts: dict[str, float], tightest: str) -> dict[str, str]:
    """How each number was found, for the provenance: ``hosts`` are the host-bound loops that
    set host_us, ``tightest`` the loop that set graph_launch_us."""
    return {
        "host_us": "least squares of the relative error over the host-bound eager loops, "
        "h = sum(1/h_r)/sum(1/h_r^2), h_r the host cost at which the simulated loop takes the "
        "measured time: " + ", ".join(sorted(hosts)),
        "graph_launch_us": "the largest graph launch cost every end-to-end replay loop allows: "
        "the smallest, over the loops, of the cost at which the simulated loop takes the "
        f"measured time (set by {tightest})",
        "node_gap_us": "median in-replay gap (kernel end to next kernel start), profiled replays",
        "kernel_gap_us": "median gap before eager kernels that were already queued, profiled "
        "eager timelines",
        "replay_gap_us": "least squares of the relative error of the simulated replay loops "
        "(the replay gap enters them linearly; slope from simulating with 0 and 1 µs)",
        "host-bound": f"an eager loop counts as host-bound when its measured time exceeds "
        f"{HOST_BOUND_MARGIN:g} x the GPU work its timelines show",
        "launch_latency_us": "median launch-call end to kernel start for eager launches that "
        "found their stream idle, profiled eager timelines",
        "sync_us": "median time a synchronize call took beyond waiting for the GPU, profiled "
        "timelines",
        "capture": "Theil-Sen line capture_us = base + N*per_kernel over the measured capture "
        "times (negative coefficients clipped to 0)",
        "kernel durations": "each recording simulated with the median kernel duration of its own "
        "profiled eager timeline, in both modes",
    }


def provenance(observations: Sequence[ChainObservation], result: Fit) -> dict[str, Any]:
    """Where the fitted numbers came from: recordings, their machine and dates, the method."""

    def distinct(key: str) -> str:
        return " / ".join(sorted({str(o.meta.get(key)) for o in observations}))

    return {
        "recordings": [o.name for o in observations],
        "gpu": distinct("gpu"),
        "driver": distinct("driver"),
        "torch": distinct("torch"),
        "cuda": distinct("cuda"),
        "recorded": sorted({str(o.meta.get("date")) for o in observations}),
        "method": result.method,
        "command": "graphlab calibrate --write",
    }


def calibrate(recordings: Sequence) -> tuple[Fit, list[CheckRow], dict[str, Any]]:
    """Fit to the chain recordings among ``recordings``; return the fit, the check, provenance."""
    observations = [observe(r) for r in recordings if r.experiment.get("kind") == "chain"]
    result = fit(observations)
    return result, check(observations, result.params), provenance(observations, result)


def write(path: Path, result: Fit, rows: Sequence[CheckRow], prov: dict[str, Any]) -> Path:
    """Store the parameters, their provenance and the check table as JSON, atomically."""
    data = {
        "schema": SCHEMA,
        "params": result.params.to_dict(),
        "provenance": prov,
        "check": [r.to_dict() for r in rows],
    }
    return write_text_atomically(path, json.dumps(data, indent=2) + "\n", SimulatorError)
