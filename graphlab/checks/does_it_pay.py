"""Checks for lesson 06, does it pay: the break-even number of repetitions."""

from __future__ import annotations

import math
from collections.abc import Callable

from ._core import call, fail, number, passed

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
]


def check_break_even(break_even: Callable) -> None:
    """Check ``break_even(timings) -> float | None``: N* = C / (t_eager - t_replay), end to end.

    ``timings`` has the keys of a comparison (``capture_us``, ``eager_us``, ``replay_us``,
    ``eager_end_to_end_us``, ``replay_end_to_end_us``). The answer is ``None`` when replay is not
    faster end to end, since then no number of repetitions pays back the capture.
    """
    first = None
    for timings, expected in CASES:
        yours = call(break_even, dict(timings), name="break_even")
        saving = timings["eager_end_to_end_us"] - timings["replay_end_to_end_us"]
        if expected is None:
            if yours is not None:
                fail(
                    f"with eager {timings['eager_end_to_end_us']} us and replay "
                    f"{timings['replay_end_to_end_us']} us end to end, replay saves {saving} us: "
                    f"no N pays back the capture, so return None (you returned {yours!r})."
                )
            continue
        if yours is None:
            fail(f"break_even returned None although replay saves {saving} us per iteration.")
        value = number(yours, "break_even should return a number or None")
        gpu_only = timings["capture_us"] / (timings["eager_us"] - timings["replay_us"])
        if math.isclose(value, gpu_only) and not math.isclose(gpu_only, expected):
            fail(
                f"you got {value:g}: that uses eager_us and replay_us. Compare end to end, with "
                "the input copies each iteration needs: eager_end_to_end_us and "
                f"replay_end_to_end_us give {expected:g}."
            )
        if value == math.ceil(expected + 1e-9) and value != expected:
            fail(f"return N* itself ({expected:g}), not rounded to {value:g}.")
        if not math.isclose(value, expected, rel_tol=1e-9):
            fail(f"break_even returned {value:g} for {timings}, expected {expected:g}.")
        first = value if first is None else first
    passed("break-even repetitions of the first case", first, CASES[0][1])
