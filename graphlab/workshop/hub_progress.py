"""Every learner's progress, read through JupyterHub: a table of learners by lessons.

JupyterHub's REST API lists the learners (who is admin, when each was last active, whether their
server runs); each running server answers ``GET /user/NAME/graphlab/lessons``, the same progress
the course sidebar shows (:mod:`graphlab.server`), asked with the caller's token. That token needs
JupyterHub's ``list:users``, ``read:users``, ``read:servers`` and ``access:servers`` scopes: an
admin's token, or the instructor view's service token (``deploy/jupyterhub_config.py``).

Each cell of the table is one lesson of one learner, at the latest check of each exercise:
``passed`` (every exercise passed), ``failed`` (an exercise failed), ``started`` (some passed,
none failed) or ``not attempted``. A learner whose server is not running has no cells: their
results are in their home, which nobody else reads.
"""

from __future__ import annotations

import json
import os
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote
from urllib.request import Request, urlopen

from graphlab.course.syllabus import Lesson
from graphlab.diagnose.words import Text, shown
from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _

__all__ = [
    "STATES",
    "HubProgressError",
    "LearnerProgress",
    "fetch",
    "lesson_state",
    "print_hub_table",
    "table_lines",
    "when",
]

#: A lesson's states, and the mark the terminal table shows for each.
STATES = {
    "passed": N_("passed"),
    "failed": N_("FAILED"),
    "started": N_("started"),
    "not attempted": "-",
}
TIMEOUT_S = 10
_WHEN_WIDTH = len("2026-12-03 22:40:01 UTC")


class HubProgressError(GraphlabError):
    """The hub cannot be asked: not reachable, or the token may not list the learners."""


@dataclass
class LearnerProgress:
    """One learner's row: their name, last activity on the hub, where their server stands
    (``running``, ``not started``, or why it could not be read), and each lesson's state by
    lesson id (empty unless the server answered)."""

    name: str
    last_activity: str | None
    server: str
    lessons: dict[str, str] = field(default_factory=dict)


def lesson_state(row: dict[str, Any]) -> str:
    """The state of one lesson row of ``GET /graphlab/lessons`` (see the module docstring)."""
    if row["failed"]:
        return "failed"
    if row["passed"]:
        return "passed" if len(row["passed"]) == len(row["exercises"]) else "started"
    return "not attempted"


def _get(url: str, token: str) -> object:
    request = Request(url, headers={"Authorization": f"token {token}"})
    with urlopen(request, timeout=TIMEOUT_S) as answer:
        reply: object = json.loads(answer.read())
        return reply


def _lesson_states(reply: object) -> dict[str, str]:
    """Each lesson's state in a server's ``GET /graphlab/lessons`` reply; ValueError when the
    reply is not one (a server without graphlab's extension, another version of it)."""
    rows = reply.get("lessons") if isinstance(reply, dict) else None
    try:
        if isinstance(rows, list):
            return {row["id"]: lesson_state(row) for row in rows}
    except (KeyError, TypeError):
        pass
    raise ValueError("its reply is not graphlab's list of lessons")


def _learner(hub_url: str, token: str, user: dict[str, Any]) -> LearnerProgress:
    server = (user.get("servers") or {}).get("", {})
    learner = LearnerProgress(user["name"], user.get("last_activity"), Text(N_("not started")))
    if not server.get("ready"):
        return learner
    try:
        lessons = _lesson_states(
            _get(f"{hub_url}/user/{quote(user['name'])}/graphlab/lessons", token)
        )
    except HTTPError as exc:
        learner.server = Text(N_("running, progress unreadable (HTTP {code})"), code=exc.code)
    except (URLError, OSError, ValueError) as exc:
        learner.server = Text(N_("running, progress unreadable ({reason})"), reason=str(exc))
    else:
        learner.server = Text(N_("running"))
        learner.lessons = lessons
    return learner


def fetch(hub_url: str, token: str) -> list[LearnerProgress]:
    """Every learner (the hub's users that are not admins) with their progress, by name; their
    servers are asked at once, each with a time limit."""
    hub_url = hub_url.rstrip("/")
    try:
        users = _get(f"{hub_url}/hub/api/users", token)
    except HTTPError as exc:
        raise HubProgressError(
            _(
                "{hub} refused to list its users (HTTP {code}): use an admin's API token "
                "(the hub's Token page, /hub/token)"
            ).format(hub=hub_url, code=exc.code)
        ) from exc
    except (URLError, OSError, ValueError) as exc:
        raise HubProgressError(
            _("cannot reach the hub at {hub}: {reason}").format(hub=hub_url, reason=exc)
        ) from exc
    if not isinstance(users, list) or not all(
        isinstance(user, dict) and isinstance(user.get("name"), str) for user in users
    ):
        raise HubProgressError(
            _(
                "{hub}/hub/api/users did not answer with JupyterHub's list of users: give the "
                "hub's own address"
            ).format(hub=hub_url)
        )
    learners = sorted((u for u in users if not u.get("admin")), key=lambda u: u["name"])
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda user: _learner(hub_url, token, user), learners))


def when(timestamp: str | None) -> str:
    """The hub's ISO timestamp (``2026-12-03T22:40:01.123456Z``) to the second, or ``never``."""
    return _("never") if not timestamp else timestamp[:19].replace("T", " ") + " UTC"


def table_lines(learners: list[LearnerProgress], course: list[Lesson]) -> list[str]:
    """The table as text: a row per learner, a column per lesson (by number), then the last
    activity and the server."""
    learner_head = _("learner")
    width = max([_width(learner_head), *(_width(learner.name) for learner in learners)])
    states = {state: _(mark) for state, mark in STATES.items()}
    cell = max(_width(mark) for mark in states.values())
    head = [_pad(learner_head, width), *(_pad(lesson.number, cell) for lesson in course)]
    when_width = max(_WHEN_WIDTH, _width(when(None)))
    lines = ["  ".join([*head, _pad(_("last activity"), when_width), _("server")])]
    for learner in learners:
        marks = [states.get(learner.lessons.get(lesson.id, ""), "") for lesson in course]
        row = [_pad(learner.name, width), *(_pad(mark, cell) for mark in marks)]
        row.append(_pad(when(learner.last_activity), when_width))
        lines.append("  ".join([*row, shown(learner.server)]))
    return lines


def _width(text: str) -> int:
    """Terminal columns ``text`` takes: a wide (Chinese) character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal columns."""
    return text + " " * max(0, width - _width(text))


def print_hub_table(hub_url: str, token: str | None, course: list[Lesson], as_json: bool) -> int:
    """``graphlab progress --hub``: print the table (or its rows as JSON) and return 0."""
    token = token or os.environ.get("JUPYTERHUB_API_TOKEN")
    if not token:
        raise HubProgressError(
            _(
                "--hub needs an admin's API token: pass --token TOKEN or set "
                "JUPYTERHUB_API_TOKEN (make one on the hub's Token page, /hub/token)"
            )
        )
    learners = fetch(hub_url, token)
    if as_json:
        print(json.dumps([vars(learner) for learner in learners], indent=1))
    else:
        print("\n".join(table_lines(learners, course)))
    return 0
