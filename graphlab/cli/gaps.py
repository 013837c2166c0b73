"""``graphlab gaps TRACE.json [--json]``: where the GPU sat idle in a trace, and why.

What is suspect in the trace (:class:`~graphlab.trace.events.TraceWarning`: duplicated events,
kernels without a duration, ...) is said on stderr, one line each, after the figures; a trace that
cannot be read gets one line of error and nothing else.
"""

from __future__ import annotations

import argparse
import sys
import warnings


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
    from graphlab.support.printable import printable
    from graphlab.trace.events import TraceWarning
    from graphlab.trace.timeline import Timeline

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        summary = Timeline.from_chrome_trace(args.trace).summary()
        text = summary.to_json() if args.json else summary.report()
    if not args.json:
        print(printable(args.trace))
    print(text)
    for warning in caught:
        if issubclass(warning.category, TraceWarning):
            print(f"graphlab gaps: warning: {printable(warning.message)}", file=sys.stderr)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return 0
