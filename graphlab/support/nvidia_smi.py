"""The machine's NVIDIA GPUs as nvidia-smi reports them, without creating a CUDA context.

``graphlab doctor --workshop`` and the hub's GPU assignment ask here: every GPU with its memory,
MIG mode and compute mode, the MIG devices carved out of them, and whether an MPS control daemon
is listening. nvidia-smi being absent, failing or printing something unexpected is an answer too
(:attr:`Inventory.problem`), never an exception: a machine without NVIDIA's driver simply has no
GPU to offer.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "GPU_QUERY",
    "Gpu",
    "Inventory",
    "MigDevice",
    "gpus",
    "inventory",
    "learner_devices",
    "mps_pipe",
]

#: The fields asked for with ``--query-gpu``, in this order.
GPU_QUERY = "index,uuid,name,memory.total,memory.used,mig.mode.current,compute_mode,driver_version"
MIB = 2**20

_MIG_LINE = re.compile(
    r"^\s+MIG\s+(?P<profile>\S+)\s+Device\s+(?P<index>\d+):\s+\(UUID:\s+(?P<uuid>MIG-[^)\s]+)\)"
)
_GPU_LINE = re.compile(r"^GPU\s+(?P<index>\d+):")
_PROFILE_GB = re.compile(r"\.(?P<gb>\d+)gb$")


@dataclass(frozen=True)
class Gpu:
    """One physical GPU (memory None where nvidia-smi says N/A). ``mig_mode`` is "Enabled",
    "Disabled" or "N/A" (no MIG on this GPU); ``compute_mode`` is "Default",
    "Exclusive_Process" or "Prohibited"."""

    index: int
    uuid: str
    name: str
    total_bytes: int | None
    used_bytes: int | None
    mig_mode: str
    compute_mode: str
    driver: str


@dataclass(frozen=True)
class MigDevice:
    """A MIG slice: its GPU, profile (such as ``1g.18gb``), UUID (what ``CUDA_VISIBLE_DEVICES``
    takes) and the memory its profile name states, in GB (None if the name states none)."""

    gpu: int
    profile: str
    uuid: str
    nominal_gb: int | None


@dataclass(frozen=True)
class Inventory:
    """What nvidia-smi said. ``problem`` says why there are no GPUs when nvidia-smi could not be
    asked; ``mps`` is the MPS control daemon's pipe folder when one is listening."""

    gpus: list[Gpu] = field(default_factory=list)
    mig_devices: list[MigDevice] = field(default_factory=list)
    mps: str | None = None
    problem: str | None = None


def _ask(*args: str) -> str:
    """nvidia-smi's output for ``args``; OSError or SubprocessError when it cannot answer."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise FileNotFoundError("nvidia-smi not found")
    return subprocess.run(
        [smi, *args], capture_output=True, text=True, timeout=30, check=True
    ).stdout


def gpus() -> list[Gpu]:
    """Every GPU nvidia-smi lists; empty when it cannot be asked."""
    return inventory().gpus


def inventory() -> Inventory:
    """GPUs, MIG devices and MPS, as far as nvidia-smi and the MPS pipe folder tell."""
    try:
        listed = _ask(f"--query-gpu={GPU_QUERY}", "--format=csv,noheader,nounits")
    except FileNotFoundError:
        return Inventory(mps=mps_pipe(), problem="nvidia-smi not found (no NVIDIA driver)")
    except (OSError, subprocess.SubprocessError) as exc:
        return Inventory(mps=mps_pipe(), problem=f"nvidia-smi failed ({_first_line(exc)})")
    try:
        found = [_gpu(line) for line in listed.splitlines() if line.strip()]
    except ValueError:
        unreadable = "nvidia-smi printed a GPU list graphlab cannot read"
        return Inventory(mps=mps_pipe(), problem=unreadable)
    mig = []
    if any(gpu.mig_mode == "Enabled" for gpu in found):
        try:
            mig = _mig_devices(_ask("-L"))
        except (OSError, subprocess.SubprocessError):
            mig = []
    return Inventory(found, mig, mps_pipe())


def learner_devices(found: Inventory) -> list[str]:
    """What to deal learners over, as ``CUDA_VISIBLE_DEVICES`` values: each MIG slice of a GPU in
    MIG mode, and every other GPU that lets processes in, by UUID (so the order CUDA numbers
    devices in does not matter)."""
    devices = []
    for gpu in found.gpus:
        if gpu.mig_mode == "Enabled":
            devices += [m.uuid for m in found.mig_devices if m.gpu == gpu.index]
        elif gpu.compute_mode != "Prohibited":
            devices.append(gpu.uuid)
    return devices


def mps_pipe() -> str | None:
    """The folder of a listening MPS control daemon (``$CUDA_MPS_PIPE_DIRECTORY``, by default
    ``/tmp/nvidia-mps``), or None: the daemon talks to CUDA programs through a named pipe
    ``control`` there."""
    folder = Path(os.environ.get("CUDA_MPS_PIPE_DIRECTORY") or "/tmp/nvidia-mps")
    try:
        return str(folder) if stat.S_ISFIFO((folder / "control").stat().st_mode) else None
    except OSError:
        return None


def _gpu(line: str) -> Gpu:
    fields = [part.strip() for part in line.split(",")]
    if len(fields) != 8:
        raise ValueError(line)
    index, uuid, name, total, used, mig, compute, driver = fields
    return Gpu(
        index=int(index),
        uuid=uuid,
        name=name,
        total_bytes=_mib(total),
        used_bytes=_mib(used),
        mig_mode="N/A" if mig.startswith("[") else mig,
        compute_mode=compute,
        driver=driver,
    )


def _mib(text: str) -> int | None:
    """Bytes from nvidia-smi's MiB; None for its "[N/A]" (or "[Not Supported]")."""
    return None if text.startswith("[") else int(float(text)) * MIB


def _mig_devices(listing: str) -> list[MigDevice]:
    devices, gpu = [], None
    for line in listing.splitlines():
        if header := _GPU_LINE.match(line):
            gpu = int(header["index"])
        elif (mig := _MIG_LINE.match(line)) and gpu is not None:
            gb = _PROFILE_GB.search(mig["profile"])
            devices.append(MigDevice(gpu, mig["profile"], mig["uuid"], gb and int(gb["gb"])))
    return devices


def _first_line(exc: BaseException) -> str:
    stderr = getattr(exc, "stderr", None)
    text = (stderr or "").strip() or str(exc)
    return text.splitlines()[0] if text else type(exc).__name__
