"""Level of detail: draw a million events as at most a few thousand bars.

A screen cannot show two bars closer than a pixel apart as two bars. So for a view of the x axis
``[x0, x1]`` drawn ``pixels`` wide, bars whose gap to the next bar is narrower than one pixel are
merged into one *run*. After merging every remaining gap is at least a pixel wide, so a lane never
has more runs than the view has pixels, whatever the number of events. When the learner zooms in,
the pixel shrinks and runs split back into single events (see TimelineView's zoom callback).

Also here: turning intervals into the NaN-separated line segments that one ``go.Scattergl`` trace
draws as many bars (plotly breaks a line at each NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Runs", "merge_runs", "segments", "visible_slice"]


@dataclass(frozen=True)
class Runs:
    """Merged bars: run ``i`` covers ``start[i]..end[i]`` and holds ``count[i]`` events, the first
    of which is event ``first[i]`` of the track (so a run of one can show that event's name)."""

    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    first: np.ndarray
    busy: np.ndarray  # summed event durations, same unit as start/end

    def __len__(self) -> int:
        return len(self.start)


def visible_slice(start: np.ndarray, end: np.ndarray, x0: float, x1: float) -> slice:
    """Index range of the events (sorted by start) that may overlap ``[x0, x1]``.

    Ends are not sorted (a long event can outlast later ones), so the running maximum of the ends
    is searched instead: it is sorted, and an event before its first value >= x0 surely ended
    before the view. A few events inside the range may still end before x0; they draw off-screen.
    """
    if len(start) == 0:
        return slice(0, 0)
    reach = np.maximum.accumulate(end)
    lo = int(np.searchsorted(reach, x0, side="left"))
    hi = int(np.searchsorted(start, x1, side="right"))
    return slice(lo, max(lo, hi))


def merge_runs(start: np.ndarray, end: np.ndarray, min_gap: float) -> Runs:
    """Merge events (sorted by start) whose gap to everything before them is below ``min_gap``.

    ``min_gap <= 0`` merges nothing: each event is its own run, which is the exact picture.
    """
    n = len(start)
    if n == 0 or min_gap <= 0:
        index = np.arange(n)
        return Runs(start, end, np.ones(n, dtype=np.int64), index, end - start)
    reach = np.maximum.accumulate(end)
    breaks = np.flatnonzero(start[1:] - reach[:-1] >= min_gap) + 1
    first = np.concatenate(([0], breaks))
    count = np.diff(np.concatenate((first, [n])))
    return Runs(
        start=start[first],
        end=np.maximum.reduceat(end, first),
        count=count,
        first=first,
        busy=np.add.reduceat(end - start, first),
    )


def segments(start: np.ndarray, end: np.ndarray, y: float) -> tuple[np.ndarray, np.ndarray]:
    """x and y arrays drawing each ``[start, end]`` as a horizontal line at height ``y``.

    Three points per interval: start, end, NaN. float64 throughout, so plotly ships the arrays
    to the browser as binary typed arrays instead of JSON lists.
    """
    n = len(start)
    x = np.empty(3 * n)
    x[0::3] = start
    x[1::3] = end
    x[2::3] = np.nan
    ys = np.full(3 * n, float(y))
    ys[2::3] = np.nan
    return x, ys
