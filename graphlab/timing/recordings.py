"""Real GPU timing results, recorded by ``graphlab record`` and bundled with graphlab.

On a machine with no GPU the course shows these instead of live timings, always with their
provenance (:attr:`Recording.label`). They are never invented and never edited: each JSON file in
this folder was written by ``graphlab record`` on the GPU named in its ``meta``.

File format (``<name>.json``, schema ``graphlab.recording/1``)::

    {"schema": "graphlab.recording/1", "name": "chain_1000_k4096",
     "meta": {"gpu", "driver", "torch", "cuda", "python", "date", "graphlab", "command"},
     "experiment": {"kind": "chain" | "break_even", ...},
     "timings": <graphlab.timing.results.Comparison.to_dict()> (+ "cumulative" for break_even),
     "timelines": {"eager": <Timeline.to_dict()>, "graph": <Timeline.to_dict()>}}

:mod:`graphlab.timing.experiments` documents each experiment's keys. The loader reads JSON only,
and checks the schema, the required keys (the timings' are :data:`~.results.TIMING_KEYS`, the
fields of :class:`~.results.Comparison`) and that ``meta`` names a real GPU before handing a
recording out.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphlab.errors import RecordingError, TraceError
from graphlab.support.printable import printable

from .results import TIMING_KEYS, Comparison, CumulativeTotals

if TYPE_CHECKING:
    from graphlab.trace.timeline import Timeline

__all__ = [
    "RECORDINGS_DIR",
    "SCHEMA",
    "Recording",
    "check_recording",
    "list_recordings",
    "recording",
    "scan_recordings",
]

SCHEMA = "graphlab.recording/1"
RECORDINGS_DIR = Path(__file__).resolve().parent / "recorded"

META_KEYS = ("gpu", "driver", "torch", "cuda", "python", "date", "graphlab", "command")
TIMELINE_MODES = ("eager", "graph")

# A recording's name is its file name without ".json": no folders, no hidden files.
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")

# Largest recording file read; the ones graphlab records are well under a megabyte.
MAX_RECORDING_BYTES = 256 * 1024**2

# Values that name no GPU: a recording claiming one of these was not made on a real device.
_NOT_A_GPU = {"", "cpu", "none", "null", "unknown", "emulator", "simulator", "n/a"}


class Recording:
    """One bundled recording: ``name``, ``meta`` (provenance), ``experiment``, ``timings``.

    ``timeline("eager")`` / ``timeline("graph")`` give the profiled timelines (parsed on demand).
    ``label`` is the line a notebook prints above anything it shows from this recording.
    """

    __slots__ = ("_timelines", "experiment", "meta", "name", "path", "timings")

    def __init__(self, data: Mapping[str, Any], path: Path | None = None):
        check_recording(data, where=printable(path) if path else "recording")
        self.name: str = data["name"]
        self.meta: dict[str, Any] = dict(data["meta"])
        self.experiment: dict[str, Any] = dict(data["experiment"])
        self.timings: dict[str, Any] = dict(data["timings"])
        self.path = path
        self._timelines: dict[str, Any] = dict(data["timelines"])

    @property
    def date(self) -> str:
        """The recording's date, ``YYYY-MM-DD`` (UTC)."""
        return datetime.fromisoformat(self.meta["date"]).strftime("%Y-%m-%d")

    @property
    def label(self) -> str:
        """Provenance for banners: GPU, driver, torch and date, and the command that made it.

        Control characters from the file are shown as escapes, never sent to a terminal.
        """
        meta = self.meta
        return printable(
            f"recorded on {meta['gpu']} (driver {meta['driver']}, torch {meta['torch']}, "
            f"{self.date}) by `graphlab record`"
        )

    @property
    def comparison(self) -> Comparison:
        """``timings`` as a :class:`~graphlab.timing.results.Comparison` (print it for a table)."""
        return self._rebuild(Comparison, self.timings)

    @property
    def cumulative(self) -> CumulativeTotals | None:
        """A break-even recording's measured totals; None for other experiments."""
        data = self.timings.get("cumulative")
        return None if data is None else self._rebuild(CumulativeTotals, data)

    def _rebuild(self, cls, data: Mapping[str, Any]):
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordingError(
                f"the timings of recording {self.name!r} are damaged ({type(exc).__name__}: "
                f"{exc}); re-record it with `graphlab record` on a GPU"
            ) from None

    def timeline(self, mode: str) -> Timeline:
        """The profiled timeline of ``mode`` ("eager" or "graph") as a Timeline."""
        from graphlab.trace.timeline import Timeline

        if mode not in TIMELINE_MODES:
            raise RecordingError(
                f"no timeline {mode!r} in recording {self.name!r}: choose one of {TIMELINE_MODES}"
            )
        try:
            timeline = Timeline.from_dict(self._timelines[mode])
        except TraceError as exc:
            raise RecordingError(
                f"the {mode} timeline of recording {self.name!r} is damaged ({exc}); "
                "re-record it with `graphlab record` on a GPU"
            ) from None
        timeline.meta = {**(timeline.meta or {}), "label": self.label, "recording": self.name}
        return timeline

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, exactly as stored."""
        return {
            "schema": SCHEMA,
            "name": self.name,
            "meta": self.meta,
            "experiment": self.experiment,
            "timings": self.timings,
            "timelines": self._timelines,
        }

    def __repr__(self) -> str:
        return (
            f"Recording({self.name!r}, experiment={self.experiment.get('kind')!r}, "
            f"gpu={self.meta['gpu']!r}, date={self.date!r})"
        )


def check_recording(data: Any, where: str = "recording") -> None:
    """Raise :class:`RecordingError` unless ``data`` is a well-formed recording of a real GPU."""
    advice = "re-record it with `graphlab record` on a GPU"
    if not isinstance(data, Mapping):
        raise RecordingError(f"{where}: not a graphlab recording (a JSON object is expected)")
    if data.get("schema") != SCHEMA:
        raise RecordingError(
            f"{where}: schema is {data.get('schema')!r}, expected {SCHEMA!r}; this graphlab reads "
            f"only {SCHEMA} recordings: {advice}"
        )
    for key, kind in [
        ("name", str),
        ("meta", Mapping),
        ("experiment", Mapping),
        ("timings", Mapping),
        ("timelines", Mapping),
    ]:
        if not isinstance(data.get(key), kind):
            raise RecordingError(f"{where}: missing or malformed {key!r}; {advice}")
    if not _NAME.fullmatch(data["name"]):
        raise RecordingError(
            f"{where}: name {data['name']!r} is not a recording name (letters, digits, '_', "
            "'-' and '.', not starting with '.'): it names the file the recording is stored in"
        )
    meta = data["meta"]
    missing = [key for key in META_KEYS if not isinstance(meta.get(key), str)]
    if missing:
        raise RecordingError(
            f"{where}: meta lacks {', '.join(missing)} (its provenance); a recording without it "
            f"cannot be shown: {advice}"
        )
    if meta["gpu"].strip().lower() in _NOT_A_GPU:
        raise RecordingError(
            f"{where}: meta gpu is {meta['gpu']!r}, which names no real GPU; recordings hold "
            "only results measured on a GPU"
        )
    try:
        datetime.fromisoformat(meta["date"])
    except ValueError:
        raise RecordingError(f"{where}: meta date {meta['date']!r} is not an ISO date") from None
    if not isinstance(data["experiment"].get("kind"), str):
        raise RecordingError(f"{where}: experiment lacks its 'kind'; {advice}")
    missing = [key for key in TIMING_KEYS if key not in data["timings"]]
    if missing:
        raise RecordingError(f"{where}: timings lack {', '.join(missing)}; {advice}")
    for mode in TIMELINE_MODES:
        if not isinstance(data["timelines"].get(mode), Mapping):
            raise RecordingError(f"{where}: no {mode!r} timeline; {advice}")


def recording(name: str, directory: str | os.PathLike | None = None) -> Recording:
    """Load the recording ``name`` (from the bundled folder unless ``directory`` is given)."""
    folder = _folder(directory)
    path = folder / f"{name}.json"
    if not isinstance(name, str) or not name or Path(name).name != name or not path.is_file():
        available = _names(folder)
        listing = (
            ", ".join(available)
            if available
            else "none yet (make them on a GPU with `graphlab record`)"
        )
        raise RecordingError(f"no recording named {name!r} in {folder}; available: {listing}")
    return _load(path)


def list_recordings(directory: str | os.PathLike | None = None) -> list[Recording]:
    """Every recording in the bundled folder (or ``directory``), sorted by name.

    Raises :class:`RecordingError` for the first file that is not a recording; use
    :func:`scan_recordings` to get the good ones and the names of the bad.
    """
    folder = _folder(directory)
    return [_load(folder / f"{name}.json") for name in _names(folder)]


def scan_recordings(
    directory: str | os.PathLike | None = None,
) -> tuple[list[Recording], list[RecordingError]]:
    """The recordings in the bundled folder (or ``directory``) that load, sorted by name, and
    an error naming each ``*.json`` file there that is not a recording."""
    folder = _folder(directory)
    good, bad = [], []
    for name in _names(folder):
        try:
            good.append(_load(folder / f"{name}.json"))
        except RecordingError as exc:
            bad.append(exc)
    return good, bad


def _folder(directory: str | os.PathLike | None) -> Path:
    folder = RECORDINGS_DIR if directory is None else Path(directory)
    if not folder.is_dir():
        raise RecordingError(f"{folder} is not a folder of recordings")
    return folder


def _names(folder: Path) -> list[str]:
    """Recording names in ``folder``, numbers in natural order (chain_10, chain_100, chain_1000)."""

    def natural(name: str) -> list:
        return [
            (0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", name)
        ]

    return sorted((path.stem for path in folder.glob("*.json")), key=natural)


def _load(path: Path) -> Recording:
    shown = printable(path)
    try:
        text = _read_regular_file(path).decode("utf-8")
    except OSError as exc:
        raise RecordingError(f"cannot read {shown}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RecordingError(
            f"{shown} is not a JSON text file (recordings are JSON written by `graphlab record`; "
            "graphlab never unpickles files)"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(
            f"{shown} is not valid JSON (truncated or damaged at line {exc.lineno}, column "
            f"{exc.colno}); restore it from git or re-record it with `graphlab record`"
        ) from None
    except (ValueError, RecursionError) as exc:
        # JSON that parses in principle but not in practice: nesting too deep for the parser,
        # or an integer too long for Python to convert.
        raise RecordingError(
            f"{shown} is not a recording ({type(exc).__name__}: {str(exc)[:120]}); restore it "
            "from git or re-record it with `graphlab record`"
        ) from None
    rec = Recording(data, path)
    if rec.name != path.stem:
        raise RecordingError(
            f"{shown} holds recording {rec.name!r}; a recording's file must be named after it "
            f"({rec.name}.json)"
        )
    return rec


def _read_regular_file(path: Path) -> bytes:
    """The bytes of ``path``, refused unless it is a regular file of a recording's size.

    Opened without blocking, so a named pipe or a device called ``*.json`` is refused instead of
    waiting for ever for a writer.
    """
    shown = printable(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RecordingError(
                f"{shown} is not a regular file (a folder, a pipe or a device): "
                "recordings are JSON files written by `graphlab record`"
            )
        if info.st_size > MAX_RECORDING_BYTES:
            raise RecordingError(
                f"{shown} is {info.st_size:,} bytes, far larger than any recording "
                f"(at most {MAX_RECORDING_BYTES:,}): it is not one"
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb", buffering=0) as f:
        return f.read()
