"""docs/instructor.md: the agenda adds up to three hours, every lesson is in it or in the table of
further lessons, and their run times and memory figures are the measured ones in
graphlab/workshop/peaks.json (a slot stays "not measured yet" until they are)."""

from __future__ import annotations

import re
from pathlib import Path

from graphlab.course.syllabus import lessons
from graphlab.workshop import peaks

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "instructor.md"
NOT_MEASURED = "*not measured yet*"


def _table(header: str) -> list[list[str]]:
    """The rows of the guide's table that starts with ``header``, as lists of cells."""
    text = GUIDE.read_text(encoding="utf-8")
    table = text[text.index(header) :].split("\n\n")[0].splitlines()[2:]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in table]


def _agenda() -> list[list[str]]:
    return _table("| time | lesson |")


def test_the_agenda_fills_three_hours_in_order():
    rows = _agenda()
    assert sum(int(row[2]) for row in rows) == 180
    clock = 0
    for row in rows:
        hours, minutes = map(int, row[0].split(":"))
        assert hours * 60 + minutes == clock, row
        clock += int(row[2])


def test_every_lesson_is_in_a_table_with_its_measured_times():
    measured = peaks.load()
    rows = {row[1][:2]: row[3:] for row in _agenda() if re.match(r"\d\d ", row[1])}
    further = {row[0][:2]: row[1:] for row in _table("| lesson | run time, H200 |")}
    assert not rows.keys() & further.keys()
    rows |= further
    assert sorted(rows) == [lesson.number for lesson in lessons()]
    for lesson in lessons():
        gpu_time, gpu_peak, cpu_time = rows[lesson.number]
        gpu = measured.gpu and measured.gpu.lessons.get(lesson.id)
        cpu = measured.cpu and measured.cpu.lessons.get(lesson.id)
        assert gpu_time == (f"{gpu.seconds:.1f} s" if gpu else NOT_MEASURED), lesson.id
        mib = f"{gpu.peak_bytes / 2**20:,.0f} MiB" if gpu else NOT_MEASURED
        assert gpu_peak == mib, lesson.id
        assert cpu_time == (f"{cpu.seconds:.1f} s" if cpu else NOT_MEASURED), lesson.id


def test_the_cpu_memory_range_and_load_quoted_are_the_measured_ones():
    cpu = peaks.load().cpu
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    low = min(p.peak_bytes for p in cpu.lessons.values()) / 1e9
    high = max(p.peak_bytes for p in cpu.lessons.values()) / 1e9
    assert f"peaked at {low:.2f} to {high:.2f} GB" in text
    load = cpu.measured_on["load_average"]
    assert f"load average {load['before']} before the run and {load['after']} after it" in text


def test_the_culling_figures_are_the_measured_ones():
    gpu = peaks.load().gpu
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    context = gpu.process_overhead_bytes / 1e9
    agenda = {row[1][:2] for row in _agenda() if re.match(r"\d\d ", row[1])}
    in_agenda = [p.peak_bytes for lesson, p in gpu.lessons.items() if lesson[:2] in agenda]
    first, (largest_id, largest) = max(in_agenda) / 1e9, gpu.peak()
    assert len(in_agenda) == 9
    assert f"a CUDA context, {context:.2f} GB on an H200" in text
    assert (
        f"(up to {first:.2f} GB in the first nine lessons, {largest / 1e9:.2f} GB in lesson "
        f"{largest_id[:2]})" in text
    )
    assert f"(lesson {largest_id[:2]} reserves {largest / 1e9:.2f} GB)" in text
    nine = 9 * context
    assert (
        f"holds {nine:.1f} GB in contexts alone; twenty such learners would need "
        f"{20 * round(nine, 1):.0f} GB" in text
    )
    assert f"2 × ({context:.2f} + {first:.2f}) = {2 * (context + first):.1f} GB" in text
