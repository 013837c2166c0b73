"""Every process an isolated child started, however it detached, found and stopped (Linux).

A process can leave its parent's process group (``setsid``), and it can leave its parent too: a
daemon forks twice and the middle process exits, so the kernel hands the grandchild to another
parent. :func:`~graphlab.failures.isolation.isolated` keeps such processes within reach in two
ways:

- The child makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux 3.4 and
  later): an orphan among its descendants is handed to it rather than to init, so while the child
  lives every process it started, in whatever session or group, is below it in ``/proc``.
  :func:`stop_tree` stops that tree: it freezes it with SIGSTOP until no new process appears
  (so that nothing forks out of it while it is being killed), then kills it with SIGKILL.
- Where this process may create a cgroup (as root, or in a cgroup v2 delegated to the user), the
  child moves itself into a new one before it runs anything, and the kernel keeps every
  descendant in it, whatever its parent, even after the child has died. :func:`kill_cgroup`
  kills whatever is in it, then removes it.

Elsewhere (another OS, no ``/proc``) both are skipped, and the caller's process group is all
that is stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["become_subreaper", "join_cgroup", "kill_cgroup", "new_cgroup", "stop_tree"]

_PR_SET_CHILD_SUBREAPER = 36  # from <linux/prctl.h>
_PROC = Path("/proc")
_SETTLE_S = 5.0  # how long a killed process may take to end before it is left to the kernel
_cgroup_names = itertools.count()


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants; False where Linux does not offer it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # no libc to load, or no prctl in it (not Linux)
        return False


def _parents() -> dict[int, int]:
    """Every process's parent, read from ``/proc/PID/stat`` (empty without ``/proc``)."""
    parents = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:  # it ended while the folder was read
                continue
            # The command name is in parentheses and may hold ") ": the fields follow the last.
            fields = stat.rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(fields[1])
    return parents


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid``, ``pid`` excluded."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, []))
    return found


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and has not ended (a zombie has ended: it waits to be reaped)."""
    try:
        stat = Path(_PROC, str(pid), "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _settle(pids: Iterable[int]) -> None:
    """Wait, up to :data:`_SETTLE_S`, until each of ``pids`` has ended."""
    deadline = time.monotonic() + _SETTLE_S
    for pid in pids:
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.005)


def stop_tree(pid: int) -> None:
    """Kill every process below ``pid`` (not ``pid`` itself) and wait until they have ended.

    ``pid`` must not have been reaped: a pid that is waited for can be reused by an unrelated
    process. The tree is frozen first, pass by pass, until a pass finds no process it had not
    seen, so that no process forks a new one between being found and being killed.
    """
    frozen: set[int] = set()
    while True:
        new = [p for p in _descendants(pid) if p not in frozen]
        if not new:
            break
        _signal(new, signal.SIGSTOP)
        frozen.update(new)
    _signal(frozen, signal.SIGKILL)
    _settle(frozen)


def _cgroup_homes() -> list[Path]:
    """Where this process's cgroups are, cgroup v2 first, then cgroup v1's pids hierarchy."""
    try:
        lines = Path(_PROC, "self", "cgroup").read_text().splitlines()
    except OSError:
        return []
    homes = []
    for line in lines:
        number, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if number == "0":
            homes += [Path("/sys/fs/cgroup", relative), Path("/sys/fs/cgroup/unified", relative)]
        elif "pids" in controllers.split(","):
            homes.append(Path("/sys/fs/cgroup/pids", relative))
    return [home for home in homes if (home / "cgroup.procs").is_file()]


def new_cgroup() -> Path | None:
    """A new, empty cgroup below this process's own; None where none can be made."""
    for home in _cgroup_homes():
        folder = home / f"graphlab-isolated-{os.getpid()}-{next(_cgroup_names)}"
        try:
            folder.mkdir()
        except OSError:
            continue
        return folder
    return None


def join_cgroup(folder: Path) -> bool:
    """Move this process into the cgroup ``folder``; False where it may not."""
    try:
        (folder / "cgroup.procs").write_text("0")  # 0: the process that writes
    except OSError:
        return False
    return True


def kill_cgroup(folder: Path) -> None:
    """Kill every process in the cgroup ``folder``, wait until they have ended, remove it."""
    procs = folder / "cgroup.procs"
    for _ in range(1000):  # each pass kills what the last one missed while it was forking
        try:
            pids = [int(line) for line in procs.read_text().split()]
        except OSError:
            return
        if not pids:
            break
        _signal(pids, signal.SIGKILL)
        _settle(pids)
    with contextlib.suppress(OSError):
        folder.rmdir()
