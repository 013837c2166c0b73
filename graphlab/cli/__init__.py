"""The ``graphlab`` command line.

Each subcommand lives in its own module and offers ``add_arguments(parser)`` and
``run(args) -> int``; :data:`COMMANDS` names the module, the one-line help and what to do when the
command runs out of memory. A module is imported only when its command runs (or its ``--help`` is
asked for), so that ``graphlab gaps`` does not pay for the planner's, the doctor's or the
recorder's imports, and ``graphlab --help`` for none of them.

Errors that graphlab raises on purpose (:class:`~graphlab.errors.GraphlabError`) are printed as
one line on stderr with exit status 2; so are running out of memory and an output that cannot be
written (a full disk under ``graphlab gaps t.json > out.txt``). They are handled here, once for
every command: a command neither catches MemoryError nor guards its prints.

What the command line says for a person (its help, argparse's own words included, its reports
and its errors) is in graphlab's language, :func:`graphlab.language.language`, read when the
parser is built; what it prints for a machine (``--json``) is the same in every language.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from typing import NamedTuple

from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.support.lazy_iri_syntax import defer as defer_iri_syntax

from .parsing import Parser

__all__ = ["main"]


class Command(NamedTuple):
    """Where a subcommand lives, its one-line help, and what to do when it runs out of memory
    (both in English, marked for the catalog: they are said in the language of the moment)."""

    module: str
    help: str
    on_memory: str


_FREE = N_("close other programs and run it again")

COMMANDS = {
    "lab": Command(
        "graphlab.cli.lab",
        N_("Open the graphlab course in JupyterLab, in your own copy of the lessons."),
        N_("close other programs (and notebooks' kernels) and run it again"),
    ),
    "doctor": Command(
        "graphlab.cli.doctor",
        N_(
            "Say what this machine can run: Python, torch, CUDA, GPU, backend, notebook packages; "
            "with --workshop N, whether it can host N learners"
        ),
        _FREE,
    ),
    "record": Command(
        "graphlab.cli.record",
        N_("Run the timing experiments on this machine's GPU and write them as JSON recordings."),
        N_("close other programs, or record one experiment at a time with --only NAME"),
    ),
    "recordings": Command(
        "graphlab.cli.recordings",
        N_("List the recorded GPU results (name, experiment, GPU, date); --json for a machine."),
        _FREE,
    ),
    "gaps": Command(
        "graphlab.cli.gaps",
        N_("Report where the GPU idles in a torch.profiler (Kineto) trace or a graphlab timeline."),
        N_(
            "close other programs, or profile fewer steps (torch.profiler.schedule with "
            "active=1..3)"
        ),
    ),
    "simulate": Command(
        "graphlab.cli.simulate",
        N_("Simulate N kernels eager vs one graph replay: totals, idle time, break-even."),
        N_("simulate fewer kernels (--kernels)"),
    ),
    "calibrate": Command(
        "graphlab.cli.calibrate",
        N_(
            "Fit the simulator to chain recordings (bundled or --recordings DIR) and print the "
            "check; --write stores the fit."
        ),
        N_("close other programs, or calibrate from a folder with fewer recordings (--recordings)"),
    ),
    "progress": Command(
        "graphlab.cli.progress",
        N_("Show your progress through the course's exercises (--reset forgets it)."),
        _FREE,
    ),
    "diagnose": Command(
        "graphlab.cli.diagnose",
        N_(
            "Say whether a model can be captured in a CUDA graph, what blocks it (with source "
            "lines) and what a graph would gain: FILE.py:NAME, NAME() returning (model, inputs)."
        ),
        N_("diagnose a smaller model or fewer --steps"),
    ),
    "plan": Command(
        "graphlab.cli.plan",
        N_("Choose the batch sizes to capture as CUDA graphs for a request mix (exact optimum)."),
        N_("close other programs, or plan from a shorter requests file or a smaller histogram"),
    ),
}


class _Parser(Parser):
    """argparse exits with status 2 on usage errors already; keep its one-line message (in
    graphlab's language, :class:`~graphlab.cli.parsing.Parser`).

    argparse drops an OSError while it prints ``--help``, which then exits 0 with the help lost;
    here a full disk is one line and exit status 2, as for a command's output.
    """

    def print_help(self, file=None):
        out = sys.stdout if file is None else file
        try:
            out.write(self.format_help())
            out.flush()
        except BrokenPipeError:
            _drop_stdout()
            self.exit(0)
        except OSError as exc:
            _drop_stdout()
            self.exit(2, f"{self.prog}: {_cannot_write(exc)}\n")


class _CommandParser(_Parser):
    """A subcommand's parser, which imports the command's module and adds its arguments when it
    first parses: argparse asks only the chosen command's parser to parse, ``-h`` included."""

    def __init__(self, *, module: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self._module = module

    def parse_known_args(self, args=None, namespace=None):
        if self._module is not None:
            module = importlib.import_module(self._module)
            self._module = None
            module.add_arguments(self)
            self.set_defaults(_run=module.run)
        return super().parse_known_args(args, namespace)


def build_parser(
    prog: str = "graphlab", leave_out: tuple[str, ...] = ()
) -> argparse.ArgumentParser:
    """The command line's parser; ``leave_out`` names subcommands it does not offer."""
    parser = _Parser(prog=prog, description=_("CUDA Graphs in PyTorch: the graphlab course."))
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_CommandParser
    )
    for name, command in COMMANDS.items():
        if name not in leave_out:
            text = _(command.help)
            sub.add_parser(name, help=text, description=text, module=command.module)
    return parser


def main(
    argv: list[str] | None = None, prog: str = "graphlab", leave_out: tuple[str, ...] = ()
) -> int:
    """Run one subcommand; a GraphlabError becomes one line on stderr and exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS and argv[0] not in leave_out:
        # Only the named command's parser is built: `graphlab gaps` need not pay for the others.
        leave_out = tuple(name for name in COMMANDS if name != argv[0])
    args = build_parser(prog, leave_out).parse_args(argv)
    # The commands that read lessons or widgets import nbformat or plotly, and so jsonschema, whose
    # IRI parsers would take most of a short command's time (1.5 s of `graphlab progress`'s 2 s).
    defer_iri_syntax()
    try:
        code = int(args._run(args) or 0)
        # Output to a file is buffered: flushing here makes a full disk fail inside this try,
        # not in Python's flush at exit, where it would print a traceback-like message.
        sys.stdout.flush()
        return code
    except GraphlabError as exc:
        print(f"graphlab {args.command}: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"graphlab {args.command}: {_out_of_memory(args.command)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"graphlab {args.command}: " + _("interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Whoever read the output stopped early (`graphlab gaps --json | head`): stop quietly.
        _drop_stdout()
        return 0
    except OSError as exc:
        # The commands turn what they read and write by name into GraphlabErrors; what is left
        # is the output itself failing (ENOSPC, EIO, a quota).
        _drop_stdout()
        print(f"graphlab {args.command}: {_cannot_write(exc)}", file=sys.stderr)
        return 2


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail again.

    A stdout with no file descriptor (one that captures output in memory) is left as it is.
    """
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError):
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), descriptor)


def _cannot_write(exc: OSError) -> str:
    """What an OSError that reached the entry means, and what to do: one line."""
    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return _(
            "cannot write the output ({reason}): free some space, or write it elsewhere"
        ).format(reason=reason)
    if exc.filename:
        return _(
            "cannot read or write {path} ({reason}): check the disk and the path, then run it again"
        ).format(path=exc.filename, reason=reason)
    return _(
        "cannot read or write the output ({reason}): check the disk and the path, then run it again"
    ).format(reason=reason)


def _out_of_memory(command: str) -> str:
    """What a MemoryError in ``command`` means, and what to do: one line."""
    from graphlab.support.memory import available_bytes, describe_bytes

    room = available_bytes()
    advice = _(COMMANDS[command].on_memory)
    if room is None:
        return _("ran out of memory: {advice}").format(advice=advice)
    return _("ran out of memory ({available} is available now): {advice}").format(
        available=describe_bytes(room), advice=advice
    )


if __name__ == "__main__":
    sys.exit(main())
