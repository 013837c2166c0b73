"""What ``jupyterhub_config.py`` in this folder builds on: each learner's devices and start-up.

- :class:`RoundRobin` deals the machine's GPUs (or MIG slices) to learners as their servers
  start, always to the device with the fewest learners on it now, so a device freed by a learner
  who leaves is the next one given out.
- :func:`spawn_hooks` returns JupyterHub's ``pre_spawn_hook`` and ``post_stop_hook``: before a
  learner's server starts, its environment gets the device (``CUDA_VISIBLE_DEVICES``), the
  per-learner GPU memory cap (``GRAPHLAB_GPU_MEMORY_GB``) and the course's JupyterLab config
  folder (``JUPYTER_CONFIG_PATH``, as ``graphlab lab`` sets it); when it stops, the device is
  handed back.
- :func:`singleuser_command` is the learner's server command. It runs as the learner: it makes
  their own copy of the lessons (``graphlab.course.workspace.ensure``, the same as
  ``graphlab lab``), then starts JupyterHub's single-user server on that folder. Nothing is
  written into a learner's home by the hub's own (often root) process.

Progress needs nothing here: the store is in each learner's Jupyter data folder, under their
own home (``graphlab.course.progress``).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable

from graphlab.cli.lab import lab_environment

__all__ = [
    "DEFAULT_WORKSPACE",
    "RoundRobin",
    "hub_devices",
    "python_for_learners",
    "singleuser_command",
    "spawn_hooks",
]

#: Each learner's copy of the course, in their home (as ``graphlab lab`` makes it).
DEFAULT_WORKSPACE = "~/graphlab-course"

# Run by the learner's server process: the workspace first, then the single-user server serving
# it (the hub's arguments follow in sys.argv).
_BOOT = """\
import os, sys
from graphlab.course.workspace import ensure
folder = ensure(os.path.expanduser(os.environ.get("GRAPHLAB_WORKSPACE") or "{workspace}"))
sys.argv[1:1] = ["--ServerApp.root_dir=" + str(folder)]
from jupyterhub.singleuser import main
sys.exit(main())
"""


class RoundRobin:
    """Deals ``devices`` (``CUDA_VISIBLE_DEVICES`` values) to learners, one each."""

    def __init__(self, devices: list[str]):
        self.devices = list(devices)
        self.holders: dict[str, str] = {}

    def take(self, learner: str) -> str | None:
        """The device for ``learner`` (the one they hold, else the least used); None if the
        machine has no devices to deal."""
        if not self.devices:
            return None
        if learner not in self.holders:
            load = Counter(self.holders.values())
            order = {device: i for i, device in enumerate(self.devices)}
            self.holders[learner] = min(self.devices, key=lambda d: (load[d], order[d]))
        return self.holders[learner]

    def release(self, learner: str) -> None:
        self.holders.pop(learner, None)


def hub_devices(environ: dict[str, str]) -> list[str]:
    """The devices to deal: ``GRAPHLAB_HUB_DEVICES`` (comma-separated ``CUDA_VISIBLE_DEVICES``
    values, or ``none``) if set, else every GPU or MIG slice nvidia-smi lists."""
    given = environ.get("GRAPHLAB_HUB_DEVICES", "").strip()
    if given:
        return [] if given.lower() == "none" else [d.strip() for d in given.split(",") if d.strip()]
    from graphlab.support.nvidia_smi import inventory, learner_devices

    return learner_devices(inventory())


def spawn_hooks(devices: list[str], cap_gb: float | None) -> tuple[Callable, Callable, RoundRobin]:
    """JupyterHub's pre-spawn and post-stop hooks dealing ``devices`` and setting the cap."""
    dealer = RoundRobin(devices)

    def key(spawner) -> str:
        return f"{spawner.user.name}/{spawner.name}"  # a learner's named servers count apart

    def pre_spawn_hook(spawner) -> None:
        env = {"GRAPHLAB_WORKSPACE": DEFAULT_WORKSPACE}
        device = dealer.take(key(spawner))
        if device is not None:
            # Indices given by hand mean nvidia-smi's numbering, which is PCI bus order.
            env |= {"CUDA_VISIBLE_DEVICES": device, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
        if cap_gb is not None:
            env["GRAPHLAB_GPU_MEMORY_GB"] = f"{cap_gb:g}"
        # A new dict: the configured one is shared by every spawner. lab_environment puts
        # graphlab's JupyterLab config first on the config path, as `graphlab lab` does (it
        # switches off jupyterlab-tour's default tours, which would start with the course's).
        spawner.environment = lab_environment({**spawner.environment, **env})
        spawner.log.info("graphlab: %s gets device %s", key(spawner), device or "none (CPU)")

    def post_stop_hook(spawner) -> None:
        dealer.release(key(spawner))

    return pre_spawn_hook, post_stop_hook, dealer


def singleuser_command(python: str = sys.executable, workspace: str = DEFAULT_WORKSPACE) -> list:
    """The learner's server command (``Spawner.cmd``) for the Python that has graphlab."""
    return [python, "-c", _BOOT.replace("{workspace}", workspace)]


def python_for_learners(environ: dict[str, str] = os.environ) -> str:
    """The Python the learners' servers run: ``GRAPHLAB_HUB_PYTHON``, else the hub's own."""
    return environ.get("GRAPHLAB_HUB_PYTHON") or sys.executable
