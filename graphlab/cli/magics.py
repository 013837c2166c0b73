"""IPython extension: ``%load_ext graphlab``.

Two magics:

- ``%graphlab COMMAND ...`` runs a graphlab command in the notebook: ``%graphlab doctor``,
  ``%graphlab gaps trace.json``, ``%graphlab recordings``, ... (everything but ``lab``, which
  starts a server of its own).
- ``%%graphlab_timeline [NAME]`` runs the cell under ``torch.profiler`` (CPU + CUDA), waits for the
  GPU, prints the gap analysis and stores the :class:`~graphlab.trace.timeline.Timeline` in ``NAME``
  (default ``timeline``). It needs a GPU; on a machine without one it says where to find recorded
  timelines instead. Remember that profiling slows eager launches down: use the picture for its
  shape, and time without the profiler (``graphlab.compare``).
"""

from __future__ import annotations

import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from graphlab.errors import GraphlabError, NeedsGPUError

__all__ = ["GraphlabMagics", "load_ipython_extension"]


@magics_class
class GraphlabMagics(Magics):
    """The ``%graphlab`` line magic and the ``%%graphlab_timeline`` cell magic."""

    @line_magic
    def graphlab(self, line: str) -> int | None:
        """Run a graphlab command: ``%graphlab doctor``, ``%graphlab gaps TRACE.json --json``."""
        from . import main

        argv = shlex.split(line)
        if argv and argv[0] == "lab":
            raise UsageError("`graphlab lab` starts JupyterLab: run it in a terminal instead")
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code
        # Show a failing status in the cell's output; stay quiet on success.
        return code if code else None

    @cell_magic
    def graphlab_timeline(self, line: str, cell: str) -> None:
        """Profile the cell on the GPU; store its Timeline and print where the GPU idled."""
        name = line.strip() or "timeline"
        if not name.isidentifier():
            raise UsageError(f"%%graphlab_timeline {name!r}: give a Python name to store it in")
        try:
            timeline = _profile_cell(self.shell, cell)
        except GraphlabError as exc:
            raise UsageError(str(exc)) from None
        if timeline is None:  # the cell raised; IPython has shown its error
            return
        self.shell.user_ns[name] = timeline
        print(timeline.summary().report())
        print(f"(stored as `{name}`; {name}.to_chrome_trace('trace.json') opens in Perfetto)")


def _profile_cell(shell, cell: str):
    import torch
    from torch.profiler import ProfilerActivity, profile

    from graphlab.trace.timeline import Timeline

    if not torch.cuda.is_available():
        raise NeedsGPUError(
            "%%graphlab_timeline profiles the GPU and this machine has none: look at a real "
            "recorded timeline instead, e.g. graphlab.recording(name).timeline('eager')"
        )
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        result = shell.run_cell(cell)
        torch.cuda.synchronize()  # everything the cell queued finishes inside the trace
    if not result.success:
        return None
    return Timeline.from_chrome_trace(prof)


def load_ipython_extension(ipython) -> None:
    """Called by ``%load_ext graphlab``."""
    ipython.register_magics(GraphlabMagics)
