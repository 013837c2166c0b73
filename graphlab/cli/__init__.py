"""The ``graphlab`` command line.

Each subcommand lives in its own module under :mod:`graphlab.cli` and offers ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Errors that graphlab raises on purpose
(:class:`~graphlab.errors.GraphlabError`) are printed as one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from graphlab.errors import GraphlabError

__all__ = ["main"]

# Subcommand name -> module; modules import their heavy dependencies inside run().
COMMANDS = {
    "lab": "graphlab.cli.lab",
    "doctor": "graphlab.cli.doctor",
    "record": "graphlab.cli.record",
    "recordings": "graphlab.cli.recordings",
    "gaps": "graphlab.cli.gaps",
    "simulate": "graphlab.cli.simulate",
    "progress": "graphlab.cli.progress",
    "plan": "graphlab.planner.command",
}


class _Parser(argparse.ArgumentParser):
    """argparse exits with status 2 on usage errors already; keep its one-line message."""


def build_parser(
    prog: str = "graphlab", leave_out: tuple[str, ...] = ()
) -> argparse.ArgumentParser:
    """The command line's parser; ``leave_out`` names subcommands it does not offer."""
    parser = _Parser(prog=prog, description="CUDA Graphs in PyTorch: the graphlab course.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        if name in leave_out:
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(
    argv: list[str] | None = None, prog: str = "graphlab", leave_out: tuple[str, ...] = ()
) -> int:
    """Run one subcommand; a GraphlabError becomes one line on stderr and exit status 2."""
    args = build_parser(prog, leave_out).parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except GraphlabError as exc:
        print(f"graphlab {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"graphlab {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Whoever read the output stopped early (`graphlab gaps --json | head`): stop quietly,
        # and point stdout at /dev/null so that Python's flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
