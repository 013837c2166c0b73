"""A real JupyterHub with deploy/jupyterhub_config.py: three learners at once, each with their own
workspace, progress, device and cap, and no way into another's server.

The hub runs on 127.0.0.1 only, with JupyterHub's configurable-http-proxy. What only a test may
do is set here, on top of the deployment's configuration: a dummy login (one shared password),
the simple local spawner (every learner runs as this test's own user, with a home under the
test's temporary folder), two made-up devices to deal and the solutions run. Each learner logs in
through the login form, takes an API token with their own login, starts their server through the
hub's REST API and runs lessons 00 and 02 cell by cell through the single-user server's
sessions and kernel API, as JupyterLab would.

Needs ``pip install jupyterhub`` and ``npm install -g configurable-http-proxy``; marked ``hub``.
Every wait has a time limit, and the hub and every server it started are stopped at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytestmark = pytest.mark.hub

pytest.importorskip("jupyterhub", reason="needs jupyterhub (pip install jupyterhub)")
if shutil.which("configurable-http-proxy") is None:
    pytest.skip(
        "needs configurable-http-proxy (npm install -g configurable-http-proxy)",
        allow_module_level=True,
    )

import requests  # noqa: E402  (jupyterhub brings it)
from tornado.httpclient import HTTPRequest  # noqa: E402
from tornado.websocket import websocket_connect  # noqa: E402

from graphlab.course.lessons import read_lesson, shipped_folder  # noqa: E402

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
PACKAGE = Path(__file__).resolve().parent.parent / "graphlab"
LEARNERS = ["ada", "grace", "linus"]
LESSONS = ["00_start_here.ipynb", "02_static_inputs.ipynb"]
PASSWORD = "workshop-test-password"
DEVICES = "0,1"  # dealt round-robin; no GPU is touched (this torch may be a CPU build)
HUB_START_S = 90
SERVER_START_S = 180
CELL_S = 300
REQUEST_S = 30

# Run in the learner's kernel after the lessons: where it lives and what it was given, and a
# result only this learner recorded.
PROBE = """
import json, os
from graphlab.course import progress
progress.record("99_whoami", os.environ["USER"], True)
print(json.dumps({"home": os.environ["HOME"], "cwd": os.getcwd(),
    "store": str(progress.store_path()), "results": progress.load(),
    "device": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "cap": os.environ.get("GRAPHLAB_GPU_MEMORY_GB")}))
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Hub:
    def __init__(self, folder: Path):
        self.folder = folder
        self.homes = folder / "homes"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "hub.log"
        self.process: subprocess.Popen | None = None

    def config(self) -> str:
        return f"""
c = get_config()
load_subconfig({str(DEPLOY / "jupyterhub_config.py")!r})
c.JupyterHub.bind_url = {self.url + "/"!r}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {_free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{_free_port()}"
c.ConfigurableHTTPProxy.pid_file = {str(self.folder / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///" + {str(self.folder / "hub.sqlite")!r}
c.JupyterHub.cookie_secret_file = {str(self.folder / "cookie_secret")!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(self.homes / "{username}")!r}
c.Spawner.ip = "127.0.0.1"
# The course extension's server part enabled as `pip install` enables it: its config file in a
# Jupyter config folder (here the test's own, where the installed one may be missing).
c.Spawner.environment = {{
    "GRAPHLAB_RUN_SOLUTIONS": "1",
    "JUPYTER_CONFIG_PATH": {str(self.folder / "jupyter-config")!r},
}}
c.Spawner.start_timeout = {SERVER_START_S}
c.Spawner.http_timeout = {SERVER_START_S}
if {os.geteuid() == 0}:  # CI runs as root; JupyterLab refuses root without this flag
    c.Spawner.args = [*c.Spawner.args, "--allow-root"]
"""

    def start(self) -> None:
        (self.folder / "test_config.py").write_text(self.config())
        extensions = self.folder / "jupyter-config" / "jupyter_server_config.d"
        extensions.mkdir(parents=True)
        shutil.copy(PACKAGE / "server" / "server_extension.json", extensions / "graphlab.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
        env |= {"GRAPHLAB_HUB_DEVICES": DEVICES, "GRAPHLAB_GPU_MEMORY_GB": "8"}
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(self.folder / "test_config.py")],
                cwd=self.folder,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + HUB_START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the hub exited with {self.process.returncode}:\n{self.tail()}")
            try:
                if requests.get(f"{self.url}/hub/api", timeout=5).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.5)
        pytest.fail(f"the hub did not answer within {HUB_START_S} s:\n{self.tail()}")

    def stop(self) -> None:
        """SIGTERM: JupyterHub stops every server it started and its proxy, then exits."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    running = Hub(tmp_path_factory.mktemp("hub"))
    try:
        running.start()
        yield running
    finally:
        running.stop()


class Learner:
    """One learner's browser session and API token."""

    def __init__(self, hub: Hub, name: str):
        self.hub, self.name = hub, name
        self.web = requests.Session()
        self.token = ""

    def log_in(self) -> None:
        self.web.get(f"{self.hub.url}/hub/login", timeout=REQUEST_S).raise_for_status()
        form = {"username": self.name, "password": PASSWORD, "_xsrf": self.web.cookies["_xsrf"]}
        answer = self.web.post(
            f"{self.hub.url}/hub/login", data=form, allow_redirects=False, timeout=REQUEST_S
        )
        assert answer.status_code == 302, answer.text[:500]
        # An API token of their own, asked for with their login (as the hub's token page does).
        answer = self.web.post(
            f"{self.hub.url}/hub/api/users/{self.name}/tokens",
            json={"note": "workshop test", "expires_in": 3600},
            headers={"X-XSRFToken": self.web.cookies["_xsrf"]},
            timeout=REQUEST_S,
        )
        assert answer.status_code == 201, answer.text[:500]
        self.token = answer.json()["token"]

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {"Authorization": f"token {self.token}"}
        return requests.request(
            method, f"{self.hub.url}{path}", headers=headers, timeout=REQUEST_S, **kwargs
        )

    def start_server(self) -> None:
        answer = self.api("POST", f"/hub/api/users/{self.name}/server")
        assert answer.status_code in (201, 202), answer.text[:500]
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            server = self.api("GET", f"/hub/api/users/{self.name}").json()["servers"].get("", {})
            if server.get("ready"):
                return
            time.sleep(1)
        pytest.fail(f"{self.name}'s server was not ready in {SERVER_START_S} s:\n{self.hub.tail()}")

    def server(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.api(method, f"/user/{self.name}/{path}", **kwargs)

    def run_notebook(self, path: str, extra: str | None = None) -> list[str]:
        """Run every code cell of ``path`` (then ``extra``) in a fresh kernel of its own; the
        output each cell printed."""
        notebook = self.server("GET", f"api/contents/{path}?content=1").json()["content"]
        codes = [
            "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for cell in notebook["cells"]
            if cell["cell_type"] == "code"
        ]
        codes += [extra] if extra else []
        session = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
        answer = self.server("POST", "api/sessions", json=session)
        assert answer.status_code == 201, answer.text[:500]
        session_id, kernel_id = answer.json()["id"], answer.json()["kernel"]["id"]
        try:
            return asyncio.run(self._execute(kernel_id, codes, path))
        finally:
            self.server("DELETE", f"api/sessions/{session_id}")

    async def _execute(self, kernel_id: str, codes: list[str], path: str) -> list[str]:
        ws = self.hub.url.replace("http", "ws", 1)
        request = HTTPRequest(
            f"{ws}/user/{self.name}/api/kernels/{kernel_id}/channels",
            headers={"Authorization": f"token {self.token}"},
            connect_timeout=REQUEST_S,
            request_timeout=REQUEST_S,
        )
        connection = await websocket_connect(request)
        session, printed = uuid.uuid4().hex, []
        try:
            for index, code in enumerate(codes):
                printed.append(await self._cell(connection, session, code, f"{path} cell {index}"))
        finally:
            connection.close()
        return printed

    async def _cell(self, connection, session: str, code: str, where: str) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "username": self.name,
            "session": session,
            "date": datetime.now(timezone.utc).isoformat(),
            "version": "5.3",
        }
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
        content |= {"user_expressions": {}, "stop_on_error": True}
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        await connection.write_message(json.dumps(message | {"channel": "shell", "buffers": []}))
        printed, reply, idle = [], None, False
        while reply is None or not idle:
            raw = await asyncio.wait_for(connection.read_message(), CELL_S)
            assert raw is not None, f"{self.name}: the kernel connection closed during {where}"
            if isinstance(raw, bytes):
                continue  # a message with binary buffers: a widget's data, not the cell's state
            got = json.loads(raw)
            if got.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = got["msg_type"]
            if kind == "status" and got["content"]["execution_state"] == "idle":
                idle = True
            elif kind == "stream":
                printed.append(got["content"]["text"])
            elif kind == "execute_reply":
                reply = got["content"]
        assert reply["status"] == "ok", (
            f"{self.name}: {where} failed: {reply.get('ename')}: {reply.get('evalue')}\n"
            + "\n".join(reply.get("traceback", []))[-3000:]
        )
        return "".join(printed)


def _take_the_course(hub: Hub, name: str) -> dict:
    learner = Learner(hub, name)
    learner.log_in()
    learner.start_server()
    listing = learner.server("GET", "api/contents").json()["content"]
    files = sorted(item["name"] for item in listing)
    learner.run_notebook(LESSONS[0])
    printed = learner.run_notebook(LESSONS[1], PROBE)
    return {"learner": learner, "files": files, "probe": json.loads(printed[-1])}


def test_three_learners_take_the_course_at_once_apart(hub):
    with ThreadPoolExecutor(len(LEARNERS)) as pool:
        results = pool.map(lambda name: _take_the_course(hub, name), LEARNERS)
        done = dict(zip(LEARNERS, results, strict=True))
    lessons = sorted(p.name for p in shipped_folder().glob("[0-9][0-9]_*.ipynb"))
    devices = []
    for name, result in done.items():
        home = hub.homes / name
        workspace = home / "graphlab-course"
        probe = result["probe"]
        # Their own copy of every lesson, served as the root of their server.
        assert result["files"] == lessons
        assert (workspace / ".graphlab" / "workspace.json").is_file()
        assert (probe["home"], probe["cwd"]) == (str(home), str(workspace))
        # Their own progress store, in their own Jupyter data folder, with their result only.
        store = home / ".local" / "share" / "jupyter" / "graphlab" / "progress.json"
        assert probe["store"] == str(store)
        # The checkers of lessons 00 and 02 recorded their exercises there, passed (the
        # solutions ran); and the result this learner's kernel recorded is theirs alone.
        on_disk = json.loads(store.read_text())["lessons"]
        assert on_disk == probe["results"]
        assert sorted(on_disk) == ["00_start_here", "02_static_inputs", "99_whoami"]
        for lesson in map(read_lesson, (workspace / LESSONS[0], workspace / LESSONS[1])):
            assert sorted(on_disk[lesson.id]) == sorted(lesson.exercises)
            assert all(entry["passed"] for entry in on_disk[lesson.id].values())
        assert list(on_disk["99_whoami"]) == [name]
        assert probe["cap"] == "8"
        devices.append(probe["device"])
    # The two devices dealt round-robin: three learners, one device holds two.
    assert sorted(devices) == ["0", "0", "1"]

    ada, grace = done["ada"]["learner"], done["grace"]["learner"]
    # The course sidebar's API, served by each learner's server, counts that learner's results.
    expected = sum(len(read_lesson(shipped_folder() / lesson).exercises) for lesson in LESSONS)
    for name, result in done.items():
        answer = result["learner"].server("GET", "graphlab/lessons")
        assert answer.status_code == 200, answer.text[:500]
        sidebar = answer.json()
        assert sidebar["done"] == expected, name
        assert [row["file"] for row in sidebar["lessons"]] == lessons
    assert ada.api("GET", "/user/grace/graphlab/lessons").status_code == 403
    # One learner's token opens nothing of another's: not their server, files, kernels or account.
    assert grace.server("GET", "api/contents").status_code == 200
    for path in ("api/contents", "api/kernels", f"api/contents/{LESSONS[0]}"):
        answer = ada.api("GET", f"/user/grace/{path}", allow_redirects=False)
        assert answer.status_code == 403, (path, answer.status_code)
    # The hub answers as if another learner did not exist.
    assert ada.api("GET", "/hub/api/users/grace").status_code == 404
    assert ada.api("POST", "/hub/api/users/grace/server").status_code == 404
    # A file one learner saves is in their workspace only.
    note = {"type": "file", "format": "text", "content": "ada's notes"}
    assert ada.server("PUT", "api/contents/notes.txt", json=note).status_code == 201
    assert (hub.homes / "ada" / "graphlab-course" / "notes.txt").read_text() == "ada's notes"
    assert grace.server("GET", "api/contents/notes.txt").status_code == 404
