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
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["PROBE", "autogroup_niceness", "describe", "probe_backend"]

# Printed by the child: graphlab's backend plus the torch and CUDA versions. Where torch has no
# GPU build (or GRAPHLAB_BACKEND=emulator), the answer needs no import of torch.
PROBE = """
import json
from graphlab.backend import backend, known_without_torch, torch_build
b = known_without_torch() or backend()
build = torch_build()
print(json.dumps({"name": b.name, "gpu": b.gpu, "reason": b.reason,
                  "torch": build["__version__"], "cuda": build["cuda"]}))
"""
TIMEOUT_S = 120
#: How much lower than the server's the child's priority is (Unix ``nice``; 19 is the lowest).
NICENESS = 10
#: How many tenths of a second the server tries to set the child's autogroup niceness.
AUTOGROUP_TRIES = 30


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
    except OSError as exc:  # no such Python, or no room for another process
        return describe({"name": "unknown", "label": f"backend unknown ({exc})"})
    await _lower_priority(child.pid)
    try:
        out, err = await asyncio.wait_for(child.communicate(), TIMEOUT_S)
    except TimeoutError:
        # A child that never answers (a GPU driver that hangs) must not stay behind.
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        await child.wait()
        return describe({"name": "unknown", "label": "backend unknown (no answer in time)"})
    lines = out.decode(errors="replace").strip().splitlines()
    if child.returncode == 0 and lines:
        try:
            return describe(json.loads(lines[-1]))
        except ValueError:
            pass
    last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
    return describe({"name": "unknown", "label": f"backend unknown: {last}"})


async def _lower_priority(pid: int) -> None:
    """Give the child process ``pid`` :data:`NICENESS` less priority, where the system allows it
    (not on Windows), and its session's autogroup too, where there are autogroups (Linux); a
    child that already ended is left alone.

    Without CAP_SYS_ADMIN, Linux takes one autogroup niceness a tenth of a second, machine-wide,
    and refuses the others with EAGAIN: so when many servers start at once (a workshop's), the
    write is tried again, for up to :data:`AUTOGROUP_TRIES` tenths of a second.
    """
    if hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)
    try:
        own = autogroup_niceness(Path("/proc/self/autogroup").read_text())
    except OSError:  # no autogroups here
        return
    if own is None:
        return
    for _ in range(AUTOGROUP_TRIES):
        try:
            Path(f"/proc/{pid}/autogroup").write_text(str(min(19, own + NICENESS)))
        except BlockingIOError:  # EAGAIN: another process's turn
            await asyncio.sleep(0.1)
        except OSError:  # the child ended, or this system forbids it
            return
        else:
            return


def autogroup_niceness(text: str) -> int | None:
    """The niceness in a ``/proc/<pid>/autogroup`` file's text, ``"/autogroup-4196 nice 0"``;
    ``None`` for text of another form.

    A process whose session has no autogroup of its own shares the root one, whose niceness is
    0; for it the kernel leaves the file empty (so in many containers, where no process started
    a session of its own).
    """
    if not text.strip():
        return 0
    found = re.fullmatch(r"/autogroup-\d+ nice (-?\d+)\s*", text)
    return int(found[1]) if found else None
