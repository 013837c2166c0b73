"""``graphlab recordings``: list the GPU recordings bundled with graphlab (or in a folder).

Every file that loads is listed; each ``*.json`` file that is not a recording is named on stderr,
one line each, and the exit status is then 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from graphlab.language import N_
from graphlab.language import gettext as _

from .columns import columns, ljust

#: The table's columns (each a key of a row of ``--json``), and their titles in English.
COLUMNS = {"name": N_("name"), "experiment": N_("experiment"), "gpu": N_("gpu"), "date": N_("date")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help=_("print a JSON list instead of a table")
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help=_("read recordings from DIR instead of graphlab's bundled folder"),
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
            _("no recordings in {folder} yet: they are made on a GPU by `graphlab record`").format(
                folder=printable(args.dir or RECORDINGS_DIR)
            )
        )
    elif rows:
        # Names, kinds and GPUs come from the files: shown with control characters escaped.
        shown = [{col: printable(value) for col, value in row.items()} for row in rows]
        titles = {col: _(title) for col, title in COLUMNS.items()}
        table = [titles, *shown]
        widths = {col: max(columns(row[col]) for row in table) for col in COLUMNS}
        for row in table:
            print("  ".join(ljust(row[col], widths[col]) for col in COLUMNS).rstrip())
    for error in bad:
        print(_("graphlab recordings: skipped {error}").format(error=error), file=sys.stderr)
    return 2 if bad else 0
