"""The budget-free dynamic programme over the candidate sizes: a lower envelope of lines.

``F[k][j] = r_j H_j + min_{i<j} (F[k-1][i] - r_j H_i)`` (see :mod:`graphlab.planner.optimise` for
the problem) is, for each ``j``, the lowest of the lines ``y = F[k-1][i] - H_i x`` at
``x = r_j``. Their slopes only decrease as ``i`` grows, so an :class:`Envelope` keeps the lowest
of them on a stack (the "convex hull trick"): :func:`layer` computes one layer in O(n log n),
:func:`forward` every layer up to a graph count, :func:`chain` the one-pass variant in which
every graph is priced instead of counted (the Lagrangian step of the budgeted search), and
:func:`path` reads a plan back through the stored argmins.
"""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np

__all__ = ["Envelope", "chain", "forward", "layer", "path"]


def forward(H, r, penalty, layers: int) -> tuple[np.ndarray, np.ndarray]:
    """DP layers 0..``layers``: ``F[k][j]`` and the predecessor of ``j`` on its best path."""
    n = len(H)
    values = np.full((layers + 1, n), math.inf)
    args = np.full((layers + 1, n), -1, dtype=np.int64)
    if layers >= 1:
        values[1] = r * H + penalty
    H_list, r_list, own = H.tolist(), r.tolist(), (r * H + penalty).tolist()
    for k in range(2, layers + 1):
        row, arg = layer(values[k - 1].tolist(), H_list, r_list, own)
        values[k], args[k] = row, arg
        if not np.isfinite(values[k]).any():
            break
    return values, args


class Envelope:
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


def layer(prev: list[float], H: list[float], r: list[float], own: list[float]):
    """One DP layer: ``own[j] + min_{i<j} (prev[i] - r[j] * H[i])`` and the minimising ``i``."""
    n = len(prev)
    out = [math.inf] * n
    arg = [-1] * n
    envelope = Envelope()
    for j in range(1, n):
        if prev[j - 1] < math.inf:
            envelope.add(-H[j - 1], prev[j - 1], j - 1)
        if envelope.slopes:
            value, arg[j] = envelope.lowest(r[j])
            out[j] = own[j] + value
    return out, arg


def chain(H, r, penalty) -> tuple[np.ndarray, np.ndarray]:
    """Best prefix cost ending at each node with any number of graphs, each graph priced.

    ``F[j] = r[j] H[j] + penalty[j] + min(0, min_{i<j} F[i] - r[j] H[i])``: the envelope of
    :func:`_layer`, but each node's line joins it as soon as ``F[j]`` is known, so one pass
    serves every graph count. ``args[j]`` is the predecessor (-1: none).
    """
    n = len(H)
    values = [0.0] * n
    args = [-1] * n
    envelope = Envelope()
    envelope.add(0.0, 0.0, -1)  # the empty prefix
    H_list, r_list = H.tolist(), r.tolist()
    own = (r * H + penalty).tolist()
    for j in range(n):
        value, args[j] = envelope.lowest(r_list[j])
        values[j] = own[j] + value
        envelope.add(-H_list[j], values[j], j)
    return np.asarray(values), np.asarray(args, dtype=np.int64)


def path(args: np.ndarray, layer: int, j: int) -> list[int]:
    path = []
    while layer >= 1:
        path.append(j)
        j = int(args[layer][j])
        layer -= 1
    return path
