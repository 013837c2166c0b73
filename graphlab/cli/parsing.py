"""argparse in graphlab's language: its help's boilerplate and its usage errors.

argparse words its own parts of a help (``usage:``, ``options``, ``positional arguments``,
``show this help message and exit``) and of an error (``the following arguments are required``,
``invalid choice``) through the standard library's gettext, for which no Chinese catalog exists.
:class:`Parser` says them in :func:`graphlab.language.language`: its formatter gives the usage
line its prefix, the parser its group titles and its own ``-h/--help``, and :meth:`Parser.error`
rewords argparse's English message from graphlab's catalog. In English every text is argparse's
own, byte for byte.

The language is read when a parser is built and when it reports an error, so a parser is built
for each command line (as :func:`graphlab.cli.main` does), never at import.
"""

from __future__ import annotations

import argparse
import re
import string
import sys
from typing import NoReturn

from graphlab.language import N_
from graphlab.language import gettext as _

from .columns import columns, has_wide, wrap

__all__ = ["Formatter", "Parser", "reworded"]

# argparse's messages that graphlab's command lines can meet (Python 3.11's wording), each with
# its %-placeholders as named fields; a message that is none of these is shown as argparse wrote
# it. A field named ``message`` holds another such message.
ARGPARSE_MESSAGES = (
    N_("argument {argument}: {message}"),
    N_("the following arguments are required: {arguments}"),
    N_("unrecognized arguments: {arguments}"),
    N_("invalid choice: {value} (choose from {choices})"),
    N_("invalid {type} value: {value}"),
    N_("expected one argument"),
    N_("expected at least one argument"),
    N_("not allowed with argument {argument}"),
    N_("ignored explicit argument {value}"),
    N_("ambiguous option: {option} could match {matches}"),
)


def _pattern(template: str) -> re.Pattern[str]:
    """What ``template``'s English looks like once argparse has filled it in."""
    parts = []
    for literal, field, _spec, _conversion in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(f"(?P<{field}>.+?)")
    return re.compile("".join(parts), re.DOTALL)


_PATTERNS = tuple((_pattern(template), template) for template in ARGPARSE_MESSAGES)


def reworded(message: str) -> str:
    """argparse's English ``message`` in graphlab's language (itself in English, or when it is
    not one of :data:`ARGPARSE_MESSAGES`)."""
    for pattern, template in _PATTERNS:
        found = pattern.fullmatch(message)
        if found is not None:
            fields = found.groupdict()
            if "message" in fields:
                fields["message"] = reworded(fields["message"])
            return _(template).format(**fields)
    return message


class Formatter(argparse.HelpFormatter):
    """argparse's help layout, with the usage line's prefix in graphlab's language and Chinese
    text wrapped by the columns it takes (a Chinese character takes two, and a line may break
    between two of them)."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)

    def _format_usage(self, usage, actions, groups, prefix):
        # argparse indents the usage's later lines by the prefix's length in characters.
        text = super()._format_usage(usage, actions, groups, prefix)
        shift = " " * (columns(prefix) - len(prefix))
        first, *rest = text.split("\n")
        return "\n".join([first, *(shift + line if line else line for line in rest)])

    def _split_lines(self, text, width):
        return wrap(text, width) if has_wide(text) else super()._split_lines(text, width)

    def _fill_text(self, text, width, indent):
        if not has_wide(text):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in wrap(text, width - len(indent)))


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that speaks graphlab's language: its group titles, its ``-h/--help``,
    its usage prefix (:class:`Formatter`) and its usage errors."""

    def __init__(self, *, add_help: bool = True, **kwargs) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(add_help=False, **kwargs)
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        if add_help:
            self.add_argument(
                "-h",
                "--help",
                action="help",
                default=argparse.SUPPRESS,
                help=_("show this help message and exit"),
            )

    def error(self, message: str) -> NoReturn:
        """The usage and one line saying what is wrong, on stderr; exit status 2."""
        self.print_usage(sys.stderr)
        line = _("{prog}: error: {message}").format(prog=self.prog, message=reworded(message))
        self.exit(2, line + "\n")
