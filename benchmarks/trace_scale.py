"""How fast, and in how much memory, ``graphlab gaps --json`` reads large Kineto traces.

Run ``python benchmarks/trace_scale.py [--kernels 10000 100000 1000000] [--dir DIR]``. For each
size it writes a synthetic Kineto trace, then runs, each in a fresh process, Python's own
``json.load`` of the file and ``graphlab gaps FILE --json``, and prints a table: the wall time of
each process (best of ``--repeats``, the two taking turns) and their ratio; the seconds of each
one's own work, once Python and the modules it needs are loaded (graphlab's include numpy), and
their ratio; the peak resident memory of each; and graphlab's peak against the file's size, whole
and above what Python with graphlab's modules takes before any file is opened. The target: the gaps
run no slower than ``json.load``, in less than twice the file's size, exact to the nanosecond.
``--streams`` adds a row with one stream per kernel (the per-stream analysis), and ``--simulate N``
times ``graphlab simulate --kernels N --trace``.

The traces are SYNTHETIC, written here the way Kineto writes them: per kernel a ``cpu_op``, its
``cudaLaunchKernel`` (``cuda_runtime``), the kernel itself with Kineto's usual ``args`` and the two
``ac2g`` flow events; times are absolute microseconds with three decimals (about 5.4e12 µs, as on
a machine up for two months: 16 significant digits, which a double does not hold exactly). The
generator draws the integer nanoseconds first and works out the expected figures from them with a
plain loop, so every run also checks that graphlab read every nanosecond.

The files are deleted afterwards (``--keep`` keeps them); a million kernels is about 1.3 GB, so
the script first checks that the folder has room.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
KERNEL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
    "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
    "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
    ">, std::array<char*, 2ul>)"
)
BASE_NS = 5_368_438_494_500_103  # absolute start, ns: 5368438494500.103 µs
BYTES_PER_KERNEL = 1400  # about what one kernel's five events take in the file
HOST_PID = 426
CHUNK = 20_000  # kernels formatted at a time


@dataclass(frozen=True)
class Expected:
    """Figures of a synthetic trace, worked out from its integer nanoseconds by a plain loop."""

    kernels: int
    span_ns: int
    busy_ns: int
    gaps: int

    def check(self, figures: dict) -> bool:
        """Whether ``graphlab gaps --json`` reported exactly these figures."""
        return (
            figures["kernels"] == self.kernels
            and figures["kernel_launches"] == self.kernels
            and figures["span_us"] == self.span_ns / 1000
            and figures["busy_us"] == self.busy_ns / 1000
            and figures["idle_us"] == (self.span_ns - self.busy_ns) / 1000
            and figures["gaps"]["count"] == self.gaps
        )


def us(ns: int) -> str:
    """Integer ns as Kineto's microsecond text: three decimals, exactly."""
    return f"{ns // 1000}.{ns % 1000:03d}"


def write_trace(path: Path, kernels: int, streams: int = 1, seed: int = 0) -> Expected:
    """Write a synthetic eager-chain Kineto trace of ``kernels`` kernels on ``streams`` streams.

    Launch calls follow each other on one host thread; each kernel starts 1.5 µs after its
    launch returns or 0.3 µs after the previous kernel on its stream ends, whichever is later.
    """
    rng = np.random.default_rng(seed)
    launch_dur = rng.integers(4_000, 9_000, kernels)
    host_gap = rng.integers(1_000, 6_000, kernels)
    kernel_dur = rng.integers(800, 3_000, kernels)
    launch_start = BASE_NS + np.cumsum(launch_dur + host_gap) - (launch_dur + host_gap)
    launch_end = launch_start + launch_dur
    stream_end: dict[int, int] = {}
    intervals = []
    with path.open("w") as f:
        f.write(
            '{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": '
            '"Synthetic GPU", "totalGlobalMem": 150109880320, "numSms": 132}\n  ],\n'
            '  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1790857026000000000,\n'
            '  "traceEvents": [\n'
        )
        for first in range(0, kernels, CHUNK):
            events = []
            for i in range(first, min(first + CHUNK, kernels)):
                stream = 7 + i % streams
                start = max(int(launch_end[i]) + 1_500, stream_end.get(stream, 0) + 300)
                end = start + int(kernel_dur[i])
                stream_end[stream] = end
                intervals.append((start, end))
                events.append(_kernel_events(i, stream, start, end, launch_start, launch_dur))
            f.write((",\n" if first else "") + ",\n".join(events))
        f.write('\n  ],\n  "traceName": "synthetic.json"\n}\n')
    return _expected(intervals)


def _kernel_events(i, stream, start, end, launch_start, launch_dur) -> str:
    corr, ls, ld = 8 + 11 * i, int(launch_start[i]), int(launch_dur[i])
    return f"""  {{
    "ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": {HOST_PID}, "tid": {HOST_PID},
    "ts": {us(ls - 2_000)}, "dur": {us(ld + 3_000)},
    "args": {{"External id": {i + 1}, "Record function id": 0, "Ev Idx": {i}}}
  }},
  {{
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {HOST_PID},
    "tid": {HOST_PID}, "ts": {us(ls)}, "dur": {us(ld)},
    "args": {{"External id": {i + 1}, "cbid": 211, "correlation": {corr}}}
  }},
  {{"ph": "s", "id": {corr}, "pid": {HOST_PID}, "tid": {HOST_PID}, "ts": {us(ls)},
    "cat": "ac2g", "name": "ac2g"}},
  {{
    "ph": "X", "cat": "kernel", "name": "{KERNEL}", "pid": 0, "tid": {stream},
    "ts": {us(start)}, "dur": {us(end - start)},
    "args": {{"External id": {i + 1}, "queued": 0, "device": 0, "context": 1, "stream": {stream},
      "correlation": {corr}, "registers per thread": 32, "shared memory": 0,
      "blocks per SM": 0.030303, "warps per SM": 0.121212, "grid": [4, 1, 1],
      "block": [128, 1, 1], "est. achieved occupancy %": 0}}
  }},
  {{"ph": "f", "id": {corr}, "pid": 0, "tid": {stream}, "ts": {us(start)},
    "cat": "ac2g", "name": "ac2g", "bp": "e"}}"""


def _expected(intervals: list[tuple[int, int]]) -> Expected:
    """Busy time and gaps of the device by the textbook loop over intervals sorted by start."""
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    busy = sum(end - start for start, end in merged)
    return Expected(len(intervals), merged[-1][1] - merged[0][0], busy, len(merged) - 1)


# What each child runs. Each prints, on stderr, the seconds its own work took once Python and the
# modules it needs were loaded, and its peak resident memory; the parent times the whole process.
# The peak is the child's own VmHWM: the peak a parent reads for a child (ru_maxrss) starts from
# what the parent itself held when it forked, before the child became Python.
_REPORT = """
def report(start):
    status = open("/proc/self/status").read()
    peak = int(status.split("VmHWM:")[1].split()[0]) * 1024
    print(time.perf_counter() - start, peak, file=sys.stderr)
"""
JSON_LOAD = f"""
import json, sys, time
{_REPORT}
start = time.perf_counter()
with open(sys.argv[1]) as f:
    json.load(f)
report(start)
"""
BASE = f"""
import sys, time
{_REPORT}
start = time.perf_counter()
import graphlab.cli, graphlab.trace.timeline
report(start)
"""
GAPS = f"""
import sys, time
{_REPORT}
import graphlab.cli, graphlab.trace.timeline
start = time.perf_counter()
status = graphlab.cli.main(["gaps", sys.argv[1], "--json"])
sys.stdout.flush()
report(start)
sys.exit(status)
"""
SIMULATE = f"""
import sys, time
{_REPORT}
import graphlab.cli
start = time.perf_counter()
status = graphlab.cli.main(["simulate", "--kernels", sys.argv[1], "--kernel-us", "1",
                            "--trace", sys.argv[2]])
report(start)
sys.exit(status)
"""


@dataclass(frozen=True)
class Run:
    """One child process: wall seconds, seconds of its own work, peak resident bytes, stdout."""

    wall: float
    work: float
    peak: int
    out: str


def measure(code: str, *args: str) -> Run:
    """Run ``python -c CODE ARGS`` in a fresh process and measure it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"python -c {code!r} {' '.join(args)} failed:\n{proc.stderr}")
    work, peak = proc.stderr.split()[-2:]
    return Run(wall, float(work), int(peak), proc.stdout)


def best_of_each(repeats: int, codes: tuple[str, ...], *args: str) -> list[Run]:
    """The fastest of ``repeats`` runs of each code (the machine may be busy).

    The codes take turns, so that a spell of load on the machine slows each of them alike.
    """
    runs = [[measure(code, *args) for code in codes] for _ in range(repeats)]
    return [min(column, key=lambda run: run.wall) for column in zip(*runs, strict=True)]


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def generated_traces(args: argparse.Namespace, stem: str, keep: bool = False):
    """Each case of ``--kernels`` (one stream) and ``--streams`` as
    ``(label, path, expected, kernels, streams)``.

    The trace is written to ``args.dir`` before the case and removed after it (unless ``keep``);
    a case the disk has no room for is printed as a skipped table row.
    """
    cases = [(n, 1) for n in args.kernels] + ([(args.streams, args.streams)] * bool(args.streams))
    args.dir.mkdir(parents=True, exist_ok=True)  # --dir may name a folder not made yet
    for kernels, streams in cases:
        label = f"{kernels:,} kernels" + (f" on {streams:,} streams" if streams > 1 else "")
        path = args.dir / f"graphlab_{stem}_{kernels}_{streams}.json"
        if shutil.disk_usage(args.dir).free < 2 * kernels * BYTES_PER_KERNEL:
            print(f"| {label} | skipped: not enough room in {args.dir} |")
            continue
        try:
            yield label, path, write_trace(path, kernels, streams), kernels, streams
        finally:
            if not keep:
                path.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument(
        "--streams", type=int, default=100_000, metavar="N",
        help="also N kernels on N streams, one each (0: skip)",
    )  # fmt: skip
    parser.add_argument(
        "--simulate", type=int, default=1_000_000, metavar="N",
        help="also time graphlab simulate --kernels N --trace (0: skip)",
    )  # fmt: skip
    parser.add_argument("--repeats", type=int, default=1, help="runs of each, best kept")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--keep", action="store_true", help="keep the trace files")
    args = parser.parse_args()

    base = measure(BASE)
    print(
        f"python with graphlab's modules loaded: peak {mb(base.peak)}; the imports take "
        f"{base.work:.2f} s of a {base.wall:.2f} s process"
    )
    print(
        "| trace | file | json.load | gaps --json | ratio | json.load work | gaps work | ratio "
        "| json.load peak | gaps peak | gaps peak / file | (gaps peak - python) / file | exact |"
    )
    print("|" + " --- |" * 13)
    for label, path, expected, _, _ in generated_traces(args, "trace_scale", keep=args.keep):
        size = path.stat().st_size
        load, gaps = best_of_each(args.repeats, (JSON_LOAD, GAPS), str(path))
        print(
            f"| {label} | {mb(size)} | {load.wall:.2f} s | {gaps.wall:.2f} s "
            f"| {gaps.wall / load.wall:.2f} | {load.work:.2f} s | {gaps.work:.2f} s "
            f"| {gaps.work / load.work:.2f} | {mb(load.peak)} | {mb(gaps.peak)} "
            f"| {gaps.peak / size:.2f} | {(gaps.peak - base.peak) / size:.2f} "
            f"| {expected.check(json.loads(gaps.out))} |"
        )
    if args.simulate:
        path = args.dir / f"graphlab_trace_scale_simulated_{args.simulate}.json"
        try:
            run = measure(SIMULATE, str(args.simulate), str(path))
            size = path.stat().st_size
        finally:
            path.unlink(missing_ok=True)
        print(
            f"\ngraphlab simulate --kernels {args.simulate:,} --kernel-us 1 --trace: "
            f"{run.wall:.2f} s, peak {mb(run.peak)}, wrote {mb(size)}"
        )


if __name__ == "__main__":
    main()
