"""``graphlab recordings``: list the GPU recordings bundled with graphlab (or in a folder).

Every file that loads is listed; each ``*.json`` file that is not a recording is named on stderr,
one line each, and the exit status is then 2.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="read recordings from DIR instead of graphlab's bundled folder",
    )


def run(args: argparse.Namespace) -> int:
    from graphlab.support.printable import printable
    from graphlab.timing.recordings import RECORDINGS_DIR, scan_recordings

    good, bad = scan_recordings(args.dir)
    rows = [
        {
            "name": rec.name,
            "experiment": rec.experiment["kind"],
            "gpu": rec.meta["gpu"],
            "date": rec.date,
        }
        for rec in good
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows and not bad:
        print(
            f"no recordings in {printable(args.dir or RECORDINGS_DIR)} yet: "
            "they are made on a GPU by `graphlab record`"
        )
    elif rows:
        # Names, kinds and GPUs come from the files: shown with control characters escaped.
        shown = [{col: printable(value) for col, value in row.items()} for row in rows]
        columns = ("name", "experiment", "gpu", "date")
        widths = {col: max(len(col), *(len(row[col]) for row in shown)) for col in columns}
        for row in [dict(zip(columns, columns, strict=True)), *shown]:
            print("  ".join(row[col].ljust(widths[col]) for col in columns).rstrip())
    for error in bad:
        print(f"graphlab recordings: skipped {error}", file=sys.stderr)
    return 2 if bad else 0
