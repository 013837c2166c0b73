"""Run a graphlab command in a child whose address space is capped near what it already uses.

For the tests that check a command refuses, in one line and before starting, work that cannot fit
in the memory it has (``ulimit -v``), instead of ending in a MemoryError or being killed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import resource, sys
import graphlab.cli, graphlab.simulator, graphlab.support.memory, graphlab.trace.timeline
size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[1]), resource.RLIM_INFINITY))
sys.exit(graphlab.cli.main(sys.argv[2:]))
"""

HAS_PROC = Path("/proc/self/status").exists()


def run_with_memory_cap(room_bytes: int, *argv: str) -> subprocess.CompletedProcess:
    """``graphlab ARGV`` with ``room_bytes`` of address space beyond what its imports took."""
    return subprocess.run(
        [sys.executable, "-c", _CHILD, str(room_bytes), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
