"""The gap-analysis figures of many lanes (streams or devices) kept as numpy columns.

A trace with 100,000 streams has 100,000 sets of figures. :class:`Lanes` holds them as one numpy
array per figure and builds a :class:`~.figures.Figures` only for the lane asked for, and
:meth:`Lanes.to_dicts` turns the columns into the ``graphlab gaps --json`` objects a column at a
time: a nanosecond count below 2**53 is exact as a double, so numpy's ``ns / 1000`` is the same
correctly rounded float as Python's ``int / int``; only interpolated percentiles go one by one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import msgspec
import numpy as np

from .figures import Figures, Stats, percentile_ns, us

__all__ = ["Lanes", "StatsColumns"]

_EXACT = 2**53  # integers up to this are exact as doubles


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

    def fields(self, with_max: bool = True) -> list[tuple[str, list]]:
        """Each key of :meth:`Stats.to_dict` with its value per lane (``max_us`` only when
        ``with_max``)."""
        empty = self.count == 0
        fields = [
            ("count", self.count.tolist()),
            ("median_us", _us_or_none(self.p50, empty)),
            ("p90_us", _us_or_none(self.p90, empty)),
        ]
        if with_max:
            fields.append(("max_us", _none_where(_us_column(self.top), empty)))
        return fields


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
        keys, columns = [], []
        for key, values in self._fields():
            if values and isinstance(values[0], tuple):  # a nested object: its own dicts
                sub_keys = [k for k, _ in values]
                values = [
                    dict(zip(sub_keys, row, strict=True))
                    for row in zip(*(v for _, v in values), strict=True)
                ]
            keys.append(key)
            columns.append(values)
        return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]

    def json_rows(self) -> list[str]:
        """Each lane's :meth:`Figures.to_dict` as compact JSON text, written from the columns
        without a dict: msgspec writes each column's numbers, and one template each lane."""
        template, texts = [], []
        for key, values in self._fields():
            nested = values and isinstance(values[0], tuple)
            parts = values if nested else [(None, values)]
            inner = []
            for sub_key, column in parts:
                inner.append(("" if sub_key is None else f'"{sub_key}":') + "%s")
                texts.append(_json_texts(column))
            body = ",".join(inner)
            template.append(f'"{key}":' + ("{" + body + "}" if nested else body))
        row = "{" + ",".join(template) + "}"
        return [row % values for values in zip(*texts, strict=True)]

    def _fields(self) -> list[tuple[str, Any]]:
        """Each key of :meth:`Figures.to_dict` with its value per lane; a nested object's
        value is its own list of (key, values) pairs. Empty when there are no lanes."""
        if not len(self):
            return []
        idle = self.span - self.busy
        fields: list[tuple[str, Any]] = [
            (key, ids.tolist())
            for key, ids in (("device", self.device), ("stream", self.stream))
            if ids is not None
        ]
        fields += [
            ("kernels", self.kernels.tolist()),
            ("kernel_launches", self.kernel_launches.tolist()),
            ("graph_launches", self.graph_launches.tolist()),
            ("graph_replays", self.graph_replays.tolist()),
            ("span_us", _us_column(self.span)),
            ("busy_us", _us_column(self.busy)),
            ("idle_us", _us_column(idle)),
            ("idle_fraction", _none_where(_ratio(idle, self.span), self.span == 0)),
            ("gaps", self.gaps.fields()),
            ("host_bound_gaps", self.host_bound_gaps.tolist()),
            ("launch_latency", self.launch_latency.fields(with_max=False)),
        ]
        return fields


def _json_texts(values: list) -> list[str]:
    """Each value (a number or None) as its JSON text, written by msgspec in one call."""
    return msgspec.json.encode(values)[1:-1].decode().split(",")


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
    for i in np.flatnonzero(empty).tolist():
        values[i] = None
    return values
