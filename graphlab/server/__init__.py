"""The server part of graphlab's JupyterLab extension: the course API under ``/graphlab/``.

Enabled for every Jupyter server by ``etc/jupyter/jupyter_server_config.d/graphlab.json``,
which ``pip install`` puts in place. It serves the course sidebar (lessons and progress, the
live backend), the lesson and progress resets, and the trace viewer (gap report, timeline and
plotly.js); see :mod:`graphlab.server.handlers` for the routes. The front end's sources are in
the repository's ``widgets/`` folder and its build in ``graphlab/labextension/``.

The front end's words in other languages are here too, in ``locale/<lang>/LC_MESSAGES/``: the
catalog (``cuda_graphlab.po``) and the JSON made from it that JupyterLab's server sends to the
browser, which finds them through the package's ``jupyterlab.locale`` entry point, named
``cuda_graphlab`` and pointing at this package (``tools/extension_catalog.py`` makes them).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jupyter_server.serverapp import ServerApp

__all__ = []


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "graphlab.server"}]


def _load_jupyter_server_extension(server_app: ServerApp) -> None:
    from . import first_kernel
    from .handlers import setup_handlers, start_warm_up
    from .when_quiet import when_quiet

    root = getattr(server_app.contents_manager, "root_dir", None) or server_app.root_dir
    setup_handlers(server_app.web_app, root)
    # The trace viewer's warm-up, once a page has loaded the course and the processor has a core
    # to spare (the first picture drawn), so that it slows neither.
    server_app.io_loop.add_callback(
        when_quiet,
        lambda: start_warm_up(server_app.log),
        server_app.web_app.settings["graphlab_page_loaded"].wait(),
    )
    # The lesson graphlab lab opens gets its kernel now, not once the page has loaded.
    first_kernel.schedule(server_app, Path(root))
    server_app.log.info("graphlab: course API at %sgraphlab/", server_app.base_url)
