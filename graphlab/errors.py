"""graphlab's one exception hierarchy.

Every error graphlab raises on purpose is a :class:`GraphlabError`. Its message is written for the
person at the keyboard: what went wrong and what to do about it. The CLI prints that message on one
line and exits with status 2; it never shows a traceback for these.
"""

from __future__ import annotations

import textwrap

from graphlab.language import gettext as _

__all__ = [
    "CaptureError",
    "CheckFailed",
    "GraphUpdateError",
    "GraphlabError",
    "NeedsGPUError",
    "PlannerError",
    "RecordingError",
    "SimulatorError",
    "TimingError",
    "TraceError",
]


class GraphlabError(Exception):
    """Base class of every error graphlab raises deliberately."""


class TraceError(GraphlabError, ValueError):
    """A trace or timeline file could not be read: missing, not JSON, truncated or not a trace."""


class RecordingError(GraphlabError, ValueError):
    """A bundled or user recording is missing, malformed or of an unknown schema version."""


class SimulatorError(GraphlabError, ValueError):
    """Simulator parameters are out of range (negative or NaN durations, zero kernels, ...)."""


class TimingError(GraphlabError, ValueError):
    """A time given to the break-even model is not a finite, non-negative number of µs."""


class NeedsGPUError(GraphlabError, RuntimeError):
    """The operation measures real GPU time and this machine has no CUDA device."""


class CaptureError(GraphlabError, RuntimeError):
    """A graph capture failed on the CPU emulator, in the way it would fail under CUDA.

    ``cuda_error`` names the CUDA error the GPU reports for the same mistake
    (for example ``cudaErrorStreamCaptureUnsupported``).
    """

    def __init__(self, message: str, cuda_error: str | None = None):
        super().__init__(message)
        self.cuda_error = cuda_error


class GraphUpdateError(GraphlabError, RuntimeError):
    """An executable graph could not be changed in place (``cudaGraphExecUpdate`` refused it).

    ``reason`` names CUDA's verdict (for example ``cudaGraphExecUpdateErrorTopologyChanged``);
    the graph that was to be updated is left as it was.
    """

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason


class CheckFailed(GraphlabError, AssertionError):
    """An exercise checker found the learner's answer wrong; the message says precisely how.

    ``str(failure)`` is the message alone: what is wrong and how to fix it. The checker also sets
    ``exercise`` (the function the learner writes) and ``reread`` (the part of the lesson that
    explains the mistake). IPython shows a failed check as one block made of these three, without
    a traceback: it calls :meth:`_render_traceback_` in place of formatting one.
    """

    exercise: str = ""
    reread: str = ""

    def block(self) -> str:
        """The failure as the learner sees it: a headline, the message, what to reread."""
        exercise = self.exercise or _("your answer")
        lines = [_("{exercise}: not right yet").format(exercise=exercise)]
        for paragraph in str(self).splitlines():
            indent = "  " + paragraph[: len(paragraph) - len(paragraph.lstrip())]
            lines += textwrap.wrap(
                paragraph.strip(),
                100,
                initial_indent=indent,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
        if self.reread:
            lines.append("  " + _("Reread: {section}").format(section=self.reread))
        return "\n".join(lines)

    def _render_traceback_(self) -> list[str]:
        # IPython's InteractiveShell.showtraceback uses this list of lines instead of the
        # traceback when an exception defines it; ipykernel sends it as the error's traceback.
        return self.block().splitlines()


class PlannerError(GraphlabError, ValueError):
    """A histogram, cost table, request trace or constraint the capture-size planner cannot use.

    The message is one line that names the offending value and says what to change.
    """
