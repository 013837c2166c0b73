"""Can this machine host a workshop of N learners? The answer behind ``graphlab doctor --workshop``.

:func:`gather` reads the machine once: the GPUs as nvidia-smi lists them (memory, MIG slices,
compute mode, MPS) and as torch sees them (CUDA build, architectures, driver compatibility), the
memory cap in the environment, the measured lesson peaks (:mod:`graphlab.workshop.peaks`), free
disk, host memory, ports and the JupyterLab extension. :func:`assess` turns those facts into the
``workshop`` report, a pure function so every verdict can be tested with made-up machines.

On a GPU machine the learners are dealt round-robin over the places a learner's kernels can run:
whole GPUs, or the MIG slices of a GPU in MIG mode (what the hub configuration in ``deploy/``
does). Each learner's share of a place, less the GPU memory a kernel needs beyond its allocator
(the CUDA context, measured), is the memory cap to set; the course needs the largest peak any
lesson reached. Without GPUs the learners run the CPU emulator and share the host's memory.
Either way a workshop needs CPU cores (:func:`cores_needed`), and a Python environment that every
learner's account can read, since each learner's server runs as that learner.

The verdict is ``ready``, ``not ready`` (with the reasons) or ``unknown``: an answer that needs a
measurement the course does not have yet says so instead of guessing.
"""

from __future__ import annotations

import math
import os
import shutil
import socket
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from graphlab.course.syllabus import lessons
from graphlab.diagnose.words import Text
from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.support import nvidia_smi
from graphlab.support.memory_cap import ENV as CAP_ENV
from graphlab.support.memory_cap import GB, MemoryCapError, cap_from_env

from .peaks import NOT_MEASURED, Peaks, PeaksError
from .peaks import load as load_peaks

__all__ = [
    "MIN_DRIVER",
    "PORTS",
    "Facts",
    "TorchView",
    "assess",
    "closed_to_others",
    "cores_needed",
    "environment_paths",
    "extension_state",
    "gather",
]

#: The oldest driver branch that runs each CUDA major release (NVIDIA's minor-version
#: compatibility table: CUDA 11.x needs 450+, 12.x 525+, 13.x 580+).
MIN_DRIVER = {11: 450, 12: 525, 13: 580}
#: Ports a workshop uses: JupyterHub's proxy and hub API, and a lone JupyterLab.
PORTS = {8000: "JupyterHub", 8081: "JupyterHub's API", 8888: "JupyterLab"}
#: The course's own torch floor (pyproject.toml).
TORCH_FLOOR = (2, 5)
EXTENSION = {"server": "graphlab.server", "lab": "cuda-graphlab"}
#: Learners per CPU core. A lesson's kernel keeps a core busy only while a cell runs (6 to 50 s
#: per lesson on an H200, in a 15 to 20 minute slot), but lessons 01 and 06 time the CPU's
#: launch work: two learners a core keep those timings close to an idle machine's.
LEARNERS_PER_CORE = 2
#: Cores for JupyterHub, its proxy and the learners' Jupyter servers themselves.
HUB_CORES = 1


@dataclass(frozen=True)
class TorchView:
    """What torch makes of the GPUs: its version and CUDA build, whether CUDA works, and each
    visible device's name, memory and compute capability (``"9.0"``)."""

    version: str
    cuda_build: str | None
    available: bool
    devices: list[tuple[str, int, str]] = field(default_factory=list)
    arch_list: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Facts:
    """Everything :func:`assess` needs to know about the machine."""

    torch: TorchView
    smi: nvidia_smi.Inventory
    cap_gb: float | None
    cap_error: str | None
    peaks: Peaks | None
    peaks_error: str | None
    lesson_ids: list[str]
    lessons_bytes: int
    disk_path: str
    disk_free_bytes: int
    host_memory_bytes: int | None
    cpus: int
    ports_in_use: list[int]
    extension: dict[str, bool]
    unreadable: list[str] = field(default_factory=list)


def gather() -> Facts:
    """Read this machine (initialises CUDA when torch sees a GPU, to read its properties)."""
    try:
        cap, cap_error = cap_from_env(), None
    except MemoryCapError as exc:
        cap, cap_error = None, str(exc)
    try:
        peaks, peaks_error = load_peaks(), None
    except PeaksError as exc:
        peaks, peaks_error = None, exc.args[0] if exc.args else str(exc)
    try:
        course = lessons()
    except GraphlabError:
        course = []
    home = Path.home()
    return Facts(
        torch=_torch_view(),
        smi=nvidia_smi.inventory(),
        cap_gb=cap,
        cap_error=cap_error,
        peaks=peaks,
        peaks_error=peaks_error,
        lesson_ids=[lesson.id for lesson in course],
        lessons_bytes=sum(lesson.path.stat().st_size for lesson in course),
        disk_path=str(home),
        disk_free_bytes=shutil.disk_usage(home).free,
        host_memory_bytes=_host_memory(),
        cpus=os.cpu_count() or 1,
        ports_in_use=[port for port in PORTS if _in_use(port)],
        extension=extension_state(),
        unreadable=[
            f"{path} (mode {mode:o})" for path, mode in closed_to_others(environment_paths())
        ],
    )


def assess(facts: Facts, learners: int) -> dict:
    """The ``workshop`` report for ``learners`` learners on the machine ``facts`` describe."""
    if learners < 1:
        raise GraphlabError(
            _("--workshop needs the number of learners (1 or more), not {learners}").format(
                learners=learners
            )
        )
    report = {"learners": learners, "reasons": [], "warnings": [], "unknown": []}
    if facts.cap_error:
        report["reasons"].append(facts.cap_error)
    if facts.peaks_error:
        report["unknown"].append(facts.peaks_error)
    if facts.smi.gpus or facts.torch.devices:
        report |= {"path": "gpu"} | _gpu_plan(facts, learners, report)
    else:
        report |= {"path": "emulator"} | _emulator_plan(facts, learners, report)
    _machine_checks(facts, learners, report)
    if report["reasons"]:
        report["verdict"] = "not ready"
    elif report["unknown"]:
        report["verdict"] = "unknown"
    else:
        report["verdict"] = "ready"
    return report


def _section(facts: Facts, kind: str):
    return None if facts.peaks is None else facts.peaks.section(kind)


def _needed(facts: Facts, kind: str, report: dict) -> dict:
    """The course's measured peak on ``kind`` machines, or why it is not known."""
    section = _section(facts, kind)
    if section is None:
        report["unknown"].append(
            Text(
                N_("the lessons' {kind} memory peaks: {not_measured}"),
                kind=kind.upper(),
                not_measured=NOT_MEASURED,
            )
        )
        return {"needed_bytes": None, "needed_by": NOT_MEASURED}
    lesson, peak = section.peak()
    missing = section.missing(facts.lesson_ids)
    if missing:
        report["unknown"].append(
            Text(
                N_("the {kind} memory peaks of {lessons}: {not_measured}"),
                kind=kind.upper(),
                lessons=", ".join(missing),
                not_measured=NOT_MEASURED,
            )
        )
    return {"needed_bytes": peak, "needed_by": lesson}


@dataclass(frozen=True)
class _Place:
    """Where one learner's kernels can run: a GPU or a MIG slice."""

    id: str
    label: str
    memory_bytes: int | None
    exclusive: bool


def _places(facts: Facts, report: dict) -> list[_Place]:
    smi = facts.smi
    if not smi.gpus:  # torch sees GPUs that nvidia-smi cannot list (no nvidia-smi in a container)
        report["warnings"].append(Text(N_("MIG and MPS unknown: {problem}"), problem=smi.problem))
        return [
            _Place(str(i), f"GPU {i} {name}", total, False)
            for i, (name, total, _capability) in enumerate(facts.torch.devices)
        ]
    places = []
    for gpu in smi.gpus:
        label = f"GPU {gpu.index} {gpu.name}"
        if gpu.mig_mode == "Enabled":
            slices = [m for m in smi.mig_devices if m.gpu == gpu.index]
            if not slices:
                report["reasons"].append(
                    Text(
                        N_(
                            "{gpu} is in MIG mode with no MIG devices: create them (nvidia-smi "
                            "mig -cgi ... -C) or turn MIG off (nvidia-smi -i N -mig 0)"
                        ),
                        gpu=label,
                    )
                )
            for m in slices:
                memory = None if m.nominal_gb is None else m.nominal_gb * GB
                places.append(_Place(m.uuid, f"{label} MIG {m.profile}", memory, False))
        elif gpu.compute_mode == "Prohibited":
            report["reasons"].append(
                Text(
                    N_(
                        "{gpu} is in Prohibited compute mode: no process may use it "
                        "(nvidia-smi -i {index} -c DEFAULT)"
                    ),
                    gpu=label,
                    index=gpu.index,
                )
            )
        else:
            exclusive = gpu.compute_mode == "Exclusive_Process" and smi.mps is None
            places.append(_Place(str(gpu.index), label, gpu.total_bytes, exclusive))
    return places


def _gpu_plan(facts: Facts, learners: int, report: dict) -> dict:
    _compatibility(facts, report)
    smi = facts.smi
    if smi.mps:
        report["warnings"].append(
            Text(
                N_(
                    "an MPS control daemon is listening ({mps}): kernels of one user share its "
                    "server; check that your MPS setup serves learners of different accounts at "
                    "once"
                ),
                mps=smi.mps,
            )
        )
    places = _places(facts, report)
    plan = {
        "mig": [{"gpu": m.gpu, "profile": m.profile, "uuid": m.uuid} for m in smi.mig_devices],
        "mps": smi.mps,
    }
    plan |= _needed(facts, "gpu", report)
    gpu_section = _section(facts, "gpu")
    overhead = None if gpu_section is None else gpu_section.process_overhead_bytes
    if gpu_section is not None and overhead is None:
        report["unknown"].append(
            Text(
                N_("the GPU memory a kernel needs beyond its cap: {not_measured}"),
                not_measured=NOT_MEASURED,
            )
        )
    plan["process_overhead_bytes"] = overhead
    if not places:
        report["reasons"].append(Text(N_("no GPU or MIG slice is usable by the learners")))
        return plan | {"devices": [], "memory_cap_gb": None}
    counts = [learners // len(places) + (k < learners % len(places)) for k in range(len(places))]
    devices, caps = [], []
    for place, count in zip(places, counts, strict=True):
        row = {"id": place.id, "label": place.label, "memory_bytes": place.memory_bytes}
        row["learners"] = count
        if count and place.memory_bytes is not None:
            row["share_bytes"] = place.memory_bytes // count
            caps.append(row["share_bytes"] - (overhead or 0))
        if place.exclusive and count > 1:
            report["reasons"].append(
                Text(
                    N_(
                        "{gpu} is in Exclusive_Process compute mode (one process at a time) "
                        "but {learners} learners would share it: nvidia-smi -i {id} -c DEFAULT"
                    ),
                    gpu=place.label,
                    learners=count,
                    id=place.id,
                )
            )
        devices.append(row)
    cap = math.floor(min(caps) / GB * 10) / 10 if caps else None
    if len(caps) < sum(1 for c in counts if c):
        report["unknown"].append(Text(N_("the memory of a MIG slice whose profile states none")))
    plan |= {"devices": devices, "memory_cap_gb": cap}
    _check_fit(plan, facts, report)
    host = None if gpu_section is None else gpu_section.host_peak()
    plan["host_memory_bytes"] = facts.host_memory_bytes
    if host is not None:
        _host_fit(facts, learners, *host, report)
    return plan


def _check_fit(plan: dict, facts: Facts, report: dict) -> None:
    cap, needed = plan["memory_cap_gb"], plan["needed_bytes"]
    if cap is not None and cap <= 0:
        report["reasons"].append(
            Text(
                N_(
                    "too many learners for this GPU memory: their kernels' CUDA contexts alone "
                    "fill it"
                )
            )
        )
    elif cap is not None and needed is not None and cap * GB < needed:
        report["reasons"].append(
            Text(
                N_(
                    "each learner's share is {share:.1f} GB but lesson {lesson} needs "
                    "{needed:.1f} GB: fewer learners per GPU, or more GPUs"
                ),
                share=cap,
                lesson=plan["needed_by"],
                needed=needed / GB,
            )
        )
    if facts.cap_gb is not None and needed is not None and facts.cap_gb * GB < needed:
        if cap is not None and cap * GB >= needed:
            fix = Text(N_("set {variable}={cap}"), variable=CAP_ENV, cap=cap)
        else:
            fix = Text(N_("raise it"))
        report["reasons"].append(
            Text(
                N_(
                    "{variable}={cap:g} is below the {needed:.2f} GB that lesson {lesson} needs: "
                    "{fix}"
                ),
                variable=CAP_ENV,
                cap=facts.cap_gb,
                needed=needed / GB,
                lesson=plan["needed_by"],
                fix=fix,
            )
        )
    elif facts.cap_gb is not None and cap is not None and facts.cap_gb > cap:
        report["reasons"].append(
            Text(
                N_(
                    "{variable}={cap:g} is more than each learner's share ({share:.1f} GB), so "
                    "learners could run each other out of memory: set {variable}={share}"
                ),
                variable=CAP_ENV,
                cap=facts.cap_gb,
                share=cap,
            )
        )
    elif facts.cap_gb is None and cap is not None:
        report["warnings"].append(
            Text(
                N_("{variable} is not set here: give each learner {variable}={cap}"),
                variable=CAP_ENV,
                cap=cap,
            )
        )


def _compatibility(facts: Facts, report: dict) -> None:
    view = facts.torch
    if _version(view.version) < TORCH_FLOOR:
        report["reasons"].append(
            Text(
                N_("torch {version} is older than the course supports: pip install 'torch>=2.5'"),
                version=view.version,
            )
        )
    if view.cuda_build is None:
        report["reasons"].append(
            Text(
                N_(
                    "torch {version} is a CPU-only build: install a CUDA build of torch to use "
                    "the GPUs (pip install torch)"
                ),
                version=view.version,
            )
        )
        return
    drivers = {gpu.driver for gpu in facts.smi.gpus}
    cuda_major = _version(view.cuda_build)[0]
    needs = MIN_DRIVER.get(cuda_major)
    for driver in sorted(drivers):
        if needs is not None and _version(driver)[0] < needs:
            report["reasons"].append(
                Text(
                    N_(
                        "NVIDIA driver {driver} is older than CUDA {cuda} (this torch's build) "
                        "needs ({needs} or newer): update the driver, or install a torch built "
                        "for an older CUDA"
                    ),
                    driver=driver,
                    cuda=view.cuda_build,
                    needs=needs,
                )
            )
    if not view.available:
        report["reasons"].append(
            Text(
                N_(
                    "torch {version} (CUDA {cuda}) cannot use the GPUs "
                    "(torch.cuda.is_available() is False)"
                ),
                version=view.version,
                cuda=view.cuda_build,
            )
        )
    for name, _memory, capability in view.devices:
        if view.arch_list and not _builds_for(capability, view.arch_list):
            report["reasons"].append(
                Text(
                    N_(
                        "torch {version} has no kernels for {gpu} (compute capability "
                        "{capability}): install a torch built for it"
                    ),
                    version=view.version,
                    gpu=name,
                    capability=capability,
                )
            )


def _builds_for(capability: str, arch_list: list[str]) -> bool:
    """Whether a build with ``arch_list`` (``sm_90``, ``compute_90``) runs on ``capability``."""
    have = _version(capability)
    for arch in arch_list:
        kind, _sep, digits = arch.partition("_")
        if not digits.isdigit():
            continue
        built = (int(digits[:-1]), int(digits[-1]))
        if (kind == "sm" and built == have) or (kind == "compute" and built <= have):
            return True
    return False


def _emulator_plan(facts: Facts, learners: int, report: dict) -> dict:
    plan = {"cpus": facts.cpus, "host_memory_bytes": facts.host_memory_bytes}
    plan |= _needed(facts, "cpu", report)
    if plan["needed_bytes"] is not None:
        _host_fit(facts, learners, plan["needed_by"], plan["needed_bytes"], report)
    return plan | {"memory_cap_gb": None}


def _host_fit(facts: Facts, learners: int, lesson: str, needed: int, report: dict) -> None:
    """Whether ``learners`` kernels at ``needed`` bytes each fit the host's available memory."""
    memory = facts.host_memory_bytes
    if memory is None:
        report["unknown"].append(Text(N_("this machine's available memory")))
        return
    if memory // learners < needed:
        report["reasons"].append(
            Text(
                N_(
                    "{learners} learners' kernels need {total:.1f} GB of host memory "
                    "(lesson {lesson}: {each:.2f} GB each) and {available:.1f} GB is available"
                ),
                learners=learners,
                total=learners * needed / GB,
                lesson=lesson,
                each=needed / GB,
                available=memory / GB,
            )
        )
    report["warnings"].append(
        Text(
            N_(
                "host memory counts each learner's kernel at its measured peak; the Jupyter "
                "server each learner also runs is not counted"
            )
        )
    )


def cores_needed(learners: int) -> int:
    """CPU cores a workshop of ``learners`` needs: the hub's, and one per two learners."""
    return HUB_CORES + math.ceil(learners / LEARNERS_PER_CORE)


def _machine_checks(facts: Facts, learners: int, report: dict) -> None:
    cores = cores_needed(learners)
    report["cpus"] = {"have": facts.cpus, "needed": cores}
    if facts.cpus < cores:
        report["reasons"].append(
            Text(
                N_(
                    "{learners} learners need {cores} CPU cores ({hub} for the hub, one per "
                    "{per_core} learners) and this machine has {cpus}: fewer learners, "
                    "or a machine with more cores"
                ),
                learners=learners,
                cores=cores,
                hub=HUB_CORES,
                per_core=LEARNERS_PER_CORE,
                cpus=facts.cpus,
            )
        )
    if facts.unreadable:
        report["reasons"].append(
            Text(
                N_(
                    "every learner's server runs as that learner, and other accounts cannot read "
                    "this Python environment ({paths}): install it where every account can read "
                    "(for example under /opt), or open those folders (chmod o+rx)"
                ),
                paths="; ".join(facts.unreadable),
            )
        )
    needed_disk = learners * facts.lessons_bytes
    report["disk"] = {
        "path": facts.disk_path,
        "free_bytes": facts.disk_free_bytes,
        "lessons_bytes_per_learner": facts.lessons_bytes,
    }
    if facts.disk_free_bytes < needed_disk:
        report["reasons"].append(
            Text(
                N_(
                    "{path} has {free:.2f} GB free and {learners} copies of the lessons take "
                    "{needed:.2f} GB"
                ),
                path=facts.disk_path,
                free=facts.disk_free_bytes / GB,
                learners=learners,
                needed=needed_disk / GB,
            )
        )
    report["ports_in_use"] = {str(port): PORTS[port] for port in facts.ports_in_use}
    for port in facts.ports_in_use:
        report["warnings"].append(
            Text(N_("port {port} ({program}'s default) is in use"), port=port, program=PORTS[port])
        )
    report["extension"] = facts.extension
    for part, enabled in facts.extension.items():
        if not enabled:
            report["warnings"].append(
                Text(
                    N_(
                        "the course's JupyterLab extension ({part} part, {name}) is not "
                        "enabled: the lessons run, without the course sidebar (install graphlab "
                        "into the Python environment of the learners' Jupyter servers; the "
                        "extension comes with it)"
                    ),
                    part=part,
                    name=EXTENSION[part],
                )
            )


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("+")[0].split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) or (0,)


def environment_paths() -> list[Path]:
    """What a learner's server must read: this Python, its environment, graphlab and torch."""
    import torch

    import graphlab

    return [
        Path(sys.executable).resolve(),
        Path(sys.prefix),
        Path(graphlab.__file__).parent,
        Path(torch.__file__).parent,
    ]


def closed_to_others(paths: list[Path]) -> list[tuple[Path, int]]:
    """Each folder on the way to ``paths`` that other accounts cannot enter (no ``o+x``), and
    each of ``paths`` they cannot read (no ``o+r``), with its mode; once each, in order."""
    found: dict[Path, int] = {}
    for path in paths:
        for folder in [*reversed(path.parents), path]:
            try:
                mode = folder.stat().st_mode
            except OSError:
                continue
            needs = stat.S_IXOTH if folder != path or folder.is_dir() else 0
            needs |= stat.S_IROTH if folder == path else 0
            if mode & needs != needs:
                found.setdefault(folder, stat.S_IMODE(mode))
                break
    return list(found.items())


def _torch_view() -> TorchView:
    import torch

    available = torch.cuda.is_available()
    devices = []
    if available:
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            devices.append((props.name, props.total_memory, f"{props.major}.{props.minor}"))
    arch = torch.cuda.get_arch_list() if available else []
    return TorchView(torch.__version__, torch.version.cuda, available, devices, arch)


def _host_memory() -> int | None:
    """Memory available for new processes (Linux's MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return True
    return False


def extension_state() -> dict[str, bool]:
    """Whether Jupyter would load the course's server part and front end, from its config and
    data folders (what ``jupyter server extension list`` and ``jupyter labextension list`` read)."""
    from jupyter_core.paths import jupyter_config_path, jupyter_path
    from jupyter_server.extension.config import ExtensionConfigManager

    config = ExtensionConfigManager(read_config_path=jupyter_config_path())
    server = bool(config.get_jpserver_extensions().get(EXTENSION["server"], False))
    lab = any(
        (Path(folder) / EXTENSION["lab"] / "package.json").is_file()
        for folder in jupyter_path("labextensions")
    )
    return {"server": server, "lab": lab}
