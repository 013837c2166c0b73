"""How fast, and in how much memory, ``graphlab simulate --kernels N --trace`` writes its trace,
beside its floor.

Run ``python benchmarks/simulate_trace.py [--kernels 1000000] [--repeats 1] [--dir DIR]``. Each
command runs in a fresh process under benchmarks/gaps_vs_floor.py's launcher (wall time, the
child's own peak memory): ``graphlab simulate --kernels N --kernel-us 1 --trace FILE``, the same
without ``--trace``, and a plain write of as many bytes as the trace holds, a MiB at a time, to
the same folder. The floor is the simulation without the trace plus that plain write: what any
writer of this file must spend, with nothing formatted. The trace is written a batch of 50,000
events at a time (graphlab/trace/chrome.py), so its peak memory should stay near the simulation's
own, not grow with the file. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gaps_vs_floor import load, measure  # noqa: E402

WRITE = """
import sys
size, path = int(sys.argv[1]), sys.argv[2]
block = b"x" * (1 << 20)
with open(path, "wb") as f:
    for _ in range(size >> 20):
        f.write(block)
    f.write(block[: size & ((1 << 20) - 1)])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, {load()}")
    path = args.dir / f"graphlab_simulate_trace_{args.kernels}.json"
    plain = args.dir / f"graphlab_simulate_trace_{args.kernels}.bytes"
    simulate = ["-m", "graphlab", "simulate", "--kernels", str(args.kernels), "--kernel-us", "1"]
    runs: dict[str, list] = {"trace": [], "simulate": [], "write": []}
    try:
        for _ in range(args.repeats):
            runs["trace"].append(measure(*simulate, "--trace", str(path)))
            size = path.stat().st_size
            runs["simulate"].append(measure(*simulate))
            runs["write"].append(measure("-c", WRITE, str(size), str(plain)))
    finally:
        path.unlink(missing_ok=True)
        plain.unlink(missing_ok=True)
    wall = {key: statistics.median(r.wall for r in rs) for key, rs in runs.items()}
    peak = {key: max(r.peak for r in rs) for key, rs in runs.items()}
    floor = wall["simulate"] + wall["write"]
    print(
        f"graphlab simulate --kernels {args.kernels:,} --kernel-us 1 --trace: "
        f"{wall['trace']:.2f} s, "
        f"peak {peak['trace'] / 1e6:,.0f} MB, wrote {size / 1e6:,.0f} MB "
        f"(median of {args.repeats})\n"
        f"floor: {floor:.2f} s = the simulation alone {wall['simulate']:.2f} s (peak "
        f"{peak['simulate'] / 1e6:,.0f} MB) + writing {size / 1e6:,.0f} MB of plain bytes "
        f"{wall['write']:.2f} s\n"
        f"ratio to the floor: {wall['trace'] / floor:.2f}; peak over the simulation's own: "
        f"{(peak['trace'] - peak['simulate']) / 1e6:+,.0f} MB "
        f"({peak['trace'] / size:.2f} x the file)"
    )
    print(load())


if __name__ == "__main__":
    main()
