"""The instructor's view: a JupyterHub service showing every learner's progress, lesson by lesson.

Started by the hub itself (``deploy/jupyterhub_config.py`` names it ``progress``), it serves one
page at ``/services/progress/``: a table of learners by lessons (passed, failed, started, not
attempted), each learner's last activity and whether their server runs, read afresh from the
hub and the learners' servers (:mod:`graphlab.workshop.hub_progress`) with the service's own
token each time the page loads; the page reloads itself every :data:`REFRESH_S` seconds while the
workshop runs.

Who may open it is JupyterHub's decision (its OAuth): a user needs the ``access:services`` scope
for this service, which the admin role has and learners do not.
"""

from __future__ import annotations

import asyncio
import html
import os
import secrets
from datetime import UTC, datetime

from tornado.ioloop import IOLoop
from tornado.web import Application, RequestHandler, authenticated

from graphlab.course.syllabus import Lesson, lessons
from graphlab.diagnose.words import shown
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.workshop.hub_progress import HubProgressError, LearnerProgress, fetch, when

__all__ = ["REFRESH_S", "main", "page"]

REFRESH_S = 30

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: center; white-space: nowrap; }
td.name { text-align: left; font-weight: bold; }
.passed { background: #c8e6c9; } .failed { background: #ffcdd2; }
.started { background: #fff9c4; } .not-attempted { color: #999; }
"""


#: What a lesson's state reads as in the page (its class stays the English state).
_STATE_WORDS = {
    "passed": N_("passed"),
    "failed": N_("failed"),
    "started": N_("started"),
    "not attempted": N_("not attempted"),
}


def _cell(state: str | None) -> str:
    if state is None:
        return "<td></td>"
    word = _(_STATE_WORDS.get(state, state))
    return f'<td class="{state.replace(" ", "-")}">{html.escape(word)}</td>'


def page(learners: list[LearnerProgress], course: list[Lesson], now: datetime) -> str:
    """The view's HTML for ``learners`` over the lessons of ``course``, read at ``now``."""
    heads = "".join(
        f'<th title="{html.escape(lesson.title)}">{lesson.number}</th>' for lesson in course
    )
    rows = []
    for learner in learners:
        cells = "".join(_cell(learner.lessons.get(lesson.id)) for lesson in course)
        rows.append(
            f'<tr><td class="name">{html.escape(learner.name)}</td>{cells}'
            f"<td>{html.escape(when(learner.last_activity))}</td>"
            f"<td>{html.escape(shown(learner.server))}</td></tr>"
        )
    running = sum(learner.server.startswith("running") for learner in learners)
    title = html.escape(_("Workshop progress"), quote=False)
    summary = html.escape(
        _(
            "{learners} learners, {running} servers running. Read at {time} UTC; this page\n"
            "reloads every {refresh} s. A lesson is passed when every exercise's latest check "
            "passed."
        ).format(learners=len(learners), running=running, time=f"{now:%H:%M:%S}", refresh=REFRESH_S)
    )
    learner_head, activity, server = (
        html.escape(_(head), quote=False) for head in ("learner", "last activity", "server")
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="{REFRESH_S}">
<title>{title}</title><style>{_STYLE}</style></head>
<body><h1>{title}</h1>
<p>{summary}</p>
<table><thead><tr><th>{learner_head}</th>{heads}<th>{activity}</th><th>{server}</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></body></html>
"""


def _handlers(prefix: str) -> list[tuple[str, type[RequestHandler]]]:
    from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated

    class ProgressPage(HubOAuthenticated, RequestHandler):  # type: ignore[misc]  # jupyterhub: no types
        @authenticated
        async def get(self) -> None:
            hub = os.environ["GRAPHLAB_HUB_URL"]
            token = os.environ["JUPYTERHUB_API_TOKEN"]
            try:
                learners = await asyncio.to_thread(fetch, hub, token)
            except HubProgressError as exc:
                self.set_status(502)
                self.finish(f"<p>{html.escape(str(exc))}</p>")
                return
            self.finish(page(learners, lessons(), datetime.now(UTC)))

    return [(prefix, ProgressPage), (prefix + "oauth_callback", HubOAuthCallbackHandler)]


def main() -> None:
    """Serve the view where JupyterHub says (``JUPYTERHUB_SERVICE_URL`` and ``_PREFIX``)."""
    from urllib.parse import urlsplit

    prefix = os.environ["JUPYTERHUB_SERVICE_PREFIX"]
    address = urlsplit(os.environ["JUPYTERHUB_SERVICE_URL"])
    app = Application(_handlers(prefix), cookie_secret=secrets.token_bytes(32))
    app.listen(address.port or (443 if address.scheme == "https" else 80), address.hostname)
    IOLoop.current().start()


if __name__ == "__main__":
    main()
