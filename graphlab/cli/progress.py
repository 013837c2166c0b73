"""``graphlab progress``: how far the learner is, lesson by lesson.

Reads the check results the exercise checkers stored (:mod:`graphlab.course.progress`) and counts
them against the exercises of the shipped lessons: ``02  Static inputs  1/1``. ``--json`` prints
the same for tools; ``--reset`` forgets every result first. ``--hub URL`` shows every learner of
a JupyterHub instead, as the instructor's view does (:mod:`graphlab.workshop.hub_progress`).
With ``GRAPHLAB_PROGRESS=/dev/null`` (progress off) it says so in one line.
"""

from __future__ import annotations

import argparse
import json
import sys

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

from .columns import columns, ljust


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help=_("print the progress as JSON"))
    parser.add_argument(
        "--reset", action="store_true", help=_("forget every stored check result, then show")
    )
    parser.add_argument(
        "--hub",
        metavar="URL",
        help=_(
            "show every learner of the JupyterHub at URL, lesson by lesson, with an admin's "
            "API token from --token or JUPYTERHUB_API_TOKEN"
        ),
    )
    parser.add_argument("--token", help=_("the API token for --hub"))


def run(args: argparse.Namespace) -> int:
    from graphlab.course import progress
    from graphlab.course.syllabus import lessons

    if args.hub:
        from graphlab.workshop.hub_progress import print_hub_table

        if args.reset:
            # --reset forgets this account's results; it must never look like it reset a hub's.
            raise GraphlabError(
                _(
                    "--reset forgets this account's own results and cannot reach a hub's "
                    "learners: run it without --hub (each learner resets from the course sidebar)"
                )
            )

        return print_hub_table(args.hub, args.token, lessons(), as_json=args.json)
    store = progress.store_path()
    off = progress.off()
    if args.reset:
        # On stderr, so that --reset --json still prints JSON alone on stdout.
        print(f"graphlab progress: {progress.reset()}", file=sys.stderr)
    elif off:
        print(f"graphlab progress: {off}", file=sys.stderr if args.json else sys.stdout)
    if off and not args.json:
        return 0  # that one line, not a table of zeros
    figures = progress.report(lessons(), progress.load())
    if args.json:
        print(json.dumps({**figures, "store": str(store)}, indent=1))
        return 0
    width = max((columns(row["title"]) for row in figures["lessons"]), default=0)
    for row in figures["lessons"]:
        count = f"{len(row['passed'])}/{len(row['exercises'])}"
        line = f"{row['number']}  {ljust(row['title'], width)}  {count}"
        if row["revealed"]:
            revealed = _("({count} after revealing the solution)")
            line += "  " + revealed.format(count=len(row["revealed"]))
        if row["failed"]:
            failed = _("(last check failed: {exercises})")
            line += "  " + failed.format(exercises=", ".join(row["failed"]))
        print(line)
    print(
        _("{done}/{total} exercises passed (results in {store})").format(
            done=figures["done"], total=figures["total"], store=store
        )
    )
    return 0
