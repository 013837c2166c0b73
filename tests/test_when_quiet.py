"""Work nobody waits for starts once the processor has a core to spare, or after a while."""

from __future__ import annotations

import asyncio

import pytest

from graphlab.server import when_quiet
from graphlab.server.when_quiet import cpu_times


def test_cpu_times_reads_the_first_line_of_proc_stat(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 5 50 800 20 0 3 2 7 0\ncpu0 50 2 25 400 10 0 1 1 3 0\n")
    # idle: idle 800 + iowait 20; in all: user to steal (guest time is inside user's).
    assert cpu_times(stat) == (820, 980)
    assert cpu_times(tmp_path / "missing") is None


def cumulative(steps: list[tuple[int, int]], taken: list[int]):
    """A stand-in for cpu_times: running totals of (idle, all) ticks, one step per call."""
    idle = total = 0

    def sample() -> tuple[int, int]:
        nonlocal idle, total
        if taken:
            step_idle, step_total = steps[len(taken) - 1]
            idle, total = idle + step_idle, total + step_total
        taken.append(total)
        return idle, total

    return sample


@pytest.fixture
def quick(monkeypatch):
    """Polls a hundredth of a second apart; quiet after four of them in a row."""
    monkeypatch.setattr(when_quiet, "POLL_S", 0.01)
    monkeypatch.setattr(when_quiet, "QUIET_S", 0.04)


BUSY = (20, 200)  # of 2 cores, 0.2 idle
QUIET = (75, 200)  # of 2 cores, 0.75 idle: just enough


def test_the_work_waits_for_four_quiet_polls_in_a_row(quick):
    taken: list[int] = []
    done: list[int] = []
    steps = [BUSY, QUIET, QUIET, QUIET, BUSY, QUIET, QUIET, QUIET, QUIET, QUIET]
    sample = cumulative(steps, taken)
    asyncio.run(when_quiet.when_quiet(lambda: done.append(len(taken)), sample=sample, cores=2))
    # The first sample, then nine polls: the fourth quiet one in a row is the ninth.
    assert done == [10]


def test_a_machine_that_is_never_quiet_gets_the_work_after_the_longest_wait(quick, monkeypatch):
    monkeypatch.setattr(when_quiet, "LONGEST_WAIT_S", 0.1)
    taken: list[int] = []
    done: list[int] = []
    sample = cumulative([BUSY] * 1000, taken)
    asyncio.run(when_quiet.when_quiet(lambda: done.append(len(taken)), sample=sample, cores=2))
    assert len(done) == 1 and 2 <= done[0] <= 12  # about ten polls in 0.1 s


def test_without_the_processors_times_the_work_waits_the_longest(quick, monkeypatch):
    monkeypatch.setattr(when_quiet, "LONGEST_WAIT_S", 0.05)
    calls: list[None] = []
    done: list[int] = []
    asyncio.run(
        when_quiet.when_quiet(
            lambda: done.append(len(calls)), sample=lambda: calls.append(None), cores=2
        )
    )
    assert len(done) == 1 and done[0] >= 2


def test_the_processor_is_watched_only_once_the_page_has_loaded(quick):
    # Quiet before the page asks for the course (the server starting, the browser not yet
    # there) does not count.
    taken: list[int] = []
    done: list[int] = []
    order: list[str] = []
    sample = cumulative([QUIET] * 4, taken)

    async def page_loads() -> None:
        await asyncio.sleep(0.05)
        order.append(f"page loaded after {len(taken)} samples")

    asyncio.run(
        when_quiet.when_quiet(lambda: done.append(len(taken)), page_loads(), sample=sample, cores=2)
    )
    assert order == ["page loaded after 0 samples"] and done == [5]
