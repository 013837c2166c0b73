"""``graphlab record``: re-run the timing experiments on this machine's GPU and save them.

After writing, it prints one line per recording with the measured medians, so that the person at
the GPU sees the figures at once (``graphlab recordings`` lists the files later).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

# Column title -> (width, how to get the value from a Recording); values are µs unless named.
_COLUMNS = {
    "name": (30, lambda r: r.name),
    "eager/it": (10, lambda r: _us(r.timings["eager_us"])),
    "replay/it": (10, lambda r: _us(r.timings["replay_us"])),
    "eager/kernel": (13, lambda r: _per_kernel(r, "eager_us")),
    "replay/kernel": (14, lambda r: _per_kernel(r, "replay_us")),
    "e2e eager": (10, lambda r: _us(r.timings["eager_end_to_end_us"])),
    "e2e replay": (11, lambda r: _us(r.timings["replay_end_to_end_us"])),
    "capture": (10, lambda r: _us(r.timings["capture_us"])),
    "1st replay": (11, lambda r: _us(r.timings["first_replay_us"])),
    "N*": (8, lambda r: _number(r.timings["break_even"])),
    "crossing": (9, lambda r: _number(r.timings.get("cumulative", {}).get("crossing"))),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="folder to write the recordings into (default: graphlab's bundled recordings folder)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a few small experiments with few repeats, to check the machinery (seconds)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        default=(),
        help="run only these experiments (for example to redo one that failed)",
    )


def run(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from graphlab.timing.experiments import record
    from graphlab.timing.recordings import recording

    shown: list = []

    def show(path) -> None:
        # tqdm.write keeps the progress bar intact below the printed lines.
        if not shown:
            tqdm.write(_row(None))
        shown.append(path)
        tqdm.write(_row(recording(path.stem, path.parent)))

    command = shlex.join(["graphlab", *sys.argv[1:]])
    start = time.perf_counter()
    paths = record(
        out_dir=args.out, quick=args.quick, command=command, on_written=show, only=args.only
    )
    elapsed = time.perf_counter() - start
    folder = paths[0].parent if paths else args.out
    print(f"times in µs, medians; wrote {len(paths)} recordings to {folder} in {elapsed:.0f} s")
    return 0


def _row(rec) -> str:
    """One line of the results table: the titles when ``rec`` is None."""
    cells = [
        (title if rec is None else str(get(rec))).rjust(width)
        for title, (width, get) in _COLUMNS.items()
    ]
    cells[0] = cells[0].strip().ljust(_COLUMNS["name"][0])
    return "  ".join(cells)


def _us(value: float) -> str:
    return f"{value:,.1f}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _per_kernel(rec, key: str) -> str:
    """Per-kernel time for chains (the workload says how many kernels); '-' otherwise."""
    kernels = rec.experiment.get("kernels") or rec.experiment.get("workload", {}).get("kernels")
    return "-" if not kernels else f"{rec.timings[key] / kernels:,.2f}"
