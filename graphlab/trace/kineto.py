"""Read torch.profiler / Kineto Chrome-trace JSON into a :class:`~.events.EventTable`.

What Kineto writes (PyTorch's ``prof.export_chrome_trace(path)``): a JSON object whose
``traceEvents`` list holds complete events (``"ph": "X"``) with ``ts`` and ``dur`` in microseconds,
printed with exactly three decimals (nanoseconds), relative to ``baseTimeNanoseconds``.

- Host CUDA API calls have category ``cuda_runtime`` (``cudaLaunchKernel``, ``cudaGraphLaunch``,
  ...) or ``cuda_driver`` (``cuLaunchKernel``, as Triton calls it); ``pid``/``tid`` are the host
  process and thread; ``args.correlation`` links the call to the GPU work it submitted.
- GPU work has category ``kernel``, ``gpu_memcpy`` or ``gpu_memset``; ``pid`` is the device and
  ``tid`` the stream; ``args`` carry ``device``, ``stream``, ``correlation``, ``grid``, ``block``.
- Everything else (``cpu_op``, ``python_function``, ``user_annotation``, ``ac2g`` flow arrows,
  metadata) is not part of the table; the loader counts what it skipped in ``meta["skipped"]``.

Times are read from their decimal text into integer nanoseconds (:mod:`.decimals`), so no float
rounding can lose a nanosecond (an absolute microsecond timestamp with three decimals has 19
significant digits; a double keeps about 16).

How a file is read, so that a trace of a million kernels loads faster than Python's ``json.load``
parses it, in a fraction of its size in memory: :mod:`.kineto_stream` reads the event list of a
plain (not gzipped) Kineto file from the file a chunk at a time, cut between events, and
:mod:`.kineto_columns` turns each chunk's events into the table's columns; given a helper process,
:mod:`.kineto_halves` has it read the second half of a large list meanwhile. Any other file is read
whole: msgspec checks it and keeps ``traceEvents`` as its text, which :mod:`.kineto_chunks` cuts
into chunks the same way; a list it cannot cut (events that are not objects, say) is split by
msgspec into the text of each event, read a batch at a time. :mod:`.duplicates` notes events that
appear twice.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from graphlab.errors import TraceError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.support.memory import describe_bytes, missing_bytes
from graphlab.support.printable import printable, printable_json

from .duplicates import duplicated_events
from .events import SCHEMA, EventTable, TraceWarning, plain_json
from .jsonfile import is_python_only, parse_error, python_json, read_bytes
from .kineto_chunks import read_array, read_texts
from .kineto_columns import Columns
from .kineto_halves import Helper, read_in_halves
from .kineto_stream import EMPTY_LIST, StreamedTrace, read_events

__all__ = ["MAX_TRACE_BYTES", "load_trace", "read_json"]

# Refuse files larger than this (unpacked).
MAX_TRACE_BYTES = 2 * 1024**3
# Memory needed to read a trace, as a multiple of its size: when it is read whole, the bytes
# themselves, the text boundaries of every event, the columns and one batch of decoded events.
_FAST_MEMORY = 1.6
# Parsing into Python objects (a saved timeline; Python's json for NaN) takes about eight times
# the file.
_PYTHON_JSON_MEMORY = 8.0

_EXPORT_ADVICE = N_(
    "record one with torch.profiler: `with torch.profiler.profile(activities=["
    "ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof: ...` then "
    "`prof.export_chrome_trace('trace.json')`"
)


def _not_chrome(where: str) -> str:
    """The message for JSON without a traceEvents list; ``where`` is "path: " or empty."""
    return _("{where}JSON, but not a Chrome trace (no 'traceEvents' list); {advice}").format(
        where=where, advice=_(_EXPORT_ADVICE)
    )


def read_json(path: str | os.PathLike) -> Any:
    """Parse a JSON (or gzipped JSON) file; TraceError when it can't.

    Numbers with a fraction are read as :class:`decimal.Decimal`, so no digit is lost; ``NaN``
    and ``Infinity``, which Python's json writes, are read too.
    """
    p = _path(path)
    return _exact_json(_file_bytes(p, _PYTHON_JSON_MEMORY), printable(p))


def _exact_json(data: bytes | bytearray, label: str) -> Any:
    """``data`` parsed as :func:`read_json` parses a file; ``label`` names it in messages."""
    try:
        return _EXACT_JSON.decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:
        if isinstance(exc, msgspec.DecodeError) and is_python_only(data, exc):
            return python_json(label, data, _EXPORT_ADVICE)
        raise parse_error(label, data, exc, _EXPORT_ADVICE) from None


def load_trace(src, helper: Helper | None = None) -> EventTable:
    """An event table from a Kineto trace path, parsed dict, or finished ``torch.profiler.profile``.

    A graphlab timeline (``{"schema": "graphlab.timeline/1", ...}``) is accepted as well. Warns
    (:class:`~.events.TraceWarning`) about events that are suspect but do not stop the analysis.
    ``helper``, another process, reads the second half of a large trace file meanwhile
    (:mod:`.kineto_halves`); the table is the same either way.
    """
    if isinstance(src, (str, os.PathLike)):
        table, notes = _load_file(_path(src), str(src), helper)
    elif isinstance(src, dict):
        table, notes = _load_parsed(src, None)
    elif hasattr(src, "export_chrome_trace"):
        table, notes = _load_profiler(src)
    else:
        raise TraceError(
            _(
                "cannot read a trace from {kind}: pass a path to a Chrome-trace JSON file, its "
                "parsed dict, or a finished torch.profiler.profile"
            ).format(kind=type(src).__name__)
        )
    where = f"{printable(src)}: " if isinstance(src, (str, os.PathLike)) else ""
    for note in [*notes, *duplicated_events(table)]:
        warnings.warn(f"{where}{note}", TraceWarning, stacklevel=3)
    return table


# ------------------------------------------------------------------------------- documents


class _Document(msgspec.Struct, gc=False):
    """The top level of a trace file: the events as texts, the rest as text to read later."""

    # The names are the JSON keys.
    traceEvents: msgspec.Raw = msgspec.Raw()
    schema: msgspec.Raw = msgspec.Raw()
    graphlab: msgspec.Raw = msgspec.Raw()
    deviceProperties: msgspec.Raw = msgspec.Raw()
    baseTimeNanoseconds: msgspec.Raw = msgspec.Raw()


_EXACT_JSON = msgspec.json.Decoder(float_hook=Decimal)
_DOCUMENT = msgspec.json.Decoder(_Document | list[msgspec.Raw])
_EVENT_TEXTS = msgspec.json.Decoder(list[msgspec.Raw])


def _path(src: str | os.PathLike) -> Path:
    """``src`` as a Path; an empty one is refused (Path("") is the current folder)."""
    if not os.fspath(src).strip():
        raise TraceError(_("the trace's path is empty: pass the trace's .json file"))
    return Path(src)


def _file_bytes(p: Path, memory_factor: float) -> bytes | bytearray:
    # MAX_TRACE_BYTES is read here, at call time, so that it can be lowered (tests do).
    return read_bytes(p, MAX_TRACE_BYTES, memory_factor, _EXPORT_ADVICE)


def _load_file(
    p: Path, origin: str | None, helper: Helper | None = None
) -> tuple[EventTable, list[str]]:
    """The table of a trace file; ``origin`` names it in messages and meta (None: unnamed).

    A plain Kineto trace is read as a stream (:mod:`.kineto_stream`), in two halves at once
    where there is a ``helper`` (:mod:`.kineto_halves`); any other file whole.
    """
    label = printable(origin) if origin else _("the trace")

    def stream(f: BinaryIO) -> StreamedTrace | None:
        if helper is None:
            return read_events(f, label, _EXPORT_ADVICE)
        return read_in_halves(f, os.fspath(p.absolute()), helper, label, _EXPORT_ADVICE)

    read = read_bytes(p, MAX_TRACE_BYTES, _FAST_MEMORY, _EXPORT_ADVICE, stream=stream)
    if isinstance(read, StreamedTrace):
        loaded = _load_streamed(read, label, origin)
        if loaded is not None:
            return loaded
        read = _file_bytes(p, _FAST_MEMORY)
    data = read
    del read  # one name for the bytes, deleted once they are read
    try:
        document = _DOCUMENT.decode(data)
    except msgspec.ValidationError:
        raise TraceError(_not_chrome(f"{label}: ")) from None
    except (msgspec.DecodeError, RecursionError) as exc:
        if isinstance(exc, msgspec.DecodeError) and is_python_only(data, exc):
            # NaN or Infinity: JSON that Python writes; read it as Python reads it.
            why = N_("holds NaN or Infinity, which only Python's slower json reads")
            _check_python_memory(data, label, why, N_("export the trace again"))
            return _load_parsed(python_json(label, data, _EXPORT_ADVICE), origin)
        raise parse_error(label, data, exc, _EXPORT_ADVICE) from None
    top = {}
    if isinstance(document, _Document):
        top = _top(document, label)
        if top["schema"] == SCHEMA:
            # A timeline is read whole into Python objects, from the bytes already read.
            del document
            why = N_("is a graphlab timeline, read whole as Python objects")
            advice = N_("free some memory or save a shorter timeline")
            _check_python_memory(data, label, why, advice)
            return EventTable.from_dict(_exact_json(data, label)), []
        _refuse_other_graphlab_files(top, origin)
        if memoryview(document.traceEvents)[:1] != b"[":  # missing, or not a list
            raise TraceError(_not_chrome(f"{label}: "))
        columns = read_array(document.traceEvents, label, _EXPORT_ADVICE)
        if columns is None:  # a list that read_array cannot cut: one event text at a time
            columns = read_texts(_EVENT_TEXTS.decode(document.traceEvents), label, _EXPORT_ADVICE)
    else:
        columns = read_texts(document, label, _EXPORT_ADVICE)
    del document, data  # the file's bytes are done with before the table is built
    return _table(columns, top, origin)


def _load_streamed(
    read: StreamedTrace, label: str, origin: str | None
) -> tuple[EventTable, list[str]] | None:
    """The table of a trace read as a stream; None where its document is one that the whole
    file must be read for (not an object with that one list, or a graphlab timeline)."""
    try:
        document = _DOCUMENT.decode(read.document)
    except msgspec.DecodeError:
        return None
    if not isinstance(document, _Document) or bytes(document.traceEvents) != EMPTY_LIST:
        return None
    top = _top(document, label)
    if top["schema"] == SCHEMA:
        return None
    _refuse_other_graphlab_files(top, origin)
    return _table(read.columns, top, origin)


def _check_python_memory(data: bytes | bytearray, label: str, why: str, advice: str) -> None:
    """TraceError when parsing ``data`` into Python objects needs more memory than is free."""
    short = missing_bytes(int(len(data) * _PYTHON_JSON_MEMORY))
    if short:
        raise TraceError(
            _(
                "{path}: {why}, and that needs about {needed} of memory ({available} available): "
                "{advice}"
            ).format(
                path=label,
                why=_(why),
                needed=describe_bytes(short[0]),
                available=describe_bytes(short[1]),
                advice=_(advice),
            )
        ) from None


_TOP_KEYS = ("schema", "graphlab", "deviceProperties", "baseTimeNanoseconds")


def _top(document: _Document, label: str) -> dict[str, Any]:
    """The document's small top-level values that the table's meta is made of."""
    return {k: _small_json(getattr(document, k), label) for k in _TOP_KEYS}


def _small_json(raw: msgspec.Raw, origin: str) -> Any:
    """A small top-level value, read as Python reads it (numbers with a fraction as Decimal)."""
    return python_json(origin, bytes(raw), _EXPORT_ADVICE) if len(raw) else None


def _refuse_other_graphlab_files(top: dict, origin: str | None) -> None:
    schema = top["schema"]
    where = f"{printable(origin)}: " if origin else ""
    if isinstance(schema, str) and schema.startswith("graphlab."):
        if schema.startswith("graphlab.timeline/"):
            EventTable.from_dict(top)  # an unknown timeline version: says which one to use
        raise TraceError(
            _(
                "{where}this is a {schema} file, not a trace: load recordings with "
                "graphlab.recording(name) and use its .timeline('eager' or 'graph')"
            ).format(where=where, schema=schema)
        )


def _load_parsed(data: Any, origin: str | None) -> tuple[EventTable, list[str]]:
    """The table of an already parsed trace (a dict, or a list of events)."""
    where = f"{printable(origin)}: " if origin else ""
    if isinstance(data, dict) and data.get("schema") == SCHEMA:
        return EventTable.from_dict(data), []
    if isinstance(data, dict):
        _refuse_other_graphlab_files({"schema": data.get("schema")}, origin)
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise TraceError(_not_chrome(where))
    return _table(Columns.of_dicts(events, where), data if isinstance(data, dict) else {}, origin)


def _load_profiler(prof) -> tuple[EventTable, list[str]]:
    """Export a finished profiler to a temp file and read it back."""
    with tempfile.TemporaryDirectory(prefix="graphlab-trace-") as tmp:
        path = Path(tmp) / "trace.json"
        try:
            prof.export_chrome_trace(str(path))
        except (RuntimeError, AssertionError, AttributeError) as exc:
            raise TraceError(
                _(
                    "the profiler could not export its trace ({reason}): call "
                    "Timeline.from_chrome_trace(prof) after the "
                    "`with torch.profiler.profile(...) as prof:` block has ended"
                ).format(reason=exc)
            ) from None
        if not path.exists():
            raise TraceError(
                _(
                    "the profiler wrote no trace: call Timeline.from_chrome_trace(prof) after the "
                    "`with torch.profiler.profile(...) as prof:` block has ended"
                )
            )
        return _load_file(path, None)


def _table(columns: Columns, top: dict, origin: str | None) -> tuple[EventTable, list[str]]:
    """The event table of the columns read, with the trace's meta, and what is suspect in it.

    Refuses a trace with no CUDA event.
    """
    where = f"{printable(origin)}: " if origin else ""
    columns.finish()
    if not len(columns.kind):
        found = ", ".join(f"{n} {cat}" for cat, n in columns.skipped.most_common(4))
        raise TraceError(
            _(
                "{where}the trace has no CUDA runtime or GPU events ({found}): profile with "
                "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a machine with a GPU"
            ).format(where=where, found=found or _("no events"))
        )
    meta = _meta(top, origin, columns.skipped)
    if columns.host_pid is not None:
        meta.setdefault("host_pid", columns.host_pid)
    return columns.table(meta), columns.suspect_events()


def _meta(top: dict, origin: str | None, skipped: Counter) -> dict[str, Any]:
    """Where the table came from; a trace written by Timeline.to_chrome_trace keeps its own."""
    own = top.get("graphlab")
    if isinstance(own, dict) and isinstance(own.get("meta"), dict):
        return printable_json(plain_json(own["meta"]))
    meta: dict[str, Any] = {"source": "kineto"}
    if origin:
        meta["path"] = origin
    base = top.get("baseTimeNanoseconds")
    if isinstance(base, int):
        meta["base_time_ns"] = base
    props = top.get("deviceProperties")
    if isinstance(props, list) and props and isinstance(props[0], dict):
        names = [printable(p.get("name")) for p in props if isinstance(p, dict) and p.get("name")]
        if names:
            meta["gpu"] = names[0]
            meta["gpus"] = names
    meta["skipped"] = dict(skipped)
    return meta
