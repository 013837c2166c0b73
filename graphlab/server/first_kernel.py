"""The first lesson's kernel, started with the server and warmed up while the page loads.

``graphlab lab`` opens one lesson. Left alone, JupyterLab asks for that notebook's kernel only
once its page has loaded, seconds after the server answers, and the lesson's first cells then
import torch, plotly's FigureWidget (through nbformat and jsonschema, whose IRI format checker
builds a grammar when it is imported) and matplotlib: seconds more of CPU before the first
picture appears.

So ``graphlab lab`` names the lesson in :data:`FIRST_LESSON_ENV`, and the server extension starts
that notebook's kernel as soon as the server runs (:func:`start_first_kernel`). JupyterLab looks
for a running session of a notebook's path before it starts a kernel of its own, so the page
connects to this one. Once the kernel is ready it is asked, silently (no execution count, no
history, no output), to start :func:`warm_up` on a background thread: the kernel's main thread
stays free to answer the page, and a cell that imports one of these modules while the thread is
importing it waits for that import to finish instead of doing it twice.

Nothing else changes: the notebook's own kernel (its metadata's kernelspec), started by the
server as JupyterLab would start it, and no name added to the learner's namespace.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import MutableMapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, cast

from graphlab.support.lazy_iri_syntax import defer as defer_iri_syntax

if TYPE_CHECKING:
    from jupyter_client.asynchronous.client import AsyncKernelClient
    from jupyter_server.serverapp import ServerApp

__all__ = [
    "FIRST_LESSON_ENV",
    "WARM_MODULES",
    "WARM_UP",
    "kernel_name",
    "lesson_to_open",
    "schedule",
    "start_first_kernel",
    "warm_up",
]

#: The environment variable in which ``graphlab lab`` names the lesson it opens, relative to the
#: server's root. The server extension removes it, so the kernels do not inherit it.
FIRST_LESSON_ENV = "GRAPHLAB_FIRST_LESSON"

#: What a lesson's first picture imports, in the order its cells need them: torch; plotly's
#: FigureWidget, ipywidgets and the TimelineView; matplotlib, which draws each widget's stored
#: PNG (its first import on a machine also builds its font cache).
WARM_MODULES = (
    "torch",
    "plotly.graph_objs._figurewidget",
    "graphlab.widgets.timeline_view",
    "graphlab.widgets.timeline_picture",
)

#: The code the kernel runs, silently: it only starts the thread, so it answers at once.
WARM_UP = (
    '__import__("threading").Thread(target=__import__("graphlab.server.first_kernel", '
    'fromlist=["warm_up"]).warm_up, name="graphlab-warm-up", daemon=True).start()'
)

#: How long to wait for the new kernel to answer before giving up the warm-up (the kernel
#: itself is left running for the page).
READY_TIMEOUT_S = 120


def warm_up() -> None:
    """Import :data:`WARM_MODULES`, in the kernel, on the thread :data:`WARM_UP` starts.

    It stops at the first module that fails to import: the lesson's own import of it raises
    the error where the learner sees it. jsonschema's IRI checker, which plotly's import would
    otherwise build, is deferred first (:mod:`graphlab.support.lazy_iri_syntax`).
    """
    defer_iri_syntax()
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:
            return


def kernel_name(notebook: Path) -> str | None:
    """The kernel the notebook asks for in its metadata; ``None`` (the server's default kernel)
    if it names none or cannot be read."""
    try:
        metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
        name = metadata.get("kernelspec", {}).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def lesson_to_open(environ: MutableMapping[str, str]) -> str | None:
    """The lesson ``graphlab lab`` named (removed from ``environ``), or ``None``."""
    return environ.pop(FIRST_LESSON_ENV, None) or None


async def start_first_kernel(server_app: ServerApp, root: Path, path: str) -> dict[str, Any] | None:
    """Start the kernel of the notebook at ``path`` (relative to the server's ``root``) in a session
    of that path, then ask it to run :data:`WARM_UP`. Returns the session's model, or ``None``
    if the notebook is not there or the kernel did not start (logged: the page then starts a
    kernel as it always does)."""
    log = server_app.log
    notebook = root / path
    if notebook.suffix != ".ipynb" or not notebook.is_file():
        log.warning("graphlab: no lesson at %s, so no kernel was started for it", path)
        return None
    try:
        session: dict[str, Any] = await server_app.session_manager.create_session(
            path=path,
            name=PurePosixPath(path).name,
            type="notebook",
            kernel_name=kernel_name(notebook),
        )
    except Exception as exc:  # the page will start the kernel itself, and show its error
        log.warning("graphlab: could not start the kernel of %s: %s", path, exc)
        return None
    kernel = server_app.kernel_manager.get_kernel(session["kernel"]["id"])
    # The server's kernel managers hand out asyncio clients.
    client = cast("AsyncKernelClient", kernel.client())
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=READY_TIMEOUT_S)
        client.execute(WARM_UP, silent=True, store_history=False)
        await client.get_shell_msg(timeout=READY_TIMEOUT_S)
    except Exception as exc:  # a kernel too slow or gone: the lesson runs as it would anyway
        log.warning("graphlab: the kernel of %s was not warmed up: %s", path, exc)
    finally:
        client.stop_channels()
    log.info("graphlab: started the kernel of %s with the server", path)
    return session


def schedule(server_app: ServerApp, root: Path) -> str | None:
    """Have the server's event loop run :func:`start_first_kernel` for the lesson ``graphlab
    lab`` named, if it named one, under the server's ``root``; returns that lesson's path."""
    path = lesson_to_open(os.environ)
    if path is not None:
        server_app.io_loop.add_callback(start_first_kernel, server_app, root, path)
    return path
