"""The exact search when a memory or start-up budget binds: multipliers, then labels.

A budget makes the choice of capture sizes a knapsack problem, so :class:`LabelSearch` first
prices the budgets and the graph count with Lagrange multipliers (each step one pass of
:func:`graphlab.planner.envelope.chain`, a lower bound and often a feasible plan), then, if the
gap is not closed, runs a branch and bound over partial plans ("labels") built from the largest
size down, cutting a label whose bound cannot win and one that another label at the same node
matches or beats in cost, graph count and budget use (:func:`undominated`). The module docstring
of :mod:`graphlab.planner.optimise` gives the argument that the answer is optimal.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from graphlab.errors import PlannerError
from graphlab.language import gettext as _

from .envelope import chain
from .evaluate import fits

if TYPE_CHECKING:
    from .optimise import Problem

__all__ = ["DUAL_STEPS", "LABEL_LIMIT", "PRUNE_SLACK", "LabelSearch", "undominated"]

# Relative slack below the best known cost that a branch's bound must reach to be explored.
PRUNE_SLACK = 1e-9
# Subgradient steps of the multiplier search (each one pass of the priced chain DP).
DUAL_STEPS = 60
# Partial plans the budgeted search may create before it gives up with an error (about 60 bytes
# each); an answer is either proven optimal or not given.
LABEL_LIMIT = 1_000_000


class LabelSearch:
    """Multiplier search, then branch and bound, for a problem whose budgets bind."""

    def __init__(self, problem: Problem, k: int):
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
        values, args = chain(p.H, p.r, penalty)
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
        for _step in range(DUAL_STEPS):
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
                undominated(
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
            r_at, i_at = np.nonzero(fits(used_m, p.memory) & fits(used_t, p.startup))
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
            _(
                "the budgets leave too many near-equal plans to prove the best one within "
                "{limit:,} partial plans (the best found is at most {gap:.3%} slower than "
                "optimal): loosen or drop --memory-mib/--startup-s, lower --max-graphs, or search "
                "fewer sizes with --multiple-of"
            ).format(limit=LABEL_LIMIT, gap=gap)
        )

    def _cut(self) -> float:
        """Bounds must fall below this to be worth exploring."""
        return self.best_total - PRUNE_SLACK * abs(self.best_total)


def undominated(known, count, mem, time) -> np.ndarray:
    """Indices of the labels no other label matches or beats in all four (first of equals)."""
    order = np.lexsort((time, mem, count, known))
    k, c, m, t = known[order], count[order], mem[order], time[order]
    if len(order) <= 1:
        return order
    if np.all(t == t[0]) or np.all(m == m[0]):
        dominated = dominated_sweep(c, t if np.all(m == m[0]) else m)
    else:
        # A label beaten in all four is beaten in (cost, count, memory) and in (cost, count,
        # time): the two cheap sweeps leave few labels to check against every earlier one.
        dominated = dominated_sweep(c, m) & dominated_sweep(c, t)
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


def dominated_sweep(count, used) -> np.ndarray:
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
