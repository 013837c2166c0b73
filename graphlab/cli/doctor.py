"""``graphlab doctor``: what this machine has, and what of the course will run on it.

``--workshop N`` adds the readiness check for N learners at once
(:mod:`graphlab.workshop.readiness`): a verdict, its reasons, and the per-learner GPU memory cap
to set as ``GRAPHLAB_GPU_MEMORY_GB``. ``--json`` prints the same report as JSON, the readiness
check under ``workshop``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import platform
import sys

from graphlab.support.memory_cap import GB
from graphlab.timing.machine import driver_version

# (import name, distribution name) of the packages the notebooks need.
NOTEBOOK_PACKAGES = (
    ("jupyterlab", "jupyterlab"),
    ("ipywidgets", "ipywidgets"),
    ("plotly", "plotly"),
    ("anywidget", "anywidget"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workshop",
        type=int,
        metavar="N",
        help="also say whether this machine can host N learners at once, and the GPU memory "
        "cap to give each (exit status 1 unless the verdict is ready)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    import torch

    from graphlab.errors import GraphlabError

    if args.workshop is not None and args.workshop < 1:
        raise GraphlabError(f"--workshop needs a number of learners from 1 up, not {args.workshop}")
    report, ok = machine_report(torch)
    if args.workshop is not None:
        from graphlab.workshop.readiness import assess, gather

        report["workshop"] = assess(gather(), args.workshop)
        ok &= report["workshop"]["verdict"] == "ready"
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_report(report, gpu_lines(torch))
    return 0 if ok else 1


def machine_report(torch) -> tuple[dict, bool]:
    """What this machine has, as a dict, and whether the course's packages are all usable."""
    from graphlab import __version__
    from graphlab.backend import backend
    from graphlab.errors import GraphlabError

    report = {
        "graphlab": __version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "driver": driver_version(),
    }
    try:
        live = backend()
    except GraphlabError as exc:
        report["backend"] = {"name": None, "reason": f"cannot decide: {exc}"}
        ok = False
    else:
        report["backend"] = {"name": live.name, "reason": live.reason, "gpu": live.gpu}
        report["runs_here"] = what_runs(live.is_cuda)
        ok = True
    report["recordings"] = recordings_status()
    packages = {module: package_status(module, dist) for module, dist in NOTEBOOK_PACKAGES}
    report["packages"] = packages
    ok &= not any(status.startswith(("missing", "broken")) for status in packages.values())
    return report, ok


def print_report(report: dict, gpus: list[str]) -> None:
    cuda_build = report["cuda_build"] or "none (CPU-only build)"
    print(f"graphlab    {report['graphlab']}")
    print(f"python      {report['python']}")
    print(f"torch       {report['torch']}, CUDA build: {cuda_build}")
    for line in gpus:
        print(line)
    live = report["backend"]
    if live["name"] is None:
        print(f"backend     {live['reason']}")
    else:
        print(f"backend     {live['name']} ({live['reason']})")
        print(f"runs here   {report['runs_here']}")
    print(f"recordings  {report['recordings']}")
    for module, status in report["packages"].items():
        print(f"{module:<11} {status}")
    if "workshop" in report:
        for line in workshop_lines(report["workshop"]):
            print(line)


def workshop_lines(workshop: dict) -> list[str]:
    """The ``workshop`` section as the text report shows it."""
    path = "GPU" if workshop["path"] == "gpu" else "CPU emulator"
    lines = [f"workshop    {workshop['learners']} learners, {path}: {workshop['verdict'].upper()}"]
    needed = workshop["needed_bytes"]
    if needed is None:
        lines.append(f"  needs     course peak per learner {workshop['needed_by']}")
    else:
        lines.append(
            f"  needs     {needed / GB:.2f} GB per learner (lesson {workshop['needed_by']})"
        )
    for device in workshop.get("devices", []):
        size = device["memory_bytes"]
        size = "memory unknown" if size is None else f"{size / GB:.1f} GB"
        share = device.get("share_bytes")
        each = "" if share is None else f", {share / GB:.1f} GB each"
        lines.append(f"  device    {device['label']} ({size}): {device['learners']} learners{each}")
    if workshop["path"] == "emulator":
        memory = workshop["host_memory_bytes"]
        memory = "unknown" if memory is None else f"{memory / GB:.1f} GB available"
        lines.append(f"  host      {workshop['cpus']} CPU cores, memory {memory}")
    if workshop["memory_cap_gb"] is not None:
        lines.append(f"  cap       GRAPHLAB_GPU_MEMORY_GB={workshop['memory_cap_gb']} per learner")
    disk = workshop["disk"]
    lines.append(
        f"  disk      {disk['path']}: {disk['free_bytes'] / GB:.1f} GB free, "
        f"{disk['lessons_bytes_per_learner'] / 1e6:.1f} MB of lessons per learner"
    )
    for kind in ("reasons", "unknown", "warnings"):
        label = {"reasons": "problem", "unknown": "unknown", "warnings": "warning"}[kind]
        lines += [f"  {label:<9} {text}" for text in workshop[kind]]
    return lines


def gpu_lines(torch) -> list[str]:
    """One line per visible GPU: name, memory and driver; or why there is none."""
    if not torch.cuda.is_available():
        return ["gpu         none visible to torch"]
    driver = driver_version()
    lines = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        memory = props.total_memory / 1024**3
        lines.append(f"gpu {i:<7} {props.name}, {memory:.0f} GiB, driver {driver}")
    return lines


def what_runs(on_gpu: bool) -> str:
    if on_gpu:
        return (
            "live GPU experiments: real CUDA graphs, timings measured on this GPU, "
            "profiled timelines; recordings and the simulator are there for comparison"
        )
    return (
        "the CPU emulator for graph semantics (capture, replay, static inputs, RNG, shapes); "
        "timings come from bundled real GPU recordings and the calibrated simulator, labelled"
    )


def recordings_status() -> str:
    """How many real GPU recordings ship with this install."""
    from graphlab.errors import GraphlabError

    try:
        from graphlab.timing.recordings import list_recordings

        names = list(list_recordings())  # Recording objects (or names)
    except ImportError:
        return "not part of this install"
    except GraphlabError as exc:
        return f"unreadable: {exc}"
    if not names:
        return "none bundled"
    shown = ", ".join(str(getattr(r, "name", r)) for r in names[:3])
    shown += ", ..." if len(names) > 3 else ""
    return f"{len(names)} bundled ({shown})"


def package_status(module: str, dist: str) -> str:
    """'ok <version>', 'missing (pip install ...)' or 'broken: <error>' for one package."""
    try:
        version = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return f"missing (pip install {dist})"
    try:
        importlib.import_module(module)
    except Exception as exc:  # any import-time failure is what the user needs to see
        return f"broken: {dist} {version} is installed but `import {module}` fails ({exc})"
    return f"ok {version}"
