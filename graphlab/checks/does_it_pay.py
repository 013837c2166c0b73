"""Checks for lesson 06, does it pay: the break-even number of repetitions."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from graphlab.language import gettext as _

from ._core import call, exercise, fail, fmt, not_fixed, number, passed, rounded
from ._sections import MODEL

__all__ = ["check_break_even"]


# Hand-made timings in microseconds, shaped like graphlab.compare(...).to_dict(). In the first,
# the GPU-side times alone would suggest 8000 / (50 - 10) = 200 repetitions; end to end, with the
# input copies each iteration needs, the saving is 60 - 40 = 20 us and N* = 8000 / 20 = 400.
CASES = [
    (
        {
            "capture_us": 8000.0,
            "eager_us": 50.0,
            "replay_us": 10.0,
            "eager_end_to_end_us": 60.0,
            "replay_end_to_end_us": 40.0,
        },
        400.0,
    ),
    (
        {
            "capture_us": 1500.0,
            "eager_us": 30.0,
            "replay_us": 30.0,
            "eager_end_to_end_us": 35.0,
            "replay_end_to_end_us": 35.0,
        },
        None,
    ),
    (
        {
            "capture_us": 900.0,
            "eager_us": 12.0,
            "replay_us": 9.0,
            "eager_end_to_end_us": 14.0,
            "replay_end_to_end_us": 16.0,
        },
        None,
    ),
    (
        {
            "capture_us": 7000.0,
            "eager_us": 70.0,
            "replay_us": 12.0,
            "eager_end_to_end_us": 75.0,
            "replay_end_to_end_us": 19.0,
        },
        125.0,
    ),
    # Answers that are not whole numbers: 1907 / (61.3 - 38.9) and 7941 / (97.5 - 21.25).
    (
        {
            "capture_us": 1907.0,
            "eager_us": 41.0,
            "replay_us": 30.5,
            "eager_end_to_end_us": 61.3,
            "replay_end_to_end_us": 38.9,
        },
        1907.0 / (61.3 - 38.9),
    ),
    (
        {
            "capture_us": 7941.0,
            "eager_us": 80.0,
            "replay_us": 9.5,
            "eager_end_to_end_us": 97.5,
            "replay_end_to_end_us": 21.25,
        },
        7941.0 / (97.5 - 21.25),
    ),
]


@exercise(MODEL)
def check_break_even(break_even: Callable[..., Any]) -> None:
    """Check ``break_even(timings) -> float | None``: N* = C / (t_eager - t_replay), end to end.

    ``timings`` has the keys of a comparison (``capture_us``, ``eager_us``, ``replay_us``,
    ``eager_end_to_end_us``, ``replay_end_to_end_us``). The answer is ``None`` when replay is not
    faster end to end, since then no number of repetitions pays back the capture. Two cases have
    answers that are not whole numbers, so that a rounded N* cannot pass.
    """
    values = []
    for timings, expected in CASES:
        yours = call(break_even, dict(timings), name="break_even")
        saving = timings["eager_end_to_end_us"] - timings["replay_end_to_end_us"]
        if expected is None:
            if yours is not None:
                message = _(
                    "with eager {eager} us and replay {replay} us end to end, replay saves "
                    "{saving:g} us: no N pays back the capture, so return None (you returned "
                    "{yours})."
                )
                fail(
                    message.format(
                        eager=timings["eager_end_to_end_us"],
                        replay=timings["replay_end_to_end_us"],
                        saving=saving,
                        yours=fmt(yours),
                    )
                )
            continue
        if yours is None:
            message = _(
                "break_even returned None although replay saves {saving:g} us per iteration."
            )
            fail(message.format(saving=saving))
        values.append(number(yours, _("break_even should return a number or None")))
        _check_value(values, timings, expected)
    passed(_("break-even repetitions of the first case"), values[0], CASES[0][1])


def _check_value(values: list[float], timings: dict[str, Any], expected: float) -> None:
    """Fail unless the last of ``values`` is N* for ``timings``, saying what it is instead."""
    value = values[-1]
    if math.isclose(value, expected, rel_tol=1e-9):
        return
    gpu_only = timings["capture_us"] / (timings["eager_us"] - timings["replay_us"])
    if math.isclose(value, gpu_only):
        message = _(
            "you got {value:g}: that uses eager_us and replay_us. Compare end to end, with "
            "the input copies each iteration needs: eager_end_to_end_us and "
            "replay_end_to_end_us give {expected:g}."
        )
        fail(message.format(value=value, expected=expected))
    if rounded(value, expected):
        message = _("return N* itself ({expected:.6g}), not rounded to {value:g}.")
        fail(message.format(expected=expected, value=value))
    not_fixed(values, "break_even", _("timings"))
    message = _("break_even returned {value:g} for {timings}, expected {expected:.6g}.")
    fail(message.format(value=value, timings=timings, expected=expected))
