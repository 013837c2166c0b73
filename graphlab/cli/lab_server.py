"""The JupyterLab server that ``graphlab lab`` starts: JupyterLab's own command (what
``python -m jupyterlab`` runs), with jsonschema's IRI checker deferred first
(:mod:`graphlab.support.lazy_iri_syntax`), so the server answers the browser seconds sooner.

Run as ``python -m graphlab.cli.lab_server [JupyterLab's options]``.
"""

from __future__ import annotations

import sys

from graphlab.support.lazy_iri_syntax import defer

__all__ = ["main"]


def main() -> int | None:
    """Start JupyterLab with the options on the command line; its exit status."""
    defer()
    from jupyterlab.labapp import main as lab_main  # imports jupyter_server, then jsonschema

    status: int | None = lab_main()
    return status


if __name__ == "__main__":
    sys.exit(main())
