"""How much more memory this process may use, so that work too big to fit is refused up front.

A trace of a million kernels or a simulation of ten million is refused with one line before
anything is read or computed, instead of ending in a MemoryError half-way or being killed by the
kernel's out-of-memory killer without a word. The estimate is the least of what the machine has
available (Linux's ``MemAvailable``), what this process's cgroup still allows (containers,
notebooks with a memory cap) and what its address-space limit (``ulimit -v``) leaves.
"""

from __future__ import annotations

import resource
from pathlib import Path

__all__ = ["available_bytes", "describe_bytes", "missing_bytes"]

_UNLIMITED = 2**60  # cgroup files write "max" or a huge number when there is no limit


def available_bytes() -> int | None:
    """Bytes this process can still allocate, or None where the system does not say."""
    candidates = [_meminfo_available(), _cgroup_room(), _address_space_room()]
    known = [c for c in candidates if c is not None]
    return max(0, min(known)) if known else None


def missing_bytes(needed: int) -> tuple[int, int] | None:
    """``(needed, available)`` when ``needed`` bytes do not fit in what is available, else None."""
    room = available_bytes()
    return (needed, room) if room is not None and needed > room else None


def describe_bytes(n: float) -> str:
    """A byte count for people: ``1.5 GiB``, ``820 MiB``."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}" if n < 10 * size else f"{n / size:.0f} {unit}"
    return f"{int(n)} bytes"


def _read_number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _proc_kib(path: str, key: str) -> int | None:
    """The bytes that line ``key`` of a /proc file states in kB (``MemAvailable: 123 kB``)."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    return None


def _meminfo_available() -> int | None:
    return _proc_kib("/proc/meminfo", "MemAvailable:")


def _cgroup_room() -> int | None:
    """Limit minus usage of this process's memory cgroup (v2, else v1)."""
    root = Path("/sys/fs/cgroup")
    own = ""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                own = line[3:].lstrip("/")
    except OSError:
        return None
    pairs = [
        (root / own / "memory.max", root / own / "memory.current"),
        (root / "memory" / "memory.limit_in_bytes", root / "memory" / "memory.usage_in_bytes"),
    ]
    for limit_file, usage_file in pairs:
        limit, usage = _read_number(limit_file), _read_number(usage_file)
        if limit is not None and usage is not None and limit < _UNLIMITED:
            return limit - usage
    return None


def _address_space_room() -> int | None:
    """``ulimit -v`` minus the address space this process already maps."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    mapped = _proc_kib("/proc/self/status", "VmSize:")
    if soft == resource.RLIM_INFINITY or mapped is None:
        return None
    return soft - mapped
