"""Execute the course notebooks in place, top to bottom, and stamp their provenance.

Run on the GPU machine to store real GPU outputs in the notebooks before committing them::

    python tools/execute_notebooks.py                    # every notebooks/NN_*.ipynb
    python tools/execute_notebooks.py notebooks/02_static_inputs.ipynb
    python tools/execute_notebooks.py notebooks/zh_CN/*.ipynb   # the Chinese lessons

Each notebook runs in a fresh kernel (the ``python3`` kernelspec: the Python running this script)
with ``notebooks/`` as its working directory. The kernel inherits ``GRAPHLAB_RUN_SOLUTIONS=1``, so
the ``%%solution`` cells run (for a learner they run only when revealed) and every checker's stored
output is its verdict on the reference solution. Live widget state is not stored (each widget's
static figure is), and neither are nbclient's per-cell timestamps nor the kernel's Python version
in ``language_info`` (``stamp_notebooks.normalise``): re-running a lesson changes its outputs and
its provenance only. A translated lesson (``notebooks/zh_CN/``) runs with ``GRAPHLAB_LANG`` set to
its language, so that its checkers answer in it, and its provenance names the language
(``tools/lesson_catalogs.py`` keeps such a run's outputs). A notebook that raises is reported
and left unchanged on disk. Prints each notebook's wall time; exits 1 if any failed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import nbclient
import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

from badges import NOTEBOOKS
from stamp_notebooks import provenance, write_stamped

from graphlab.course.languages import TRANSLATED
from graphlab.language import ENV as LANGUAGE

CELL_TIMEOUT_S = 600
# Read by graphlab's %%solution magic: run the reference solutions, as the test configuration does;
# and where the checkers record results: a scratch file, not the progress of whoever runs this.
SOLUTIONS_ENV = {
    "GRAPHLAB_RUN_SOLUTIONS": "1",
    "GRAPHLAB_PROGRESS": str(Path(tempfile.mkdtemp(prefix="graphlab-execute-")) / "progress.json"),
}


def language_of(path: Path) -> str:
    """The language of the lesson at ``path``: its folder's, for a translated lesson."""
    return path.parent.name if path.parent.name in TRANSLATED else "en"


def execute(path: Path, meta: dict) -> bool:
    language = language_of(path)
    os.environ[LANGUAGE] = language  # the kernel started below inherits it
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata.pop("widgets", None)  # state of an earlier run, if any
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        # Widget state (the live figures' full data) would add megabytes per notebook; every
        # graphlab widget also stores a static HTML figure in its output, which is kept.
        store_widget_state=False,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        print(f"FAILED {path.name} after {time.perf_counter() - start:.1f} s:\n{error}")
        return False
    write_stamped(notebook, path, {**meta, "language": language})
    print(f"ok     {path.name}: {time.perf_counter() - start:.1f} s")
    return True


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    os.environ.update(SOLUTIONS_ENV)  # the kernels started below inherit it
    meta = provenance()
    print(f"executing {len(paths)} notebooks on {meta.get('gpu')} ({meta['backend']} backend)")
    results = [execute(path, meta) for path in paths]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
