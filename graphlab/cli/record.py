"""``graphlab record``: re-run the timing experiments on this machine's GPU and save them.

After writing, it prints one line per recording with the measured medians, so that the person at
the GPU sees the figures at once (``graphlab recordings`` lists the files later).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from graphlab.language import N_
from graphlab.language import gettext as _

from .columns import ljust, rjust

# Column title -> (width, how to get the value from a Recording); values are µs unless named.
# The titles are shown in graphlab's language.
_COLUMNS = {
    N_("name"): (30, lambda r: r.name),
    N_("eager/it"): (10, lambda r: _us(r.timings["eager_us"])),
    N_("replay/it"): (10, lambda r: _us(r.timings["replay_us"])),
    N_("eager/kernel"): (13, lambda r: _per_kernel(r, "eager_us")),
    N_("replay/kernel"): (14, lambda r: _per_kernel(r, "replay_us")),
    N_("e2e eager"): (10, lambda r: _us(r.timings["eager_end_to_end_us"])),
    N_("e2e replay"): (11, lambda r: _us(r.timings["replay_end_to_end_us"])),
    N_("capture"): (10, lambda r: _us(r.timings["capture_us"])),
    N_("1st replay"): (11, lambda r: _us(r.timings["first_replay_us"])),
    "N*": (8, lambda r: _number(r.timings["break_even"])),
    N_("crossing"): (9, lambda r: _number(r.timings.get("cumulative", {}).get("crossing"))),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="DIR",
        help=_(
            "folder to write the recordings into (default: graphlab's bundled recordings folder)"
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=_("a few small experiments with few repeats, to check the machinery (seconds)"),
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        default=(),
        help=_("run only these experiments (for example to redo one that failed)"),
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
    print(
        _("times in µs, medians; wrote {count} recordings to {folder} in {seconds:.0f} s").format(
            count=len(paths), folder=folder, seconds=elapsed
        )
    )
    return 0


def _row(rec) -> str:
    """One line of the results table: the titles when ``rec`` is None."""
    cells = [
        rjust(_(title) if rec is None else str(get(rec)), width)
        for title, (width, get) in _COLUMNS.items()
    ]
    cells[0] = ljust(cells[0].strip(), _COLUMNS["name"][0])
    return "  ".join(cells)


def _us(value: float) -> str:
    return f"{value:,.1f}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _per_kernel(rec, key: str) -> str:
    """Per-kernel time for chains (the workload says how many kernels); '-' otherwise."""
    kernels = rec.experiment.get("kernels") or rec.experiment.get("workload", {}).get("kernels")
    return "-" if not kernels else f"{rec.timings[key] / kernels:,.2f}"
