"""What every exercise checker shares.

A checker runs the learner's code on the live backend (``torch.cuda`` on a GPU, the CPU emulator
elsewhere), compares what it did with what it should have done, and either raises
:class:`~graphlab.errors.CheckFailed` with a message that names the mistake, its fix and the part
of the lesson to reread, or prints one success line with "yours vs expected". Each result is
stored in the learner's progress.

Every ``check_*`` is wrapped by :func:`exercise`, which gives it this behaviour:

- a stub that still raises NotImplementedError prints one "not attempted yet" line and returns,
  so that running a whole lesson goes on past exercises nobody has tried;
- a wrong answer raises CheckFailed, which IPython shows as one short block, no traceback;
- whatever else goes wrong while checking the learner's values also becomes a CheckFailed.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import torch

from graphlab.backend import backend, cuda_module
from graphlab.course.headings import section_title
from graphlab.errors import CheckFailed
from graphlab.failures.recovery import current_stream, recover
from graphlab.language import gettext as _
from graphlab.language import language

from ._feedback import (
    crash_message,
    is_stub,
    learner_frame,
    plain_title,
    record_result,
    safe_repr,
    safe_text,
)

__all__ = [
    "Section",
    "call",
    "copy_advice",
    "exercise",
    "fail",
    "fmt",
    "live",
    "not_fixed",
    "number",
    "pair",
    "passed",
    "rounded",
    "same",
    "tensor",
]


@dataclass(frozen=True)
class Section:
    """A numbered section of a lesson, as its notebook titles it (``## 3. Title``)."""

    lesson: str  # the notebook's stem, e.g. "02_static_inputs"
    number: int
    title: str

    def __str__(self) -> str:
        """The section as feedback names it, titled as the learner's language's lesson is."""
        lang = language()
        title = (
            section_title(self.lesson, self.number, lang) if lang != "en" else None
        ) or self.title
        return _('lesson {lesson}, section {number} "{title}"').format(
            lesson=self.lesson, number=self.number, title=plain_title(title)
        )


class _NotAttempted(Exception):
    """The learner's function is still the stub: it raised NotImplementedError itself."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def live() -> tuple[Any, str]:
    """``(cuda, device)``: the graph API of the live backend and the device tensors live on."""
    return cuda_module(), backend().device


def fail(message: str, reread: Section | None = None) -> NoReturn:
    """Stop the check: ``message`` says what is wrong and how to fix it, ``reread`` where to learn
    why (by default the section the checker names in its :func:`exercise` decorator)."""
    failure = CheckFailed(message)
    if reread is not None:
        failure.reread = str(reread)
    raise failure


def exercise(reread: Section) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Make ``check_*`` a checker of lesson ``reread.lesson`` (see the module docstring).

    The learner's functions are the checker's parameters; their names head a failure's block.
    The result goes to the learner's progress as (lesson, exercise, passed), the exercise being
    the checker's name, as the lesson's solution cell names it (``%%solution check_busy_fraction``).
    A lesson that shows
    what the checker says about a wrong answer passes ``record=False``: that is a demonstration,
    not the learner's attempt, and must not replace their result.
    """

    def decorate(check: Callable[..., None]) -> Callable[..., None]:
        names = " and ".join(inspect.signature(check).parameters)
        exercise_id = check.__name__

        def result(passed: bool, record: bool) -> None:
            if record:
                record_result(reread.lesson, exercise_id, passed)

        @functools.wraps(check)
        def run(*answers: Any, record: bool = True) -> None:
            try:
                check(*answers)
            except _NotAttempted as stub:
                print(
                    _(
                        "not attempted yet: {name} — write your answer in the cell above, "
                        "then run this check again"
                    ).format(name=stub.name)
                )
                return
            except CheckFailed as failure:
                _label(failure, names, reread)
                result(False, record)
                raise
            except Exception as exc:
                # A value of the learner's that the checker could not even read (its __eq__,
                # __len__ or __iter__ raised, say): still their answer's fault, so still a
                # CheckFailed, pointing at their line when the error came from their code.
                unreadable = CheckFailed(_unreadable(names, exc))
                _label(unreadable, names, reread)
                result(False, record)
                raise unreadable from exc
            result(True, record)

        return run

    return decorate


def _label(failure: CheckFailed, names: str, reread: Section) -> None:
    """Name the exercise in ``failure`` and, unless its message chose one, what to reread."""
    failure.exercise = failure.exercise or names
    failure.reread = failure.reread or str(reread)


def _unreadable(names: str, exc: Exception) -> str:
    where = learner_frame(exc)
    at = "\n  " + _("at {where}").format(where=where) if where else ""
    return _(
        "what {names} returned could not be checked: {error}{at}\nReturn what the exercise asks "
        "for: plain numbers, tensors, lists or tuples of them."
    ).format(names=names, error=f"{type(exc).__name__}: {safe_text(exc)}", at=at)


def call(fn: Callable[..., Any], *args: Any, name: str) -> Any:
    """Call the learner's function ``fn`` (the exercise's ``name``) and return what it returns.

    Its stub's NotImplementedError stops the check as "not attempted yet"; any other error
    becomes a CheckFailed that names the error and the learner's line that raised it, with the
    catalogue's cause, fix and lesson when graphlab knows the error. Either way, what a failed
    capture of theirs left behind (its side stream current, its memory pool) is put back first.
    """
    if not callable(fn):
        message = _("{name} should be a function you define above, not {kind}.")
        fail(message.format(name=name, kind=type(fn).__name__))
    stream = current_stream()
    try:
        return fn(*args)
    except CheckFailed:
        raise
    except Exception as exc:
        recover(stream)
        if isinstance(exc, NotImplementedError) and is_stub(exc):
            raise _NotAttempted(name) from None
        message, lesson = crash_message(name, exc)
        failure = CheckFailed(message)
        if lesson:
            failure.reread = _("lesson {lesson}").format(lesson=lesson)
        raise failure from exc


def fmt(value: Any) -> str:
    """A short, device-independent rendering of a tensor or number for messages."""
    if isinstance(value, torch.Tensor):
        try:
            flat = value.detach().to("cpu", torch.float64).flatten().tolist()
        except Exception:  # a meta tensor, say: it has a shape but no values
            shape = tuple(value.shape)
            return _("a tensor of shape {shape} on {device}").format(
                shape=shape, device=value.device
            )
        shown = ", ".join(f"{v:g}" for v in flat[:6])
        more = ", ..." if len(flat) > 6 else ""
        return f"[{shown}{more}]"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return safe_repr(int(value))
    if isinstance(value, numbers.Real):
        return f"{float(value):.6g}"
    return safe_repr(value)


def copy_advice(output: str = "static_y") -> str:
    """How to keep a copy of the graph's ``output``, with the emulator's trap when it is live."""
    if backend().is_cuda:
        return _("Keep {output}.clone() (or .cpu(), which copies to the host).").format(
            output=output
        )
    return _(
        "Keep {output}.clone(). (Here, on the CPU emulator, .cpu() and .to('cpu') return the "
        "very same tensor, not a copy.)"
    ).format(output=output)


def tensor(value: Any, what: str) -> torch.Tensor:
    """``value`` if it is a tensor holding values the checker can read; otherwise CheckFailed.

    A tensor on another device than the checker's is fine (``.cpu()`` of a GPU output is a
    correct way to keep it); a meta tensor, which has a shape but no values, or a sparse one is
    not an answer.
    """
    if not isinstance(value, torch.Tensor):
        fail(_("{what} should be a tensor, not {value}.").format(what=what, value=safe_repr(value)))
    if value.device.type == "meta":
        message = _(
            "{what} is a tensor on the meta device: it has a shape but no values. Return the "
            "tensor the graph computed."
        )
        fail(message.format(what=what))
    if value.layout != torch.strided:
        message = _("{what} should be an ordinary dense tensor, not a {layout} one.")
        fail(message.format(what=what, layout=value.layout))
    return value


def pair(value: Any, what: str) -> tuple[Any, Any]:
    """``value`` as a pair: a tuple or a list of two elements; otherwise CheckFailed."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(_("{what}, not {value}.").format(what=what, value=safe_repr(value)))
    return value[0], value[1]


def graph_and_tensor(
    value: Any, cuda: Any, function: str, second: str, label: str, into: str | None = None
) -> tuple[Any, torch.Tensor]:
    """``function``'s result as ``(graph, tensor)``: a pair of a cuda.CUDAGraph and a tensor.

    ``second`` names the tensor in the expected pair, ``label`` in the message about it, and
    ``into`` says what the graph should be (by default, the one the learner captured into).
    """
    expected = _("{function} should return a pair (graph, {second})")
    graph, out = pair(value, expected.format(function=function, second=second))
    if not isinstance(graph, cuda.CUDAGraph):
        message = _("the first element should be the cuda.CUDAGraph {into}, not {kind}.")
        into = into or _("you captured into")
        fail(message.format(into=into, kind=type(graph).__name__))
    return graph, tensor(out, _("the second element ({label})").format(label=label))


def number(yours: Any, should: str) -> float:
    """``yours`` (a number or a one-element tensor) as a float; otherwise CheckFailed.

    The message is ``should`` followed by what the learner returned. A string is refused even
    when it spells a number: the exercise asks for a value, not its text.
    """
    if isinstance(yours, torch.Tensor):
        tensor(yours, _("your answer"))
        if yours.numel() != 1:
            message = _("{should}, not a tensor of {count} elements ({values}).")
            fail(message.format(should=should, count=yours.numel(), values=fmt(yours)))
    if isinstance(yours, (str, bytes)):
        fail(_("{should}, not the text {text}.").format(should=should, text=safe_repr(yours)))
    try:
        return float(yours)
    except OverflowError:
        size = (
            _(" (about 10**{digits})").format(digits=int(yours.bit_length() * math.log10(2)))
            if isinstance(yours, int)
            else ""
        )
        message = _("{should}: what it returned is too large for a float{size}.")
        fail(message.format(should=should, size=size))
    except (TypeError, ValueError):
        fail(_("{what}, not {value}.").format(what=should, value=safe_repr(yours)))
    except Exception as exc:  # the learner's own __float__ raised
        message = _("{should}: float() of what you returned raised {error}.")
        fail(message.format(should=should, error=f"{type(exc).__name__}: {safe_text(exc)}"))


def not_fixed(values: list[float], name: str, inputs: str, reread: Section | None = None) -> None:
    """Fail when the last of the learner's answers ``values`` (wrong, the caller has found)
    repeats an earlier one for other ``inputs``: the answer does not depend on its input."""
    if values[-1] in values[:-1]:
        message = _(
            "{name} gave the same answer, {value:.6g}, for two different {inputs}: compute it "
            "from its arguments."
        )
        fail(message.format(name=name, value=values[-1], inputs=inputs), reread)


def rounded(value: float, expected: float) -> bool:
    """Whether ``value`` is ``expected`` rounded (to a whole number, or to 1 to 4 decimals)."""
    if math.isclose(value, expected, rel_tol=1e-9):
        return False
    return any(math.isclose(value, round(expected, digits)) for digits in range(5)) or (
        value in (math.floor(expected), math.ceil(expected))
    )


def passed(what: str, yours: Any, expected: Any) -> None:
    """Print the success line of a check."""
    line = _("PASSED {what}: yours {yours} vs expected {expected}")
    print(line.format(what=what, yours=fmt(yours), expected=fmt(expected)))


def same(a: torch.Tensor, b: torch.Tensor, *, exact: bool = True) -> bool:
    """Whether ``a`` has ``b``'s shape and values (close ones if not exact), on any device.

    ``a`` must have passed :func:`tensor`; values are compared in ``b``'s dtype.
    """
    if a.shape != b.shape:
        return False
    a_cpu, b_cpu = a.detach().to("cpu", b.dtype), b.detach().to("cpu")
    if exact:
        return bool(torch.equal(a_cpu, b_cpu))
    return bool(torch.allclose(a_cpu, b_cpu, rtol=1e-4, atol=1e-5))
