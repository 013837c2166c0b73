"""What the timing functions return, and the JSON form a recording stores them in.

:class:`Comparison` is :func:`graphlab.compare`'s result; :class:`CumulativeTotals` is
:func:`graphlab.timing.compare.measure_cumulative_totals`'s. Their fields are the one list of
their keys: :data:`TIMING_KEYS` (what a recording's ``"timings"`` must hold), ``to_dict`` and
``from_dict`` all read it from the dataclass, so a field added there is stored, loaded and
checked without a second list to keep in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphlab.trace.timeline import Timeline

__all__ = ["TIMING_KEYS", "Comparison", "CumulativeTotals"]


@dataclass(frozen=True)
class Comparison:
    """What :func:`graphlab.compare` measured; every time is in microseconds.

    ``eager_us`` and ``replay_us`` are per iteration (median over repeats, GPU time between CUDA
    events); the ``*_spread_us`` pairs are their [10th, 90th] percentiles. The end-to-end figures
    are per iteration on the host clock, including input copies and output clones for the replay.
    ``break_even`` is N* = capture / (eager end to end − replay end to end), None when replay is
    not faster. ``timelines`` holds profiled ``Timeline`` s ("eager", "graph") when asked for.
    """

    capture_us: float
    first_replay_us: float
    eager_us: float
    replay_us: float
    eager_end_to_end_us: float
    replay_end_to_end_us: float
    eager_spread_us: tuple[float, float]
    replay_spread_us: tuple[float, float]
    repeats: int
    iterations: int
    break_even: float | None
    # A recording stores its timelines in a section of their own, not among the timings.
    timelines: Mapping[str, Timeline] | None = field(
        default=None, compare=False, repr=False, metadata={"stored_apart": True}
    )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored as a recording's ``"timings"`` (timelines are stored apart)."""
        return {key: _to_json(getattr(self, key)) for key in TIMING_KEYS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """Rebuild from :meth:`to_dict`'s output (for example a recording's ``timings``).

        KeyError for a missing key; TypeError or ValueError for a value of the wrong kind.
        """
        return cls(**{key: _READERS[key](data[key]) for key in TIMING_KEYS})

    def __str__(self) -> str:
        def row(label: str, us: float, note: str = "") -> str:
            return f"  {label:<20}{us:>12,.1f} µs{note}"

        def bracket(pair: tuple[float, float]) -> str:
            return f"  [{pair[0]:,.1f}, {pair[1]:,.1f}]"

        if self.break_even is None:
            verdict = "  break-even          never: replay is not faster end to end"
        else:
            verdict = (
                f"  break-even          N* = {self.break_even:,.1f} iterations "
                "(capture / saving per iteration, end to end)"
            )
        return "\n".join(
            [
                f"eager vs CUDA graph replay, per iteration: median of {self.repeats} repeats "
                f"x {self.iterations} iterations [p10, p90]",
                row("eager", self.eager_us, bracket(self.eager_spread_us)),
                row("replay", self.replay_us, bracket(self.replay_spread_us)),
                row("end to end, eager", self.eager_end_to_end_us, "  (fresh inputs)"),
                row(
                    "end to end, replay",
                    self.replay_end_to_end_us,
                    "  (inputs copied in, outputs cloned)",
                ),
                row("capture", self.capture_us, "  (once)"),
                row("first replay", self.first_replay_us, "  (once)"),
                verdict,
            ]
        )


# The keys of a recording's "timings": every field of Comparison that is not stored apart.
TIMING_KEYS: tuple[str, ...] = tuple(
    f.name for f in fields(Comparison) if not f.metadata.get("stored_apart")
)


def _pair(values: Sequence[float]) -> tuple[float, float]:
    low, high = values
    return float(low), float(high)


def _optional_float(value: float | None) -> float | None:
    return None if value is None else float(value)


def _to_json(value: Any) -> Any:
    return list(value) if isinstance(value, (tuple, list)) else value


# How a stored value is read back, by the annotation of its field. A field of a type with no
# reader here stops the import with a KeyError, rather than loading recordings unchecked.
_READERS: dict[str, Callable[[Any], Any]] = {
    f.name: {
        "float": float,
        "int": int,
        "float | None": _optional_float,
        "tuple[float, float]": _pair,
    }[f.type]
    for f in fields(Comparison)
    if f.name in TIMING_KEYS
}


@dataclass(frozen=True)
class CumulativeTotals:
    """Measured totals, in µs, of N eager iterations and of capture + N replays.

    ``eager_us[i]`` and ``graph_us[i]`` belong to ``counts[i]``; each is the median over
    ``repeats`` runs. The graph total includes the capture and, per replay, copying fresh inputs
    in and cloning the outputs.
    """

    counts: tuple[int, ...]
    eager_us: tuple[float, ...]
    graph_us: tuple[float, ...]
    repeats: int

    @property
    def crossing(self) -> int | None:
        """The smallest measured N at which the graph's total is no longer than eager's, or None."""
        for n, eager, graph in zip(self.counts, self.eager_us, self.graph_us, strict=True):
            if graph <= eager:
                return n
        return None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored as a break-even recording's ``timings["cumulative"]``."""
        return {
            "counts": list(self.counts),
            "eager_total_us": list(self.eager_us),
            "graph_total_us": list(self.graph_us),
            "repeats": self.repeats,
            "crossing": self.crossing,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CumulativeTotals:
        """Rebuild from :meth:`to_dict`'s output (``crossing`` is recomputed, not read)."""
        return cls(
            counts=tuple(int(n) for n in data["counts"]),
            eager_us=tuple(float(v) for v in data["eager_total_us"]),
            graph_us=tuple(float(v) for v in data["graph_total_us"]),
            repeats=int(data["repeats"]),
        )
