"""How long ``graphlab simulate --kernels N --trace FILE`` takes, against its floor.

Run ``python benchmarks/simulate_trace.py [--kernels 100000 1000000] [--repeats 3]
[--dir DIR]``. For each N it runs, in fresh processes under ``/usr/bin/time`` (peak resident
memory of the child itself), ``graphlab simulate --kernels N --kernel-us 1`` without and with
``--trace``, and a plain writer that puts the very bytes of that trace file, already in memory, into
a new file with one ``write`` (the floor of the writing alone). It prints the medians: the
simulation, the simulation with its trace, what the trace adds, the plain write, the trace's size
and the peak memory without and with the trace (the trace is written a batch of events at a time,
so the difference is what streaming it costs), and the load average when the row began (the
machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Reads the file first (not timed), then times one write of its bytes to a new file.
PLAIN_WRITE = """
import sys, time
data = open(sys.argv[1], "rb").read()
start = time.perf_counter()
with open(sys.argv[2], "wb") as f:
    f.write(data)
print(time.perf_counter() - start)
"""


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
    parser.add_argument("--kernels", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, median kept")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; medians of {args.repeats} runs")
    print(
        "| kernels | load (1 min) | simulate | with --trace | trace adds | plain write "
        "| trace file | peak without / with --trace |"
    )
    print("|" + " --- |" * 8)
    trace, copy = args.dir / "graphlab_simulate_trace.json", args.dir / "graphlab_plain.json"
    for n in args.kernels:
        load = os.getloadavg()[0]
        simulate = ["graphlab", "simulate", "--kernels", str(n), "--kernel-us", "1"]
        try:
            bare, traced, plain = [], [], []
            for _ in range(args.repeats):
                bare.append(timed(simulate)[:2])
                traced.append(timed([*simulate, "--trace", str(trace)])[:2])
                out = timed([sys.executable, "-c", PLAIN_WRITE, str(trace), str(copy)])[2]
                plain.append(float(out))
            size = trace.stat().st_size
        finally:
            trace.unlink(missing_ok=True)
            copy.unlink(missing_ok=True)
        without = statistics.median(t for t, _ in bare)
        with_trace = statistics.median(t for t, _ in traced)
        print(
            f"| {n:,} | {load:.2f} | {without:.2f} s | {with_trace:.2f} s "
            f"| {with_trace - without:.2f} s | {statistics.median(plain):.2f} s "
            f"| {size / 1e6:,.0f} MB | {statistics.median(p for _, p in bare) / 1e6:,.0f} MB / "
            f"{statistics.median(p for _, p in traced) / 1e6:,.0f} MB |",
            flush=True,
        )


if __name__ == "__main__":
    main()
