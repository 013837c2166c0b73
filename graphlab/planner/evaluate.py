"""What a list of captured sizes costs on a histogram: the figures every plan is judged by.

A decode step of batch size ``b`` runs in the smallest captured size ``s >= b`` (``b`` real rows
and ``s - b`` rows of padding) at ``replay_us[s]``; when no captured size is that large it runs
eagerly at ``eager_us[b]``. The figures, each weighted by how many steps ran at each ``b``:

- ``expected_step_us``: the mean step time.
- ``hit_rate``: the share of steps that replay a graph.
- ``padding_waste``: padded rows over all rows computed (eager steps compute their ``b`` rows
  and no padding), the same definition lesson 05's checker uses.
- ``capture_s``: the start-up time of all the captured graphs (their capture times add up).
- ``memory_mib``: the memory of all the captured graphs' pools. With ``shared_pool=True`` (the
  default, and what vLLM and SGLang do: every size captured into one global pool, largest
  first) each smaller graph reuses memory the larger ones freed, so a plan needs about its
  largest graph's pool: the model is the largest ``graph_mib`` among the captured sizes. With
  ``shared_pool=False`` each graph keeps a pool of its own and the plan needs their sum. The
  cost table's ``meta["shared_pool"]``, when it has one, holds a measured shared pool to check
  the model against (:func:`graphlab.planner.measure.measure_shared_pool`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphlab.errors import PlannerError
from graphlab.language import gettext as _

from .inputs import CostTable, Histogram

__all__ = ["Plan", "SizeUse", "evaluate", "plan_memory", "within"]

# Budgets are compared with this much slack (relative) so that a plan whose memory adds up to the
# budget in a different order of summation is not refused over the last bit of a float.
BUDGET_SLACK = 1e-9


def room(budget: float) -> float:
    """The most a plan may use of ``budget``, slack included (see :func:`within`)."""
    return budget + BUDGET_SLACK * max(1.0, budget if math.isfinite(budget) else 1.0)


def fits(used, budget: float):
    return used <= room(budget)


def within(used: float, budget: float | None) -> bool:
    """Whether ``used`` fits ``budget`` (None: no budget)."""
    return budget is None or used <= budget + BUDGET_SLACK * max(1.0, abs(budget))


@dataclass(frozen=True)
class SizeUse:
    """How one captured size is used: the steps it serves and the rows it pads."""

    size: int
    steps: float
    share: float
    padded_rows: float
    replay_us: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "steps": self.steps,
            "share": self.share,
            "padded_rows": self.padded_rows,
            "replay_us": self.replay_us,
        }


@dataclass(frozen=True)
class Plan:
    """A set of captured sizes and what it costs on one histogram (see the module docstring)."""

    sizes: tuple[int, ...]
    expected_step_us: float
    hit_rate: float
    padding_waste: float
    capture_s: float
    memory_mib: float
    per_size: tuple[SizeUse, ...]
    shared_pool: bool = True

    @property
    def graphs(self) -> int:
        """How many graphs the plan captures."""
        return len(self.sizes)

    def fits(self, memory_mib: float | None = None, startup_s: float | None = None) -> bool:
        """Whether the plan stays within a memory and a start-up budget (None: no budget)."""
        return within(self.memory_mib, memory_mib) and within(self.capture_s, startup_s)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``graphlab plan --json`` prints."""
        return {
            "sizes": list(self.sizes),
            "graphs": self.graphs,
            "expected_step_us": self.expected_step_us,
            "hit_rate": self.hit_rate,
            "padding_waste": self.padding_waste,
            "capture_s": self.capture_s,
            "memory_mib": self.memory_mib,
            "memory_model": "shared pool" if self.shared_pool else "separate pools",
            "per_size": [use.to_dict() for use in self.per_size],
        }


def plan_memory(graph_mib: np.ndarray, shared_pool: bool = True) -> float:
    """The memory of graphs whose own pools need ``graph_mib``: the largest of them when they
    share one pool, their sum when each has its own (see the module docstring)."""
    if not len(graph_mib):
        return 0.0
    return float(np.max(graph_mib)) if shared_pool else math.fsum(graph_mib)


def evaluate(
    sizes: Iterable[int], histogram: Histogram, costs: CostTable, shared_pool: bool = True
) -> Plan:
    """The figures of capturing ``sizes`` (each a size of ``costs``) for ``histogram``; the
    graphs share one memory pool unless ``shared_pool=False``."""
    chosen = sorted({int(s) for s in sizes})
    if chosen and chosen[0] < 1:
        raise PlannerError(
            _("captured size {size} is not a batch size: use sizes from 1 up").format(
                size=chosen[0]
            )
        )
    at = costs.positions(chosen)
    batch_at = costs.positions(histogram.sizes)
    counts = histogram.counts
    total = histogram.total

    # The graph each batch size runs in: the first captured size >= it (len(chosen): none).
    serving = np.searchsorted(np.asarray(chosen, dtype=np.int64), histogram.sizes, side="left")
    hit = serving < len(chosen)
    graph_size = np.where(hit, np.asarray([*chosen, 0], dtype=np.int64)[serving], 0)
    step_us = np.where(
        hit,
        costs.replay_us[np.asarray([*at, 0], dtype=np.int64)[serving]],
        costs.eager_us[batch_at],
    )
    padding = np.where(hit, graph_size - histogram.sizes, 0) * counts
    rows = np.where(hit, graph_size, histogram.sizes) * counts

    per_size = []
    for k, size in enumerate(chosen):
        served = serving == k
        steps = float(counts[served].sum())
        per_size.append(
            SizeUse(
                size=size,
                steps=steps,
                share=steps / total,
                padded_rows=float(padding[served].sum()),
                replay_us=float(costs.replay_us[at[k]]),
            )
        )
    return Plan(
        sizes=tuple(chosen),
        expected_step_us=float((step_us * counts).sum() / total),
        hit_rate=float(counts[hit].sum() / total),
        padding_waste=float(padding.sum() / rows.sum()),
        capture_s=math.fsum(costs.capture_s[at]),
        memory_mib=plan_memory(costs.graph_mib[at], shared_pool),
        per_size=tuple(per_size),
        shared_pool=shared_pool,
    )
