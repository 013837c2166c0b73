"""Safety: files are read as JSON only, names from traces never become markup, the lab server
listens on this machine only and asks for its token.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import pickle
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import ipywidgets
import pytest
import torch

import graphlab
from graphlab.cli import main
from graphlab.errors import GraphlabError
from graphlab.timing.recordings import recording
from graphlab.trace.timeline import Timeline

PACKAGE = Path(graphlab.__file__).parent


class _TouchWhenUnpickled:
    """Unpickling this creates ``marker``: proof that a loader ran code from a file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.fixture(params=["pickle", "torch.save"])
def booby_trapped(request, tmp_path):
    """(bytes of a file that runs code when unpickled, the marker that code would create)."""
    marker = tmp_path / "code-ran"
    trap = _TouchWhenUnpickled(marker)
    if request.param == "pickle":
        return pickle.dumps(trap), marker
    path = tmp_path / "trap.pt"
    torch.save(trap, path)
    return path.read_bytes(), marker


def test_trace_loaders_never_unpickle(tmp_path, booby_trapped, capsys):
    data, marker = booby_trapped
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    for load in (Timeline.from_chrome_trace, Timeline.load):
        with pytest.raises(GraphlabError):
            load(path)
    assert main(["gaps", str(path)]) == 2
    assert capsys.readouterr().err.startswith("graphlab gaps: ")
    assert not marker.exists()


def test_recording_loader_never_unpickles(tmp_path, booby_trapped):
    data, marker = booby_trapped
    (tmp_path / "trap.json").write_bytes(data)
    with pytest.raises(GraphlabError):
        recording("trap", directory=tmp_path)
    assert not marker.exists()


# Calls that run code or build objects from bytes. graphlab/isolate.py is the one exception: it
# unpickles only what its own child process sends back through a pipe it created.
_UNSAFE = {
    ("pickle", "load"),
    ("pickle", "loads"),
    ("cloudpickle", "load"),
    ("cloudpickle", "loads"),
    ("marshal", "loads"),
    ("torch", "load"),
    ("yaml", "load"),
    ("dill", "load"),
    ("dill", "loads"),
    ("joblib", "load"),
    ("numpy", "load"),
    ("np", "load"),
}


def test_no_module_deserialises_code_from_files():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "isolate.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("eval", "exec"):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {func.id}()")
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and (func.value.id, func.attr) in _UNSAFE
            ):
                where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                offenders.append(f"{where} {func.value.id}.{func.attr}()")
    assert offenders == []


# -- names from traces reach HTML escaped -------------------------------------------------------

HOSTILE_KERNEL = "<img src=x onerror=alert('kernel')>"


def hostile_timeline(gpu: str = "NVIDIA H200") -> Timeline:
    """A small table whose kernel names (and ``gpu``), as a trace file could carry them, are
    markup."""
    return Timeline(
        kind=["launch", "kernel", "launch", "kernel"],
        name=["cudaLaunchKernel", HOSTILE_KERNEL, "cudaLaunchKernel", HOSTILE_KERNEL],
        start_ns=[0, 5_000, 10_000, 20_000],
        dur_ns=[3_000, 2_000, 3_000, 2_000],
        device=[-1, 0, -1, 0],
        stream=[-1, 7, -1, 7],
        thread=[1, -1, 1, -1],
        correlation=[1, 1, 2, 2],
        meta={"source": "kineto", "gpu": gpu},
    )


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _strings(value)


def _html_widgets(widget):
    """The HTML widgets inside ``widget`` (the summary table, the gap meter), at any depth."""
    if isinstance(widget, ipywidgets.HTML):
        yield widget.value
    for child in getattr(widget, "children", ()):
        yield from _html_widgets(child)


def rendered(widget) -> str:
    """Everything a widget hands to a browser as markup: the HTML it shows beside its figure and
    every string of its figure. (Its stored picture is a PNG: no markup.)

    (The figure's JSON escapes "<" as \\u003c, which keeps it valid inside a <script>; plotly.js
    then draws those strings with its own HTML-like markup, so the strings themselves are checked.)
    """
    return "\n".join([*_html_widgets(widget), *_strings(widget.figure.to_dict())])


@pytest.mark.parametrize("widget_name", ["TimelineView", "GapView"])
def test_widgets_escape_names_from_traces(widget_name):
    from graphlab import widgets

    widget = getattr(widgets, widget_name)(eager=hostile_timeline())
    text = rendered(widget)
    assert HOSTILE_KERNEL not in text
    assert "<img" not in text


HOSTILE_GPU = "<a href='https://example.invalid'>NVIDIA H200</a>"


@pytest.mark.parametrize("widget_name", ["TimelineView", "GapView"])
def test_widgets_escape_the_gpu_name_from_a_trace(widget_name):
    # The GPU name comes from the trace file's deviceProperties and lands in panel banners.
    from graphlab import widgets

    text = rendered(getattr(widgets, widget_name)(eager=hostile_timeline(gpu=HOSTILE_GPU)))
    assert HOSTILE_GPU not in text
    assert "<a href" not in text


def test_timeline_view_still_shows_the_escaped_kernel_name():
    from graphlab import widgets

    text = rendered(widgets.TimelineView(eager=hostile_timeline()))
    assert "&lt;img src=x onerror=alert(&#x27;kernel&#x27;)&gt;" in text


# -- graphlab lab: localhost, with a token --------------------------------------------------------


def _listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp* writes them) listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if int(hex_port, 16) == port and state == "0A":  # 0A: LISTEN
                found.add(address)
    return found


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow  # starts a real JupyterLab
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's socket table")
def test_lab_server_listens_on_localhost_and_wants_its_token(tmp_path):
    from graphlab.cli import lab
    from graphlab.cli.lab import build_command

    parser = argparse.ArgumentParser()
    lab.add_arguments(parser)
    # Port 0: the server takes a free port as it binds (one picked beforehand could be taken by
    # another test's server first) and prints it in its URL.
    command = build_command(parser.parse_args(["--no-browser", "--port", "0"]), tmp_path)
    if os.geteuid() == 0:  # Jupyter refuses root (CI containers) unless told; see the report
        command.append("--allow-root")
    # A private Jupyter config and runtime folder: no user setting can switch the token off.
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
    }
    env.pop("JUPYTER_TOKEN", None)
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        match = None
        deadline = time.monotonic() + 60
        while match is None and time.monotonic() < deadline:
            line = server.stderr.readline()
            if not line and server.poll() is not None:
                pytest.fail(f"JupyterLab exited with status {server.returncode}")
            match = re.search(r"http://127\.0\.0\.1:(\d+)/lab\?token=(\w+)", line)
        assert match, "JupyterLab printed no URL with a token"
        port, token = int(match[1]), match[2]
        assert len(token) >= 32
        # Jupyter prints its URL a moment before the socket is listening.
        while not _listening_addresses(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _listening_addresses(port) == {"0100007F"}  # 127.0.0.1 and nothing else
        base = f"http://127.0.0.1:{port}/api/contents"
        assert _status(base) == 403
        assert _status(f"{base}?token=not-the-token") == 403
        assert _status(f"{base}?token={token}") == 200
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_explanations_cannot_inject_markup():
    shown = graphlab.explain(
        RuntimeError(f"CUDA error: capturing stream has unjoined work {HOSTILE_KERNEL}")
    )
    assert HOSTILE_KERNEL not in shown._repr_html_()
    assert "&lt;img src=x onerror=alert(&#x27;kernel&#x27;)&gt;" in shown._repr_html_()


def test_rare_kernel_names_are_escaped_in_hover_texts_too():
    # Hover texts of the eight most frequent names are templates; rarer names travel as per-point
    # text, which plotly renders as markup too.
    from graphlab import widgets
    from graphlab.widgets.figures import HOVER_NAMES

    names = [f"kernel_{i}" for i in range(HOVER_NAMES) for _ in range(3)] + [HOSTILE_KERNEL]
    n = len(names)
    timeline = Timeline(
        kind=["kernel"] * n,
        name=names,
        start_ns=[10_000 * i for i in range(n)],
        dur_ns=[1_000] * n,
        device=[0] * n,
        stream=[7] * n,
    )
    text = rendered(widgets.TimelineView(eager=timeline))
    assert HOSTILE_KERNEL not in text
    assert "&lt;img src=x onerror=alert(&#x27;kernel&#x27;)&gt;" in text


def test_the_plain_text_summary_escapes_a_gpu_name_from_a_trace_file(tmp_path):
    from graphlab import widgets

    trace = {
        "deviceProperties": [{"name": "NVIDIA H200\x1b[2J"}],
        "traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}
        ],
    }
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    text = widgets.TimelineView(eager=Timeline.from_chrome_trace(path)).static_text()
    assert "\x1b" not in text
    assert "profiled on NVIDIA H200\\x1b[2J" in text
