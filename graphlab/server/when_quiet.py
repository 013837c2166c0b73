"""Work nobody waits for, started once the processor has a core to spare.

The server warms the trace viewer up (:func:`graphlab.server.handlers.start_warm_up`: plotly's
import and first figure, the helper process that reads large traces; about 2.5 s of CPU) so
that the first trace a learner opens is drawn at once. Started with the server, it ran while the
page loaded and the first lesson's kernel made its first picture, and on a 2-core machine the
picture came 1.4 s later (``benchmarks/first_picture.py``: 11.9-12.3 s instead of 10.5-10.8 s).
So :func:`when_quiet` waits until a page has loaded the course and then most of a core has
been idle for a moment (the first picture drawn) before it starts such work. Idle alone is not
enough: while the server starts, and before the browser asks for the page, one of two cores is
free for a second or two, and the work would then run into the page's load. It waits
:data:`LONGEST_WAIT_S` at most: a machine that other work keeps busy is never quiet, and where
the processor's times cannot be read (``/proc/stat`` is Linux's) the wait is that long too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

__all__ = ["FREE_CORES", "LONGEST_WAIT_S", "POLL_S", "QUIET_S", "cpu_times", "when_quiet"]

#: How much of the machine must be idle, in cores, for it to count as quiet.
FREE_CORES = 0.75
#: For how long, in seconds, without a break.
QUIET_S = 1.0
#: How often the processor's times are read, in seconds.
POLL_S = 0.25
#: The longest the work waits, in seconds.
LONGEST_WAIT_S = 30.0


def cpu_times(stat: Path = Path("/proc/stat")) -> tuple[int, int] | None:
    """Clock ticks the machine's processors have spent idle and in all, summed over them, from
    the first line of ``/proc/stat``; None where there is no such file."""
    try:
        fields = stat.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    # cpu user nice system idle iowait irq softirq steal (guest time is counted in user's).
    ticks = [int(value) for value in fields[1:9]]
    return ticks[3] + ticks[4], sum(ticks)


async def when_quiet(
    work: Callable[[], object],
    first: Awaitable[object] | None = None,
    sample: Callable[[], tuple[int, int] | None] = cpu_times,
    cores: int | None = None,
) -> None:
    """Call ``work()`` once ``first`` is done (a page has loaded the course) and then
    :data:`FREE_CORES` of the ``cores`` processors (all of them by default) have been idle for
    :data:`QUIET_S`; :data:`LONGEST_WAIT_S` after the call at the latest."""
    cores = cores or os.cpu_count() or 1
    deadline = time.monotonic() + LONGEST_WAIT_S
    if first is not None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(first, LONGEST_WAIT_S)
    before = sample()
    quiet = 0  # how many polls in a row found the machine quiet
    while quiet * POLL_S < QUIET_S and time.monotonic() < deadline:
        await asyncio.sleep(POLL_S)
        after = sample()
        if before is not None and after is not None and after[1] > before[1]:
            idle, total = after[0] - before[0], after[1] - before[1]
            quiet = quiet + 1 if idle / total * cores >= FREE_CORES else 0
        before = after
    work()
