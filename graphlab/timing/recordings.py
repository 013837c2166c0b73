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
from graphlab.language import gettext as _
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
        """Provenance for banners: GPU, driver, torch and date, and what made the recording.

        ``graphlab record``'s arguments are left out: ``--out`` names a folder of the machine
        that recorded and ``--only`` a list of names, neither of which says anything about this
        recording. Anything else that recorded (lesson 09 records live into a temporary folder) is
        named as its ``command`` says. Control characters from the file are shown as escapes,
        never sent to a terminal.
        """
        meta = self.meta
        command = str(meta["command"])
        if command.split()[:2] == ["graphlab", "record"]:
            text = _("recorded on {gpu} (driver {driver}, torch {torch}, {date}) by `{command}`")
            command = "graphlab record"
        else:
            text = _("recorded on {gpu} (driver {driver}, torch {torch}, {date}) in {command}")
        return printable(
            text.format(
                gpu=meta["gpu"],
                driver=meta["driver"],
                torch=meta["torch"],
                date=self.date,
                command=command,
            )
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
                _(
                    "the timings of recording {name} are damaged ({type}: {exc}); re-record "
                    "it with `graphlab record` on a GPU"
                ).format(name=repr(self.name), type=type(exc).__name__, exc=exc)
            ) from None

    def timeline(self, mode: str) -> Timeline:
        """The profiled timeline of ``mode`` ("eager" or "graph") as a Timeline."""
        from graphlab.trace.timeline import Timeline

        if mode not in TIMELINE_MODES:
            raise RecordingError(
                _("no timeline {mode} in recording {name}: choose one of {timeline_modes}").format(
                    mode=repr(mode), name=repr(self.name), timeline_modes=TIMELINE_MODES
                )
            )
        try:
            timeline = Timeline.from_dict(self._timelines[mode])
        except TraceError as exc:
            raise RecordingError(
                _(
                    "the {mode} timeline of recording {name} is damaged ({exc}); re-record "
                    "it with `graphlab record` on a GPU"
                ).format(mode=mode, name=repr(self.name), exc=exc)
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
    advice = _("re-record it with `graphlab record` on a GPU")
    if not isinstance(data, Mapping):
        raise RecordingError(
            _("{where}: not a graphlab recording (a JSON object is expected)").format(where=where)
        )
    if data.get("schema") != SCHEMA:
        raise RecordingError(
            _(
                "{where}: schema is {data}, expected {schema}; this graphlab reads only "
                "{version} recordings: {advice}"
            ).format(
                where=where,
                data=repr(data.get("schema")),
                schema=repr(SCHEMA),
                version=SCHEMA,
                advice=advice,
            )
        )
    for key, kind in [
        ("name", str),
        ("meta", Mapping),
        ("experiment", Mapping),
        ("timings", Mapping),
        ("timelines", Mapping),
    ]:
        if not isinstance(data.get(key), kind):
            raise RecordingError(
                _("{where}: missing or malformed {key}; {advice}").format(
                    where=where, key=repr(key), advice=advice
                )
            )
    if not _NAME.fullmatch(data["name"]):
        raise RecordingError(
            _(
                "{where}: name {name} is not a recording name (letters, digits, '_', '-' "
                "and '.', not starting with '.'): it names the file the recording is "
                "stored in"
            ).format(where=where, name=repr(data["name"]))
        )
    meta = data["meta"]
    missing = [key for key in META_KEYS if not isinstance(meta.get(key), str)]
    if missing:
        raise RecordingError(
            _(
                "{where}: meta lacks {missing} (its provenance); a recording without it "
                "cannot be shown: {advice}"
            ).format(where=where, missing=", ".join(missing), advice=advice)
        )
    if meta["gpu"].strip().lower() in _NOT_A_GPU:
        raise RecordingError(
            _(
                "{where}: meta gpu is {gpu}, which names no real GPU; recordings hold "
                "only results measured on a GPU"
            ).format(where=where, gpu=repr(meta["gpu"]))
        )
    try:
        datetime.fromisoformat(meta["date"])
    except ValueError:
        raise RecordingError(
            _("{where}: meta date {date} is not an ISO date").format(
                where=where, date=repr(meta["date"])
            )
        ) from None
    if not isinstance(data["experiment"].get("kind"), str):
        raise RecordingError(
            _("{where}: experiment lacks its 'kind'; {advice}").format(where=where, advice=advice)
        )
    missing = [key for key in TIMING_KEYS if key not in data["timings"]]
    if missing:
        raise RecordingError(
            _("{where}: timings lack {missing}; {advice}").format(
                where=where, missing=", ".join(missing), advice=advice
            )
        )
    for mode in TIMELINE_MODES:
        if not isinstance(data["timelines"].get(mode), Mapping):
            raise RecordingError(
                _("{where}: no {mode} timeline; {advice}").format(
                    where=where, mode=repr(mode), advice=advice
                )
            )


def recording(name: str, directory: str | os.PathLike | None = None) -> Recording:
    """Load the recording ``name`` (from the bundled folder unless ``directory`` is given)."""
    folder = _folder(directory)
    path = folder / f"{name}.json"
    if not isinstance(name, str) or not name or Path(name).name != name or not path.is_file():
        available = _names(folder)
        listing = (
            ", ".join(available)
            if available
            else _("none yet (make them on a GPU with `graphlab record`)")
        )
        raise RecordingError(
            _("no recording named {name} in {folder}; available: {listing}").format(
                name=repr(name), folder=folder, listing=listing
            )
        )
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
        raise RecordingError(_("{folder} is not a folder of recordings").format(folder=folder))
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
        raise RecordingError(
            _("cannot read {shown}: {strerror}").format(shown=shown, strerror=exc.strerror)
        ) from None
    except UnicodeDecodeError:
        raise RecordingError(
            _(
                "{shown} is not a JSON text file (recordings are JSON written by "
                "`graphlab record`; graphlab never unpickles files)"
            ).format(shown=shown)
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(
            _(
                "{shown} is not valid JSON (truncated or damaged at line {lineno}, "
                "column {colno}); restore it from git or re-record it with `graphlab "
                "record`"
            ).format(shown=shown, lineno=exc.lineno, colno=exc.colno)
        ) from None
    except (ValueError, RecursionError) as exc:
        # JSON that parses in principle but not in practice: nesting too deep for the parser,
        # or an integer too long for Python to convert.
        raise RecordingError(
            _(
                "{shown} is not a recording ({type}: {exc}); restore it from git or "
                "re-record it with `graphlab record`"
            ).format(shown=shown, type=type(exc).__name__, exc=str(exc)[:120])
        ) from None
    rec = Recording(data, path)
    if rec.name != path.stem:
        raise RecordingError(
            _(
                "{shown} holds recording {rec}; a recording's file must be named after "
                "it ({rec2}.json)"
            ).format(shown=shown, rec=repr(rec.name), rec2=rec.name)
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
                _(
                    "{shown} is not a regular file (a folder, a pipe or a device): "
                    "recordings are JSON files written by `graphlab record`"
                ).format(shown=shown)
            )
        if info.st_size > MAX_RECORDING_BYTES:
            raise RecordingError(
                _(
                    "{shown} is {st_size:,} bytes, far larger than any recording (at most "
                    "{max_recording_bytes:,}): it is not one"
                ).format(shown=shown, st_size=info.st_size, max_recording_bytes=MAX_RECORDING_BYTES)
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb", buffering=0) as f:
        return f.read()
