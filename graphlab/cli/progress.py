"""``graphlab progress``: how far the learner is, lesson by lesson.

Reads the check results the exercise checkers stored (:mod:`graphlab.course.progress`) and counts
them against the exercises of the shipped lessons: ``02  Static inputs  1/1``. ``--json`` prints
the same for tools; ``--reset`` forgets every result first.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the progress as JSON")
    parser.add_argument(
        "--reset", action="store_true", help="forget every stored check result, then show"
    )


def run(args: argparse.Namespace) -> int:
    from graphlab.course import progress
    from graphlab.course.lessons import lessons

    store = progress.store_path()
    if args.reset:
        progress.reset()
        # On stderr, so that --reset --json still prints JSON alone on stdout.
        print(f"graphlab progress: forgot every check result ({store})", file=sys.stderr)
    figures = progress.report(lessons(), progress.load())
    if args.json:
        print(json.dumps({**figures, "store": str(store)}, indent=1))
        return 0
    width = max((len(row["title"]) for row in figures["lessons"]), default=0)
    for row in figures["lessons"]:
        count = f"{len(row['passed'])}/{len(row['exercises'])}"
        line = f"{row['number']}  {row['title']:<{width}}  {count}"
        if row["revealed"]:
            line += f"  ({len(row['revealed'])} after revealing the solution)"
        if row["failed"]:
            line += f"  (last check failed: {', '.join(row['failed'])})"
        print(line)
    print(f"{figures['done']}/{figures['total']} exercises passed (results in {store})")
    return 0
