"""``graphlab gaps TRACE.json [--json]``: where the GPU sat idle in a trace, and why."""

from __future__ import annotations

import argparse
import json

HELP = "Report where the GPU idles in a torch.profiler (Kineto) trace or a graphlab timeline."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "trace",
        metavar="TRACE.json",
        help="a Chrome trace from torch.profiler's export_chrome_trace (.json or .json.gz), "
        "or a timeline saved by graphlab's Timeline.save",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the figures as one JSON object (times in µs) instead of a report",
    )


def run(args: argparse.Namespace) -> int:
    from graphlab.trace.timeline import Timeline

    summary = Timeline.from_chrome_trace(args.trace).summary()
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        print(f"{args.trace}")
        print(summary.report())
    return 0
