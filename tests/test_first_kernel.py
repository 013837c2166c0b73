"""``graphlab lab`` starts the first lesson's kernel with the server and warms it up.

The end-to-end test runs the command as installed (``python -m graphlab lab``) in a HOME and
Jupyter folders of its own, then talks to the kernel the way the page would: through the session
the server lists for the lesson's path.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from jupyter_client import BlockingKernelClient

from graphlab.server import first_kernel
from graphlab.server.first_kernel import FIRST_LESSON_ENV, WARM_MODULES

ROOT = Path(__file__).resolve().parents[1]


def test_the_kernel_is_the_one_the_notebook_names(tmp_path):
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"metadata": {"kernelspec": {"name": "course-env"}}}))
    assert first_kernel.kernel_name(notebook) == "course-env"


@pytest.mark.parametrize(
    "text",
    ['{"metadata": {}}', '{"metadata": {"kernelspec": "python3"}}', "not json", "[1, 2]"],
)
def test_a_notebook_that_names_no_kernel_gets_the_servers_default(tmp_path, text):
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(text)
    assert first_kernel.kernel_name(notebook) is None
    assert first_kernel.kernel_name(tmp_path / "missing.ipynb") is None


def test_the_lesson_is_taken_out_of_the_environment():
    environ = {FIRST_LESSON_ENV: "zh_CN/00_start_here.ipynb", "HOME": "/home/learner"}
    assert first_kernel.lesson_to_open(environ) == "zh_CN/00_start_here.ipynb"
    assert environ == {"HOME": "/home/learner"}
    assert first_kernel.lesson_to_open(environ) is None
    assert first_kernel.lesson_to_open({FIRST_LESSON_ENV: ""}) is None


def test_the_warm_up_imports_each_module(tmp_path):
    # In a fresh Python: the warm-up's modules, none of them loaded before it runs.
    names = ", ".join(map(repr, WARM_MODULES))
    code = (
        "import sys; from graphlab.server.first_kernel import warm_up; "
        f"names = ({names},); print(sum(n in sys.modules for n in names)); warm_up(); "
        "print(sum(n in sys.modules for n in names))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", str(len(WARM_MODULES))]


def _sessions(base: str, token: str) -> list[dict]:
    headers = {"Authorization": f"token {token}"}
    request = urllib.request.Request(f"{base}/api/sessions", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


# Run in the lesson's kernel: wait for the warm-up thread, then say what it left behind, whether
# graphlab lab's environment variable reached the kernel, and whether lark was imported.
PROBE = f"""
import os, sys, threading
for thread in threading.enumerate():
    if thread.name == "graphlab-warm-up":
        thread.join()
print(sorted(n for n in {WARM_MODULES!r} if n in sys.modules))
print({FIRST_LESSON_ENV!r} in os.environ)
print("lark" in sys.modules)
"""


@pytest.mark.slow  # starts a real JupyterLab and a kernel that imports torch and plotly
def test_graphlab_lab_starts_the_first_lessons_kernel_and_warms_it_up(tmp_path):
    runtime = tmp_path / "runtime"
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "GRAPHLAB_PROGRESS": str(tmp_path / "progress.json"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("JUPYTER_TOKEN", None)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    command = [sys.executable, "-m", "graphlab", "lab", "--no-browser", "--port", str(port),
               "--workspace", str(tmp_path / "ws")]  # fmt: skip
    server = subprocess.Popen(
        command, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        # The server prints its URL, then says it started the kernel once the kernel has been
        # asked to warm up.
        url, warmed = None, False
        deadline = time.monotonic() + 120
        while not (url and warmed) and time.monotonic() < deadline:
            line = server.stderr.readline()
            if not line and server.poll() is not None:
                pytest.fail(f"graphlab lab exited with status {server.returncode}")
            url = url or re.search(r"(http://127\.0\.0\.1:\d+)/lab\S*\?token=(\w+)", line)
            warmed = warmed or "graphlab: started the kernel of 00_start_here.ipynb" in line
        assert url, "graphlab lab printed no URL"
        assert warmed, "the server did not say it started the lesson's kernel"
        sessions = _sessions(*url.groups())
        assert [(s["path"], s["type"], s["kernel"]["name"]) for s in sessions] == [
            ("00_start_here.ipynb", "notebook", "python3")
        ]
        client = BlockingKernelClient(
            connection_file=str(runtime / f"kernel-{sessions[0]['kernel']['id']}.json")
        )
        client.load_connection_file()
        # No heartbeat channel: on a busy machine its first beat can come late enough for
        # wait_for_ready to call a live kernel dead.
        client.start_channels(hb=False)
        try:
            client.wait_for_ready(timeout=60)
            printed: list[str] = []

            def keep(msg: dict) -> None:
                if msg["msg_type"] == "stream":
                    printed.append(msg["content"]["text"])

            reply = client.execute_interactive(PROBE, timeout=180, output_hook=keep)
        finally:
            client.stop_channels()
        # The learner's first cell is still cell 1: the warm-up ran silently.
        assert (reply["content"]["status"], reply["content"]["execution_count"]) == ("ok", 1)
        # plotly imported jsonschema, whose IRI parsers were not built (support.lazy_iri_syntax).
        assert "".join(printed).splitlines() == [str(sorted(WARM_MODULES)), "False", "False"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
