"""Measured break-even: N eager iterations against capture plus N replays, on the host clock.

The measured counterpart of :func:`graphlab.timing.break_even.cumulative_totals`: one run per
mode up to the largest count, the clock read after a synchronize at each count, the graph run's
clock started before capture, each replay with its input copy and output clones.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

from .captured import (
    FRESH_INPUT_SETS,
    Captured,
    capture_graph,
    check_count,
    check_inputs,
    require_gpu,
    warm_up,
)
from .results import CumulativeTotals
from .side_stream import side_stream

if TYPE_CHECKING:
    import torch

__all__ = ["BREAK_EVEN_COUNTS", "measure_cumulative_totals"]

# Iteration counts at which measure_cumulative_totals reads the clock by default.
BREAK_EVEN_COUNTS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def measure_cumulative_totals(
    fn: Callable[..., Any],
    *inputs: torch.Tensor,
    counts: Sequence[int] = BREAK_EVEN_COUNTS,
    repeats: int = 3,
    warmup: int = 3,
) -> CumulativeTotals:
    """Measure, for each N in ``counts``, N eager iterations against capture + N replays.

    One run per mode goes up to ``max(counts)`` iterations and reads the host clock, after a
    synchronize, each time it reaches a count: so the totals are cumulative, as a real loop's
    are. The graph run's clock starts before capture; each replay copies fresh inputs into the
    static buffers and clones the outputs; eager gets the same fresh inputs. Both modes start
    from a process that has already run ``fn`` (the warm-up), so lazy initialisation counts for
    neither. This is the measured counterpart of the model's totals
    (:func:`graphlab.timing.break_even.cumulative_totals`) and N* = C / (t_eager − t_replay).
    """
    counts = tuple(counts)
    if not counts or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in counts):
        raise GraphlabError(
            _("counts must be positive whole numbers, not {counts}").format(counts=repr(counts))
        )
    if list(counts) != sorted(set(counts)):
        raise GraphlabError(
            _("counts must be strictly increasing, not {counts}").format(counts=repr(counts))
        )
    check_count("repeats", repeats)
    check_count("warmup", warmup)
    require_gpu("graphlab.timing.cumulative.measure_cumulative_totals")
    import torch

    check_inputs(inputs)

    static = tuple(x.clone() for x in inputs)
    fresh = [tuple(x.clone() for x in inputs) for _ in range(FRESH_INPUT_SETS)]
    side = side_stream(torch.cuda)
    warm_up(fn, static, side, warmup)

    eager_runs, graph_runs = [], []
    for _repeat in range(repeats):
        eager_runs.append(_eager_totals(fn, fresh, counts))
        graph_runs.append(_graph_totals(fn, static, fresh, side, counts))
    return CumulativeTotals(
        counts=counts,
        eager_us=tuple(float(v) for v in np.median(eager_runs, axis=0)),
        graph_us=tuple(float(v) for v in np.median(graph_runs, axis=0)),
        repeats=repeats,
    )


def _eager_totals(fn: Callable[..., Any], fresh: list[tuple], counts: tuple[int, ...]) -> list:
    """Cumulative host-clock µs of eager iterations, read at each of ``counts``."""
    import torch

    # One untimed call on this stream, so the allocator already holds its blocks here.
    fn(*fresh[0])
    torch.cuda.synchronize()
    totals: list[float] = []
    start = time.perf_counter_ns()
    for i in range(1, counts[-1] + 1):
        fn(*fresh[i % FRESH_INPUT_SETS])
        if i == counts[len(totals)]:
            torch.cuda.synchronize()
            totals.append((time.perf_counter_ns() - start) / 1e3)
    return totals


def _graph_totals(
    fn: Callable[..., Any],
    static: tuple,
    fresh: list[tuple],
    stream: torch.cuda.Stream,
    counts: tuple[int, ...],
) -> list:
    """Cumulative host-clock µs of capture + replays (with input copies and output clones)."""
    import torch

    torch.cuda.synchronize()
    totals: list[float] = []
    start = time.perf_counter_ns()
    captured = Captured(fn, static, *capture_graph(fn, static, stream))
    for i in range(1, counts[-1] + 1):
        captured.replay_with(fresh[i % FRESH_INPUT_SETS])
        if i == counts[len(totals)]:
            torch.cuda.synchronize()
            totals.append((time.perf_counter_ns() - start) / 1e3)
    return totals
