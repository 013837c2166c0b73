"""Which backend the course runs on, asked of a fresh Python rather than of the server.

The server process must not import torch or touch CUDA: that costs seconds of start-up and, on
a GPU, memory that the learner's kernels need. So the server runs ``graphlab.backend()`` once
in a child process of the same Python (the one the course's kernels use by default) and keeps
the answer for its lifetime.

The child asks when the page loads, just as the lesson's kernel starts and imports the same
modules, and on a small machine the three compete for the processor. The answer is one label in
the sidebar that nobody waits for, so the child runs at a lower priority (:data:`NICENESS`,
where the system has priorities): the page and the kernel come first.

On Linux a lower priority alone is not enough. With autogroups (on by default in most kernels:
``/proc/sys/kernel/sched_autogroup_enabled``), the scheduler first shares the processor between
sessions, and a process's niceness counts only against the processes of its own session. The
lesson's kernel runs in a session of its own (Jupyter starts each kernel so), the child in the
server's, so a niced child still took half of a 2-core machine from the kernel while the first
lesson loaded: 3.3 s of CPU. So the child gets a session of its own, whose autogroup is given the
same niceness.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["PROBE", "describe", "probe_backend"]

# Printed by the child: graphlab.backend() plus the torch and CUDA versions.
PROBE = """
import json, torch, graphlab
b = graphlab.backend()
print(json.dumps({"name": b.name, "gpu": b.gpu, "reason": b.reason,
                  "torch": torch.__version__, "cuda": torch.version.cuda}))
"""
TIMEOUT_S = 120
#: How much lower than the server's the child's priority is (Unix ``nice``; 19 is the lowest).
NICENESS = 10


def describe(found: dict[str, Any]) -> dict[str, Any]:
    """Add the one-line ``label`` the sidebar shows to the child's answer."""
    torch = f"torch {found['torch']}" if found.get("torch") else ""
    if found.get("name") == "cuda":
        parts = [found.get("gpu") or "CUDA GPU", torch, f"CUDA {found.get('cuda')}"]
    elif found.get("name") == "emulator":
        parts = ["CPU emulator", torch]
    else:
        parts = [found.get("label") or "backend unknown"]
    return found | {"label": " · ".join(p for p in parts if p)}


async def probe_backend(python: str = sys.executable) -> dict[str, Any]:
    """Run the probe in a child ``python``; an answer with ``name: "unknown"`` if it fails."""
    try:
        child = await asyncio.create_subprocess_exec(
            python,
            "-c",
            PROBE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        _lower_priority(child.pid)
        out, err = await asyncio.wait_for(child.communicate(), TIMEOUT_S)
    except (TimeoutError, OSError) as exc:
        return describe({"name": "unknown", "label": f"backend unknown ({exc or 'timed out'})"})
    lines = out.decode(errors="replace").strip().splitlines()
    if child.returncode == 0 and lines:
        try:
            return describe(json.loads(lines[-1]))
        except ValueError:
            pass
    last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
    return describe({"name": "unknown", "label": f"backend unknown: {last}"})


def _lower_priority(pid: int) -> None:
    """Give the child process ``pid`` :data:`NICENESS` less priority, where the system allows it
    (not on Windows), and its session's autogroup too, where there are autogroups (Linux); a
    child that already ended is left alone."""
    if hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)
    with contextlib.suppress(OSError, ValueError):  # "/autogroup-4196 nice 0"
        own = int(Path("/proc/self/autogroup").read_text().split()[-1])
        Path(f"/proc/{pid}/autogroup").write_text(str(min(19, own + NICENESS)))
