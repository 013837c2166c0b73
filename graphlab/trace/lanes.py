"""The gap-analysis figures of many lanes (streams or devices) kept as numpy columns.

A trace with 100,000 streams has 100,000 sets of figures. :class:`Lanes` holds them as one numpy
array per figure and builds a :class:`~.figures.Figures` only for the lane asked for, and
:meth:`Lanes.to_dicts` and :meth:`Lanes.write_json` turn the columns into the ``graphlab gaps
--json`` objects a column at a time: a nanosecond count below 2**53 is exact as a double, so
numpy's ``ns / 1000`` is the same correctly rounded float as Python's ``int / int``; only
interpolated percentiles go one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from typing import Any, overload

import msgspec
import numpy as np

from .figures import Figures, Stats, percentile_ns, us

__all__ = ["WRITE_LANES", "Lanes", "StatsColumns"]

_EXACT = 2**53  # integers up to this are exact as doubles
WRITE_LANES = 8192  # lanes written as JSON at a time


class StatsColumns:
    """:class:`~.figures.Stats` of many lanes: per lane its count and maximum, and for the median
    and the 90th percentile the two ranks it lies between and the hundredths between them."""

    def __init__(self, count: np.ndarray, top: np.ndarray, p50: tuple, p90: tuple):
        self.count, self.top, self.p50, self.p90 = count, top, p50, p90

    def take(self, index) -> StatsColumns:
        """The columns of the lanes at ``index`` (an index array or a slice)."""
        return StatsColumns(
            self.count[index],
            self.top[index],
            tuple(c[index] for c in self.p50),
            tuple(c[index] for c in self.p90),
        )

    def stats(self, i: int) -> Stats:
        count = int(self.count[i])
        if not count:
            return Stats(0, None, None, None)
        p50, p90 = (percentile_ns(*(int(c[i]) for c in p)) for p in (self.p50, self.p90))
        return Stats(count, p50, p90, int(self.top[i]))

    def rows(self, with_max: bool = True) -> list[_StatsRow] | list[_LatencyRow]:
        """Each lane's :meth:`Stats.to_dict` as a struct (with ``max_us`` only when
        ``with_max``)."""
        empty = self.count == 0
        columns = [
            self.count.tolist(),
            _us_or_none(self.p50, empty),
            _us_or_none(self.p90, empty),
        ]
        if not with_max:
            return list(map(_LatencyRow, *columns))
        return list(map(_StatsRow, *columns, _none_where(_us_column(self.top), empty)))


class _StatsRow(msgspec.Struct, gc=False):
    """:meth:`Stats.to_dict` of one lane (the names are the JSON keys)."""

    count: int
    median_us: float | None
    p90_us: float | None
    max_us: float | None


class _LatencyRow(msgspec.Struct, gc=False):
    """:meth:`Stats.to_dict` of one lane's launch latency, which leaves its maximum out."""

    count: int
    median_us: float | None
    p90_us: float | None


class _LaneRow(msgspec.Struct, gc=False):
    """:meth:`Figures.to_dict` of one lane (the names are the JSON keys; UNSET is left out)."""

    device: int | msgspec.UnsetType
    stream: int | msgspec.UnsetType
    kernels: int
    kernel_launches: int
    graph_launches: int
    graph_replays: int
    span_us: float
    busy_us: float
    idle_us: float
    idle_fraction: float | None
    gaps: _StatsRow
    host_bound_gaps: int
    launch_latency: _LatencyRow


class Lanes(Sequence[Figures]):
    """The figures of many lanes as numpy columns, one entry per lane.

    ``device`` and ``stream`` are None where they are not part of the lane's key (a device's
    lanes have no stream).
    """

    def __init__(
        self,
        device: np.ndarray | None,
        stream: np.ndarray | None,
        *,
        kernels: np.ndarray,
        kernel_launches: np.ndarray,
        graph_launches: np.ndarray,
        graph_replays: np.ndarray,
        span: np.ndarray,
        busy: np.ndarray,
        gaps: StatsColumns,
        host_bound_gaps: np.ndarray,
        launch_latency: StatsColumns,
    ):
        self.device, self.stream = device, stream
        self.kernels, self.kernel_launches = kernels, kernel_launches
        self.graph_launches, self.graph_replays = graph_launches, graph_replays
        self.span, self.busy = span, busy
        self.gaps, self.host_bound_gaps, self.launch_latency = gaps, host_bound_gaps, launch_latency

    def __len__(self) -> int:
        return len(self.kernels)

    @overload
    def __getitem__(self, i: int) -> Figures: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Figures]: ...
    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        i = range(len(self))[i]  # a negative index counts from the end; IndexError past it
        span, busy = int(self.span[i]), int(self.busy[i])
        return Figures(
            device=None if self.device is None else int(self.device[i]),
            stream=None if self.stream is None else int(self.stream[i]),
            kernels=int(self.kernels[i]),
            kernel_launches=int(self.kernel_launches[i]),
            graph_launches=int(self.graph_launches[i]),
            graph_replays=int(self.graph_replays[i]),
            span_ns=span,
            busy_ns=busy,
            idle_ns=span - busy,
            gaps=self.gaps.stats(i),
            host_bound_gaps=int(self.host_bound_gaps[i]),
            launch_latency=self.launch_latency.stats(i),
        )

    def __iter__(self) -> Iterator[Figures]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return tuple(self) == tuple(other)

    __hash__ = None  # equal to a tuple, so not hashable by identity

    def __repr__(self) -> str:
        return f"Lanes({len(self)} lanes)"

    def without_stream(self) -> Lanes:
        """The same lanes named by device alone (a device with one stream has its figures)."""
        return Lanes(
            self.device,
            None,
            kernels=self.kernels,
            kernel_launches=self.kernel_launches,
            graph_launches=self.graph_launches,
            graph_replays=self.graph_replays,
            span=self.span,
            busy=self.busy,
            gaps=self.gaps,
            host_bound_gaps=self.host_bound_gaps,
            launch_latency=self.launch_latency,
        )

    def to_dicts(self) -> list[dict[str, Any]]:
        """Each lane's :meth:`Figures.to_dict`, built a column at a time."""
        return msgspec.to_builtins(self._rows())

    def write_json(self, write: Callable[[bytes], object], separator: bytes) -> None:
        """Write each lane's :meth:`Figures.to_dict` as compact JSON text, the lanes joined by
        ``separator`` (which holds the comma between them), :data:`WRITE_LANES` lanes at a time,
        so that their structs and text never take much memory.

        msgspec writes a batch of lanes' structs, built a column at a time, in one call; their
        text is then cut between lanes, the one place where ``},{`` occurs (a lane's nested
        objects are followed by another key or by the lane's end, and it holds no string).
        """
        between = b"}" + separator + b"{"
        for begin in range(0, len(self), WRITE_LANES):
            text = _ENCODE(self._rows(slice(begin, begin + WRITE_LANES))).replace(b"},{", between)
            write(separator + memoryview(text)[1:-1] if begin else memoryview(text)[1:-1])

    def _rows(self, lanes: slice = slice(None)) -> list[_LaneRow]:
        """The :meth:`Figures.to_dict` of each lane of the slice ``lanes``, as a struct."""
        span, busy = self.span[lanes], self.busy[lanes]
        if not len(span):
            return []
        idle = span - busy
        device, stream = (
            repeat(msgspec.UNSET) if ids is None else ids[lanes].tolist()
            for ids in (self.device, self.stream)
        )
        return list(
            map(
                _LaneRow,
                device,
                stream,
                self.kernels[lanes].tolist(),
                self.kernel_launches[lanes].tolist(),
                self.graph_launches[lanes].tolist(),
                self.graph_replays[lanes].tolist(),
                _us_column(span),
                _us_column(busy),
                _us_column(idle),
                _none_where(_ratio(idle, span), span == 0),
                self.gaps.take(lanes).rows(),
                self.host_bound_gaps[lanes].tolist(),
                self.launch_latency.take(lanes).rows(with_max=False),
            )
        )


_ENCODE = msgspec.json.Encoder().encode


def _us_column(ns: np.ndarray) -> list[float]:
    """Integer ns to µs floats, each the float nearest ns / 1000 (as :func:`~.figures.us`)."""
    if _small(ns):
        return (ns / 1000).tolist()
    return [v / 1000 for v in ns.tolist()]


def _ratio(num: np.ndarray, den: np.ndarray) -> list[float]:
    """num / den per lane, each the correctly rounded quotient, as Python's int / int."""
    if _small(num) and _small(den):
        with np.errstate(divide="ignore", invalid="ignore"):  # a 0 span: replaced by None
            return (num / den).tolist()
    return [a / b if b else 0.0 for a, b in zip(num.tolist(), den.tolist(), strict=True)]


def _us_or_none(p: tuple, empty: np.ndarray) -> list[float | None]:
    """A percentile column in µs: whole ranks a column at a time, interpolated ones one by one."""
    low, high, hundredths = p
    values = _us_column(low)
    # A rank's value is taken as a float first (as Stats holds it), which is exact below 2**53.
    one_by_one = hundredths != 0 if _small(low) else np.ones(len(low), dtype=bool)
    for i in np.flatnonzero(one_by_one & ~empty).tolist():
        values[i] = us(percentile_ns(int(low[i]), int(high[i]), int(hundredths[i])))
    return _none_where(values, empty)


def _small(values: np.ndarray) -> bool:
    """Whether every value is exact as a double (below 2**53 in magnitude)."""
    return not len(values) or int(np.abs(values).max()) < _EXACT


def _none_where(values: list, empty: np.ndarray) -> list:
    if not empty.any():
        return values
    column = np.array(values, dtype=object)
    column[empty] = None
    return column.tolist()
