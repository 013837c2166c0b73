"""``graphlab recordings``: list the GPU recordings bundled with graphlab."""

from __future__ import annotations

import argparse
import json

HELP = "List the recorded GPU results (name, experiment, GPU, date); --json for a machine."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="read recordings from DIR instead of graphlab's bundled folder",
    )


def run(args: argparse.Namespace) -> int:
    from graphlab.timing.recordings import RECORDINGS_DIR, list_recordings

    rows = [
        {
            "name": rec.name,
            "experiment": rec.experiment["kind"],
            "gpu": rec.meta["gpu"],
            "date": rec.date,
        }
        for rec in list_recordings(args.dir)
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(
            f"no recordings in {args.dir or RECORDINGS_DIR} yet: "
            "they are made on a GPU by `graphlab record`"
        )
        return 0
    columns = ("name", "experiment", "gpu", "date")
    widths = {col: max(len(col), *(len(row[col]) for row in rows)) for col in columns}
    for row in [dict(zip(columns, columns, strict=True)), *rows]:
        print("  ".join(row[col].ljust(widths[col]) for col in columns).rstrip())
    return 0
