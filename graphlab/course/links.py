"""Every link and install line of the course, derived from one place.

:func:`repository_url`, :func:`install_cell_source`, :func:`colab_badge` and :func:`binder_badge`
read ``[project.urls] Repository`` in ``pyproject.toml`` (or the installed distribution's
metadata). ``tools/badges.py`` rewrites the notebooks' first cells and prints the README's badge
lines from them, so one edit of that URL updates everything. :func:`refresh_links` rewrites one
notebook's badge and install cell.
"""

from __future__ import annotations

import re
from importlib import metadata

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

__all__ = [
    "DISTRIBUTION",
    "INSTALL_MARKER",
    "binder_badge",
    "colab_badge",
    "install_cell_source",
    "refresh_links",
    "repository_url",
]

#: The distribution name on an index and in ``pip install`` lines (the import name is graphlab).
DISTRIBUTION = "cuda-graphlab"

#: First line of every notebook's install cell; tools and tests find the cell by it.
INSTALL_MARKER = "# Colab, Kaggle or a fresh runtime: install graphlab only if it is missing."


def repository_url() -> str:
    """The public repository address, from the installed package's ``[project.urls] Repository``.

    Read from the package metadata rather than written into code, so that editing
    ``pyproject.toml`` (and reinstalling, which ``pip install -e .`` needs for metadata anyway)
    is the one place to change it.
    """
    try:
        urls = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError as exc:
        raise GraphlabError(
            _(
                "the {distribution} distribution is not installed, so its repository URL "
                'is unknown: run `pip install -e ".[dev]"` from the repository root.'
            ).format(distribution=DISTRIBUTION)
        ) from exc
    for entry in urls:
        label, _comma, url = entry.partition(",")
        if label.strip().lower() == "repository":
            return url.strip().rstrip("/")
    raise GraphlabError(
        _(
            "{distribution}'s metadata has no 'Repository' URL: add it under "
            "[project.urls] in pyproject.toml and reinstall."
        ).format(distribution=DISTRIBUTION)
    )


def _github_slug(url: str) -> str:
    """``owner/name`` of a GitHub URL (Colab and Binder links need it)."""
    match = re.fullmatch(r"https://github\.com/([^/]+/[^/]+?)(?:\.git)?", url)
    if not match:
        raise GraphlabError(
            _(
                "the repository URL {url} is not https://github.com/OWNER/NAME: Colab "
                "and Binder badges need a GitHub repository; fix [project.urls] "
                "Repository in pyproject.toml."
            ).format(url=repr(url))
        )
    return match.group(1)


def install_cell_source(url: str | None = None) -> str:
    """The source of the first code cell of every notebook.

    It installs graphlab from the repository only when ``import graphlab`` would fail (Colab,
    Kaggle, a bare runtime); on Binder, CI or a checkout it does nothing. ``--no-deps`` and the
    short list after it keep pip from touching the runtime's own torch (a CUDA build on a GPU
    runtime) or its Jupyter server: only the light plotting and widget packages are added, and
    only if missing.
    """
    url = url or repository_url()
    return (
        f"{INSTALL_MARKER}\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        'if importlib.util.find_spec("graphlab") is None:\n'
        '    pip = [sys.executable, "-m", "pip", "install", "-q"]\n'
        f'    subprocess.check_call([*pip, "--no-deps", "git+{url}"])\n'
        '    light = ["numpy", "plotly", "ipywidgets", "anywidget", "tqdm", "cloudpickle"]\n'
        '    subprocess.check_call([*pip, *light, "matplotlib", "msgspec"])'
    )


def colab_badge(notebook: str, url: str | None = None, branch: str = "main") -> str:
    """Markdown for an "Open in Colab" badge of ``notebooks/<notebook>``."""
    slug = _github_slug(url or repository_url())
    link = f"https://colab.research.google.com/github/{slug}/blob/{branch}/notebooks/{notebook}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({link})"


def binder_badge(
    notebook: str = "00_start_here.ipynb", url: str | None = None, branch: str = "main"
) -> str:
    """Markdown for a Binder badge opening JupyterLab on ``notebooks/<notebook>``."""
    slug = _github_slug(url or repository_url())
    link = f"https://mybinder.org/v2/gh/{slug}/{branch}?urlpath=lab/tree/notebooks/{notebook}"
    return f"[![Binder](https://mybinder.org/badge_logo.svg)]({link})"


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def refresh_links(notebook: dict, filename: str, url: str | None = None) -> bool:
    """Rewrite ``notebook``'s Colab badge line and install cell from the repository URL.

    ``notebook`` is a notebook as loaded by nbformat (or its JSON dict), ``filename`` its name in
    ``notebooks/``. The badge is the line of the first markdown cell that starts with
    ``[![Open In Colab]``; the install cell is the code cell starting with
    :data:`INSTALL_MARKER`. Returns whether anything changed.
    """
    url = url or repository_url()
    changed = False
    cells = notebook["cells"]
    markdown = next((c for c in cells if c["cell_type"] == "markdown"), None)
    if markdown is not None:
        lines = _source(markdown).split("\n")
        badge = colab_badge(filename, url)
        new = [badge if line.startswith("[![Open In Colab]") else line for line in lines]
        if new != lines:
            markdown["source"] = "\n".join(new)
            changed = True
    install = install_cell_source(url)
    for cell in cells:
        text = _source(cell)
        if cell["cell_type"] == "code" and text.startswith(INSTALL_MARKER) and text != install:
            cell["source"] = install
            changed = True
    return changed
