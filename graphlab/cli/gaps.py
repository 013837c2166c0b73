"""``graphlab gaps TRACE.json [--json]``: where the GPU sat idle in a trace, and why.

What is suspect in the trace (:class:`~graphlab.trace.events.TraceWarning`: duplicated events,
kernels without a duration, ...) is said on stderr, one line each, after the figures; a trace that
cannot be read gets one line of error and nothing else. The report is worded in graphlab's
language (from the trace viewer's catalog, :mod:`graphlab.server.translations`); ``--json`` is the
same in every language.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import TYPE_CHECKING

from graphlab.language import gettext as _
from graphlab.language import language

if TYPE_CHECKING:
    from graphlab.support.words import Words
    from graphlab.trace.figures import Summary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "trace",
        metavar="TRACE.json",
        help=_(
            "a Chrome trace from torch.profiler's export_chrome_trace (.json or .json.gz), "
            "or a timeline saved by graphlab's Timeline.save"
        ),
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help=_("print the figures as one JSON object (times in µs) instead of a report"),
    )


def report_words() -> Words:
    """The gap report's words in graphlab's language: the trace viewer's catalog, which is read
    only for a language other than English (the command stays light in English)."""
    from graphlab.support.words import ENGLISH

    if language() == "en":
        return ENGLISH
    from graphlab.server.translations import words

    return words(language())


def run(args: argparse.Namespace) -> int:
    from graphlab.support.printable import printable
    from graphlab.trace.events import TraceWarning
    from graphlab.trace.timeline import Timeline

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        summary = Timeline.from_chrome_trace(args.trace).summary()
        if args.json:
            _print_json(summary)
        else:
            report = summary.report(report_words())
            print(printable(args.trace))
            print(report)
    for warning in caught:
        if issubclass(warning.category, TraceWarning):
            text = _("graphlab gaps: warning: {warning}").format(warning=printable(warning.message))
            print(text, file=sys.stderr)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return 0


def _print_json(summary: Summary) -> None:
    """Print the figures' JSON: straight to stdout's bytes where it has them (a terminal, a pipe,
    a file), a batch of lanes at a time, so that a trace's 100,000 streams never stand in memory
    as one text; as text where it has not (a notebook's output)."""
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:
        print(summary.to_json())
        return
    sys.stdout.flush()
    summary.write_json(binary.write)
    binary.write(b"\n")
