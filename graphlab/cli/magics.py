"""IPython extension: ``%load_ext graphlab``.

Three magics:

- ``%graphlab COMMAND ...`` runs a graphlab command in the notebook: ``%graphlab doctor``,
  ``%graphlab gaps trace.json``, ``%graphlab recordings``, ... (everything but ``lab``, which
  starts a server of its own).
- ``%%graphlab_timeline [NAME]`` runs the cell under ``torch.profiler`` (CPU + CUDA), waits for the
  GPU, prints the gap analysis and stores the :class:`~graphlab.trace.timeline.Timeline` in ``NAME``
  (default ``timeline``). It needs a GPU; on a machine without one it says where to find recorded
  timelines instead. Remember that profiling slows eager launches down: use the picture for its
  shape, and time without the profiler (``graphlab.compare``).
- ``%%graphlab_diagnose`` runs the cell, whose last expression is a call of the step with its
  example inputs (``model(x)``, ``train_step(x, y)``), and shows :func:`graphlab.diagnose`'s
  report for that call instead of making it.
- ``%%solution ID [--revealed]`` heads an exercise's solution cell and runs it only when the
  learner asks for it: the convention lives in :mod:`graphlab.course.solutions`.
"""

from __future__ import annotations

import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from graphlab.course.solutions import run_solution
from graphlab.errors import GraphlabError, NeedsGPUError
from graphlab.language import gettext as _
from graphlab.support.lazy_iri_syntax import defer as defer_iri_syntax

from .gaps import report_words

__all__ = ["GraphlabMagics", "load_ipython_extension"]

# Commands that make no sense inside a notebook: `lab` starts a JupyterLab server of its own.
_NOT_IN_A_NOTEBOOK = ("lab",)


@magics_class
class GraphlabMagics(Magics):
    """The ``%graphlab`` line magic and the ``%%graphlab_timeline`` and ``%%solution`` cell
    magics."""

    @line_magic
    def graphlab(self, line: str) -> int | None:
        """Run a graphlab command: ``%graphlab doctor``, ``%graphlab gaps TRACE.json --json``."""
        from . import build_parser, main

        try:
            argv = shlex.split(line)
        except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
            raise UsageError(
                _("%graphlab {line}: {error}; close the quote or escape it").format(
                    line=line, error=exc
                )
            ) from None
        if argv and argv[0] == "lab":
            raise UsageError(_("`graphlab lab` starts JupyterLab: run it in a terminal instead"))
        if not argv:
            print(build_parser("%graphlab", _NOT_IN_A_NOTEBOOK).format_help())
            return None
        try:
            code = main(argv, "%graphlab", _NOT_IN_A_NOTEBOOK)
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code
        # Show a failing status in the cell's output; stay quiet on success.
        return code if code else None

    @cell_magic
    def graphlab_timeline(self, line: str, cell: str) -> None:
        """Profile the cell on the GPU; store its Timeline and print where the GPU idled."""
        name = line.strip() or "timeline"
        if not name.isidentifier():
            raise UsageError(
                _("%%graphlab_timeline {name}: give a Python name to store it in").format(
                    name=repr(name)
                )
            )
        try:
            timeline = _profile_cell(self.shell, cell)
        except GraphlabError as exc:
            raise UsageError(str(exc)) from None
        if timeline is None:  # the cell raised; IPython has shown its error
            return
        self.shell.user_ns[name] = timeline
        print(timeline.summary().report(report_words()))
        print(
            _(
                "(stored as `{name}`; {name}.to_chrome_trace('trace.json') opens in Perfetto)"
            ).format(name=name)
        )

    @cell_magic
    def graphlab_diagnose(self, line: str, cell: str):
        """Diagnose the call that ends the cell: ``model(x)`` becomes ``diagnose(model, x)``."""
        fn, inputs = _diagnosed_call(self.shell, cell)
        from graphlab.diagnose import diagnose

        try:
            return diagnose(fn, *inputs)
        except GraphlabError as exc:
            raise UsageError(str(exc)) from None

    @cell_magic
    def solution(self, line: str, cell: str) -> None:
        """Run an exercise's solution only if revealed: ``%%solution ID [--revealed]``."""
        run_solution(self.shell, line, cell)


def _diagnosed_call(shell, cell: str) -> tuple:
    """Run all but the cell's last line; return the function and arguments of that last call."""
    import ast

    try:
        tree = ast.parse(shell.transform_cell(cell))
    except SyntaxError as exc:
        raise UsageError(
            _("%%graphlab_diagnose: the cell does not parse: {error}").format(error=exc)
        ) from None
    last = tree.body[-1] if tree.body else None
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)) or any(
        isinstance(a, ast.Starred) for a in last.value.args
    ) or last.value.keywords:  # fmt: skip
        raise UsageError(
            _(
                "%%graphlab_diagnose: end the cell with a call of the step on its example inputs, "
                "such as model(x) or train_step(x, y)"
            )
        )
    # The shell's own ex() and ev() run the learner's lines in the notebook's namespace, as the
    # cell would have run them; the file name marks lines that came from this cell.
    if tree.body[:-1]:
        setup = ast.Module(body=tree.body[:-1], type_ignores=[])
        shell.ex(compile(setup, "<graphlab_diagnose cell>", "exec"))
    call = last.value
    fn = shell.ev(compile(ast.Expression(call.func), "<graphlab_diagnose>", "eval"))
    inputs = tuple(
        shell.ev(compile(ast.Expression(a), "<graphlab_diagnose>", "eval")) for a in call.args
    )
    return fn, inputs


def _profile_cell(shell, cell: str):
    import torch
    from torch.profiler import ProfilerActivity, profile

    from graphlab.trace.timeline import Timeline

    if not torch.cuda.is_available():
        raise NeedsGPUError(
            _(
                "%%graphlab_timeline profiles the GPU and this machine has none: look at a real "
                "recorded timeline instead, e.g. graphlab.recording(name).timeline('eager')"
            )
        )
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        result = shell.run_cell(cell)
        torch.cuda.synchronize()  # everything the cell queued finishes inside the trace
    if not result.success:
        return None
    return Timeline.from_chrome_trace(prof)


def load_ipython_extension(ipython) -> None:
    """Called by ``%load_ext graphlab``, which every lesson runs before its first widget: the
    magics, and jsonschema's IRI checker deferred before plotly's import would build it
    (:mod:`graphlab.support.lazy_iri_syntax`)."""
    defer_iri_syntax()
    ipython.register_magics(GraphlabMagics)
