"""``graphlab doctor``: what this machine has, and what of the course will run on it.

``--workshop N`` adds the readiness check for N learners at once
(:mod:`graphlab.workshop.readiness`): a verdict, its reasons, and the per-learner GPU memory cap
to set as ``GRAPHLAB_GPU_MEMORY_GB``. ``--json`` prints the same report as JSON, the readiness
check under ``workshop``.

The text report is in graphlab's language; the JSON is the same in every language, its sentences
in English. A sentence the doctor words itself is a :class:`Sentence`: the English text, which
also says itself in the language of the moment. (The backend's reason and the readiness check's
reasons come worded from :mod:`graphlab.backend` and :mod:`graphlab.workshop.readiness`.)
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import platform
import sys

from graphlab.diagnose.words import shown
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.support.memory_cap import GB
from graphlab.timing.machine import driver_version

from .columns import ljust

# (import name, distribution name) of the packages the notebooks need.
NOTEBOOK_PACKAGES = (
    ("jupyterlab", "jupyterlab"),
    ("ipywidgets", "ipywidgets"),
    ("plotly", "plotly"),
    ("anywidget", "anywidget"),
)


#: The readiness check's verdicts, as the text report shows them.
VERDICTS = {"ready": N_("READY"), "not ready": N_("NOT READY"), "unknown": N_("UNKNOWN")}


class Sentence(str):
    """A sentence of the report: its English text, as ``--json`` prints it in every language,
    that also says itself in graphlab's language (:meth:`said`)."""

    template: str
    fields: dict[str, object]

    def __new__(cls, template: str, **fields: object) -> Sentence:
        sentence = super().__new__(cls, template.format(**fields))
        sentence.template, sentence.fields = template, fields
        return sentence

    def said(self) -> str:
        return _(self.template).format(**self.fields)


def said(text: str) -> str:
    """``text`` in graphlab's language when it is a :class:`Sentence`, else as it is (a
    version, a path, another module's words)."""
    return text.said() if isinstance(text, Sentence) else text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workshop",
        type=int,
        metavar="N",
        help=_(
            "also say whether this machine can host N learners at once, and the GPU memory "
            "cap to give each (exit status 1 unless the verdict is ready)"
        ),
    )
    parser.add_argument("--json", action="store_true", help=_("print the report as JSON"))


def run(args: argparse.Namespace) -> int:
    import torch

    from graphlab.errors import GraphlabError

    if args.workshop is not None and args.workshop < 1:
        raise GraphlabError(
            _("--workshop needs a number of learners from 1 up, not {learners}").format(
                learners=args.workshop
            )
        )
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
        report["backend"] = {
            "name": None,
            "reason": Sentence(N_("cannot decide: {error}"), error=exc),
        }
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


def line(label: str, text: str) -> str:
    """A line of the report: ``label`` in a column 11 wide, then ``text``."""
    return f"{ljust(label, 11)} {text}"


def print_report(report: dict, gpus: list[str]) -> None:
    cuda_build = report["cuda_build"] or _("none (CPU-only build)")
    print(line("graphlab", report["graphlab"]))
    print(line("python", report["python"]))
    torch = _("{version}, CUDA build: {cuda_build}")
    print(line("torch", torch.format(version=report["torch"], cuda_build=cuda_build)))
    for gpu in gpus:
        print(gpu)
    live = report["backend"]
    if live["name"] is None:
        print(line(_("backend"), said(live["reason"])))
    else:
        print(line(_("backend"), f"{live['name']} ({said(live['reason'])})"))
        print(line(_("runs here"), said(report["runs_here"])))
    print(line(_("recordings"), said(report["recordings"])))
    for module, status in report["packages"].items():
        print(line(module, said(status)))
    if "workshop" in report:
        for text in workshop_lines(report["workshop"]):
            print(text)


def workshop_lines(workshop: dict) -> list[str]:
    """The ``workshop`` section as the text report shows it."""

    def detail(label: str, text: str) -> str:
        return f"  {ljust(label, 9)} {text}"

    path = "GPU" if workshop["path"] == "gpu" else _("CPU emulator")
    verdict = _("{learners} learners, {path}: {verdict}").format(
        learners=workshop["learners"], path=path, verdict=_(VERDICTS[workshop["verdict"]])
    )
    lines = [line(_("workshop"), verdict)]
    needed = workshop["needed_bytes"]
    if needed is None:
        needs = _("course peak per learner {peak}").format(peak=shown(workshop["needed_by"]))
    else:
        needs = _("{size:.2f} GB per learner (lesson {lesson})").format(
            size=needed / GB, lesson=workshop["needed_by"]
        )
    lines.append(detail(_("needs"), needs))
    for device in workshop.get("devices", []):
        size = device["memory_bytes"]
        size = _("memory unknown") if size is None else f"{size / GB:.1f} GB"
        share = device.get("share_bytes")
        fields = {"device": device["label"], "memory": size, "learners": device["learners"]}
        if share is None:
            shared = _("{device} ({memory}): {learners} learners").format(**fields)
        else:
            shared = _("{device} ({memory}): {learners} learners, {share:.1f} GB each").format(
                share=share / GB, **fields
            )
        lines.append(detail(_("device"), shared))
    if workshop["path"] == "emulator":
        memory = workshop["host_memory_bytes"]
        memory = (
            _("unknown")
            if memory is None
            else _("{size:.1f} GB available").format(size=memory / GB)
        )
        cores = workshop["cpus"]  # {"have": ..., "needed": ...}
        host = _("{have} CPU cores ({needed} needed), memory {memory}").format(
            have=cores["have"], needed=cores["needed"], memory=memory
        )
        lines.append(detail(_("host"), host))
    if workshop["memory_cap_gb"] is not None:
        cap = _("GRAPHLAB_GPU_MEMORY_GB={cap} per learner").format(cap=workshop["memory_cap_gb"])
        lines.append(detail(_("cap"), cap))
    disk = workshop["disk"]
    space = _("{path}: {free:.1f} GB free, {lessons:.1f} MB of lessons per learner").format(
        path=disk["path"],
        free=disk["free_bytes"] / GB,
        lessons=disk["lessons_bytes_per_learner"] / 1e6,
    )
    lines.append(detail(_("disk"), space))
    labels = {"reasons": N_("problem"), "unknown": N_("unknown"), "warnings": N_("warning")}
    for kind, label in labels.items():
        lines += [detail(_(label), shown(text)) for text in workshop[kind]]
    return lines


def gpu_lines(torch) -> list[str]:
    """One line per visible GPU: name, memory and driver; or why there is none."""
    if not torch.cuda.is_available():
        return [line(_("gpu"), _("none visible to torch"))]
    driver = driver_version()
    lines = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        gpu = _("{name}, {memory:.0f} GiB, driver {driver}").format(
            name=props.name, memory=props.total_memory / 1024**3, driver=driver
        )
        lines.append(line(_("gpu {index}").format(index=i), gpu))
    return lines


def what_runs(on_gpu: bool) -> Sentence:
    if on_gpu:
        return Sentence(
            N_(
                "live GPU experiments: real CUDA graphs, timings measured on this GPU, "
                "profiled timelines; recordings and the simulator are there for comparison"
            )
        )
    return Sentence(
        N_(
            "the CPU emulator for graph semantics (capture, replay, static inputs, RNG, shapes); "
            "timings come from bundled real GPU recordings and the calibrated simulator, labelled"
        )
    )


def recordings_status() -> Sentence:
    """How many real GPU recordings ship with this install."""
    from graphlab.errors import GraphlabError

    try:
        from graphlab.timing.recordings import list_recordings

        names = list(list_recordings())  # Recording objects (or names)
    except ImportError:
        return Sentence(N_("not part of this install"))
    except GraphlabError as exc:
        return Sentence(N_("unreadable: {error}"), error=exc)
    if not names:
        return Sentence(N_("none bundled"))
    shown = ", ".join(str(getattr(r, "name", r)) for r in names[:3])
    shown += ", ..." if len(names) > 3 else ""
    return Sentence(N_("{count} bundled ({names})"), count=len(names), names=shown)


def package_status(module: str, dist: str) -> Sentence:
    """'ok <version>', 'missing (pip install ...)' or 'broken: <error>' for one package."""
    try:
        version = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return Sentence(N_("missing (pip install {dist})"), dist=dist)
    try:
        importlib.import_module(module)
    except Exception as exc:  # any import-time failure is what the user needs to see
        return Sentence(
            N_("broken: {dist} {version} is installed but `import {module}` fails ({error})"),
            dist=dist,
            version=version,
            module=module,
            error=exc,
        )
    return Sentence(N_("ok {version}"), version=version)
