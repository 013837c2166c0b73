"""``graphlab gaps --json`` against the practical floor (``benchmarks/trace_floor.py``).

Run ``python benchmarks/gaps_vs_floor.py [--kernels 10000 100000 1000000] [--streams 100000]
[--repeats 3] [--dir DIR]``. For each size it writes a synthetic Kineto trace with
``trace_scale.write_trace`` (which also works out the exact figures by a plain loop), then runs the
floor script and the installed ``graphlab gaps FILE --json`` in fresh processes, taking turns, each
under ``/usr/bin/time`` for its peak resident memory (a small C parent, so the peak is the child's
own). It prints, per trace, the median wall time of each and their ratio, the median peak of
``gaps`` against the file's size, whether both got the exact figures, and the load average when the
row began (the machine may be shared). The streams row gives the floor its per-stream work too.

Targets (issue 28): a ratio at most 1.5 from 100k kernels up, at most 2 with 100k streams, a peak
at most 1.2 times the file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trace_scale import BYTES_PER_KERNEL, ROOT, write_trace

FLOOR = str(Path(__file__).resolve().parent / "trace_floor.py")


def timed(command: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak resident bytes and stdout of one run of ``command``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", *command],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{proc.stderr}")
    wall, peak_kb = proc.stderr.split()[-2:]
    return float(wall), int(peak_kb) * 1024, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--streams", type=int, default=100_000, help="N kernels on N streams")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, median kept")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; medians of {args.repeats} runs, floor and gaps taking turns")
    print(
        "| trace | file | load (1 min) | floor | gaps --json | ratio | gaps peak "
        "| peak / file | exact (floor, gaps) |"
    )
    print("|" + " --- |" * 9)
    cases = [(n, 1) for n in args.kernels] + ([(args.streams, args.streams)] * bool(args.streams))
    for kernels, streams in cases:
        label = f"{kernels:,} kernels" + (f" on {streams:,} streams" if streams > 1 else "")
        path = args.dir / f"graphlab_gaps_vs_floor_{kernels}_{streams}.json"
        if shutil.disk_usage(args.dir).free < 2 * kernels * BYTES_PER_KERNEL:
            print(f"| {label} | skipped: not enough room in {args.dir} |")
            continue
        try:
            expected = write_trace(path, kernels, streams)
            size = path.stat().st_size
            load = os.getloadavg()[0]
            floor_cmd = [sys.executable, FLOOR, str(path)] + ["--per-stream"] * (streams > 1)
            gaps_cmd = ["graphlab", "gaps", str(path), "--json"]
            runs = [(timed(floor_cmd), timed(gaps_cmd)) for _ in range(args.repeats)]
        finally:
            path.unlink(missing_ok=True)
        floor = statistics.median(f[0] for f, _ in runs)
        gaps = statistics.median(g[0] for _, g in runs)
        peak = statistics.median(g[1] for _, g in runs)
        got = json.loads(runs[0][0][2])
        floor_exact = (got["kernels"], got["span_ns"], got["busy_ns"], got["gaps"]) == (
            expected.kernels, expected.span_ns, expected.busy_ns, expected.gaps,
        )  # fmt: skip
        gaps_exact = expected.check(json.loads(runs[0][1][2]))
        print(
            f"| {label} | {size / 1e6:,.0f} MB | {load:.2f} | {floor:.2f} s | {gaps:.2f} s "
            f"| {gaps / floor:.2f} | {peak / 1e6:,.0f} MB | {peak / size:.2f} "
            f"| {floor_exact}, {gaps_exact} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
