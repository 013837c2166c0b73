"""The public timeline: an event table with its readers, writers and gap analysis attached.

``graphlab.Timeline`` is what users hold: load a torch.profiler trace with
:meth:`Timeline.from_chrome_trace`, analyse it with :meth:`Timeline.summary`, export it with
:meth:`Timeline.to_chrome_trace`, keep it with :meth:`Timeline.save` / :meth:`Timeline.load`. The
table itself and its columns are :class:`~graphlab.trace.events.EventTable`'s; this module sits
above the reader, the writer and the analysis, and none of them imports it.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from graphlab.errors import TraceError
from graphlab.language import gettext as _

from .events import EventTable, TraceWarning, finite_json
from .gaps import Summary, summarize
from .kineto import load_trace, read_json
from .kineto_halves import Helper

__all__ = ["Timeline"]


class Timeline(EventTable):
    """A table of launch, sync, kernel, memcpy and memset events with nanosecond times.

    Built like :class:`~graphlab.trace.events.EventTable` (same arguments and columns), or read
    from a file with :meth:`from_chrome_trace` and :meth:`load`.
    """

    __slots__ = ()

    @classmethod
    def _of(cls, table: EventTable) -> Timeline:
        """``table`` as a Timeline, sharing its (read-only) columns."""
        if isinstance(table, cls):
            return table
        timeline = cls.__new__(cls)
        timeline._columns, timeline.meta = table._columns, table.meta
        return timeline

    def summary(self) -> Summary:
        """Gap analysis of this timeline: a :class:`graphlab.trace.gaps.Summary`."""
        return summarize(self)

    def save(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` atomically (temp file, then rename).

        JSON has no NaN or infinity: such values in ``meta`` are written as null, with a
        :class:`~graphlab.trace.events.TraceWarning`.
        """
        data = self.to_dict()
        data["meta"], where = finite_json(data["meta"])
        if where:
            warnings.warn(
                f"timeline meta holds NaN or infinity (at {', '.join(where)}), which JSON cannot "
                "hold: written as null",
                TraceWarning,
                stacklevel=2,
            )
        try:
            text = json.dumps(data, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TraceError(
                _("timeline meta is not JSON-serialisable: {reason}").format(reason=exc)
            ) from None
        from graphlab.support.atomic import write_text_atomically  # see to_chrome_trace

        return write_text_atomically(path, text, TraceError)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Timeline:
        """Read a file written by :meth:`save`."""
        return cls.from_dict(read_json(path))

    # ------------------------------------------------------------------------ Chrome traces

    @classmethod
    def from_chrome_trace(cls, src, helper: Helper | None = None) -> Timeline:
        """Load a torch.profiler / Kineto Chrome trace.

        ``src`` is a path (``.json`` or ``.json.gz``), an already parsed dict, or a finished
        ``torch.profiler.profile`` object. A graphlab timeline file is accepted too. Raises
        :class:`~graphlab.errors.TraceError` with advice when the input is not a usable trace.
        A trace file is read column-wise (:mod:`graphlab.trace.kineto`), to the same table as
        its parsed dict gives. ``helper``, a :class:`graphlab.trace.kineto_halves.Helper` (another
        process, started ahead of time), reads the second half of a large file meanwhile: the
        same table, in a little over half the time on two cores.
        """
        return cls._of(load_trace(src, helper))

    def to_chrome_trace(self, path: str | os.PathLike | None = None) -> str | Path:
        """Export as a Chrome trace (the JSON Perfetto and chrome://tracing open).

        Each event is a complete ("X") event with ``ts``/``dur`` in microseconds written with
        exactly three decimals, so no nanosecond is lost. Host threads and GPU streams become
        labelled lanes: one process for the host, one per GPU, one thread per host thread or
        stream. The file loads back with :meth:`from_chrome_trace` to the same table.
        Returns the written path, or the JSON text when ``path`` is None.
        """
        # The writers are imported here: reading and analysing a trace (``graphlab gaps``) is
        # quicker to start without them.
        from graphlab.support.atomic import atomic_writer

        from .chrome import chrome_trace_text, write_chrome_trace

        try:
            if path is None:
                return chrome_trace_text(self)
            with atomic_writer(path, TraceError) as out:
                write_chrome_trace(self, out)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, TraceError):
                raise
            raise TraceError(
                _("timeline meta is not JSON-serialisable: {reason}").format(reason=exc)
            ) from None
        return Path(path)
