"""Events that appear twice in a trace, identical in every column: a merged or doubled trace."""

from __future__ import annotations

import numpy as np

from .events import EventTable

__all__ = ["duplicated_events"]


def duplicated_events(t: EventTable) -> list[str]:
    """A note when some events appear twice, identical in every column (a merged or doubled
    trace). Rows are sorted by start, so twins are among the rows sharing a start with a neighbour.
    """
    start = t.start_ns
    if len(start) < 2:
        return []
    shared = np.zeros(len(start), dtype=bool)
    shared[1:] |= start[1:] == start[:-1]
    shared[:-1] |= start[1:] == start[:-1]
    rows = np.flatnonzero(shared)
    if not len(rows):
        return []
    keys = [
        np.unique(t.name[rows].astype(str), return_inverse=True)[1].reshape(-1),
        np.unique(t.kind[rows], return_inverse=True)[1].reshape(-1),
        *(getattr(t, col)[rows] for col in ("dur_ns", "device", "stream", "thread", "correlation")),
        t.start_ns[rows],
    ]
    order = np.lexsort(keys)
    same = np.ones(len(rows) - 1, dtype=bool)
    for key in keys:
        ordered = key[order]
        same &= ordered[1:] == ordered[:-1]
    twins = int(same.sum())
    if not twins:
        return []
    return [
        f"{_count(twins)} of another event "
        "(same kind, name, times, device, stream, thread and correlation), and each copy is "
        "counted: was the trace merged or written twice? Export it again"
    ]


def _count(n: int) -> str:
    return f"{n} {'event is an exact copy' if n == 1 else 'events are exact copies'}"
