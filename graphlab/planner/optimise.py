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

``benchmarks/planner_speed.py`` prints the times on this machine.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from graphlab.errors import PlannerError

from .evaluate import BUDGET_SLACK, Plan, evaluate
from .inputs import CostTable, Histogram

__all__ = ["Constraints", "best_plan", "pareto"]

# Relative slack below the best known cost that a branch's bound must reach to be explored.
PRUNE_SLACK = 1e-9
# Subgradient steps of the multiplier search (each one pass of the priced chain DP).
DUAL_STEPS = 60
# Partial plans the budgeted search may create before it gives up with an error (about 60 bytes
# each); an answer is either proven optimal or not given.
LABEL_LIMIT = 1_000_000


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
                f"the maximum number of graphs is {k!r}: allow at least 1 (--max-graphs 1 or more)"
            )
        step = self.multiple_of
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise PlannerError(f"--multiple-of is {step!r}: use a whole number from 1 up")
        for flag, budget in (("--memory-mib", self.memory_mib), ("--startup-s", self.startup_s)):
            if budget is None:
                continue
            if isinstance(budget, bool) or not isinstance(budget, (int, float)):
                raise PlannerError(f"{flag} is {budget!r}, not a number")
            if not math.isfinite(budget) or budget < 0:
                raise PlannerError(
                    f"{flag} is {budget!r}: give a finite budget of 0 or more, or leave it out"
                )


def best_plan(histogram: Histogram, costs: CostTable, constraints: Constraints) -> Plan:
    """The plan with the lowest expected step time that meets ``constraints`` (exact)."""
    problem = _Problem(histogram, costs, constraints)
    sizes = problem.sizes_of(problem.solve(constraints.max_graphs))
    return evaluate(sizes, histogram, costs, constraints.shared_pool)


def pareto(histogram: Histogram, costs: CostTable, constraints: Constraints) -> list[Plan]:
    """The best plan for each graph count up to K, keeping those faster than any with fewer.

    Point ``k`` is the optimum with at most ``k`` graphs under the same budgets; a point that
    is not strictly faster than the previous one is left out, so along the list the expected
    step time falls while the graph count (and usually memory and start-up time) grows.
    """
    problem = _Problem(histogram, costs, constraints)
    points: list[Plan] = []
    path = None
    for k in range(1, min(constraints.max_graphs, max(problem.most_graphs, 1)) + 1):
        path = problem.solve(k, path)
        plan = evaluate(problem.sizes_of(path), histogram, costs, constraints.shared_pool)
        if not points or plan.expected_step_us < points[-1].expected_step_us * (1 - PRUNE_SLACK):
            points.append(plan)
    return points


class _Problem:
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
                f"no size in the cost table is a multiple of {constraints.multiple_of}: lower "
                "--multiple-of or measure such sizes"
            )
        covered = np.searchsorted(histogram.sizes, costs.sizes[allowed], side="right")
        mem = costs.graph_mib[allowed]
        cap = costs.capture_s[allowed]
        forced = len(allowed) - 1 if constraints.keep_largest else None
        if forced is not None and not (
            _fits(mem[forced], self.memory) and _fits(cap[forced], self.startup)
        ):
            size = int(costs.sizes[allowed[forced]])
            raise PlannerError(
                f"the largest size {size} alone needs {mem[forced]:g} MiB and "
                f"{cap[forced]:g} s, over the budget: raise --memory-mib/--startup-s or drop "
                "--keep-largest"
            )
        keep = _useful(covered, costs.replay_us[allowed], mem, cap, budgets)
        keep &= _fits(mem, self.memory) & _fits(cap, self.startup)
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
                int(np.searchsorted(np.cumsum(np.sort(use)), _room(budget), side="right"))
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
            self._free = _forward(self.H, self.r, np.zeros(self.n), min(self.max_graphs, self.n))
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
        return best[0], _path(args, best[1], best[2])

    def _resources(self, path: list[int]) -> tuple[float, float]:
        return math.fsum(self.m[path]), math.fsum(self.t[path])

    def _feasible(self, path: list[int]) -> bool:
        used_m, used_t = self._resources(path)
        return _fits(used_m, self.memory) and _fits(used_t, self.startup)

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
        search = _Search(self, max(1, min(k, self.most_graphs)))
        if known is not None:
            search.offer(known, search.total(known))
        return search.run()


def _room(budget: float) -> float:
    """The most a plan may use of ``budget``, slack included (see :func:`evaluate.within`)."""
    return budget + BUDGET_SLACK * max(1.0, budget if math.isfinite(budget) else 1.0)


def _fits(used, budget: float):
    return used <= _room(budget)


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


def _forward(H, r, penalty, layers: int) -> tuple[np.ndarray, np.ndarray]:
    """DP layers 0..``layers``: ``F[k][j]`` and the predecessor of ``j`` on its best path."""
    n = len(H)
    values = np.full((layers + 1, n), math.inf)
    args = np.full((layers + 1, n), -1, dtype=np.int64)
    if layers >= 1:
        values[1] = r * H + penalty
    H_list, r_list, own = H.tolist(), r.tolist(), (r * H + penalty).tolist()
    for k in range(2, layers + 1):
        row, arg = _layer(values[k - 1].tolist(), H_list, r_list, own)
        values[k], args[k] = row, arg
        if not np.isfinite(values[k]).any():
            break
    return values, args


class _Envelope:
    """The lower envelope of lines ``y = cut + slope * x`` added in non-increasing slope order.

    ``starts[t]`` is where line ``t`` becomes the lowest. Because slopes only decrease, a new
    line can only hide lines at the top of the stack (the convex hull trick): adding is
    amortised O(1) and the lowest line at any ``x`` is a binary search away.
    """

    __slots__ = ("cuts", "ids", "slopes", "starts")

    def __init__(self):
        self.slopes: list[float] = []
        self.cuts: list[float] = []
        self.ids: list[int] = []
        self.starts: list[float] = []

    def add(self, slope: float, cut: float, ident: int) -> None:
        slopes, cuts, ids, starts = self.slopes, self.cuts, self.ids, self.starts
        while slopes:
            if slopes[-1] == slope:
                if cuts[-1] <= cut:
                    return
            elif (cut - cuts[-1]) / (slopes[-1] - slope) > starts[-1]:
                break
            slopes.pop(), cuts.pop(), ids.pop(), starts.pop()
        starts.append((cut - cuts[-1]) / (slopes[-1] - slope) if slopes else -math.inf)
        slopes.append(slope)
        cuts.append(cut)
        ids.append(ident)

    def lowest(self, x: float) -> tuple[float, int]:
        """The envelope's value at ``x`` and the id of the line that gives it."""
        t = bisect_right(self.starts, x) - 1
        return self.cuts[t] + self.slopes[t] * x, self.ids[t]


def _layer(prev: list[float], H: list[float], r: list[float], own: list[float]):
    """One DP layer: ``own[j] + min_{i<j} (prev[i] - r[j] * H[i])`` and the minimising ``i``."""
    n = len(prev)
    out = [math.inf] * n
    arg = [-1] * n
    envelope = _Envelope()
    for j in range(1, n):
        if prev[j - 1] < math.inf:
            envelope.add(-H[j - 1], prev[j - 1], j - 1)
        if envelope.slopes:
            value, arg[j] = envelope.lowest(r[j])
            out[j] = own[j] + value
    return out, arg


def _chain(H, r, penalty) -> tuple[np.ndarray, np.ndarray]:
    """Best prefix cost ending at each node with any number of graphs, each graph priced.

    ``F[j] = r[j] H[j] + penalty[j] + min(0, min_{i<j} F[i] - r[j] H[i])``: the envelope of
    :func:`_layer`, but each node's line joins it as soon as ``F[j]`` is known, so one pass
    serves every graph count. ``args[j]`` is the predecessor (-1: none).
    """
    n = len(H)
    values = [0.0] * n
    args = [-1] * n
    envelope = _Envelope()
    envelope.add(0.0, 0.0, -1)  # the empty prefix
    H_list, r_list = H.tolist(), r.tolist()
    own = (r * H + penalty).tolist()
    for j in range(n):
        value, args[j] = envelope.lowest(r_list[j])
        values[j] = own[j] + value
        envelope.add(-H_list[j], values[j], j)
    return np.asarray(values), np.asarray(args, dtype=np.int64)


def _path(args: np.ndarray, layer: int, j: int) -> list[int]:
    path = []
    while layer >= 1:
        path.append(j)
        j = int(args[layer][j])
        layer -= 1
    return path


class _Search:
    """Multiplier search, then branch and bound, for a problem whose budgets bind."""

    def __init__(self, problem: _Problem, k: int):
        self.p = problem
        self.k = k
        self.best_total = math.inf
        self.best_path: list[int] = []
        if problem.forced is None:
            self.offer([], problem.all_eager)
        else:
            f = problem.forced
            self.offer([f], float(problem.r[f] * problem.H[f] + problem.T[f]))
        # Budgets (memory, start-up, graph count) and each node's use of them; an absent budget
        # keeps its multiplier at 0.
        self.budget = np.array([problem.memory, problem.startup, float(k)])
        self.use = np.isfinite(self.budget)
        self.weights = np.stack([problem.m, problem.t, np.ones(problem.n)])

    def offer(self, path: list[int], total: float) -> None:
        """Keep ``path`` as the best plan if it beats it and meets every constraint.

        The priced chain ignores the graph count, so its plans are checked against it too.
        """
        if total < self.best_total and len(path) <= self.k and self.p._feasible(path):
            self.best_total, self.best_path = total, list(path)

    def total(self, path: list[int]) -> float:
        p = self.p
        total, below = (float(p.T[path[0]]) if path else p.all_eager), 0.0
        for j in reversed(path):
            total += float(p.r[j] * (p.H[j] - below))
            below = p.H[j]
        return total

    def _share(self) -> np.ndarray:
        """Each node's share of the budgets, the greedy repairs' price of a graph."""
        scale = np.where(self.use, 1.0 / np.maximum(self.budget, 1e-300), 0.0)
        return scale @ self.weights + 1e-12

    def _repaired(self, path: list[int]) -> list[int]:
        """``path`` made to fit the budgets, then grown while a graph that fits helps.

        Greedy, by cost change per share of the budgets: it only supplies a good plan early,
        so that the search below can cut more; it decides nothing about optimality.
        """
        p = self.p
        share = self._share()
        chosen = sorted(set(path))
        while chosen and (not p._feasible(chosen) or len(chosen) > self.k):
            at = np.asarray(chosen)
            below = np.concatenate([[0.0], p.H[at[:-1]]])
            above = np.append(p.r[at[1:]], np.nan)
            # Dropping node c hands its steps to the next graph up, or to eager at the top.
            delta = (above - p.r[at]) * (p.H[at] - below)
            tail = np.concatenate([[p.all_eager], p.T[at[:-1]]])
            delta[-1] = tail[-1] - p.T[at[-1]] - p.r[at[-1]] * (p.H[at[-1]] - below[-1])
            if p.forced is not None:
                delta[at == p.forced] = np.inf
            chosen.pop(int(np.argmin(delta / share[at])))
        return self._filled(chosen, share)[::-1]

    def _swapped(self, path: list[int]) -> list[int]:
        """``path`` improved by dropping one graph and filling again, while that helps."""
        p = self.p
        share = self._share()
        chosen = sorted(path)
        improved = True
        while improved:
            improved = False
            for c in chosen:
                if c == p.forced:
                    continue
                other = self._filled([j for j in chosen if j != c], share)
                if self.total(other[::-1]) < self.total(chosen[::-1]):
                    chosen, improved = other, True
                    break
        return chosen[::-1]

    def _filled(self, chosen: list[int], share: np.ndarray) -> list[int]:
        """``chosen`` (ascending) plus graphs that fit and help, best per budget share first."""
        p = self.p
        while len(chosen) < self.k:
            at = np.asarray(chosen, dtype=np.int64)
            used = self.weights[:, at].sum(axis=1)
            room = np.where(self.use, self.budget, np.inf) - used
            place = np.searchsorted(at, np.arange(p.n))
            lower = np.where(place > 0, at[np.maximum(place - 1, 0)] if len(at) else 0, -1)
            under_H = np.where(lower >= 0, p.H[np.maximum(lower, 0)], 0.0)
            under_T = np.where(lower >= 0, p.T[np.maximum(lower, 0)], p.all_eager)
            steps = p.H - under_H
            has_upper = place < len(at)
            upper_r = p.r[at[np.minimum(place, len(at) - 1)]] if len(at) else p.r
            # Adding node c takes the steps between the graph below and c from the graph
            # above (or from eager when c would be the largest).
            delta = np.where(has_upper, (p.r - upper_r) * steps, p.r * steps - (under_T - p.T))
            fits = (self.weights <= room[:, None] * (1 + 1e-12)).all(axis=0)
            fits[at] = False
            gain = np.where(fits & (delta < 0), delta / share, np.inf)
            best = int(np.argmin(gain))
            if not np.isfinite(gain[best]):
                break
            chosen = sorted([*chosen, best])
        return chosen

    def _gap_closed(self, bound: float) -> bool:
        return self.best_total - bound <= PRUNE_SLACK * abs(self.best_total)

    def _priced(self, lam: np.ndarray) -> tuple[np.ndarray, float, list[int]]:
        """The chain DP with every resource priced: values, best total and its path."""
        p = self.p
        penalty = lam @ self.weights
        values, args = _chain(p.H, p.r, penalty)
        ends = values + p.T
        if p.forced is not None:
            j = p.forced
        else:
            j = int(np.argmin(ends))
            if p.all_eager <= ends[j]:
                return values, p.all_eager, []
        path = [j]
        while args[path[-1]] >= 0:
            path.append(int(args[path[-1]]))
        return values, float(ends[j]), path

    def _dual(self) -> tuple[np.ndarray, np.ndarray, float]:
        """Multipliers with the best Lagrangian bound found, their chain values and the bound."""
        budget = np.where(self.use, self.budget, 0.0)
        lam = np.zeros(3)
        best = (-math.inf, lam, None)
        scale, stale = 2.0, 0
        for _ in range(DUAL_STEPS):
            values, value, path = self._priced(lam)
            self.offer(path, self.total(path))
            repaired = self._repaired(path)
            self.offer(repaired, self.total(repaired))
            bound = value - float(lam @ budget)
            if bound > best[0]:
                best, stale = (bound, lam, values), 0
            else:
                stale += 1
                if stale >= 5:
                    scale, stale = scale / 2, 0
            if self._gap_closed(best[0]):
                break
            used = self.weights[:, path].sum(axis=1) if path else np.zeros(3)
            grad = (used - budget) * self.use
            norm = float(grad @ grad)
            if norm == 0:
                break
            lam = np.maximum(0.0, lam + scale * (self.best_total - bound) / norm * grad)
        return best[1], best[2], best[0]

    def run(self) -> list[int]:
        lam, priced, bound = self._dual()
        if not self._gap_closed(bound):
            swapped = self._swapped(self.best_path)
            self.offer(swapped, self.total(swapped))
        if not self._gap_closed(bound):
            free = np.minimum.accumulate(self.p.free_layers()[0][1 : self.k + 1], axis=0)
            self._branch_and_bound(free, priced, lam, bound)
        return self.best_path

    def _bounds(self, js, left_m, left_t, count, free, priced, lam) -> np.ndarray:
        """Lower bounds on the cost of serving every step up to nodes ``js``.

        ``count`` graphs are chosen (``js`` included) and ``left_m``, ``left_t`` of the budgets
        remain for the graphs below.
        """
        cap = self.k - np.asarray(count) + 1
        if self.use[0]:
            cap = np.minimum(cap, 1 + np.searchsorted(self._cum_m, left_m * (1 + 1e-12), "right"))
        if self.use[1]:
            cap = np.minimum(cap, 1 + np.searchsorted(self._cum_t, left_t * (1 + 1e-12), "right"))
        plain = free[cap - 1, js]
        lagrange = priced[js] - lam @ self.weights[:, js] - lam[2] * (cap - 1)
        if lam[0]:
            lagrange = lagrange - lam[0] * left_m
        if lam[1]:
            lagrange = lagrange - lam[1] * left_t
        return np.maximum(plain, lagrange)

    def _branch_and_bound(self, free, priced, lam, dual_bound: float) -> None:
        """Labels from the largest node down, each a partial plan; cut by bound and dominance.

        A label at node ``j`` is a plan whose smallest graph so far is ``j``: its cost of the
        steps above ``j``'s interval (``known``), its graph count and the memory and start-up
        time it uses. Nodes are taken in decreasing order, so every label of a node exists when
        the node is reached. There, labels whose bound cannot beat the best plan go, and so do
        labels another label of the node matches or beats in cost, count, memory and time (any
        completion of the worse one completes the better one at no more cost). The rest end
        (``j`` is the smallest graph) or pass to every smaller node that still fits.
        """
        p = self.p
        self._cum_m = np.cumsum(np.sort(p.m))
        self._cum_t = np.cumsum(np.sort(p.t))
        tops = [p.forced] if p.forced is not None else range(p.n)
        # Per node: lists of label arrays (known, count, memory, time, label id).
        waiting: list[list[tuple]] = [[] for _ in range(p.n)]
        nodes: list[np.ndarray] = []
        parents: list[np.ndarray] = []
        issued = 0
        for j in tops:
            waiting[j].append((p.T[[j]], np.array([1]), p.m[[j]], p.t[[j]], np.array([issued])))
            nodes.append(np.array([j]))
            parents.append(np.array([-1]))
            issued += 1
        best_label = -1
        for j in range(p.n - 1, -1, -1):
            if not waiting[j]:
                continue
            known, count, mem, time, ident = (
                np.concatenate(a) for a in zip(*waiting[j], strict=True)
            )
            waiting[j] = []
            left_m, left_t = p.memory - mem, p.startup - time
            js = np.full(len(known), j)
            bound = known + self._bounds(js, left_m, left_t, count, free, priced, lam)
            keep = np.flatnonzero(bound < self._cut())
            # A resource without a budget does not make one label better than another.
            keep = keep[
                _undominated(
                    known[keep],
                    count[keep],
                    mem[keep] * self.use[0],
                    time[keep] * self.use[1],
                )
            ]
            known, count, mem, time, ident = (a[keep] for a in (known, count, mem, time, ident))
            left_m, left_t = left_m[keep], left_t[keep]
            if not len(known):
                continue
            totals = known + p.r[j] * p.H[j]
            first = int(np.argmin(totals))
            if totals[first] < self.best_total:
                self.best_total, best_label = float(totals[first]), int(ident[first])
            grow = count < self.k
            if j == 0 or not grow.any():
                continue
            rows = np.flatnonzero(grow)
            used_m = mem[rows, None] + p.m[None, :j]
            used_t = time[rows, None] + p.t[None, :j]
            r_at, i_at = np.nonzero(_fits(used_m, p.memory) & _fits(used_t, p.startup))
            if not len(r_at):
                continue
            c_m, c_t = used_m[r_at, i_at], used_t[r_at, i_at]
            c_known = known[rows[r_at]] + p.r[j] * (p.H[j] - p.H[i_at])
            c_count = count[rows[r_at]] + 1
            c_bound = c_known + self._bounds(
                i_at, p.memory - c_m, p.startup - c_t, c_count, free, priced, lam
            )
            live = np.flatnonzero(c_bound < self._cut())
            if not len(live):
                continue
            new_ids = np.arange(issued, issued + len(live))
            issued += len(live)
            if issued > LABEL_LIMIT:
                self._give_up(dual_bound)
            nodes.append(i_at[live])
            parents.append(ident[rows[r_at[live]]])
            for i in np.unique(i_at[live]):
                sel = np.flatnonzero(i_at[live] == i)
                at = live[sel]
                waiting[i].append((c_known[at], c_count[at], c_m[at], c_t[at], new_ids[sel]))
        if best_label >= 0:
            node_of = np.concatenate(nodes)
            parent_of = np.concatenate(parents)
            path = []
            while best_label >= 0:
                path.append(int(node_of[best_label]))
                best_label = int(parent_of[best_label])
            self.best_path = path

    def _give_up(self, dual_bound: float) -> None:
        gap = (self.best_total - dual_bound) / self.best_total
        raise PlannerError(
            f"the budgets leave too many near-equal plans to prove the best one within "
            f"{LABEL_LIMIT:,} partial plans (the best found is at most {gap:.3%} slower than "
            "optimal): loosen or drop --memory-mib/--startup-s, lower --max-graphs, or search "
            "fewer sizes with --multiple-of"
        )

    def _cut(self) -> float:
        """Bounds must fall below this to be worth exploring."""
        return self.best_total - PRUNE_SLACK * abs(self.best_total)


def _undominated(known, count, mem, time) -> np.ndarray:
    """Indices of the labels no other label matches or beats in all four (first of equals)."""
    order = np.lexsort((time, mem, count, known))
    k, c, m, t = known[order], count[order], mem[order], time[order]
    if len(order) <= 1:
        return order
    if np.all(t == t[0]) or np.all(m == m[0]):
        dominated = _dominated_sweep(c, t if np.all(m == m[0]) else m)
    else:
        # A label beaten in all four is beaten in (cost, count, memory) and in (cost, count,
        # time): the two cheap sweeps leave few labels to check against every earlier one.
        dominated = _dominated_sweep(c, m) & _dominated_sweep(c, t)
        block = 256
        suspects = np.flatnonzero(dominated)
        for start in range(0, len(suspects), block):
            rows = suspects[start : start + block]
            stop = int(rows[-1])
            earlier = np.arange(stop)[None, :] < rows[:, None]
            covers = (
                earlier
                & (k[None, :stop] <= k[rows, None])
                & (c[None, :stop] <= c[rows, None])
                & (m[None, :stop] <= m[rows, None])
                & (t[None, :stop] <= t[rows, None])
            )
            dominated[rows] = covers.any(axis=1)
    return np.sort(order[~dominated])


def _dominated_sweep(count, used) -> np.ndarray:
    """Which labels, in cost order, an earlier one matches in count and ``used`` (one resource).

    For each graph count ``g``, a running minimum of ``used`` over the earlier labels with
    exactly ``g`` graphs; a minimum over ``g <= count`` of those says whether an earlier label
    with no more graphs uses no more of the resource. O(distinct counts x labels).
    """
    counts = np.unique(count)
    running = np.where(count[None, :] == counts[:, None], used[None, :], np.inf)
    running = np.minimum.accumulate(running, axis=1)
    running = np.minimum.accumulate(running, axis=0)  # over counts <= g
    before = np.concatenate([np.full((len(counts), 1), np.inf), running[:, :-1]], axis=1)
    row = np.searchsorted(counts, count)
    return before[row, np.arange(len(count))] <= used
