"""The exact choice of capture sizes: the fastest expected step under the constraints.

The problem
-----------
Batch sizes ``b`` occur with counts ``h[b]``; the cost table offers candidate sizes
``c_1 < ... < c_n`` (those that are multiples of ``multiple_of``). A plan captures a subset; a
step of size ``b`` runs in the smallest captured size ``>= b`` at ``replay_us``, or eagerly at
``eager_us[b]`` above the largest. Minimise the total step time ``sum_b h[b] * cost(b)`` subject
to at most K graphs, a memory budget M, ``sum capture_s <= S`` and, if asked, the largest
candidate being captured.

Memory depends on how the graphs hold it (:mod:`graphlab.planner.evaluate`). In one shared pool
(the default, as vLLM and SGLang capture) a plan needs its largest graph's pool, ``max
graph_mib <= M``: a plan fits exactly when each of its sizes fits alone, so the budget only
removes candidates and nothing adds up. In separate pools (``shared_pool=False``) it is
``sum graph_mib <= M``, a knapsack constraint, handled as below.

Write ``H_j`` for the steps of size ``<= c_j`` and ``T_j`` for the eager time of the steps above
``c_j``. A plan ``c_{j1} < ... < c_{jk}`` then costs

    sum_l r_{jl} * (H_{jl} - H_{j(l-1)})  +  T_{jk}          (H_{j0} = 0)

so each captured size pays for the interval down to the previous one: the cost of an interval
depends only on its two ends. That makes the plan a path through the candidates.

Exact reductions (they never remove every optimal plan)
-------------------------------------------------------
- A candidate smaller than every batch size serves nothing and is dropped (unless forced).
- Candidates between two consecutive batch sizes of the histogram serve the same steps, so only
  those not dominated in (replay, memory, capture time) by another of the same stretch matter;
  without budgets that is the single fastest one. Swapping a dominated candidate for its
  dominator never raises the cost or a resource. So ``n <= min(N, distinct batch sizes + 1)``.
- A candidate that alone exceeds a budget is dropped.

Without memory or start-up budgets: dynamic programming, O(n K log n)
--------------------------------------------------------------------
``F[k][j]``, the cheapest way to serve every step ``<= c_j`` with ``k`` graphs the largest of
which is ``c_j``, is ``r_j H_j + min_{i<j} (F[k-1][i] - r_j H_i)``: the minimum over ``i`` of
lines with slope ``-H_i`` and intercept ``F[k-1][i]`` at ``x = r_j``. The slopes only decrease as
``i`` grows, so each layer keeps the lower envelope of the lines seen so far on a stack (a
"convex hull trick") and answers each ``x`` by binary search: exact for any replay costs
(monotone or not, no Monge assumption), O(n log n) per layer, K layers. The optimum is
``min_{k<=K, j} F[k][j] + T_j`` (or the all-eager plan), read back through stored argmins.

With budgets: Lagrangian bounds and a label search, exact
--------------------------------------------------------
With a memory or start-up budget the problem contains 0/1 knapsack (give each size its own
steps and a fixed fallback cost), so no method is polynomial in general. The planner stays exact:

1. If the budget-free optimum fits the budgets, it is optimal. Done.
2. Otherwise a subgradient search prices memory, start-up time and the graph count with
   multipliers ``(lam, mu, nu) >= 0``. With every resource priced the count needs no layer, so
   each step is one pass of the same envelope, O(n log n). Each step gives a lower bound (the
   Lagrangian dual) and, when its plan fits, a feasible plan; a gap of zero proves optimality.
3. Otherwise a branch and bound over partial plans ("labels"), built from the largest size
   down and taken node by node in decreasing order. A label's bound is its known cost plus the
   larger of the budget-free ``min_{k<=q} F[k][j]`` and the priced chain value minus the
   multipliers times what is left of each budget, with ``q`` capped by how many of the cheapest
   graphs still fit. A label whose bound cannot beat the best plan found is cut, and so is one
   that another label at the same node matches or beats in cost, graph count and budget use.
   Bounds never exceed the true cost of a completion and dominance keeps a completion at least
   as good, so the result is optimal (to 1e-9 relative, the floating-point slack of the
   comparisons). Each surviving label costs O(n) vectorised work; their number is exponential
   in the worst case, as knapsack forces, and small when the Lagrangian gap is small. Past
   ``LABEL_LIMIT`` labels the planner stops with a PlannerError that says how far the best plan
   found can be from optimal: it never returns a plan it has not proven best.

The parts: the dynamic programme and its envelope of lines are :mod:`graphlab.planner.envelope`,
the budgeted search is :mod:`graphlab.planner.label_search`; this module reduces the problem to
candidate nodes (:class:`Problem`) and answers :func:`best_plan` and :func:`pareto`.
``benchmarks/planner_speed.py`` prints the times on this machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from graphlab.errors import PlannerError
from graphlab.language import gettext as _

from .envelope import forward, path
from .evaluate import Plan, evaluate, fits, room
from .inputs import CostTable, Histogram
from .label_search import PRUNE_SLACK, LabelSearch

__all__ = ["Constraints", "best_plan", "pareto"]


@dataclass(frozen=True)
class Constraints:
    """What a plan must respect; None means no budget.

    ``max_graphs`` K >= 1; ``memory_mib`` and ``startup_s`` are budgets (>= 0);
    ``multiple_of`` restricts captured sizes to its multiples; ``keep_largest`` forces the
    largest allowed size of the cost table into every plan; ``shared_pool`` says whether the
    graphs share one memory pool (memory: the largest graph's) or keep one each (the sum).
    """

    max_graphs: int
    memory_mib: float | None = None
    startup_s: float | None = None
    multiple_of: int = 1
    keep_largest: bool = False
    shared_pool: bool = True

    def __post_init__(self):
        k = self.max_graphs
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise PlannerError(
                _(
                    "the maximum number of graphs is {value!r}: allow at least 1 "
                    "(--max-graphs 1 or more)"
                ).format(value=k)
            )
        step = self.multiple_of
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise PlannerError(
                _("--multiple-of is {value!r}: use a whole number from 1 up").format(value=step)
            )
        for flag, budget in (("--memory-mib", self.memory_mib), ("--startup-s", self.startup_s)):
            if budget is None:
                continue
            if isinstance(budget, bool) or not isinstance(budget, (int, float)):
                raise PlannerError(
                    _("{flag} is {value!r}, not a number").format(flag=flag, value=budget)
                )
            if not math.isfinite(budget) or budget < 0:
                raise PlannerError(
                    _(
                        "{flag} is {value!r}: give a finite budget of 0 or more, or leave it out"
                    ).format(flag=flag, value=budget)
                )


def best_plan(histogram: Histogram, costs: CostTable, constraints: Constraints) -> Plan:
    """The plan with the lowest expected step time that meets ``constraints`` (exact)."""
    problem = Problem(histogram, costs, constraints)
    sizes = problem.sizes_of(problem.solve(constraints.max_graphs))
    return evaluate(sizes, histogram, costs, constraints.shared_pool)


def pareto(histogram: Histogram, costs: CostTable, constraints: Constraints) -> list[Plan]:
    """The best plan for each graph count up to K, keeping those faster than any with fewer.

    Point ``k`` is the optimum with at most ``k`` graphs under the same budgets; a point that
    is not strictly faster than the previous one is left out, so along the list the expected
    step time falls while the graph count (and usually memory and start-up time) grows.
    """
    problem = Problem(histogram, costs, constraints)
    points: list[Plan] = []
    path = None
    for k in range(1, min(constraints.max_graphs, max(problem.most_graphs, 1)) + 1):
        path = problem.solve(k, path)
        plan = evaluate(problem.sizes_of(path), histogram, costs, constraints.shared_pool)
        if not points or plan.expected_step_us < points[-1].expected_step_us * (1 - PRUNE_SLACK):
            points.append(plan)
    return points


class Problem:
    """One histogram and cost table reduced to candidate nodes (see the module docstring)."""

    def __init__(self, histogram: Histogram, costs: CostTable, constraints: Constraints):
        self.costs = costs
        self.max_graphs = constraints.max_graphs
        self.memory = math.inf if constraints.memory_mib is None else float(constraints.memory_mib)
        self.startup = math.inf if constraints.startup_s is None else float(constraints.startup_s)
        budgets = constraints.memory_mib is not None or constraints.startup_s is not None

        eager = costs.eager_us[costs.positions(histogram.sizes)] * histogram.counts
        cum_steps = np.concatenate([[0.0], np.cumsum(histogram.counts)])
        cum_eager = np.concatenate([[0.0], np.cumsum(eager)])
        self.all_eager = float(cum_eager[-1])

        allowed = np.flatnonzero(costs.sizes % constraints.multiple_of == 0)
        if not len(allowed):
            raise PlannerError(
                _(
                    "no size in the cost table is a multiple of {step}: lower --multiple-of or "
                    "measure such sizes"
                ).format(step=constraints.multiple_of)
            )
        covered = np.searchsorted(histogram.sizes, costs.sizes[allowed], side="right")
        mem = costs.graph_mib[allowed]
        cap = costs.capture_s[allowed]
        forced = len(allowed) - 1 if constraints.keep_largest else None
        if forced is not None and not (
            fits(mem[forced], self.memory) and fits(cap[forced], self.startup)
        ):
            size = int(costs.sizes[allowed[forced]])
            raise PlannerError(
                _(
                    "the largest size {size} alone needs {memory:g} MiB and {startup:g} s, over "
                    "the budget: raise --memory-mib/--startup-s or drop --keep-largest"
                ).format(size=size, memory=mem[forced], startup=cap[forced])
            )
        keep = _useful(covered, costs.replay_us[allowed], mem, cap, budgets)
        keep &= fits(mem, self.memory) & fits(cap, self.startup)
        if forced is not None:
            keep[forced] = True
        nodes = allowed[keep]
        self.table_at = nodes
        self.H = cum_steps[covered[keep]]
        self.T = self.all_eager - cum_eager[covered[keep]]
        self.r = costs.replay_us[nodes]
        self.m = costs.graph_mib[nodes]
        if constraints.shared_pool:
            # Every node left fits the memory budget alone, and in one shared pool a plan needs
            # no more than its largest graph's pool: memory no longer constrains the search.
            self.m = np.zeros(len(nodes))
            self.memory = math.inf
        self.t = costs.capture_s[nodes]
        self.n = len(nodes)
        self.forced = None if forced is None else int(np.flatnonzero(nodes == allowed[forced])[0])
        # No plan holds more graphs than the cheapest ones that fit both budgets together.
        self.most_graphs = min(
            self.n,
            *(
                int(np.searchsorted(np.cumsum(np.sort(use)), room(budget), side="right"))
                for use, budget in ((self.m, self.memory), (self.t, self.startup))
            ),
        )
        self._free: tuple[np.ndarray, np.ndarray] | None = None

    def sizes_of(self, path: list[int]) -> list[int]:
        return [int(self.costs.sizes[self.table_at[j]]) for j in path]

    # ------------------------------------------------------------------ budget-free optimum
    def free_layers(self) -> tuple[np.ndarray, np.ndarray]:
        """Layers 0..min(K, n) of the budget-free DP, computed once."""
        if self._free is None:
            self._free = forward(self.H, self.r, np.zeros(self.n), min(self.max_graphs, self.n))
        return self._free

    def _ends(self, values: np.ndarray, k: int) -> tuple[float, int, int]:
        """Best (total, k, j) over layers 1..k of ``values`` (F plus the eager tail)."""
        layers = values[1 : k + 1] + self.T
        if self.forced is not None:
            column = layers[:, self.forced]
            row = int(np.argmin(column))
            return float(column[row]), row + 1, self.forced
        flat = int(np.argmin(layers))
        row, j = divmod(flat, self.n)
        return float(layers[row, j]), row + 1, j

    def _plain_best(self, F: np.ndarray, k: int) -> tuple[float, list[int]]:
        """The best path with at most ``k`` graphs in DP layers ``F`` (with arg pointers)."""
        values, args = F
        best = (math.inf, 0, -1) if self.forced is not None else (self.all_eager, 0, -1)
        if self.n:
            total, layer, j = self._ends(values, min(k, len(values) - 1))
            if total < best[0]:
                best = (total, layer, j)
        return best[0], path(args, best[1], best[2])

    def _resources(self, path: list[int]) -> tuple[float, float]:
        return math.fsum(self.m[path]), math.fsum(self.t[path])

    def _feasible(self, path: list[int]) -> bool:
        used_m, used_t = self._resources(path)
        return fits(used_m, self.memory) and fits(used_t, self.startup)

    def solve(self, k: int, known: list[int] | None = None) -> list[int]:
        """Node indices (largest first) of the optimal plan with at most ``k`` graphs.

        ``known`` is a feasible plan to start the search from (the best with fewer graphs).
        """
        if self.n == 0:
            if self.forced is not None:
                return [self.forced]
            return []
        _, path = self._plain_best(self.free_layers(), k)
        if self._feasible(path):
            return path
        search = LabelSearch(self, max(1, min(k, self.most_graphs)))
        if known is not None:
            search.offer(known, search.total(known))
        return search.run()


def _useful(covered, replay, mem, cap, budgets: bool) -> np.ndarray:
    """Candidates worth keeping: they serve some step and no neighbour dominates them."""
    keep = np.zeros(len(covered), dtype=bool)
    start = 0
    while start < len(covered):
        stop = start + int(np.searchsorted(covered[start:], covered[start], side="right"))
        if covered[start] > 0:
            group = np.arange(start, stop)
            if not budgets:
                keep[group[np.argmin(replay[group])]] = True
            else:
                order = group[np.lexsort((cap[group], mem[group], replay[group]))]
                kept: list[int] = []
                for c in order:
                    kept_at = np.asarray(kept, dtype=np.int64)
                    if not np.any((mem[kept_at] <= mem[c]) & (cap[kept_at] <= cap[c])):
                        kept.append(int(c))
                keep[kept] = True
        start = stop
    return keep
