"""When does a CUDA Graph pay for itself? The break-even model, written once.

Capturing costs ``C`` once; after that each step costs ``t_r`` (replay) instead of ``t_e``
(eager). Over ``N`` steps the totals are ``N * t_e`` eager and ``C + N * t_r`` with the graph, so
the graph is ahead once ``N > N* = C / (t_e - t_r)``. If a replay is not faster there is no
break-even point. ``t_e`` and ``t_r`` must cover the same scope, including the input copies and
output reads each really needs, or the comparison flatters one side.

:func:`graphlab.compare` fills its ``break_even`` with :func:`break_even`; the simulator's
break-even, the ``graphlab simulate`` report and the break-even widget use the same two
functions. The measured counterpart of :func:`cumulative_totals` is
:func:`graphlab.timing.compare.measure_cumulative_totals`, which runs the loops on a GPU.
"""

from __future__ import annotations

import math

import numpy as np

from graphlab.errors import GraphlabError, TimingError
from graphlab.language import gettext as _

__all__ = ["break_even", "check_duration", "cumulative_totals"]


def check_duration(
    name: str,
    value: float,
    maximum: float = math.inf,
    error: type[GraphlabError] = TimingError,
) -> float:
    """``value`` as a float if it is a duration in [0, maximum] µs, else ``error``.

    The default accepts any finite duration (measured totals can be long); the simulator's
    parameters pass their own ``maximum`` and their own error (SimulatorError), so a bad
    measurement is a timing error and a bad simulator parameter a simulator one. ``name`` is the
    argument the message names.
    """
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{name} must be a number of microseconds, got {value!r:.40}") from None
    if not math.isfinite(number) or number < 0 or number > maximum:
        if math.isinf(maximum):
            raise error(f"{name} must be a finite, non-negative time in µs, got {value!r:.40}")
        raise error(
            f"{name} must be between 0 and {maximum:g} µs, got {value!r:.40}: "
            "pass a non-negative, finite duration"
        )
    return number


def break_even(capture_us: float, eager_us: float, replay_us: float) -> float | None:
    """N* = capture / (eager − replay): steps after which capturing has paid for itself.

    ``eager_us`` and ``replay_us`` must be measured over the same scope (end to end, with the
    input copies each needs). None when a replay is not faster: then the graph never pays.
    N* is a real number: the graph's total is lower from the first whole step after it.
    TimingError when a time is not a finite, non-negative number of µs.
    """
    capture = check_duration("capture_us", capture_us)
    saving = check_duration("eager_us", eager_us) - check_duration("replay_us", replay_us)
    if saving <= 0:
        return None
    return capture / saving


def cumulative_totals(
    capture_us: float, eager_us: float, replay_us: float, steps
) -> tuple[np.ndarray, np.ndarray]:
    """The model's total time (µs) of ``steps`` repetitions, eager and with a graph.

    ``steps`` is a number or an array of step counts; returns ``(eager_total, graph_total)``
    as float arrays of the same shape: ``steps * eager_us`` and ``capture_us + steps * replay_us``
    (capture included).
    """
    try:
        n = np.asarray(steps, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        n = np.asarray(np.nan)
    if np.any(~np.isfinite(n)) or np.any(n < 0):
        raise TimingError(_("step counts must be finite, non-negative numbers"))
    capture = check_duration("capture_us", capture_us)
    eager_total = n * check_duration("eager_us", eager_us)
    return eager_total, capture + n * check_duration("replay_us", replay_us)
