"""graphlab.workshop: every learner's progress read through a hub, as the instructor's view and
``graphlab progress --hub`` show it, against a stand-in hub that answers as JupyterHub's REST API
and the learners' servers do (tests/test_hub.py does the same with a real hub)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from graphlab.cli import main
from graphlab.course import progress
from graphlab.course.syllabus import lessons
from graphlab.workshop import hub_progress
from graphlab.workshop.hub_progress import HubProgressError, LearnerProgress, fetch, table_lines
from graphlab.workshop.instructor_view import page

TOKEN = "instructor-token"
COURSE = lessons()


def _entry(lesson: str, exercise: str, passed: bool) -> dict:
    return {"lesson": lesson, "exercise": exercise, "passed": passed, "when": "2026-12-03T10:00"}


# zoe: lesson 00 passed, one of lesson 01's two exercises passed, lesson 02's check failed.
ZOE_RESULTS = {
    "00_start_here": {"check_busy_fraction": _entry("00_start_here", "check_busy_fraction", True)},
    "01_kernel_gaps": {
        "check_capture_chain": _entry("01_kernel_gaps", "check_capture_chain", True)
    },
    "02_static_inputs": {
        "check_replay_with_new_inputs": _entry(
            "02_static_inputs", "check_replay_with_new_inputs", False
        )
    },
}
USERS = [
    {"name": "teach", "admin": True, "last_activity": None, "servers": {}},
    {"name": "zoe", "admin": False, "last_activity": "2026-12-03T10:00:00.5Z",
     "servers": {"": {"ready": True}}},
    {"name": "bob", "admin": False, "last_activity": None, "servers": {}},
    {"name": "kim", "admin": False, "last_activity": "2026-12-03T09:59:59Z",
     "servers": {"": {"ready": True}}},
]  # fmt: skip


class _StandInHub(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.headers.get("Authorization") != f"token {TOKEN}":
            self._answer(403, {"message": "Forbidden"})
        elif self.path == "/hub/api/users":
            self._answer(200, USERS)
        elif self.path == "/user/zoe/graphlab/lessons":
            self._answer(200, progress.report(COURSE, ZOE_RESULTS))
        else:  # kim's server, or anything else: broken
            self._answer(500, {"message": "broken"})

    def _answer(self, status: int, body) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # keep the test's output quiet
        pass


@pytest.fixture(scope="module")
def hub_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandInHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_each_learner_but_the_admins_with_their_lessons_states(hub_url):
    learners = fetch(hub_url + "/", TOKEN)
    assert [learner.name for learner in learners] == ["bob", "kim", "zoe"]
    bob, kim, zoe = learners
    assert (bob.server, bob.last_activity, bob.lessons) == ("not started", None, {})
    assert (kim.server, kim.lessons) == ("running, progress unreadable (HTTP 500)", {})
    assert zoe.server == "running"
    assert zoe.lessons == {lesson.id: "not attempted" for lesson in COURSE} | {
        "00_start_here": "passed",
        "01_kernel_gaps": "started",
        "02_static_inputs": "failed",
    }


def test_a_token_that_may_not_list_the_learners_is_one_clear_error(hub_url):
    with pytest.raises(HubProgressError) as refused:
        fetch(hub_url, "a-learner-token")
    assert str(refused.value) == (
        f"{hub_url} refused to list its users (HTTP 403): use an admin's API token (the hub's "
        "Token page, /hub/token)"
    )


def test_the_terminal_table(hub_url):
    lines = table_lines(fetch(hub_url, TOKEN), COURSE[:3])
    # learner column 7 wide ("learner"), lesson columns 7 ("started"), two spaces between.
    assert lines == [
        "learner  00       01       02       last activity            server",
        "bob                                 never                    not started",
        "kim                                 2026-12-03 09:59:59 UTC  running, progress "
        "unreadable (HTTP 500)",
        "zoe      passed   started  FAILED   2026-12-03 10:00:00 UTC  running",
    ]


def test_graphlab_progress_hub(hub_url, capsys, monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    assert main(["progress", "--hub", hub_url]) == 2
    assert capsys.readouterr().err == (
        "graphlab progress: --hub needs an admin's API token: pass --token TOKEN or set "
        "JUPYTERHUB_API_TOKEN (make one on the hub's Token page, /hub/token)\n"
    )
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", TOKEN)
    assert main(["progress", "--hub", hub_url, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(row["name"], row["lessons"].get("02_static_inputs")) for row in rows] == [
        ("bob", None),
        ("kim", None),
        ("zoe", "failed"),
    ]
    assert main(["progress", "--hub", "http://127.0.0.1:9", "--token", TOKEN]) == 2
    assert capsys.readouterr().err.startswith(
        "graphlab progress: cannot reach the hub at http://127.0.0.1:9: "
    )


def test_the_view_page_marks_each_cell_with_its_state():
    zoe = LearnerProgress("zoe", None, "running", {"00_start_here": "passed"})
    bob = LearnerProgress("<bob>", None, "not started")
    html = page([zoe, bob], COURSE[:2], datetime(2026, 12, 3, 10, 0, tzinfo=UTC))
    assert '<td class="passed">passed</td><td></td>' in html  # 01 missing from zoe's reply
    assert "&lt;bob&gt;" in html and "<bob>" not in html
    assert "2 learners, 1 servers running. Read at 10:00:00 UTC" in html
    assert '<meta http-equiv="refresh" content="30">' in html
    assert hub_progress.lesson_state({"exercises": [], "passed": [], "failed": []}) == (
        "not attempted"
    )


def test_graphlab_progress_hub_refuses_reset(hub_url, capsys, tmp_path, monkeypatch):
    store = tmp_path / "progress.json"
    store.write_text('{"version": 1, "results": {}}')
    monkeypatch.setenv("GRAPHLAB_PROGRESS", str(store))
    assert main(["progress", "--hub", hub_url, "--token", TOKEN, "--reset"]) == 2
    assert capsys.readouterr().err == (
        "graphlab progress: --reset forgets this account's own results and cannot reach a hub's "
        "learners: run it without --hub (each learner resets from the course sidebar)\n"
    )
    assert store.read_text() == '{"version": 1, "results": {}}'


@pytest.mark.parametrize(
    "reply", [[], {}, {"lessons": "all"}, {"lessons": [{"id": "00_start_here"}]}, "<html>"]
)
def test_a_server_whose_reply_is_not_graphlabs_lessons_is_unreadable(monkeypatch, reply):
    # Before, such a reply raised (KeyError, TypeError) out of fetch and took the table with it.
    user = {"name": "ann", "last_activity": None, "servers": {"": {"ready": True}}}
    replies = {"/hub/api/users": [user], "/user/ann/graphlab/lessons": reply}
    monkeypatch.setattr(hub_progress, "_get", lambda url, token: replies[url.removeprefix("h")])
    (ann,) = fetch("h", TOKEN)
    assert (ann.server, ann.lessons) == (
        "running, progress unreadable (its reply is not graphlab's list of lessons)",
        {},
    )


@pytest.mark.parametrize("users", [{"users": []}, ["ann"], [{"admin": False}], "<html>"])
def test_a_hub_that_does_not_list_its_users_is_one_clear_error(monkeypatch, users):
    monkeypatch.setattr(hub_progress, "_get", lambda url, token: users)
    with pytest.raises(HubProgressError) as refused:
        fetch("http://hub", TOKEN)
    assert str(refused.value) == (
        "http://hub/hub/api/users did not answer with JupyterHub's list of users: give the hub's "
        "own address"
    )


def test_the_instructors_progress_tools_do_without_torch():
    # The hub's progress page and `graphlab progress --hub` serve an instructor, often on a
    # machine of their own: importing torch would cost them 1.5 s of CPU for nothing.
    code = (
        "import sys, graphlab.workshop.instructor_view, graphlab.cli.progress\n"
        "print(sorted(m for m in ('torch', 'graphlab.diagnose.diagnosis') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
