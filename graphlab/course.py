"""Small helpers the course notebooks share.

- :func:`banner` prints, above a result, which backend produced it: live CUDA, the CPU emulator, a
  bundled recording (with its GPU, versions and date) or the simulator. A notebook never lets a
  reader guess where a number came from.
- :func:`timelines` gets the eager and graph timelines out of either kind of result.
- :func:`live_or_recorded` runs a timing experiment live on a GPU and otherwise loads the bundled
  recording of the same experiment, printing the banner either way.
- :func:`repository_url`, :func:`install_cell_source`, :func:`colab_badge` and
  :func:`binder_badge` derive every link and install line from one place: ``[project.urls]
  Repository`` in ``pyproject.toml``. ``tools/badges.py`` rewrites the notebooks' first cells and
  prints the README's badge lines from them, so one edit of that URL updates everything.
- :func:`refresh_links` rewrites a notebook's badge and install cell from that URL.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import metadata
from typing import Any

from .backend import backend
from .errors import GraphlabError

__all__ = [
    "DISTRIBUTION",
    "banner",
    "binder_badge",
    "colab_badge",
    "install_cell_source",
    "live_or_recorded",
    "refresh_links",
    "repository_url",
    "timelines",
    "timings",
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
            f"the {DISTRIBUTION} distribution is not installed, so its repository URL is unknown: "
            'run `pip install -e ".[dev]"` from the repository root.'
        ) from exc
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "repository":
            return url.strip().rstrip("/")
    raise GraphlabError(
        f"{DISTRIBUTION}'s metadata has no 'Repository' URL: add it under [project.urls] in "
        "pyproject.toml and reinstall."
    )


def _github_slug(url: str) -> str:
    """``owner/name`` of a GitHub URL (Colab and Binder links need it)."""
    match = re.fullmatch(r"https://github\.com/([^/]+/[^/]+?)(?:\.git)?", url)
    if not match:
        raise GraphlabError(
            f"the repository URL {url!r} is not https://github.com/OWNER/NAME: Colab and Binder "
            "badges need a GitHub repository; fix [project.urls] Repository in pyproject.toml."
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
        "    subprocess.check_call([*pip, *light])"
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


def _describe_recording(rec: Any) -> str:
    """The recording's own provenance line, with its name."""
    label = getattr(rec, "label", None)
    if not label:
        meta = dict(rec.meta or {})
        label = f"recorded on {meta.get('gpu', 'an unnamed GPU')} ({str(meta.get('date'))[:10]})"
    return f"{label}, recording {getattr(rec, 'name', '?')!r}"


def banner(source: Any = None, note: str = "") -> None:
    """Print one line saying which backend produced the result below it.

    ``source`` is ``None`` (the live backend of this machine), ``"live"``, ``"emulator"``,
    ``"simulated"``/``"simulator"``, or a recording object (anything with ``.meta`` and ``.name``,
    such as :func:`graphlab.recording`'s result). ``note`` is appended after a dash.
    """
    live = backend()
    if source is None or source == "live":
        if live.is_cuda:
            text = f"live CUDA on {live.gpu}"
        else:
            text = "CPU emulator: CUDA graph semantics, no timings"
    elif source == "emulator":
        text = "CPU emulator: CUDA graph semantics, no timings"
    elif source in ("simulated", "simulator"):
        text = "simulated: graphlab's discrete-event model calibrated on H200 recordings"
    elif hasattr(source, "meta"):
        text = _describe_recording(source)
    else:
        raise GraphlabError(
            f"banner() does not know the source {source!r}: pass None, 'live', 'emulator', "
            "'simulated' or a recording."
        )
    line = f"[{text}{' - ' + note if note else ''}]"
    print(line)
    if (source is None or source in ("live", "emulator")) and not live.is_cuda:
        _announce_emulator_differences()


_differences_announced = False


def _announce_emulator_differences() -> None:
    """Name the emulator's known differences from a GPU once, here, instead of as warnings.

    The emulator warns the first time a program relies on one of them. In a notebook those
    warnings would land in whichever later cell triggers them, and differ from the GPU's output
    there; the banner names them all up front instead and silences the repeats.
    """
    import warnings

    from .emulator import DIFFERENCES, EmulatorDifferenceWarning

    global _differences_announced
    if _differences_announced:
        return
    _differences_announced = True
    print(
        "[the emulator differs from a GPU in: "
        + ", ".join(key.replace("_", " ") for key in DIFFERENCES)
        + " (details: graphlab.emulator.DIFFERENCES)]"
    )
    warnings.filterwarnings("ignore", category=EmulatorDifferenceWarning)


def live_or_recorded(run_live: Callable[[], Any], recording: str, note: str = "") -> Any:
    """Run ``run_live()`` on a GPU, or load the bundled recording named ``recording`` elsewhere.

    Prints the banner of whichever produced the result and returns it: the live result (for
    example a :func:`graphlab.compare` result) or a recording object.
    """
    if backend().is_cuda:
        result = run_live()
        banner("live", note)
        return result
    from .recordings import recording as load_recording

    rec = load_recording(recording)
    banner(rec, note)
    return rec


def timelines(result: Any) -> dict[str, Any]:
    """``{"eager": Timeline, "graph": Timeline}`` of a recording or a profiled compare() result."""
    if callable(getattr(result, "timeline", None)):
        return {mode: result.timeline(mode) for mode in ("eager", "graph")}
    found = getattr(result, "timelines", None)
    if not found:
        raise GraphlabError(
            "this result has no timelines: pass a recording, or a graphlab.compare(..., "
            "profile=True) result."
        )
    return dict(found)


def timings(result: Any) -> dict[str, Any]:
    """The timing figures (µs) of a recording or a compare() result, as one dict."""
    if isinstance(getattr(result, "timings", None), dict):
        return dict(result.timings)
    return result.to_dict()
