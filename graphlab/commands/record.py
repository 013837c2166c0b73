"""``graphlab record``: re-run the timing experiments on this machine's GPU and save them."""

from __future__ import annotations

import argparse
import shlex
import sys
import time

HELP = "Run the timing experiments on this machine's GPU and write them as JSON recordings."


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


def run(args: argparse.Namespace) -> int:
    from graphlab.record import record

    command = shlex.join(["graphlab", *sys.argv[1:]])
    start = time.perf_counter()
    paths = record(out_dir=args.out, quick=args.quick, command=command)
    folder = paths[0].parent if paths else args.out
    print(f"wrote {len(paths)} recordings to {folder} in {time.perf_counter() - start:.0f} s")
    return 0
