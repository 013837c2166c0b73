"""The stored-pictures notebook, executed as the course's lessons are stored: outputs kept, no
widget state saved (what ``tools/execute_notebooks.py`` does on the GPU machine)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

SAVED_NOTEBOOK = Path(__file__).with_name("saved_pictures.ipynb")


def execute_as_stored(folder: Path) -> Path:
    """Run ``saved_pictures.ipynb`` in a kernel whose working folder is ``folder`` and write the
    result there under the same name; returns its path."""
    notebook = nbformat.read(SAVED_NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": folder}},
    )
    client.execute()
    path = folder / SAVED_NOTEBOOK.name
    nbformat.write(notebook, path)
    return path
