"""``graphlab doctor``: what this machine has, and what of the course will run on it."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import platform
import sys

from graphlab.timing.machine import driver_version

HELP = "Say what this machine can run: Python, torch, CUDA, GPU, backend, notebook packages."

# (import name, distribution name) of the packages the notebooks need.
NOTEBOOK_PACKAGES = (
    ("jupyterlab", "jupyterlab"),
    ("ipywidgets", "ipywidgets"),
    ("plotly", "plotly"),
    ("anywidget", "anywidget"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """doctor takes no arguments."""


def run(args: argparse.Namespace) -> int:
    import torch

    from graphlab import __version__
    from graphlab.backend import backend
    from graphlab.errors import GraphlabError

    print(f"graphlab    {__version__}")
    print(f"python      {platform.python_version()} ({sys.executable})")
    cuda_build = torch.version.cuda or "none (CPU-only build)"
    print(f"torch       {torch.__version__}, CUDA build: {cuda_build}")
    for line in gpu_lines(torch):
        print(line)

    ok = True
    try:
        live = backend()
    except GraphlabError as exc:
        print(f"backend     cannot decide: {exc}")
        live, ok = None, False
    if live is not None:
        print(f"backend     {live.name} ({live.reason})")
        print(f"runs here   {what_runs(live.is_cuda)}")
    print(f"recordings  {recordings_status()}")

    for module, dist in NOTEBOOK_PACKAGES:
        status = package_status(module, dist)
        ok &= not status.startswith(("missing", "broken"))
        print(f"{module:<11} {status}")
    return 0 if ok else 1


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
