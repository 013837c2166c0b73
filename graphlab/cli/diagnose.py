"""``graphlab diagnose FILE.py:NAME [--json]``: can the model of a script be captured?

``NAME()``, a function of the script, returns ``(fn_or_module, example_inputs)``, a tuple of
tensors as inputs. The report is :func:`graphlab.diagnose`'s; the exit status is 0 whether or not
the model captures (the report says), and 2, with one line on stderr, when the file or the name
cannot be used.

The script is loaded as a module of its own, not registered in ``sys.modules``: so the functions
and classes it defines travel by value to the child process in which a GPU diagnosis runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

__all__ = ["add_arguments", "load_target", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="FILE.py:NAME",
        help=_("a Python file and a function in it that returns (fn_or_module, example_inputs)"),
    )
    parser.add_argument("--steps", type=int, default=10, help=_("calls per timed loop (10)"))
    parser.add_argument(
        "--no-compile", action="store_true", help=_("do not try torch.compile's reduce-overhead")
    )
    parser.add_argument(
        "--json", action="store_true", help=_("print the report as one JSON object")
    )


def load_target(target: str) -> tuple:
    """``(fn_or_module, example_inputs)`` from ``FILE.py:NAME``; GraphlabError when unusable."""
    path_text, sep, name = target.rpartition(":")
    if not sep or not path_text or not name.isidentifier():
        raise GraphlabError(
            _(
                "{target} is not FILE.py:NAME: give a Python file and the name of a function in "
                "it, e.g. graphlab diagnose model.py:make"
            ).format(target=repr(target))
        )
    path = Path(path_text)
    if not path.is_file():
        raise GraphlabError(
            _("{path}: no such file: give the path of a Python script").format(path=path_text)
        )
    spec = importlib.util.spec_from_file_location(f"graphlab_diagnosed_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise GraphlabError(
            _("{path} failed to run ({error}): fix the script first").format(
                path=path_text, error=f"{type(exc).__name__}: {exc}"
            )
        ) from None
    make = getattr(module, name, None)
    if not callable(make):
        raise GraphlabError(
            _(
                "{path} has no function {quoted}: define {name}() returning "
                "(fn_or_module, example_inputs)"
            ).format(path=path_text, quoted=repr(name), name=name)
        )
    try:
        made = make()
    except Exception as exc:
        raise GraphlabError(
            _("{name}() raised {error}").format(name=name, error=f"{type(exc).__name__}: {exc}")
        ) from None
    if not (isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], (tuple, list))):
        raise GraphlabError(
            _(
                "{name}() returned a {type}, not (fn_or_module, example_inputs): return the model "
                "or step function and a tuple of its input tensors"
            ).format(name=name, type=type(made).__name__)
        )
    return made[0], tuple(made[1])


def run(args: argparse.Namespace) -> int:
    from graphlab.diagnose import diagnose

    fn, inputs = load_target(args.target)
    report = diagnose(fn, *inputs, steps=args.steps, compile=not args.no_compile)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report)
    return 0
