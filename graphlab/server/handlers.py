"""The HTTP API under ``/graphlab/`` that the JupyterLab extension calls.

Every JSON handler is a jupyter_server ``APIHandler`` with ``tornado.web.authenticated``: a
request without the user's token or login cookie is refused (403), and a POST also needs the
XSRF token, exactly as for Jupyter's own API. plotly.js is served by an authenticated
``JupyterHandler`` (an APIHandler would label it JSON). Errors come back as
``{"message": one line}`` with a 4xx status; the message is the sentence the CLI would print,
with the files under the server's root named relative to it.

Routes:

- ``GET  /graphlab/lessons[?lang=zh_CN]``: the lessons with the learner's progress
  (``lessons.lessons_reply``), in the language asked for where the course folder has them, read
  on a worker thread and kept in a ``lessons.LessonCache`` until a file changes
- ``GET  /graphlab/backend``: the live backend (``backend_probe``), asked once per server
- ``POST /graphlab/progress/reset``: forget every stored check result; answers
  ``{"ok": true, "message": one line saying what was done}`` (removed; a file that was not
  progress kept under another name; or progress off: :func:`graphlab.course.progress.reset`)
- ``POST /graphlab/lessons/reset`` ``{"path": "NN_x.ipynb"}``: restore a lesson as shipped
  (:func:`graphlab.course.workspace.reset_lesson`); answers ``{"backup": path of the learner's
  copy, "warning": one line or null}``; ``backup`` is ``null`` if the lesson was missing, and
  ``warning`` says when the lesson is reset but the workspace record could not be written
- ``GET  /graphlab/trace?path=P[&x0=&x1=][&lang=zh_CN]``: gap report (in the language asked
  for) and timeline figure of a trace under the server's root (``trace_report``); its errors
  name files relative to that root, never by the server's absolute path
- ``GET  /graphlab/plotly.js``: plotly.js from the installed plotly package
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import math
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import plotly
import tornado.web
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.utils import url_path_join

from graphlab.course import progress, workspace
from graphlab.course.languages import ENGLISH
from graphlab.errors import GraphlabError

from .backend_probe import probe_backend
from .lessons import LessonCache, lessons_reply
from .paths import PathRefused, relative_to_root, resolve_in_root

if TYPE_CHECKING:
    from .trace_report import LoadedTrace

__all__ = ["PLOTLY_JS", "setup_handlers", "start_warm_up"]

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


class _Base(APIHandler):
    @property
    def root(self) -> Path:
        return Path(self.settings["graphlab_root_dir"])

    def refuse(self, status: int, message: str) -> None:
        self.set_status(status)
        self.finish(json.dumps({"message": message}))

    def refuse_error(self, exc: GraphlabError) -> None:
        """403 for a path outside the root, 400 for any other GraphlabError: its one line, with
        the files under the root named relative to it (the readers name them by full path)."""
        message = relative_to_root(self.root, str(exc))
        self.refuse(403 if isinstance(exc, PathRefused) else 400, message)

    def resolve(self, relative: str) -> Path:
        allow_hidden = getattr(self.settings.get("contents_manager"), "allow_hidden", False)
        return resolve_in_root(self.root, relative, allow_hidden=allow_hidden)


class LessonsHandler(_Base):
    @tornado.web.authenticated
    async def get(self) -> None:
        cache = self.settings.setdefault("graphlab_lessons", LessonCache())
        root = self.root
        language = self.get_argument("lang", ENGLISH)

        def answer() -> dict[str, Any]:
            return lessons_reply(root, progress.load(), cache, language)

        try:
            # Reading the progress file and the lessons (a lesson with stored outputs can weigh
            # tens of MB) runs on a worker thread: the server answers other requests meanwhile.
            reply = await asyncio.get_running_loop().run_in_executor(None, answer)
        except GraphlabError as exc:  # a damaged progress file: say which, never overwrite it
            self.refuse_error(exc)
            return
        self.finish(json.dumps(reply))


class BackendHandler(_Base):
    @tornado.web.authenticated
    async def get(self) -> None:
        # A page has loaded the course: the trace viewer's warm-up may start once it is quiet.
        self.settings["graphlab_page_loaded"].set()
        # One probe per server, shared by every request that arrives while it runs.
        if "graphlab_backend" not in self.settings:
            self.settings["graphlab_backend"] = asyncio.ensure_future(probe_backend())
        self.finish(json.dumps(await self.settings["graphlab_backend"]))


class ResetProgressHandler(_Base):
    @tornado.web.authenticated
    def post(self) -> None:
        try:
            done = progress.reset()
        except GraphlabError as exc:
            self.refuse_error(exc)
            return
        self.finish(json.dumps({"ok": True, "message": done}))


class ResetLessonHandler(_Base):
    @tornado.web.authenticated
    def post(self) -> None:
        body = self.get_json_body()
        if not isinstance(body, dict) or not isinstance(body.get("path"), str):
            self.refuse(400, 'send the lesson as JSON: {"path": "NN_topic.ipynb"}')
            return
        try:
            lesson = self.resolve(body["path"])
            done = workspace.reset_lesson(workspace.course_root(lesson), lesson)
        except GraphlabError as exc:
            self.refuse_error(exc)
            return
        # None: the lesson was missing, so there was no copy of the learner's to keep.
        shown = done.backup and done.backup.relative_to(self.root).as_posix()
        warning = done.warning and relative_to_root(self.root, done.warning)
        self.finish(json.dumps({"backup": shown, "warning": warning}))


class TraceHandler(_Base):
    @tornado.web.authenticated
    async def get(self) -> None:
        from .trace_report import TraceCache, trace_reply  # see start_warm_up

        traces = self.settings.setdefault("graphlab_traces", TraceCache())
        relative = self.get_argument("path", "")
        language = self.get_argument("lang", ENGLISH)
        try:
            path = self.resolve(relative)
            x_range = self._x_range()
            started = time.perf_counter()

            def answer() -> tuple[LoadedTrace, str]:
                loaded = traces.get(path, Path(relative).name, language)
                return loaded, trace_reply(loaded, relative, x_range, language)

            # Reading, analysing and drawing all run on a worker thread: the server goes on
            # answering other requests meanwhile (a zoom's figure alone takes a tenth of a second
            # for a million events).
            loaded, reply = await asyncio.get_running_loop().run_in_executor(None, answer)
            self.log.info(
                "graphlab: %s, %d events, answered in %.2f s",
                relative,
                loaded.events,
                time.perf_counter() - started,
            )
        except GraphlabError as exc:
            self.refuse_error(exc)
            return
        except FileNotFoundError:
            self.refuse(404, f"{relative}: no such file")
            return
        except OSError as exc:  # a file that cannot even be looked at (permissions, a loop)
            self.refuse(400, f"{relative}: cannot be read ({exc.strerror or exc})")
            return
        self.set_header("Content-Type", "application/json")
        self.finish(reply)

    def _x_range(self) -> tuple[float, float] | None:
        x0, x1 = self.get_argument("x0", None), self.get_argument("x1", None)
        if x0 is None or x1 is None:
            return None
        try:
            lo, hi = float(x0), float(x1)
        except ValueError:
            lo = hi = math.nan
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise GraphlabError(f"x0={x0!r}, x1={x1!r} is not a time range: send x0 < x1 in µs")
        return lo, hi


class PlotlyHandler(JupyterHandler):
    """A script, not JSON: a JupyterHandler (an unauthenticated request is sent to the login
    page instead of getting the file)."""

    @tornado.web.authenticated
    def get(self) -> None:
        self.set_header("Content-Type", "text/javascript; charset=utf-8")
        # The file changes only when plotly is upgraded; the version keys the browser's cache.
        self.set_header("Cache-Control", "private, max-age=86400")
        self.set_etag_header()
        self.finish(PLOTLY_JS.read_bytes())

    def compute_etag(self) -> str:
        return f'"plotly-{plotly.__version__}"'


ROUTES = (
    ("lessons", LessonsHandler),
    ("lessons/reset", ResetLessonHandler),
    ("progress/reset", ResetProgressHandler),
    ("backend", BackendHandler),
    ("trace", TraceHandler),
    ("plotly.js", PlotlyHandler),
)


def _warm_up_trace_viewer(log: logging.Logger) -> None:
    started = time.monotonic()
    importlib.import_module(f"{__package__}.trace_report").warm_up()
    log.info("graphlab: trace viewer warmed up in %.1f s", time.monotonic() - started)


def start_warm_up(log: logging.Logger) -> None:
    """Import the trace viewer's code and draw a first figure, on a background thread; say so
    in the server's ``log`` when it is done.

    The code pulls in plotly and the widgets' figure code, and plotly's first figure builds its
    validators: about half a second of CPU that the first trace opened would otherwise wait
    for. The server extension calls this once the server runs (not while it starts, where the
    thread would hold Python's lock against the rest of the start-up) and the processor has a
    core to spare (:mod:`graphlab.server.when_quiet`).
    """
    threading.Thread(target=_warm_up_trace_viewer, args=(log,), daemon=True).start()


def setup_handlers(web_app: tornado.web.Application, root_dir: str) -> None:
    """Add the routes under ``<base_url>graphlab/`` to the server's tornado application."""
    web_app.settings["graphlab_root_dir"] = str(Path(root_dir).resolve())
    # Set by the first page that asks for the backend, which the course's sidebar does on load.
    web_app.settings["graphlab_page_loaded"] = asyncio.Event()
    base = web_app.settings["base_url"]
    web_app.add_handlers(
        ".*$", [(url_path_join(base, "graphlab", route), handler) for route, handler in ROUTES]
    )
