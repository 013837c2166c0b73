"""Measure every lesson's run time and peak memory into graphlab/workshop/peaks.json.

Run on the machine whose numbers you want: on a GPU it fills the ``gpu`` section, elsewhere the
``cpu`` one, and leaves the other section as it was::

    python tools/measure_lessons.py                         # every lesson
    python tools/measure_lessons.py --out /tmp/peaks.json   # somewhere else

Each lesson runs as a learner would run it: copied into a fresh workspace, in a fresh kernel (the
``python3`` kernelspec), with the solutions run (``GRAPHLAB_RUN_SOLUTIONS=1``, as the notebook
tests do), no GPU memory cap and a progress store of its own. The time is the wall time of the
lesson's cells, the kernel's start excluded; the 1-minute load average before and after the run
is kept with the times, since other work on the machine slows them. After the last cell a probe
cell reads the kernel's peaks (see :mod:`graphlab.workshop.peaks` for what each number is). On a
GPU, run it with the GPU otherwise idle: the context overhead is read from the device's memory
in use.

A lesson that fails is reported and left out of the section (``graphlab doctor`` then says its
numbers are not measured yet); the exit status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

import nbclient
import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stamp_notebooks import provenance, write_stamped

from graphlab.course.workspace import lessons, sync
from graphlab.support.atomic import write_text_atomically
from graphlab.workshop import peaks

CELL_TIMEOUT_S = 900

# Runs in the lesson's kernel after its last cell; prints one JSON line.
PROBE = """\
import json as _json, resource as _resource, torch as _torch
_peaks = {"rss_bytes": _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss * 1024}
if _torch.cuda.is_available() and _torch.cuda.is_initialized():
    _peaks["reserved_peak_bytes"] = max(
        _torch.cuda.max_memory_reserved(i) for i in range(_torch.cuda.device_count()))
    _free, _total = _torch.cuda.mem_get_info(0)
    _peaks["device_used_bytes"] = _total - _free
    _peaks["reserved_bytes"] = _torch.cuda.memory_reserved(0)
print(_json.dumps(_peaks))
"""


def measure(
    lesson_file: str,
    workspace: Path,
    baseline_used: int | None,
    executed: tuple[Path, dict] | None = None,
) -> dict:
    """Run one lesson of ``workspace``; its seconds, peak and (on a GPU) context overhead.

    With ``executed`` (a folder and a provenance stamp), the lesson as it ran (its outputs,
    without the probe cell) is also written there, stamped and normalised as
    ``tools/execute_notebooks.py`` writes lessons: one run then gives both the figures and the
    stored outputs.
    """
    notebook = nbformat.read(workspace / lesson_file, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(workspace)}},
    )
    with client.setup_kernel():
        start = time.perf_counter()
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
        seconds = time.perf_counter() - start
        probe = nbformat.v4.new_code_cell(PROBE)
        notebook.cells.append(probe)
        client.execute_cell(probe, len(notebook.cells) - 1)
    found = json.loads("".join(o.get("text", "") for o in probe.outputs).strip().splitlines()[-1])
    if executed is not None:
        folder, stamp = executed
        notebook.cells.pop()
        folder.mkdir(parents=True, exist_ok=True)
        write_stamped(notebook, folder / lesson_file, stamp)
    result = {"seconds": round(seconds, 1)}
    if "reserved_peak_bytes" in found:
        result["peak_bytes"] = found["reserved_peak_bytes"]
        result["host_peak_bytes"] = found["rss_bytes"]
        if baseline_used is not None:
            overhead = found["device_used_bytes"] - baseline_used - found["reserved_bytes"]
            result["overhead_bytes"] = max(overhead, 0)
    else:
        result["peak_bytes"] = found["rss_bytes"]
    return result


def device_used_bytes() -> int | None:
    """GPU 0's memory in use now, asked of nvidia-smi (so this process makes no CUDA context)."""
    from graphlab.support.nvidia_smi import gpus

    found = gpus()
    return found[0].used_bytes if found else None  # None: the overhead is not measured


def cpu_model() -> str:
    """The processor's name as Linux reports it, or what platform knows elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=peaks.PATH, help="file to update")
    parser.add_argument(
        "--executed", type=Path, help="also write each lesson, with its outputs, into this folder"
    )
    args = parser.parse_args(argv)

    command = shlex.join(["tools/measure_lessons.py", *argv])
    stamp = provenance(command)  # what each executed lesson is stamped with
    kind = "gpu" if stamp["backend"] == "cuda" else "cpu"
    meta = stamp | {"cpu": cpu_model(), "cpus": os.cpu_count(), "command": command}
    executed = (args.executed, stamp) if args.executed is not None else None
    current = peaks.read(args.out) if args.out.exists() else peaks.Peaks(None, None)
    results, overheads = {}, []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="graphlab-measure-") as scratch:
        os.environ.pop("GRAPHLAB_GPU_MEMORY_GB", None)
        os.environ["GRAPHLAB_RUN_SOLUTIONS"] = "1"
        os.environ["GRAPHLAB_PROGRESS"] = str(Path(scratch) / "progress.json")
        workspace = sync(Path(scratch) / "course").folder
        baseline = device_used_bytes() if kind == "gpu" else None
        failed = []
        for lesson in lessons():
            try:
                found = measure(lesson.file, workspace, baseline, executed)
            except nbclient.exceptions.CellExecutionError as error:
                plain = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # IPython's colours
                last = [line for line in plain.splitlines() if line.strip()][-1]
                print(f"{lesson.id:<20} FAILED: {last}")
                failed.append(lesson.id)
                continue
            if "overhead_bytes" in found:
                overheads.append(found.pop("overhead_bytes"))
            results[lesson.id] = found
            print(f"{lesson.id:<20} {found['seconds']:8.1f} s  peak {found['peak_bytes']:,} B")
    if not results:
        print("no lesson ran to the end: nothing written")
        return 1
    # Wall times depend on what else the machine was doing: keep its load with them.
    meta["load_average"] = {"before": round(load_before, 1), "after": round(os.getloadavg()[0], 1)}
    section = peaks.Section(
        meta,
        {
            name: peaks.LessonPeak(r["seconds"], r["peak_bytes"], r.get("host_peak_bytes"))
            for name, r in results.items()
        },
        max(overheads) if overheads else None,
    )
    sections = {k: current.section(k) for k in peaks.KINDS} | {kind: section}
    updated = peaks.Peaks(**sections)
    text = json.dumps(updated.to_dict(), indent=1) + "\n"
    write_text_atomically(args.out, text, peaks.PeaksError)
    print(
        f"wrote the {kind} section of {args.out}"
        + (f", without {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
