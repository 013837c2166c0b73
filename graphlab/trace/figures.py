"""The figures of a gap analysis and how they are said: :class:`Stats`, :class:`Figures` (one
lane: a stream, a device, or the whole timeline) and :class:`Summary` (the whole timeline with
every stream and device), their ``graphlab gaps --json`` objects and their readable report.

The definitions of every figure are in :mod:`.gaps`, which works them out. Microsecond figures
are ns / 1000 with no other rounding (:func:`us`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import msgspec

from graphlab.support.printable import printable
from graphlab.support.words import ENGLISH, Words

__all__ = ["Figures", "Stats", "Summary", "percentile_ns", "us"]


@dataclass(frozen=True)
class Stats:
    """Count, median, 90th percentile and maximum of a set of durations, in ns (None if empty)."""

    count: int
    median_ns: float | None
    p90_ns: float | None
    max_ns: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "median_us": us(self.median_ns),
            "p90_us": us(self.p90_ns),
            "max_us": us(self.max_ns),
        }


@dataclass(frozen=True)
class Figures:
    """The gap-analysis figures of one lane: a stream, a device, or the whole timeline.

    ``device``/``stream`` say which lane (None where the lane is a union).
    """

    device: int | None
    stream: int | None
    kernels: int
    kernel_launches: int
    graph_launches: int
    graph_replays: int
    span_ns: int
    busy_ns: int
    idle_ns: int
    gaps: Stats
    host_bound_gaps: int
    launch_latency: Stats

    @property
    def idle_fraction(self) -> float | None:
        """idle / span, or None when there is no GPU work."""
        return self.idle_ns / self.span_ns if self.span_ns else None

    def to_dict(self) -> dict[str, Any]:
        """The ``graphlab gaps --json`` object for this lane (times in µs from integer ns)."""
        out: dict[str, Any] = {}
        if self.device is not None:
            out["device"] = self.device
        if self.stream is not None:
            out["stream"] = self.stream
        out.update(
            kernels=self.kernels,
            kernel_launches=self.kernel_launches,
            graph_launches=self.graph_launches,
            graph_replays=self.graph_replays,
            span_us=us(self.span_ns),
            busy_us=us(self.busy_ns),
            idle_us=us(self.idle_ns),
            idle_fraction=self.idle_fraction,
            gaps=self.gaps.to_dict(),
            host_bound_gaps=self.host_bound_gaps,
            launch_latency={
                k: v for k, v in self.launch_latency.to_dict().items() if k != "max_us"
            },
        )
        return out


@dataclass(frozen=True)
class Summary(Figures):
    """Gap analysis of a whole timeline, with one :class:`Figures` per stream and per device."""

    streams: Sequence[Figures] = field(default=())
    devices: Sequence[Figures] = field(default=())
    gpu: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["streams"] = _dicts(self.streams)
        out["devices"] = _dicts(self.devices)
        if self.gpu:
            out["gpu"] = self.gpu
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (``graphlab gaps --json``): the whole timeline's figures
        indented, then each stream and device on a line of its own."""
        out = io.BytesIO()
        self.write_json(out.write)
        return out.getvalue().decode()

    def write_json(self, write: Callable[[bytes], object]) -> None:
        """Write :meth:`to_json`'s text, as UTF-8 bytes, with ``write`` (a binary file's).

        A trace with 100,000 streams prints 100,000 lines, not 3 million, and their text is
        written from the figures' columns (:meth:`.lanes.Lanes.write_json`) a batch at a time,
        with no dict between.
        """
        encode = msgspec.json.Encoder().encode
        whole = super().to_dict()
        if self.gpu:
            whole["gpu"] = self.gpu
        write(msgspec.json.format(encode(whole), indent=2)[:-2])
        separator = b",\n    "
        for key, lanes in (("streams", self.streams), ("devices", self.devices)):
            write(f',\n  "{key}": ['.encode())
            if not lanes:
                write(b"]")
                continue
            write(b"\n    ")
            lanes_write_json = getattr(lanes, "write_json", None)
            if lanes_write_json:
                lanes_write_json(write, separator)
            else:
                write(separator.join(encode(lane.to_dict()) for lane in lanes))
            write(b"\n  ]")
        write(b"\n}")

    def report(self, words: Words = ENGLISH) -> str:
        """A short readable report (what ``graphlab gaps`` prints), in ``words``' language; the
        figures, units and identifiers are the same in every language."""
        kernels = words.ngettext("%1 kernel", "%1 kernels", self.kernels)
        streams = words.ngettext("%1 stream", "%1 streams", len(self.streams))
        lines = [
            words.gettext("GPU work on %1: %2 on %3", printable(self.gpu), kernels, streams)
            if self.gpu
            else words.gettext("GPU work: %1 on %2", kernels, streams),
            _lane_line(words.gettext("all streams"), self, words),
        ]
        if self.gaps.count:
            gaps = words.ngettext("%1 gap", "%1 gaps", self.gaps.count)
            lines.append(
                "  "
                + words.gettext(
                    "host-bound: %1 of %2 (the GPU waited for the host: the next work was not "
                    "yet launched)",
                    self.host_bound_gaps,
                    gaps,
                )
            )
        launches = words.gettext(
            "host: %1, %2",
            words.ngettext("%1 kernel launch", "%1 kernel launches", self.kernel_launches),
            words.ngettext("%1 graph launch", "%1 graph launches", self.graph_launches),
        )
        if self.graph_launches:
            launches += words.gettext(" (%1 replayed in the trace)", self.graph_replays)
        lines.append("  " + launches)
        latency = self.launch_latency
        if latency.count:
            lines.append(
                "  "
                + words.gettext(
                    "launch latency (host call end -> GPU start): median %1, p90 %2 over %3 "
                    "whose GPU work is in the trace (kernel and graph launches, and async copies "
                    "and memsets)",
                    _fmt_duration(latency.median_ns),
                    _fmt_duration(latency.p90_ns),
                    words.ngettext("%1 host call", "%1 host calls", latency.count),
                )
            )
            if latency.median_ns < 0:
                lines.append(
                    "    "
                    + words.gettext(
                        "(negative: the GPU started the work before the launch call returned, "
                        "as an idle GPU can)"
                    )
                )
        if len(self.devices) > 1:
            lines.extend(
                _lane_line(words.gettext("device %1", d.device), d, words) for d in self.devices
            )
        if len(self.streams) > 1:
            lines.extend(
                _lane_line(words.gettext("device %1 stream %2", s.device, s.stream), s, words)
                for s in self.streams
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


def percentile_ns(low: int, high: int, hundredths: int) -> float:
    """numpy's linear percentile between two neighbouring ranks' values, ``hundredths`` of the
    way from ``low`` to ``high``: computed exactly on Python ints and rounded once (Python's
    int / int is correctly rounded)."""
    return (100 * low + hundredths * (high - low)) / 100


def us(ns: float | None) -> float | None:
    """Nanoseconds to microseconds without binary round-off: the float nearest ns / 1000.

    An int divided by an int is correctly rounded in Python, so whole nanoseconds (every figure
    but an interpolated percentile) take that quick route; the rest go through their decimal text.
    """
    if ns is None:
        return None
    if isinstance(ns, int):
        return ns / 1000
    if ns.is_integer() and abs(ns) < 2**53:
        return int(ns) / 1000
    return float(Decimal(repr(ns)) / 1000)


def _fmt_duration(ns: float | None) -> str:
    """A duration in the unit that suits it: ``20.704 µs``, ``4.488 ms``, ``12.920 s``."""
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns / 1000:.3f} µs"


def _lane_line(label: str, f: Figures, words: Words) -> str:
    """One lane's line of the report: its span, busy and idle time, and its gaps."""
    if not f.span_ns:
        return "  " + words.gettext("%1: no GPU work", label)
    gaps = (
        words.ngettext(
            "%1 gap (median %2, p90 %3, max %4)",
            "%1 gaps (median %2, p90 %3, max %4)",
            f.gaps.count,
            _fmt_duration(f.gaps.median_ns),
            _fmt_duration(f.gaps.p90_ns),
            _fmt_duration(f.gaps.max_ns),
        )
        if f.gaps.count
        else words.gettext("no gaps")
    )
    return "  " + words.gettext(
        "%1: span %2, busy %3, idle %4 (%5); %6",
        label,
        _fmt_duration(f.span_ns),
        _fmt_duration(f.busy_ns),
        _fmt_duration(f.idle_ns),
        words.gettext("%1 idle", f"{100 * f.idle_fraction:.1f}%"),
        gaps,
    )


def _dicts(lanes: Sequence[Figures]) -> list[dict[str, Any]]:
    """The ``to_dict`` of each lane; :class:`~.lanes.Lanes` builds them a column at a time."""
    to_dicts = getattr(lanes, "to_dicts", None)
    return to_dicts() if to_dicts else [lane.to_dict() for lane in lanes]
