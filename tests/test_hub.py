"""A real JupyterHub with deploy/jupyterhub_config.py as shipped: closed to strangers, three
learners at once, each with their own account, workspace, progress, device and cap, and the
instructor's view of them all.

Only what a workshop's organiser sets differs from the shipped configuration: the roster (made
here), the ports and the two made-up devices to deal, given through the environment the
configuration documents. The learners are real accounts of this machine, made with ``useradd``
and a password each, and log in through JupyterHub's PAM login as they would at a workshop; their
servers run as themselves (JupyterHub's local process spawner). A stranger with an account, a
wrong password and a learner reading another's files are refused. Each learner takes an API
token with their own login, starts their server through the hub's REST API and runs cells
through the single-user server's sessions and kernel API, as JupyterLab would: ada passes
lessons 00 and 02, grace fails lesson 02's check, linus starts nothing. The instructor then sees
exactly that in the hub's progress service, in a browser (a screenshot is saved under
``test-output/hub/``) and in ``graphlab progress --hub``.

Needs root (to make accounts; CI runs as root), ``pip install jupyterhub``,
``npm install -g configurable-http-proxy``, and for the screenshot /usr/bin/chromium with python
playwright; marked ``hub``. Every wait has a time limit; the hub and every server it started are
stopped at the end, and the accounts removed with their homes.
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
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.hub

pytest.importorskip("jupyterhub", reason="needs jupyterhub (pip install jupyterhub)")
if os.geteuid() != 0 or shutil.which("useradd") is None:
    pytest.skip("needs root and useradd, to make the learners' accounts", allow_module_level=True)
if shutil.which("configurable-http-proxy") is None:
    pytest.skip(
        "needs configurable-http-proxy (npm install -g configurable-http-proxy)",
        allow_module_level=True,
    )

import requests  # noqa: E402  (jupyterhub brings it)
from browser.chromium import new_page  # noqa: E402
from tornado.httpclient import HTTPRequest  # noqa: E402
from tornado.websocket import websocket_connect  # noqa: E402

from graphlab.course.syllabus import lessons, read_lesson, shipped_folder  # noqa: E402
from graphlab.workshop.readiness import closed_to_others, environment_paths  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
SCREENSHOT = ROOT / "test-output" / "hub" / "instructor_view.png"
# Each run's accounts get a prefix of their own, so that a run never meets a previous one's.
PREFIX = "gl" + uuid.uuid4().hex[:4]
ADA, GRACE, LINUS = (PREFIX + name for name in ("ada", "grace", "linus"))
TEACHER, STRANGER = PREFIX + "teach", PREFIX + "eve"
LEARNERS = [ADA, GRACE, LINUS]
LESSONS = ["00_start_here.ipynb", "02_static_inputs.ipynb"]
PASSWORD = {name: f"pw-{name}-{uuid.uuid4().hex[:8]}" for name in [*LEARNERS, TEACHER, STRANGER]}
DEVICES = "0,1"  # dealt round-robin; no GPU is touched (this torch may be a CPU build)
HUB_START_S = 90
SERVER_START_S = 180
CELL_S = 300
REQUEST_S = 30

# The learner's right answer to lesson 02 runs as the lesson's own solution cells do.
SOLUTIONS_ON = "import os\nos.environ['GRAPHLAB_RUN_SOLUTIONS'] = '1'"
# A wrong answer to lesson 02's exercise: rebinding the name instead of copying into the input.
WRONG_02 = """
from graphlab.checks import check_replay_with_new_inputs
from graphlab.errors import CheckFailed
def step(graph, static_x, static_y, batch):
    static_x = batch
    graph.replay()
    return static_y
try:
    check_replay_with_new_inputs(step)
except CheckFailed as failed:
    print(failed)
"""
# Run in a learner's kernel: where it lives and what it was given.
PROBE = """
import json, os
from graphlab.course import progress
print(json.dumps({"home": os.environ["HOME"], "cwd": os.getcwd(),
    "store": str(progress.store_path()), "user": os.environ["USER"],
    "device": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "cap": os.environ.get("GRAPHLAB_GPU_MEMORY_GB")}))
"""
# Run in a learner's kernel: what of another learner's home it can see.
PEEK = """
import json, os
seen = {}
for path in ("{home}", "{home}/graphlab-course/00_start_here.ipynb",
             "{home}/.local/share/jupyter/graphlab/progress.json"):
    try:
        seen[path] = os.listdir(path) if os.path.isdir(path) else open(path).read()[:10]
    except OSError as exc:
        seen[path] = type(exc).__name__
print(json.dumps(seen))
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(*command: str, stdin: str | None = None) -> None:
    subprocess.run(command, input=stdin, text=True, check=True, capture_output=True, timeout=60)


class Accounts:
    """The machine's accounts for the run, with their passwords; removed with their homes."""

    def __init__(self, names: list[str]):
        self.names = names
        self.opened: list[tuple[Path, int]] = []

    def make(self) -> None:
        for name in self.names:
            _run("useradd", "--create-home", "--shell", "/bin/bash", name)
        _run("chpasswd", stdin="".join(f"{n}:{PASSWORD[n]}\n" for n in self.names))
        # The learners' servers run as themselves: the Python environment must be theirs to
        # read (graphlab doctor --workshop checks the same). Where it is not (a Python under
        # /root), open the way through for this run only: enter, not list.
        for folder, mode in closed_to_others(environment_paths()):
            self.opened.append((folder, mode))
            folder.chmod(mode | 0o001)

    def remove(self) -> None:
        for folder, mode in self.opened:
            folder.chmod(mode)
        for name in self.names:
            subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True, timeout=30)
            subprocess.run(["userdel", "--remove", name], capture_output=True, timeout=60)


class Hub:
    def __init__(self, folder: Path):
        self.folder = folder
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "hub.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        roster = self.folder / "roster.txt"
        roster.write_text(f"{TEACHER} admin\n" + "".join(f"{name}\n" for name in LEARNERS))
        # The shipped configuration; only the ports of the hub's API and the proxy's API differ.
        (self.folder / "workshop_config.py").write_text(
            f"c = get_config()\n"
            f"load_subconfig({str(DEPLOY / 'jupyterhub_config.py')!r})\n"
            f"c.JupyterHub.hub_port = {_free_port()}\n"
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{_free_port()}'\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
        env |= {
            "GRAPHLAB_HUB_ROSTER": str(roster),
            "GRAPHLAB_HUB_URL": self.url,
            "GRAPHLAB_HUB_VIEW_PORT": str(_free_port()),
            "GRAPHLAB_HUB_DEVICES": DEVICES,
            "GRAPHLAB_GPU_MEMORY_GB": "8",
        }
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", "workshop_config.py"],
                cwd=self.folder,  # the hub's database, cookie secret and proxy pid file
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
        """SIGTERM: JupyterHub stops every server it started, its services and its proxy."""
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
    accounts = Accounts([*LEARNERS, TEACHER, STRANGER])
    running = Hub(tmp_path_factory.mktemp("hub"))
    try:
        accounts.make()
        running.start()
        yield running
    finally:
        running.stop()
        accounts.remove()


class Learner:
    """One person's browser session and API token."""

    def __init__(self, hub: Hub, name: str):
        self.hub, self.name = hub, name
        self.web = requests.Session()
        self.token = ""

    def try_log_in(self, password: str) -> requests.Response:
        """The login form, as a browser posts it; a 302 is a login, a 403 a refusal."""
        self.web.get(f"{self.hub.url}/hub/login", timeout=REQUEST_S).raise_for_status()
        form = {"username": self.name, "password": password, "_xsrf": self.web.cookies["_xsrf"]}
        return self.web.post(
            f"{self.hub.url}/hub/login", data=form, allow_redirects=False, timeout=REQUEST_S
        )

    def log_in(self) -> None:
        answer = self.try_log_in(PASSWORD[self.name])
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

    def run(self, path: str, codes: list[str]) -> list[str]:
        """Run ``codes`` in a fresh kernel of notebook ``path``; the output each printed."""
        session = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
        answer = self.server("POST", "api/sessions", json=session)
        assert answer.status_code == 201, answer.text[:500]
        session_id, kernel_id = answer.json()["id"], answer.json()["kernel"]["id"]
        try:
            return asyncio.run(self._execute(kernel_id, codes, path))
        finally:
            self.server("DELETE", f"api/sessions/{session_id}")

    def cells(self, path: str) -> list[str]:
        """The code cells of the notebook ``path`` in this learner's workspace."""
        notebook = self.server("GET", f"api/contents/{path}?content=1").json()["content"]
        return [
            "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for cell in notebook["cells"]
            if cell["cell_type"] == "code"
        ]

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
            "date": datetime.now(UTC).isoformat(),
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


def _home(name: str) -> Path:
    return Path(f"/home/{name}")


def _attend(hub: Hub, name: str) -> dict:
    """What each learner does: ada passes lessons 00 and 02, grace fails lesson 02's check and
    looks into ada's home, linus starts his server and nothing else."""
    learner = Learner(hub, name)
    learner.log_in()
    learner.start_server()
    listing = learner.server("GET", "api/contents").json()["content"]
    result = {"learner": learner, "files": sorted(item["name"] for item in listing)}
    if name == ADA:
        for lesson in LESSONS:
            learner.run(lesson, [SOLUTIONS_ON, *learner.cells(lesson)])
    if name == GRACE:
        printed = learner.run(LESSONS[1], [WRONG_02, PEEK.replace("{home}", str(_home(ADA)))])
        result["peek"] = json.loads(printed[-1])
    result["probe"] = json.loads(learner.run("probe.ipynb", [PROBE])[-1])
    return result


def test_strangers_and_wrong_passwords_are_refused(hub):
    # An account of this machine, with its right password, that is not on the roster.
    assert Learner(hub, STRANGER).try_log_in(PASSWORD[STRANGER]).status_code == 403
    # A learner's name with a wrong password, and a name this machine has no account for.
    assert Learner(hub, ADA).try_log_in("not-" + PASSWORD[ADA]).status_code == 403
    assert Learner(hub, PREFIX + "nobody").try_log_in(PASSWORD[ADA]).status_code == 403
    assert "not allowed" in hub.log.read_text()  # JupyterHub's own reason: the allow list


def test_three_learners_apart_and_the_instructor_sees_them(hub):
    with ThreadPoolExecutor(len(LEARNERS)) as pool:
        done = dict(zip(LEARNERS, pool.map(lambda n: _attend(hub, n), LEARNERS), strict=True))
    course = lessons()
    shipped = sorted(p.name for p in shipped_folder().glob("[0-9][0-9]_*.ipynb"))
    devices = []
    for name, result in done.items():
        home = _home(name)
        workspace = home / "graphlab-course"
        # Their own copy of every lesson, served as the root of their server, in a home only
        # they can enter.
        assert result["files"] == shipped
        assert home.stat().st_mode & 0o777 == 0o700
        assert (workspace / ".graphlab" / "workspace.json").stat().st_uid == home.stat().st_uid
        probe = result["probe"]
        assert (probe["home"], probe["cwd"], probe["user"]) == (str(home), str(workspace), name)
        store = home / ".local" / "share" / "jupyter" / "graphlab" / "progress.json"
        assert probe["store"] == str(store)
        assert probe["cap"] == "8"
        devices.append(probe["device"])
    assert sorted(devices) == ["0", "0", "1"]  # two devices dealt round-robin to three

    # What the checkers stored, each in the learner's own home.
    ada_store = json.loads((_home(ADA) / ".local/share/jupyter/graphlab/progress.json").read_text())
    for lesson in map(read_lesson, (shipped_folder() / name for name in LESSONS)):
        assert sorted(ada_store["lessons"][lesson.id]) == sorted(lesson.exercises)
        assert all(entry["passed"] for entry in ada_store["lessons"][lesson.id].values())
    grace_path = _home(GRACE) / ".local/share/jupyter/graphlab/progress.json"
    grace_store = json.loads(grace_path.read_text())["lessons"]
    assert {lesson: sorted(r) for lesson, r in grace_store.items()} == {
        "02_static_inputs": ["check_replay_with_new_inputs"]
    }
    assert grace_store["02_static_inputs"]["check_replay_with_new_inputs"]["passed"] is False
    assert not (_home(LINUS) / ".local/share/jupyter/graphlab/progress.json").exists()

    # grace's kernel, running as grace, cannot enter ada's home.
    assert set(done[GRACE]["peek"].values()) == {"PermissionError"}
    # One learner's token opens nothing of another's: not their server, files, kernels or account.
    ada, grace = done[ADA]["learner"], done[GRACE]["learner"]
    assert grace.server("GET", "api/contents").status_code == 200
    for path in ("api/contents", "api/kernels", f"api/contents/{LESSONS[0]}", "graphlab/lessons"):
        answer = ada.api("GET", f"/user/{GRACE}/{path}", allow_redirects=False)
        assert answer.status_code == 403, (path, answer.status_code)
    assert ada.api("GET", f"/hub/api/users/{GRACE}").status_code == 404
    assert ada.api("POST", f"/hub/api/users/{GRACE}/server").status_code == 404

    # The instructor's view: each learner's lessons as their checks left them.
    expected = {
        ADA: {lesson.id: "not attempted" for lesson in course}
        | {"00_start_here": "passed", "02_static_inputs": "passed"},
        GRACE: {lesson.id: "not attempted" for lesson in course} | {"02_static_inputs": "failed"},
        LINUS: {lesson.id: "not attempted" for lesson in course},
    }
    teacher = Learner(hub, TEACHER)
    teacher.log_in()
    page = teacher.web.get(f"{hub.url}/services/progress/", timeout=REQUEST_S)
    assert page.status_code == 200, page.text[:500]
    assert _page_rows(page.text, course) == {
        name: [expected[name][lesson.id] for lesson in course] + ["running"] for name in LEARNERS
    }
    # A learner may not open it.
    assert ada.web.get(f"{hub.url}/services/progress/", timeout=REQUEST_S).status_code == 403
    # The same table in a terminal, with the instructor's token.
    env = {**os.environ, "JUPYTERHUB_API_TOKEN": teacher.token}
    command = [sys.executable, "-m", "graphlab", "progress", "--hub", hub.url, "--json"]
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [row["name"] for row in rows] == sorted(LEARNERS)
    for row in rows:
        assert (row["lessons"], row["server"]) == (expected[row["name"]], "running")
        assert row["last_activity"]
    _screenshot(hub, course)


def _page_rows(text: str, course) -> dict[str, list[str]]:
    """The view's table as {learner: [each lesson's state, ..., server]} (last activity left
    out: a time), read with the standard library's HTML parser."""
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag == "td":
                self.cell = ""

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

        def handle_endtag(self, tag):
            if tag == "td":
                self.rows[-1].append(self.cell)
                self.cell = None

    parser = Cells()
    parser.feed(text)
    body = [row for row in parser.rows if row]
    assert all(len(row) == len(course) + 3 for row in body), body
    return {row[0]: [*row[1 : len(course) + 1], row[-1]] for row in body}


def _screenshot(hub: Hub, course) -> None:
    """The instructor's view in chromium, after logging in through the hub's form."""
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    with new_page(1400, 500) as page:
        page.goto(f"{hub.url}/services/progress/", timeout=REQUEST_S * 1000)
        page.fill("#username_input", TEACHER)
        page.fill("#password_input", PASSWORD[TEACHER])
        page.click("#login_submit")
        page.wait_for_selector("table", timeout=REQUEST_S * 1000)
        cells = page.locator("td.passed, td.failed").all_inner_texts()
        assert sorted(cells) == ["failed", "passed", "passed"]
        page.screenshot(path=str(SCREENSHOT), full_page=True)
    print(f"instructor's view: {SCREENSHOT}")
