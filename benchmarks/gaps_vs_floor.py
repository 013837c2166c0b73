"""``graphlab gaps --json`` against the floor of benchmarks/trace_floor.py, on synthetic traces.

Run ``python benchmarks/gaps_vs_floor.py [--kernels 10000 100000 1000000] [--streams 100000]
[--repeats 3] [--dir DIR]``. For each size it writes a trace with benchmarks/trace_scale.py's
generator (which also works out the exact figures), then runs, each in a fresh process so that
Python's start and the imports count alike, the floor (``trace_floor.py``; ``--per-stream`` on the
many-streams trace) and ``python -m graphlab gaps FILE --json``, taking turns. It prints, per case,
the median wall time of each and their ratio, each one's peak resident memory (the child's own
``ru_maxrss`` from ``os.wait4``) against the file's size, and whether both reported the exact
figures. Cases above ``--once-above`` kernels are run once. The load average is printed before and
after, since the machine may be shared.

Targets (issue 28): gaps within 1.5x of the floor from 100,000 kernels up, within 2x with 100,000
streams, peak memory at most 1.2x the file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from trace_scale import Expected, generated_traces  # noqa: E402


@dataclass(frozen=True)
class Run:
    wall: float
    peak: int  # bytes
    out: str


# Each command runs under this small launcher, which forks and execs it and reads its rusage: the
# peak a process reports (ru_maxrss) starts from what its parent held when it forked, and the
# launcher holds far less than either command, where this script holds numpy and the generator.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status),
      file=sys.stderr)
"""


def measure(*argv: str) -> Run:
    """Run ``python ARGV`` in a fresh process: its wall time, its own peak memory, its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *argv],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall, peak, status = proc.stderr.split()[-3:]
    if proc.returncode or int(status):
        raise SystemExit(f"python {' '.join(argv)} failed:\n{proc.stderr}")
    return Run(float(wall), int(peak), proc.stdout)


def median_run(runs: list[Run]) -> Run:
    walls = sorted(runs, key=lambda r: r.wall)
    return Run(statistics.median(r.wall for r in runs), max(r.peak for r in runs), walls[0].out)


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument(
        "--streams", type=int, default=100_000, help="N kernels on N streams (0: skip)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--once-above", type=int, default=500_000)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, {load()}")
    print(
        "| trace | file | floor | gaps --json | ratio | floor peak/file | gaps peak/file | exact |"
    )
    print("|" + " --- |" * 8)
    for label, path, expected, kernels, streams in generated_traces(args, "gaps_vs_floor"):
        size = path.stat().st_size
        floor_argv = [str(HERE / "trace_floor.py"), str(path)] + ["--per-stream"] * (streams > 1)
        gaps_argv = ["-m", "graphlab", "gaps", str(path), "--json"]
        repeats = 1 if kernels > args.once_above else args.repeats
        pairs = [(measure(*floor_argv), measure(*gaps_argv)) for _ in range(repeats)]
        floor, gaps = (median_run(list(column)) for column in zip(*pairs, strict=True))
        exact = expected.check(json.loads(gaps.out)) and _floor_exact(expected, floor.out)
        print(
            f"| {label} | {size / 1e6:,.0f} MB | {floor.wall:.2f} s | {gaps.wall:.2f} s "
            f"| {gaps.wall / floor.wall:.2f} | {floor.peak / size:.2f} | {gaps.peak / size:.2f} "
            f"| {exact} |" + (" (1 run)" if repeats == 1 else f" (median of {repeats})"),
            flush=True,
        )
    print(load())


def _floor_exact(expected: Expected, out: str) -> bool:
    figures = json.loads(out)
    return (
        figures["kernels"] == expected.kernels
        and figures["busy_us"] == expected.busy_ns / 1000
        and figures["span_us"] == expected.span_ns / 1000
        and figures["gaps"]["count"] == expected.gaps
    )


if __name__ == "__main__":
    main()
