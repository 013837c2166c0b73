"""Record where the notebooks' stored outputs came from, in each notebook's metadata.

Run right after executing the notebooks on the GPU machine (``tools/execute_notebooks.py`` calls
it). Each notebook gets ``metadata["graphlab"]``: the GPU, driver, torch, CUDA and Python versions,
the date, the graphlab version and which backend produced the outputs. Readers on GitHub then
know that the stored timings are real GPU results, and from which GPU.

Stamping also says the stored outputs' live banners as recorded (:func:`mark_recorded`): printed
during the run, ``[live CUDA on NVIDIA H200]`` was true; stored, it becomes ``[recorded on NVIDIA
H200 (torch ..., CUDA ...) on <date>: a stored output, ...]``, so that no one who opens the notebook
later takes it for their own machine's result.

Stamping also normalises what an execution writes besides outputs (:func:`normalise`): the
kernel's Python version in ``metadata.language_info.version`` and nbclient's per-cell timestamps.
Both change on every run and every machine, so a re-run would otherwise rewrite every tracked
lesson with no change of content; the Python version is kept once, in ``metadata.graphlab``.

    python tools/stamp_notebooks.py notebooks/0*.ipynb
"""

from __future__ import annotations

import sys
from datetime import UTC
from pathlib import Path

import nbformat

from graphlab.backend import backend
from graphlab.course.banner import as_recorded
from graphlab.support.atomic import atomic_writer


def provenance(command: str = "tools/execute_notebooks.py") -> dict[str, str]:
    """This machine's description, as ``graphlab record`` writes it into recordings; on a GPU it
    names ``command``, the tool that ran the notebooks."""
    live = backend()
    if live.is_cuda:
        from graphlab.timing.machine import machine_meta

        meta = machine_meta(command)
    else:
        import platform
        from datetime import datetime

        import torch

        import graphlab

        meta = {
            "gpu": "none",
            "torch": torch.__version__,
            "python": platform.python_version(),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "graphlab": graphlab.__version__,
        }
    return {**meta, "backend": live.name}


def normalise(notebook) -> None:
    """Drop what every execution rewrites without changing the lesson: the kernel's Python version
    (``language_info.version``; the provenance keeps it) and the cells' execution timestamps."""
    notebook.metadata.get("language_info", {}).pop("version", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)


def mark_recorded(notebook, meta: dict) -> None:
    """Say every live banner that the cells printed as recorded by the run ``meta`` describes."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output["text"] = as_recorded(output["text"], meta)


def write_stamped(notebook, path: Path, meta: dict) -> None:
    """Write ``notebook`` to ``path`` atomically, stamped with ``meta``, its live banners said as
    recorded, and normalised."""
    notebook.metadata["graphlab"] = dict(meta)
    mark_recorded(notebook, meta)
    normalise(notebook)
    with atomic_writer(path) as out:
        nbformat.write(notebook, out)


def stamp(paths: list[Path]) -> None:
    meta = provenance()
    for path in paths:
        write_stamped(nbformat.read(path, as_version=4), path, meta)
        print(f"stamped {path.name}: {meta.get('gpu')}, torch {meta.get('torch')}")


if __name__ == "__main__":
    stamp([Path(p) for p in sys.argv[1:]])
