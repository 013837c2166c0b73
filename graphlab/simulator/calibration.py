"""Fit the simulator's parameters to real GPU recordings, and check the fit.

Input: the ``chain`` recordings made by ``graphlab record`` (N elementwise kernels in a row, at
three tensor sizes). Each holds timings measured without the profiler (``eager_us`` and
``replay_us``: GPU time per iteration between two CUDA events around a loop of ``iterations``
calls, started on an idle GPU) and a profiled timeline of each mode. Output: a
:class:`~graphlab.simulator.params.SimParams` and the provenance of every number.

How each number is found (every step is a median, so one odd recording cannot drag it):

- **kernel durations**: not parameters. Each recording is simulated with the median kernel
  duration of its own profiled timeline (the profiler slows the host, not the kernels).
- **node_gap_us**: measured directly: in the profiled replays, the time from one kernel's end to
  the next kernel's start within the same replay; the median over every chain recording.
- **launch_latency_us**: measured directly: in the profiled eager runs, launch-call end to kernel
  start, for kernels that found the GPU idle (nothing but the latency delayed them).
- **sync_us**: measured directly: how long each synchronize call in the profiled timelines took
  beyond waiting for the GPU (from the later of its start and the GPU's last kernel end).
- **host_us**: from the *unprofiled* eager timings. The model gives an event-timed loop of R
  iterations of an N-kernel chain with kernels of d µs a time per iteration of
  ``max(N*R*h + d, h + N*R*d) / R``. Where the loop is host-bound (the first term wins), that
  solves to ``h = (eager_us * R - d) / (N * R)``; each host-bound recording gives one such h and
  the fit is their median. GPU-bound recordings say nothing about h and are left out.
- **graph_launch_us**: the same for replays. R replays of the N-node chain with node gap g give
  ``max(R*G + N*(d+g) - g, G + R*N*(d+g) - g) / R``; host-bound recordings solve to
  ``G = (replay_us * R - N*(d+g) + g) / R``; the fit is their median. If no recording's replays
  are host-bound, G cannot be told from the timings: the fit then uses the median duration of the
  profiled ``cudaGraphLaunch`` calls, and the provenance says so.
- **capture**: least-squares line ``capture_us = base + N * per_kernel`` through the measured
  capture times (numpy.polyfit, degree 1).

The check (:func:`check`) simulates every recording's timed loop with the fitted parameters,
through the simulator itself rather than the formulas above, and reports measured vs simulated
per-iteration times and the relative error.

Run ``python -m graphlab.simulator.calibration`` to print the fit and the table from the bundled
recordings; add ``--write`` to store the parameters in ``calibrated_h200.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SimulatorError
from .model import schedule
from .params import CALIBRATED_PATH, SimParams
from .workloads import chain, eager, graph

__all__ = [
    "SCHEMA",
    "ChainObservation",
    "CheckRow",
    "Fit",
    "check",
    "fit",
    "format_table",
    "idle_launch_latencies",
    "node_gaps",
    "observe",
    "sync_costs",
    "timed_loop_us",
]

SCHEMA = "graphlab.simulator.calibration/1"


@dataclass(frozen=True)
class ChainObservation:
    """What one chain recording says, reduced to what the fit and the check need (µs)."""

    name: str
    kernels: int
    numel: int
    iterations: int
    eager_us: float
    replay_us: float
    capture_us: float
    eager_kernel_us: float
    graph_kernel_us: float
    node_gaps_ns: np.ndarray
    launch_latencies_ns: np.ndarray
    sync_costs_ns: np.ndarray
    graph_launch_calls_ns: np.ndarray
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


def idle_launch_latencies(t) -> np.ndarray:
    """Launch-call end to kernel start (ns), for work that found its stream idle.

    Only the first kernel of each launch counts (for a replay, its first node), and only when
    the stream had finished its previous kernel: then nothing but the latency delayed it.
    """
    start, end, corr, stream = _kernels(t)
    order = np.lexsort((start, stream))
    start, end, corr, stream = start[order], end[order], corr[order], stream[order]
    first_on_stream = np.r_[True, stream[1:] != stream[:-1]]
    found_idle = first_on_stream | np.r_[True, start[1:] > end[:-1]]
    _, first_of_launch = np.unique(corr, return_index=True)
    picked = np.zeros(len(start), dtype=bool)
    picked[first_of_launch] = True
    picked &= found_idle & (corr >= 0)
    launch = (t.kind == "launch") & (t.correlation >= 0)
    launch_end = dict(zip(t.correlation[launch].tolist(), t.end_ns[launch].tolist(), strict=True))
    pairs = zip(start[picked].tolist(), corr[picked].tolist(), strict=True)
    return np.asarray([s - launch_end[c] for s, c in pairs if c in launch_end], dtype=np.int64)


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
    """Reduce a chain :class:`graphlab.recordings.Recording` to what the fit uses."""
    if recording.experiment.get("kind") != "chain":
        raise SimulatorError(f"recording {recording.name!r} is not a chain recording")
    eager_t, graph_t = recording.timeline("eager"), recording.timeline("graph")
    timings = recording.timings
    graph_calls = (graph_t.kind == "launch") & (graph_t.name == "cudaGraphLaunch")
    return ChainObservation(
        name=recording.name,
        kernels=int(recording.experiment["kernels"]),
        numel=int(recording.experiment["numel"]),
        iterations=int(timings["iterations"]),
        eager_us=float(timings["eager_us"]),
        replay_us=float(timings["replay_us"]),
        capture_us=float(timings["capture_us"]),
        eager_kernel_us=float(np.median(eager_t.dur_ns[eager_t.kind == "kernel"])) / 1000,
        graph_kernel_us=float(np.median(graph_t.dur_ns[graph_t.kind == "kernel"])) / 1000,
        node_gaps_ns=node_gaps(graph_t),
        launch_latencies_ns=idle_launch_latencies(eager_t),
        sync_costs_ns=np.r_[sync_costs(eager_t), sync_costs(graph_t)],
        graph_launch_calls_ns=graph_t.dur_ns[graph_calls],
        meta=dict(recording.meta),
    )


def timed_loop_us(mode: str, kernels: int, kernel_us: float, params: SimParams, iterations: int):
    """Simulated GPU time per iteration of ``iterations`` back-to-back calls, event-timed.

    Mirrors how ``graphlab.compare`` times a loop: from an idle GPU, a start event, the loop, an
    end event. The start event reaches the GPU one launch latency after the host starts the loop;
    the end event passes once the loop's last kernel has finished.
    """
    step = chain(kernels, kernel_us)
    build = eager if mode == "eager" else graph
    program = build(step, params, **{"iterations" if mode == "eager" else "replays": iterations})
    s = schedule(program)
    return (int(s.item_end_ns.max()) - program.launch_latency_ns) / 1000 / iterations


@dataclass(frozen=True)
class Fit:
    """Fitted parameters and how each was found (``method``), with the samples behind them."""

    params: SimParams
    method: dict[str, str]
    samples: dict[str, list[float]]


def _median_us(values_ns: Iterable[np.ndarray], what: str) -> float:
    values = np.concatenate([np.asarray(v, dtype=np.float64) for v in values_ns])
    if not len(values):
        raise SimulatorError(f"the recordings hold no samples of {what}: cannot calibrate it")
    return float(np.median(values)) / 1000


def fit(observations: Sequence[ChainObservation]) -> Fit:
    """Fit the parameters to chain observations (see the module docstring for each step)."""
    if not observations:
        raise SimulatorError(
            "no chain recordings to calibrate from: record them on a GPU with `graphlab record`"
        )
    gap = _median_us((o.node_gaps_ns for o in observations), "in-replay node gaps")
    latency = _median_us((o.launch_latencies_ns for o in observations), "launch latency")
    sync = _median_us((o.sync_costs_ns for o in observations), "synchronize calls")

    hosts = {}
    for o in observations:
        n, r, d = o.kernels, o.iterations, o.eager_kernel_us
        h = (o.eager_us * r - d) / (n * r)
        if h > d:  # host-bound: the solution is consistent with the branch it came from
            hosts[o.name] = h
    if not hosts:
        raise SimulatorError("no recording's eager loop is host-bound: cannot fit host_us")
    host = float(np.median(list(hosts.values())))

    launches = {}
    for o in observations:
        n, r, busy = o.kernels, o.iterations, o.kernels * (o.graph_kernel_us + gap)
        g = (o.replay_us * r - busy + gap) / r
        if g > busy:
            launches[o.name] = g
    if launches:
        graph_launch = float(np.median(list(launches.values())))
        graph_method = (
            "median over recordings with host-bound replays of "
            "(replay_us*R - N*(d+g) + g)/R: " + ", ".join(sorted(launches))
        )
    else:
        graph_launch = _median_us((o.graph_launch_calls_ns for o in observations), "launches")
        graph_method = (
            "no recording's replays are host-bound, so the timings cannot show it: median "
            "duration of the profiled cudaGraphLaunch calls (an estimate, not a fit)"
        )

    kernels = np.array([o.kernels for o in observations], dtype=np.float64)
    captures = np.array([o.capture_us for o in observations], dtype=np.float64)
    if len(set(kernels.tolist())) >= 2:
        per_kernel, base = np.polyfit(kernels, captures, 1)
        capture = {
            "capture_base_us": max(float(base), 0.0),
            "capture_per_kernel_us": max(float(per_kernel), 0.0),
        }
    else:
        capture = {}
    params = SimParams(
        host_us=host,
        launch_latency_us=max(latency, 0.0),
        graph_launch_us=graph_launch,
        node_gap_us=max(gap, 0.0),
        sync_us=max(sync, 0.0),
        **capture,
    )
    method = {
        "host_us": "median over host-bound eager recordings of (eager_us*R - d)/(N*R): "
        + ", ".join(sorted(hosts)),
        "graph_launch_us": graph_method,
        "node_gap_us": "median in-replay gap (kernel end to next kernel start) in the profiled "
        "graph timelines",
        "launch_latency_us": "median launch-call end to kernel start, for kernels that found "
        "the GPU idle, in the profiled eager timelines",
        "sync_us": "median time a synchronize call took beyond waiting for the GPU (from the later "
        "of its start and the GPU's last kernel end, to its return), in the profiled timelines",
        "capture": "least-squares line capture_us = base + N*per_kernel over the measured "
        "capture times (negative coefficients clipped to 0)",
        "kernel durations": "each recording simulated with the median kernel duration of its own "
        "profiled timeline",
    }
    samples = {
        "host_us": [hosts[k] for k in sorted(hosts)],
        "graph_launch_us": [launches[k] for k in sorted(launches)],
    }
    return Fit(params, method, samples)


@dataclass(frozen=True)
class CheckRow:
    """Measured vs simulated per-iteration times of one recording (µs), and relative errors."""

    name: str
    kernels: int
    numel: int
    eager_measured_us: float
    eager_simulated_us: float
    replay_measured_us: float
    replay_simulated_us: float

    @property
    def eager_error(self) -> float:
        return self.eager_simulated_us / self.eager_measured_us - 1

    @property
    def replay_error(self) -> float:
        return self.replay_simulated_us / self.replay_measured_us - 1

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "eager_error": self.eager_error, "replay_error": self.replay_error}


def check(observations: Sequence[ChainObservation], params: SimParams) -> list[CheckRow]:
    """Simulate every recording's timed loops with ``params``; compare with the measurements."""
    return [
        CheckRow(
            name=o.name,
            kernels=o.kernels,
            numel=o.numel,
            eager_measured_us=o.eager_us,
            eager_simulated_us=timed_loop_us(
                "eager", o.kernels, o.eager_kernel_us, params, o.iterations
            ),
            replay_measured_us=o.replay_us,
            replay_simulated_us=timed_loop_us(
                "graph", o.kernels, o.graph_kernel_us, params, o.iterations
            ),
        )
        for o in observations
    ]


def format_table(rows: Sequence[CheckRow]) -> str:
    """The check as a Markdown table: per recording, measured vs simulated, and the error."""
    lines = [
        "| recording | N | elements | eager measured µs | eager simulated µs | error "
        "| replay measured µs | replay simulated µs | error |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.kernels} | {r.numel:,} | {r.eager_measured_us:,.1f} | "
            f"{r.eager_simulated_us:,.1f} | {r.eager_error:+.1%} | {r.replay_measured_us:,.1f} | "
            f"{r.replay_simulated_us:,.1f} | {r.replay_error:+.1%} |"
        )
    return "\n".join(lines)


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
        "command": "python -m graphlab.simulator.calibration --write",
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
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=2) + "\n")
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Print the fit and the check table; with ``--write``, store the fit. Exit 2 on bad input."""
    from ..errors import GraphlabError
    from ..recordings import list_recordings

    parser = argparse.ArgumentParser(
        prog="python -m graphlab.simulator.calibration",
        description="Fit the simulator to the chain recordings and print the check table.",
    )
    parser.add_argument(
        "--recordings", metavar="DIR", help="folder of recordings (default: bundled)"
    )
    parser.add_argument("--write", action="store_true", help="store the fit (see --out)")
    parser.add_argument(
        "--out", metavar="PATH", help=f"where to store it (default: {CALIBRATED_PATH})"
    )
    args = parser.parse_args(argv)
    try:
        result, rows, prov = calibrate(list_recordings(args.recordings))
        path = write(Path(args.out or CALIBRATED_PATH), result, rows, prov) if args.write else None
    except (GraphlabError, OSError) as exc:
        print(f"calibration: {exc}", file=sys.stderr)
        return 2
    print(f"fitted to {len(rows)} chain recordings of {prov['gpu']}, recorded {prov['recorded']}")
    for name, value in result.params.to_dict().items():
        print(f"  {name:<22} {value:.4f}")
    print()
    print(format_table(rows))
    if path is not None:
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
