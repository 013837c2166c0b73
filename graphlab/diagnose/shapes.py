"""Several example shapes: one graph per shape, or one graph of the largest with padding.

A graph replays the shapes it was captured with (lesson 05). Given the example inputs of several
calls, :func:`shape_buckets` counts the graphs one-per-shape needs, and the share of computed rows
that would be padding if every call were padded along its first dimension to the largest one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["shape_buckets"]


def shape_buckets(calls: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """Shapes seen, graphs needed, and the padding of one graph of the largest first dimension."""
    signatures = [tuple(tuple(x.shape) for x in call) for call in calls]
    distinct = sorted(set(signatures))
    rows = [sig[0][0] if sig and sig[0] else 1 for sig in signatures]
    largest = max(rows)
    padding = 1 - sum(rows) / (largest * len(rows))
    return {
        "calls": len(calls),
        "shapes": [list(map(list, sig)) for sig in distinct],
        "graphs": len(distinct),
        "pad_to_rows": largest,
        "padding_fraction": padding,
    }
