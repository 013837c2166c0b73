"""What each lesson needs, measured: its run time and its peak memory, on a GPU and on a CPU.

``graphlab doctor --workshop N`` sizes a workshop from these numbers and the instructor guide
plans its agenda with them. They are never typed in: ``tools/measure_lessons.py`` runs every
lesson top to bottom in a fresh kernel (solutions included, as the notebook tests do) and writes
``peaks.json`` next to this module, one section per kind of machine, each with its provenance::

    {"schema": "graphlab.peaks/1",
     "gpu": {"measured_on": {"gpu": ..., "torch": ..., "date": ..., "command": ...},
             "process_overhead_bytes": 536870912,
             "lessons": {"00_start_here": {"seconds": 41.2, "peak_bytes": 1073741824}, ...}},
     "cpu": null}

- ``gpu.lessons[*].peak_bytes``: the most GPU memory the kernel's caching allocator held
  (``torch.cuda.max_memory_reserved``), which is what ``GRAPHLAB_GPU_MEMORY_GB`` caps.
- ``gpu.process_overhead_bytes``: GPU memory a kernel takes beyond that (the CUDA context and
  libraries), device memory in use minus the allocator's, read at the end of the largest lesson.
- ``gpu.lessons[*].host_peak_bytes``: the same kernel's peak resident host memory
  (``ru_maxrss``).
- ``cpu.lessons[*].peak_bytes``: the kernel's peak resident memory (``ru_maxrss``) on the
  emulator.
- ``seconds``: wall time of the lesson's cells, kernel start excluded.

A section that was not measured yet is ``null``, and every question about it is answered with
:data:`NOT_MEASURED` rather than a guess.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from graphlab.diagnose.words import Text
from graphlab.errors import GraphlabError
from graphlab.language import N_

__all__ = [
    "KINDS",
    "NOT_MEASURED",
    "PATH",
    "SCHEMA",
    "LessonPeak",
    "Peaks",
    "PeaksError",
    "Section",
    "load",
    "read",
]

#: The bundled measurements.
PATH = Path(__file__).with_name("peaks.json")
SCHEMA = "graphlab.peaks/1"
#: The kinds of machine a section describes.
KINDS = ("gpu", "cpu")
#: What every answer about a section without measurements says.
NOT_MEASURED = Text(N_("not measured yet"))


class PeaksError(GraphlabError, ValueError):
    """The lesson measurements file is missing or is not what tools/measure_lessons.py writes."""


@dataclass(frozen=True)
class LessonPeak:
    """One lesson's wall time (s) and peak memory (bytes) on one kind of machine; on a GPU, also
    the kernel's peak host memory."""

    seconds: float
    peak_bytes: int
    host_peak_bytes: int | None = None


@dataclass(frozen=True)
class Section:
    """The measurements of every lesson on one machine, with where and how they were taken."""

    measured_on: dict[str, object]
    lessons: dict[str, LessonPeak]
    process_overhead_bytes: int | None = None

    def peak(self) -> tuple[str, int]:
        """The lesson with the largest peak and that peak in bytes."""
        lesson = max(self.lessons, key=lambda name: self.lessons[name].peak_bytes)
        return lesson, self.lessons[lesson].peak_bytes

    def host_peak(self) -> tuple[str, int] | None:
        """The lesson whose kernel held the most host memory on a GPU machine, and how much;
        None when that was not measured."""
        measured = {n: p.host_peak_bytes for n, p in self.lessons.items() if p.host_peak_bytes}
        if not measured:
            return None
        lesson = max(measured, key=measured.__getitem__)
        return lesson, measured[lesson]

    def missing(self, lesson_ids: list[str]) -> list[str]:
        """The lessons of ``lesson_ids`` this section has no measurement for."""
        return [lesson for lesson in lesson_ids if lesson not in self.lessons]


@dataclass(frozen=True)
class Peaks:
    """Both sections; None for one not measured yet."""

    gpu: Section | None
    cpu: Section | None

    def section(self, kind: str) -> Section | None:
        return self.gpu if kind == "gpu" else self.cpu

    def to_dict(self) -> dict:
        return {"schema": SCHEMA} | {kind: _section_dict(self.section(kind)) for kind in KINDS}


def load() -> Peaks:
    """The measurements bundled with graphlab."""
    return read(PATH)


def read(path: str | Path) -> Peaks:
    """The measurements in ``path``; :class:`PeaksError` if it is not a peaks file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PeaksError(
            Text(
                N_(
                    "{path} is missing: reinstall graphlab, or write it with "
                    "tools/measure_lessons.py"
                ),
                path=str(path),
            )
        ) from None
    except (OSError, ValueError) as exc:
        raise PeaksError(
            Text(
                N_("cannot read the lesson measurements {path} ({reason})"),
                path=str(path),
                reason=str(exc),
            )
        ) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise PeaksError(
            Text(
                N_("{path} is not a {schema} file: write it with tools/measure_lessons.py"),
                path=str(path),
                schema=SCHEMA,
            )
        )
    return Peaks(*(_section(data.get(kind), f"{path}: {kind}") for kind in KINDS))


def _section(data: object, where: str) -> Section | None:
    if data is None:
        return None
    bad = PeaksError(
        Text(N_("{where} is damaged: measure again with tools/measure_lessons.py"), where=where)
    )
    if not isinstance(data, dict) or not isinstance(data.get("measured_on"), dict):
        raise bad
    lessons = data.get("lessons")
    if not isinstance(lessons, dict) or not lessons:
        raise bad
    parsed = {}
    for name, entry in lessons.items():
        if not isinstance(entry, dict):
            raise bad
        seconds, peak = entry.get("seconds"), entry.get("peak_bytes")
        host = entry.get("host_peak_bytes")
        if not (_number(seconds) and seconds >= 0 and _count(peak)):
            raise bad
        if host is not None and not _count(host):
            raise bad
        parsed[name] = LessonPeak(float(seconds), peak, host)
    overhead = data.get("process_overhead_bytes")
    if overhead is not None and not _count(overhead):
        raise bad
    return Section(dict(data["measured_on"]), parsed, overhead)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _section_dict(section: Section | None) -> dict | None:
    if section is None:
        return None
    data: dict[str, object] = {"measured_on": section.measured_on}
    if section.process_overhead_bytes is not None:
        data["process_overhead_bytes"] = section.process_overhead_bytes
    data["lessons"] = {name: _lesson_dict(peak) for name, peak in section.lessons.items()}
    return data


def _lesson_dict(peak: LessonPeak) -> dict[str, float | int]:
    data: dict[str, float | int] = {"seconds": peak.seconds, "peak_bytes": peak.peak_bytes}
    if peak.host_peak_bytes is not None:
        data["host_peak_bytes"] = peak.host_peak_bytes
    return data
