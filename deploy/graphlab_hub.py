"""What ``jupyterhub_config.py`` in this folder builds on: each learner's devices and start-up.

- :class:`RoundRobin` deals the machine's GPUs (or MIG slices) to learners as their servers
  start, always to the device with the fewest learners on it now, so a device freed by a learner
  who leaves is the next one given out.
- :func:`spawn_hooks` returns JupyterHub's ``pre_spawn_hook`` and ``post_stop_hook``: before a
  learner's server starts, its environment gets the device (``CUDA_VISIBLE_DEVICES``), the
  per-learner GPU memory cap (``GRAPHLAB_GPU_MEMORY_GB``) and the course's JupyterLab config
  folder (``JUPYTER_CONFIG_PATH``, as ``graphlab lab`` sets it), and their home is made
  private (mode 700); when it stops, the device is handed back.
- :func:`read_roster` reads the workshop's roster: the accounts allowed in and the instructor(s)
  who administer the hub. The hub is closed to everyone else.
- :func:`hub_devices` refuses to start a hub on a GPU host whose GPUs it cannot list, rather than
  let every learner see every GPU.
- :data:`SERVER_ARGS` are the learner server's culling settings (the same on Kubernetes).
- :func:`singleuser_command` is the learner's server command. It runs as the learner: it makes
  their own copy of the lessons (``graphlab.course.workspace.ensure``, the same as
  ``graphlab lab``), then starts JupyterHub's single-user server on that folder. Nothing is
  written into a learner's home by the hub's own (often root) process; it only sets the home's
  mode.

Progress needs nothing here: the store is in each learner's Jupyter data folder, under their
own home (``graphlab.course.progress``).
"""

from __future__ import annotations

import os
import pwd
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from graphlab.cli.lab import lab_environment

__all__ = [
    "DEFAULT_WORKSPACE",
    "SERVER_ARGS",
    "HubSetupError",
    "Roster",
    "RoundRobin",
    "hub_devices",
    "local_address",
    "python_for_learners",
    "read_roster",
    "singleuser_command",
    "spawn_hooks",
]

#: Each learner's copy of the course, in their home (as ``graphlab lab`` makes it).
DEFAULT_WORKSPACE = "~/graphlab-course"

#: Culling, in the learner's own server (docs/instructor.md, "Culling", says why these times).
#: Every open kernel holds a CUDA context (0.86 GB on an H200) plus its lesson's memory, whether
#: or not a browser tab is still connected to it, so an idle kernel is shut down after 20 minutes
#: either way; a kernel running a cell is never interrupted. A server with no kernel, terminal or
#: request for an hour stops itself, which hands its GPU back to the dealer; the files stay.
SERVER_ARGS = [
    "--MappingKernelManager.cull_idle_timeout=1200",
    "--MappingKernelManager.cull_interval=60",
    "--MappingKernelManager.cull_connected=True",
    "--MappingKernelManager.cull_busy=False",
    "--ServerApp.shutdown_no_activity_timeout=3600",
]


class HubSetupError(Exception):
    """A setting that keeps the hub from starting safely; its message is one line to act on."""


class Roster(NamedTuple):
    """The accounts a workshop lets in: the learners, and the admins (the instructors)."""

    learners: tuple[str, ...]
    admins: tuple[str, ...]


def read_roster(path: str | None) -> Roster:
    """The roster at ``path``: one account name a line, the instructor's followed by ``admin``;
    blank lines and ``#`` comments are skipped. No roster, or one without an admin, is refused:
    a hub without an allow list lets nobody in, and one without an admin has nobody to run it."""
    where = "set GRAPHLAB_HUB_ROSTER to a roster file (deploy/roster.example.txt shows one)"
    if not path:
        raise HubSetupError(f"no roster: {where}")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise HubSetupError(f"cannot read the roster {path}: {exc.strerror}; {where}") from exc
    learners, admins = [], []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 2 or (len(words) == 2 and words[1] != "admin"):
            raise HubSetupError(
                f"{path} line {number}: {line.strip()!r} is not 'NAME' or 'NAME admin'"
            )
        (admins if len(words) == 2 else learners).append(words[0])
    if not admins:
        raise HubSetupError(f"{path} names no admin: add the instructor's account as 'NAME admin'")
    return Roster(tuple(learners), tuple(admins))


# Run by the learner's server process: the workspace first, then the single-user server serving
# it (the hub's arguments follow in sys.argv), with jsonschema's IRI parsers deferred as graphlab
# lab defers them (graphlab.support.lazy_iri_syntax): 1.7 s of CPU less per server on a 2-core
# machine (as measured for graphlab lab's), which a workshop's learners pay all at once.
_BOOT = """\
import os, sys
from graphlab.support.lazy_iri_syntax import defer
defer()
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


def hub_devices(environ: dict[str, str], dev: Path = Path("/dev")) -> list[str]:
    """The devices to deal: ``GRAPHLAB_HUB_DEVICES`` (comma-separated ``CUDA_VISIBLE_DEVICES``
    values, or ``none``) if set, else every GPU or MIG slice nvidia-smi lists.

    On a host with NVIDIA device files in ``dev`` where nvidia-smi is missing or fails, dealing
    nothing would set no ``CUDA_VISIBLE_DEVICES`` and every learner would see every GPU: that is
    refused with :class:`HubSetupError`."""
    given = environ.get("GRAPHLAB_HUB_DEVICES", "").strip()
    if given:
        return [] if given.lower() == "none" else [d.strip() for d in given.split(",") if d.strip()]
    from graphlab.support.nvidia_smi import inventory, learner_devices

    found = inventory()
    if not found.gpus and sorted(dev.glob("nvidia[0-9]*")):
        raise HubSetupError(
            f"this host has NVIDIA GPUs ({dev}/nvidia*) but nvidia-smi lists none "
            f"({found.problem}): fix nvidia-smi, or set GRAPHLAB_HUB_DEVICES to the devices to "
            "deal (GRAPHLAB_HUB_DEVICES=none for a CPU-only hub)"
        )
    return learner_devices(found)


def spawn_hooks(
    devices: list[str], cap_gb: float | None, private_homes: bool = False
) -> tuple[Callable, Callable, RoundRobin]:
    """JupyterHub's pre-spawn and post-stop hooks dealing ``devices`` and setting the cap; with
    ``private_homes``, each learner's home is made readable by its owner only (mode 700) before
    their server starts, so that no learner reads another's notebooks or progress."""
    dealer = RoundRobin(devices)

    def key(spawner) -> str:
        return f"{spawner.user.name}/{spawner.name}"  # a learner's named servers count apart

    def pre_spawn_hook(spawner) -> None:
        if private_homes:
            _make_home_private(spawner.user.name)
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


def _make_home_private(name: str) -> None:
    try:
        home = Path(pwd.getpwnam(name).pw_dir)
    except KeyError:  # no such account: the local spawner refuses it with its own message
        return
    if home.is_dir() and home.stat().st_mode & 0o077:
        home.chmod(0o700)


def local_address(bind_url: str) -> str:
    """Where a process on the hub's machine reaches a hub that listens on ``bind_url``:
    ``http://:8000`` (every interface, JupyterHub's default) is reached at 127.0.0.1."""
    parts = urlsplit(bind_url)
    if parts.hostname in (None, "0.0.0.0", "::"):
        parts = parts._replace(netloc=f"127.0.0.1:{parts.port or 80}")
    return urlunsplit(parts).rstrip("/")


def singleuser_command(python: str = sys.executable, workspace: str = DEFAULT_WORKSPACE) -> list:
    """The learner's server command (``Spawner.cmd``) for the Python that has graphlab."""
    return [python, "-c", _BOOT.replace("{workspace}", workspace)]


def python_for_learners(environ: dict[str, str] = os.environ) -> str:
    """The Python the learners' servers run: ``GRAPHLAB_HUB_PYTHON``, else the hub's own."""
    return environ.get("GRAPHLAB_HUB_PYTHON") or sys.executable
