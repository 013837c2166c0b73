"""Checks for lesson 14, which sizes to capture: pricing a plan, and choosing one.

A plan is a list of captured batch sizes. A decode step of batch size ``b`` replays the graph of
the smallest captured size ``s >= b`` at ``replay_us[s]`` (``s - b`` rows of padding), or runs
eagerly at ``eager_us[b]`` when no captured size is that large. Its expected step time is the
mean over steps: ``sum_b count[b] * cost(b) / sum_b count[b]``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

import numpy as np

from graphlab.language import gettext as _
from graphlab.planner import (
    BatchingModel,
    Constraints,
    CostTable,
    Histogram,
    azure_requests,
    best_plan,
    decode_histogram,
    evaluate,
    preset_sizes,
    recorded_costs,
)

from ._core import call, exercise, fail, not_fixed, number, passed, rounded
from ._feedback import safe_repr
from ._sections import PRICING

__all__ = [
    "CHOICE",
    "check_choose_sizes",
    "check_expected_step_time",
    "choice_setup",
    "step_time_cases",
]


def _table(sizes: Sequence[int], replay: Sequence[float], eager: Sequence[float]) -> CostTable:
    return CostTable.from_dict(
        {
            "sizes": list(sizes),
            "replay_us": list(replay),
            "eager_us": list(eager),
            "capture_s": [0.01] * len(sizes),
            "graph_mib": [2.0] * len(sizes),
        }
    )


def step_time_cases() -> list[tuple[list[int], Histogram, CostTable, float]]:
    """(plan, histogram, costs, expected µs per step), each worked out by hand beside it."""
    six = _table(range(1, 7), [10.5, 11, 12.25, 13, 15.5, 16], [30, 31.5, 33, 35, 36.5, 38])
    gaps = _table(
        [1, 2, 3, 4, 6, 8, 12, 16],
        [20.2, 21.4, 22.1, 23.9, 25.3, 27.7, 31.6, 35.0],
        [48.5, 50.25, 52.5, 55.75, 58, 61.5, 70.25, 79],
    )
    four = _table(range(1, 5), [5.5, 6, 7.25, 8], [9, 10, 11, 12.5])
    return [
        # 1 and 2 replay the graph of 2 (11 µs), 4 that of 4 (13), 5 and 6 run eagerly (36.5,
        # 38): (3*11 + 5*11 + 13 + 2*36.5 + 4*38) / 15 = 326 / 15.
        ([2, 4], Histogram.from_counts({1: 3, 2: 5, 4: 1, 5: 2, 6: 4}), six, 326 / 15),
        # Sizes given unsorted. 1 and 3 replay 3 (22.1), 6 replays 8 (27.7), 12 and 16 run
        # eagerly (70.25, 79): (12*22.1 + 7*22.1 + 4*27.7 + 9*70.25 + 2*79) / 34 = 1320.95 / 34.
        ([8, 3], Histogram.from_counts({1: 12, 3: 7, 6: 4, 12: 9, 16: 2}), gaps, 1320.95 / 34),
        # One graph of 4 serves everything: 8 µs whatever the mix.
        ([4], Histogram.from_counts({1: 1, 2: 2, 3: 3, 4: 4}), four, 8.0),
        # 1 -> 1 (10.5), 2 and 3 -> 3 (12.25), 5 -> 6 (16): (2*10.5 + 12.25 + 4*12.25 + 6*16) /
        # 13 = 178.25 / 13; no step runs eagerly.
        ([1, 3, 6], Histogram.from_counts({1: 2, 2: 1, 3: 4, 5: 6}), six, 178.25 / 13),
    ]


def _price(
    plan: list[int], histogram: Histogram, costs: CostTable, variant: str = "right"
) -> float:
    """The expected step time of ``plan``, or a wrong way of computing it (``variant``)."""
    replay = dict(zip(costs.sizes.tolist(), costs.replay_us.tolist(), strict=True))
    eager = dict(zip(costs.sizes.tolist(), costs.eager_us.tolist(), strict=True))
    largest = max(plan)
    times, counts = [], []
    for b, n in zip(histogram.sizes.tolist(), histogram.counts.tolist(), strict=True):
        fits = [s for s in plan if s >= b]
        if variant == "in order":  # the first captured size >= b in the order given
            fits = fits[:1]
        if not fits:
            if variant == "dropped":
                continue
            cost = replay[largest] if variant == "cut" else eager[b]
        elif variant == "no padding":
            cost = replay[b]
        else:
            cost = replay[min(fits)]
        times.append(cost)
        counts.append(n)
    if variant == "unweighted":
        return math.fsum(times) / len(times)
    total = math.fsum(t * n for t, n in zip(times, counts, strict=True))
    return total if variant == "total" else total / math.fsum(counts)


def _mistake(value: float, plan: list[int], histogram: Histogram, costs: CostTable) -> str | None:
    """What ``value`` computed instead of the expected step time, if it is a known mistake."""
    largest = max(plan)
    above = [int(b) for b in histogram.sizes if b > largest]
    said = {
        "no padding": _(
            "you priced each batch size at its own replay time. A step of b rows replays the "
            "graph of the smallest captured size s >= b, padded with s - b rows, so it costs "
            "replay_us of s, not of b"
        ),
        "cut": _(
            "batch sizes {above} are above the largest captured size {largest}: no graph holds "
            "them, so they run eagerly at eager_us of their own size, not in the largest graph"
        ).format(above=above, largest=largest),
        "dropped": _(
            "you left out batch sizes {above}, above the largest captured size {largest}: they "
            "still run, eagerly, at eager_us of their own size; count them in the mean"
        ).format(above=above, largest=largest),
        "unweighted": _(
            "you averaged over the batch sizes: weight each by its number of steps "
            "(histogram.counts), sum, and divide by the number of steps"
        ),
        "total": _("that is the total time of all steps: divide it by the number of steps"),
        "in order": _(
            "the plan {plan} is not sorted: a step replays the smallest captured size >= b, "
            "not the first one in the list (sort the sizes, or take min)"
        ).format(plan=plan),
    }
    for variant, sentence in said.items():
        other = _price(plan, histogram, costs, variant)
        if math.isclose(value, other, rel_tol=1e-9) and not math.isclose(
            other, _price(plan, histogram, costs), rel_tol=1e-9
        ):
            return sentence
    return None


def _shown(histogram: Histogram) -> str:
    pairs = zip(histogram.sizes.tolist(), histogram.counts.tolist(), strict=True)
    return "{" + ", ".join(f"{b}: {c:g}" for b, c in pairs) + "}"


@exercise(PRICING)
def check_expected_step_time(expected_step_us: Callable[..., Any]) -> None:
    """Check ``expected_step_us(sizes, histogram, costs) -> float`` on four hand-worked mixes.

    ``sizes`` is a plan (a list, not always sorted), ``histogram`` a planner Histogram (decode
    steps per batch size), ``costs`` a CostTable. The mixes include batch sizes above the
    largest captured size (eager), counts that differ per size and cost tables with gaps.
    """
    values = []
    for plan, histogram, costs, expected in step_time_cases():
        yours = call(expected_step_us, list(plan), histogram, costs, name="expected_step_us")
        should = _("expected_step_us should return one number, µs per step")
        values.append(number(yours, should))
        value = values[-1]
        if math.isclose(value, expected, rel_tol=1e-9):
            continue
        case = {"plan": plan, "histogram": _shown(histogram), "value": value, "expected": expected}
        mistake = _mistake(value, plan, histogram, costs)
        if mistake:
            message = _(
                "for sizes {plan} and the histogram {histogram} you returned {value:.6g}, "
                "expected {expected:.6g}: {mistake}."
            )
            fail(message.format(mistake=mistake, **case))
        if rounded(value, expected):
            message = _(
                "for sizes {plan} and the histogram {histogram} you returned {value:g}, which is "
                "{expected:.6g} rounded: return it as is."
            )
            fail(message.format(**case))
        not_fixed(values, "expected_step_us", _("plans and histograms"))
        message = _(
            "for sizes {plan} and the histogram {histogram} you returned {value:.6g}, "
            "expected {expected:.6g}."
        )
        fail(message.format(**case))
    first = step_time_cases()[0]
    what = _("expected step time (µs) of sizes {sizes} on the first mix").format(sizes=first[0])
    passed(what, values[0], first[3])


# The exercise of choosing sizes: the bundled Azure trace at its own rate (largest batch 47), at
# most 6 graphs in 300 MiB, against the powers of two up to 64 (7 graphs, 294 MiB). A list that
# only covers the largest batch ([48]: 164.1 µs) or spreads too thinly ([16, 32, 48]: 155.0 µs)
# does not beat them (154.8 µs); the planner's best is 151.3 µs.
# The memory budget is one shared pool's (the default model of graphlab.planner.evaluate): in the
# H200 table every size up to 128 keeps one 2 MiB segment, larger ones 22 to 24 MiB, so 2 MiB
# admits any size up to 128 and none above.
class _Choice(TypedDict):
    """The exercise's setting: the traffic's rate, the limits and the preset to beat."""

    rate_scale: float
    max_graphs: int
    memory_mib: float
    preset: str
    up_to: int


CHOICE: _Choice = {
    "rate_scale": 1.0,
    "max_graphs": 6,
    "memory_mib": 2.0,
    "preset": "pow2",
    "up_to": 64,
}


def choice_setup() -> tuple[Histogram, CostTable, list[int]]:
    """The mix, the bundled H200 cost table and the preset list the learner must beat."""
    histogram = decode_histogram(azure_requests(), BatchingModel(rate_scale=CHOICE["rate_scale"]))
    return histogram, recorded_costs().table, preset_sizes(CHOICE["preset"], CHOICE["up_to"])


def _sizes(value: object, costs: CostTable) -> list[int]:
    """``value`` as a list of distinct batch sizes of the cost table; otherwise CheckFailed."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        message = _(
            "choose_sizes should return a list of batch sizes, such as [8, 32], not {value}."
        )
        fail(message.format(value=safe_repr(value)))
    low, high = int(costs.sizes[0]), int(costs.sizes[-1])
    sizes = []
    for size in value:
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            message = _(
                "choose_sizes returned {size} among its sizes: a batch size is a whole "
                "number (int), such as 8."
            )
            fail(message.format(size=safe_repr(size)))
        if not low <= int(size) <= high:
            message = _(
                "size {size} is not in the cost table, which runs from {low} to {high}: only "
                "sizes it prices can be judged."
            )
            fail(message.format(size=int(size), low=low, high=high))
        if int(size) in sizes:
            message = _("size {size} appears twice: each size is one graph, list it once.")
            fail(message.format(size=int(size)))
        sizes.append(int(size))
    return sizes


@exercise(PRICING)
def check_choose_sizes(choose_sizes: Callable[..., Any]) -> None:
    """Check ``choose_sizes(histogram, costs, max_graphs, memory_mib) -> list of sizes``.

    On the bundled Azure trace with the H200 cost table, the sizes must number at most
    ``max_graphs`` (6), their graphs fit ``memory_mib`` (2 MiB in one shared pool: the largest
    ``graph_mib`` among them), and their expected step time must beat the powers of two up to 64.
    The checker prices the list itself with the planner's evaluate.
    """
    histogram, costs, preset = choice_setup()
    k, budget = CHOICE["max_graphs"], CHOICE["memory_mib"]
    value = call(choose_sizes, histogram, costs, k, budget, name="choose_sizes")
    sizes = _sizes(value, costs)
    if len(sizes) > k:
        message = _("you chose {count} sizes, {sizes}: keep at most {most} graphs.")
        fail(message.format(count=len(sizes), sizes=sorted(sizes), most=k))
    yours, theirs = evaluate(sizes, histogram, costs), evaluate(preset, histogram, costs)
    if not yours.fits(memory_mib=budget):
        message = _(
            "your sizes {sizes} keep {memory_mib:g} MiB of graphs in one shared "
            "pool (their largest graph_mib), over the {budget:g} MiB budget: a larger graph "
            "holds more memory, so pick smaller sizes."
        )
        fail(message.format(sizes=list(yours.sizes), memory_mib=yours.memory_mib, budget=budget))
    if yours.expected_step_us >= theirs.expected_step_us:
        message = _(
            "your sizes {sizes} give {step_us:.1f} µs per step (hit "
            "rate {hit_rate:.1%}, padding {padding:.1%}), not less than the "
            "powers of two {preset}: {preset_us:.1f} µs. Cover the largest batch, "
            "then put sizes where the steps are (plot the histogram)."
        )
        fail(
            message.format(
                sizes=list(yours.sizes),
                step_us=yours.expected_step_us,
                hit_rate=yours.hit_rate,
                padding=yours.padding_waste,
                preset=preset,
                preset_us=theirs.expected_step_us,
            )
        )
    best = best_plan(histogram, costs, Constraints(max_graphs=k, memory_mib=budget))
    line = _(
        "PASSED your sizes {sizes}: yours {step_us:.1f} µs per step "
        "vs the powers of two {preset_us:.1f} µs (the planner's best within the "
        "budget: {best_us:.1f} µs, sizes {best_sizes})"
    )
    print(
        line.format(
            sizes=list(yours.sizes),
            step_us=yours.expected_step_us,
            preset_us=theirs.expected_step_us,
            best_us=best.expected_step_us,
            best_sizes=list(best.sizes),
        )
    )
