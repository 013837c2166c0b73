"""What every exercise checker shares.

A checker runs the learner's code on the live backend (``torch.cuda`` on a GPU, the CPU emulator
elsewhere), compares what it did with what it should have done, and either raises
:class:`~graphlab.errors.CheckFailed` with a message that names the mistake, or prints one success
line with "yours vs expected".
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable
from typing import Any

import torch

from graphlab.backend import backend, cuda_module
from graphlab.errors import CheckFailed
from graphlab.failures.explanation import explain
from graphlab.failures.recovery import current_stream, recover

__all__ = ["call", "fail", "fmt", "live", "number", "passed", "same"]


def live() -> tuple[Any, str]:
    """``(cuda, device)``: the graph API of the live backend and the device tensors live on."""
    return cuda_module(), backend().device


def fail(message: str) -> None:
    """Stop the check with ``message``, which must say what is wrong and how to fix it."""
    raise CheckFailed(message)


def fmt(value: Any) -> str:
    """A short, device-independent rendering of a tensor or number for messages."""
    if isinstance(value, torch.Tensor):
        flat = value.detach().to("cpu", torch.float64).flatten().tolist()
        shown = ", ".join(f"{v:g}" for v in flat[:6])
        more = ", ..." if len(flat) > 6 else ""
        return f"[{shown}{more}]"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f"{float(value):.6g}"
    return repr(value)


def number(yours: Any, should: str) -> float:
    """``yours`` (a number or a one-element tensor) as a float; otherwise CheckFailed.

    The message is ``should`` followed by what the learner returned. A string is refused even
    when it spells a number: the exercise asks for a value, not its text.
    """
    if not isinstance(yours, (str, bytes)):
        with contextlib.suppress(TypeError, ValueError):
            return float(yours)
    raise CheckFailed(f"{should}, not {yours!r}.")


def passed(what: str, yours: Any, expected: Any) -> None:
    """Print the success line of a check."""
    print(f"PASSED {what}: yours {fmt(yours)} vs expected {fmt(expected)}")


def same(a: Any, b: torch.Tensor, *, exact: bool = True) -> bool:
    """Whether ``a`` is a tensor of ``b``'s shape with equal values (close ones if not exact)."""
    if not isinstance(a, torch.Tensor) or a.shape != b.shape:
        return False
    a_cpu, b_cpu = a.detach().to("cpu"), b.detach().to("cpu")
    if exact:
        return bool(torch.equal(a_cpu, b_cpu))
    return bool(torch.allclose(a_cpu, b_cpu, rtol=1e-4, atol=1e-5))


def call(fn: Callable, *args: Any, name: str) -> Any:
    """Call the learner's ``fn``, turning the stub's NotImplementedError or a crash into a message.

    Errors graphlab raises on purpose (a capture error of the emulator, a CheckFailed from a nested
    check) keep their own message, with the exercise named in front; a failure graphlab's
    catalogue recognises gets its explanation (cause, fix, lesson) below.
    """
    if not callable(fn):
        fail(f"{name} should be a function you define above, not {type(fn).__name__}.")
    stream = current_stream()
    try:
        return fn(*args)
    except NotImplementedError:
        fail(f"{name} is still the stub: replace the `raise NotImplementedError` with your code.")
    except CheckFailed:
        raise
    except Exception as exc:
        # A capture of the learner's that failed must not leave its side stream current or its
        # memory pool reserved for the cells that follow.
        recover(stream)
        explanation = explain(exc)
        hint = f"\n{explanation}" if explanation.matched else ""
        raise CheckFailed(f"{name} raised {type(exc).__name__}: {exc}{hint}") from exc
