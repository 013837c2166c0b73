"""The course API under /graphlab/, served by a real in-process Jupyter server.

Progress goes to a file of each test's own (``GRAPHLAB_PROGRESS``), never the user's; lesson
resets run on a workspace made by ``graphlab.course.workspace.ensure`` in the server's root.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import plotly
import pytest
from lesson_notebooks import ship_chinese_lessons, ship_two_lessons
from tornado.httpclient import HTTPClientError

from graphlab import Timeline
from graphlab.course import progress, workspace
from graphlab.server import backend_probe
from graphlab.server.handlers import PLOTLY_JS
from graphlab.server.paths import PathRefused, resolve_in_root

pytest_plugins = ["pytest_jupyter.jupyter_server"]

TRACES = Path(__file__).parent / "traces"


def notebook(cells: list[dict]) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def solution(exercise: str) -> dict:
    return {
        "cell_type": "code",
        "metadata": {
            "graphlab": {"role": "solution", "exercise": exercise},
            "jupyter": {"source_hidden": True},
            "tags": ["solution"],
        },
        "source": f"%%solution {exercise}\nanswer = 1",
        "outputs": [],
        "execution_count": None,
    }


@pytest.fixture
def course(jp_root_dir: Path) -> Path:
    """A course folder: two lessons (the second with two exercises), a scratch notebook and
    a trace in a subfolder."""
    (jp_root_dir / "00_start_here.ipynb").write_text(
        notebook([markdown("# Lesson 00 — Start here\n\nWelcome.")])
    )
    (jp_root_dir / "02_static_inputs.ipynb").write_text(
        notebook(
            [
                markdown("# Lesson 02 — Static inputs"),
                solution("copy_in"),
                solution("rebind"),
                solution("copy_in"),  # a second cell of the same exercise counts once
            ]
        )
    )
    (jp_root_dir / "scratch.ipynb").write_text(notebook([]))
    (jp_root_dir / "traces").mkdir()
    shutil.copy(TRACES / "graph_replay.json", jp_root_dir / "traces" / "graph_replay.json")
    return jp_root_dir


@pytest.fixture
def store(monkeypatch, tmp_path):
    """The progress store, on a file of this test's own."""
    monkeypatch.setenv(progress.ENV, str(tmp_path / "progress.json"))
    return progress


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"graphlab.server": True}}}


async def get_json(jp_fetch, *parts, **params):
    response = await jp_fetch("graphlab", *parts, params=params)
    return json.loads(response.body)


async def refusal(call) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as info:
        await call
    return info.value.code, json.loads(info.value.response.body)["message"]


async def test_lessons_with_progress(jp_fetch, course, store):
    store.record("02_static_inputs", "rebind", True)
    store.record("02_static_inputs", "copy_in", False)
    store.record("99_removed", "old", True)  # a lesson no longer in the folder counts nothing
    reply = await get_json(jp_fetch, "lessons")
    assert reply == {
        "folder": "",
        "lessons": [
            {
                "file": "00_start_here.ipynb",
                "path": "00_start_here.ipynb",
                "id": "00_start_here",
                "number": "00",
                "title": "Start here",
                "exercises": [],
                "passed": [],
                "revealed": [],
                "failed": [],
            },
            {
                "file": "02_static_inputs.ipynb",
                "path": "02_static_inputs.ipynb",
                "id": "02_static_inputs",
                "number": "02",
                "title": "Static inputs",
                "exercises": ["copy_in", "rebind"],
                "passed": ["rebind"],
                "revealed": [],
                "failed": ["copy_in"],
            },
        ],
        "done": 1,
        "total": 2,
        "language": "en",
    }
    store.record("02_static_inputs", "copy_in", True)
    assert (await get_json(jp_fetch, "lessons"))["done"] == 2


async def test_lessons_of_a_checkout_are_in_notebooks(jp_fetch, jp_root_dir, store):
    (jp_root_dir / "notebooks").mkdir()
    (jp_root_dir / "notebooks" / "01_kernel_gaps.ipynb").write_text(notebook([]))
    reply = await get_json(jp_fetch, "lessons")
    assert reply["folder"] == "notebooks"
    assert [(x["path"], x["title"]) for x in reply["lessons"]] == [
        ("notebooks/01_kernel_gaps.ipynb", "Kernel gaps")
    ]


async def test_lessons_in_the_language_of_jupyterlab(jp_fetch, course, store):
    (course / "zh_CN").mkdir()
    (course / "zh_CN" / "02_static_inputs.ipynb").write_text(
        notebook([markdown("# 第 02 课 — 静态输入"), solution("copy_in"), solution("rebind")])
    )
    (course / "zh_CN" / "notes.ipynb").write_text(notebook([]))
    store.record("02_static_inputs", "rebind", True)  # progress is the same in both languages
    reply = await get_json(jp_fetch, "lessons", lang="zh_CN")
    assert (reply["folder"], reply["language"], reply["done"], reply["total"]) == (
        "zh_CN",
        "zh_CN",
        1,
        2,
    )
    assert [(x["path"], x["title"], x["passed"]) for x in reply["lessons"]] == [
        ("zh_CN/02_static_inputs.ipynb", "静态输入", ["rebind"])
    ]
    # English, and a language the course is not translated into: the English lessons.
    for language in ("en", "fr_FR"):
        reply = await get_json(jp_fetch, "lessons", lang=language)
        assert (reply["folder"], reply["language"]) == ("", "en")
        assert [x["path"] for x in reply["lessons"]] == [
            "00_start_here.ipynb",
            "02_static_inputs.ipynb",
        ]


async def test_lessons_in_a_language_the_folder_lacks_are_the_english_ones(jp_fetch, course, store):
    (course / "zh_CN").mkdir()  # no lesson in it
    reply = await get_json(jp_fetch, "lessons", lang="zh_CN")
    assert (reply["folder"], reply["language"], len(reply["lessons"])) == ("", "en", 2)


async def test_reset_progress(jp_fetch, course, store):
    store.record("02_static_inputs", "rebind", True)
    response = await jp_fetch("graphlab", "progress", "reset", method="POST", body="{}")
    assert json.loads(response.body) == {
        "ok": True,
        "message": f"forgot every check result ({store.store_path()})",
    }
    assert store.load() == {}
    assert (await get_json(jp_fetch, "lessons"))["done"] == 0


async def test_reset_lesson_keeps_the_learners_copy(jp_fetch, jp_root_dir):
    workspace.ensure(jp_root_dir)
    lesson = jp_root_dir / "02_static_inputs.ipynb"
    shipped = lesson.read_bytes()
    lesson.write_text(notebook([markdown("# my notes")]))
    body = json.dumps({"path": "02_static_inputs.ipynb"})
    response = await jp_fetch("graphlab", "lessons", "reset", method="POST", body=body)
    backup = json.loads(response.body)["backup"]
    assert re.fullmatch(r"02_static_inputs\.backup-\d{8}T\d{6}Z\.ipynb", backup), backup
    assert (jp_root_dir / backup).read_text() == notebook([markdown("# my notes")])
    assert lesson.read_bytes() == shipped

    lesson.unlink()  # a deleted lesson comes back, with no copy to keep
    response = await jp_fetch("graphlab", "lessons", "reset", method="POST", body=body)
    assert json.loads(response.body) == {"backup": None, "warning": None}
    assert lesson.read_bytes() == shipped

    for path, says in [("../02_static_inputs.ipynb", "leaves the Jupyter root folder"),
                       ("scratch.ipynb", "is not one of the course's lessons")]:  # fmt: skip
        call = jp_fetch(
            "graphlab", "lessons", "reset", method="POST", body=json.dumps({"path": path})
        )
        code, message = await refusal(call)
        assert code in (400, 403) and says in message


async def test_reset_of_a_chinese_lesson_restores_the_chinese_one(
    jp_fetch, jp_root_dir, tmp_path, monkeypatch
):
    shipped = ship_two_lessons(tmp_path / "shipped", monkeypatch)
    chinese = ship_chinese_lessons(shipped)
    workspace.sync(jp_root_dir, ("zh_CN",))
    lesson = jp_root_dir / "zh_CN" / "00_start_here.ipynb"
    lesson.write_text(notebook([markdown("# 我的笔记")]))
    body = json.dumps({"path": "zh_CN/00_start_here.ipynb"})
    response = await jp_fetch("graphlab", "lessons", "reset", method="POST", body=body)
    backup = json.loads(response.body)["backup"]
    assert re.fullmatch(r"zh_CN/00_start_here\.backup-\d{8}T\d{6}Z\.ipynb", backup), backup
    assert lesson.read_bytes() == (chinese / "00_start_here.ipynb").read_bytes()


def test_the_trace_viewers_warm_up_leaves_the_notebook_widgets_out():
    # The server warms the trace viewer up as it starts: plotly and the figure code, never
    # ipywidgets, IPython or matplotlib, which the viewer does not use.
    code = (
        "import sys; from graphlab.server import trace_report; trace_report.warm_up(); "
        "print(*(m in sys.modules for m in ('plotly.graph_objects', 'ipywidgets', 'IPython', "
        "'matplotlib')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False", "False"]


def test_the_warm_up_waits_until_the_server_runs(tmp_path):
    # Loading the extension starts no thread: the warm-up is handed to the server's event loop,
    # which runs it once the processor is quiet (tests/test_when_quiet.py), and the warm-up says
    # in the server's log when it is done. A fresh Python, so that nothing has imported it yet.
    code = f"""
import asyncio, logging, sys, threading, types, tornado.web
from graphlab.server import _load_jupyter_server_extension, when_quiet
logging.basicConfig(stream=sys.stdout, format="%(message)s", level=logging.INFO)
later = []
app = types.SimpleNamespace(
    web_app=tornado.web.Application(base_url="/"), contents_manager=None,
    root_dir={str(tmp_path)!r}, base_url="/", log=logging.getLogger("test"),
    io_loop=types.SimpleNamespace(add_callback=lambda *call: later.append(call)),
)
threads = threading.active_count()
_load_jupyter_server_extension(app)
print(threading.active_count() - threads, len(later), later[0][0] is when_quiet.when_quiet,
      "graphlab.server.trace_report" in sys.modules)
when_quiet.LONGEST_WAIT_S = 0  # no waiting here
work, page_loaded = later[0][1:]
page_loaded.close()  # the page's signal, not awaited here
asyncio.run(when_quiet.when_quiet(work))
for thread in threading.enumerate():
    if thread is not threading.main_thread():
        thread.join()
print("graphlab.server.trace_report" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, queued, warmed, imported = out.stdout.splitlines()
    assert loaded == "graphlab: course API at /graphlab/"
    assert queued.split() == ["0", "1", "True", "False"]
    assert re.fullmatch(r"graphlab: trace viewer warmed up in \d+\.\d s", warmed), warmed
    assert imported == "True"


async def test_trace_report_is_the_gaps_report(jp_fetch, course):
    reply = await get_json(jp_fetch, "trace", path="traces/graph_replay.json")
    summary = Timeline.from_chrome_trace(TRACES / "graph_replay.json").summary()
    assert reply["report"] == summary.report()
    assert reply["figures"] == summary.to_dict()
    # make_traces.py: one graph of 20 kernels replayed twice, so two cudaGraphLaunch calls
    assert (reply["figures"]["kernels"], reply["figures"]["graph_launches"]) == (40, 2)
    assert reply["events"] == 44 and reply["lod"] is False
    names = [t.get("name") for t in reply["figure"]["data"]]
    assert "stream 7: GPU work" in names and "host: launch call" in names
    assert "width" not in reply["figure"]["layout"]


async def test_trace_report_in_the_language_asked_for(jp_fetch, course):
    english = await get_json(jp_fetch, "trace", path="traces/graph_replay.json")
    chinese = await get_json(jp_fetch, "trace", path="traces/graph_replay.json", lang="zh_CN")
    # The figures of the English report (test_trace_report_is_the_gaps_report), in Chinese.
    assert chinese["report"].splitlines() == [
        "NVIDIA H200 上的 GPU 工作：1 个流上共 40 个内核",
        "  所有流：时间跨度 87.264 µs，忙碌 39.169 µs，空闲 48.095 µs（空闲 55.1%）；"
        "39 个空隙（中位数 0.256 µs，p90 0.288 µs，最大 38.208 µs）",
        "  主机受限：39 个空隙中有 1 个（GPU 在等待主机：下一项工作尚未启动）",
        "  主机：0 次内核启动，2 次图启动（跟踪中重放了 2 次）",
        "  启动延迟（主机调用结束 -> GPU 开始）：中位数 4.989 µs，p90 5.803 µs，"
        "统计了 GPU 工作在跟踪中的 2 次主机调用（内核与图的启动，以及异步拷贝和 memset）",
    ]
    assert chinese["figures"] == english["figures"]
    # The figure's words too: its lanes, legend and axis, whatever language the server runs in.
    names = [t.get("name") for t in chinese["figure"]["data"]]
    assert "流 7：GPU 工作" in names and "主机：启动调用" in names
    xaxis = chinese["figure"]["layout"]["xaxis"]["title"]["text"]
    assert xaxis == "自时间线第一个事件起的时间（µs）"
    assert english["report"].startswith("GPU work on NVIDIA H200: 40 kernels on 1 stream\n")
    # A language without a catalog gets the English report.
    other = await get_json(jp_fetch, "trace", path="traces/graph_replay.json", lang="fr_FR")
    assert other["report"] == english["report"]


async def test_trace_zoom_draws_the_range_only(jp_fetch, course):
    whole = await get_json(jp_fetch, "trace", path="traces/graph_replay.json")
    zoomed = await get_json(jp_fetch, "trace", path="traces/graph_replay.json", x0="0", x1="0.001")
    assert zoomed["figures"] == whole["figures"]
    assert len(json.dumps(zoomed["figure"]["data"])) < len(json.dumps(whole["figure"]["data"]))
    call = jp_fetch(
        "graphlab", "trace", params={"path": "traces/graph_replay.json", "x0": "5", "x1": "1"}
    )
    code, message = await refusal(call)
    assert code == 400 and message == "x0='5', x1='1' is not a time range: send x0 < x1 in µs"


async def test_bad_trace_is_one_line(jp_fetch, course):
    (course / "broken.json").write_text('{"traceEvents": [{"ph": "X", "cat": "kernel"')
    code, message = await refusal(jp_fetch("graphlab", "trace", params={"path": "broken.json"}))
    assert code == 400
    assert "\n" not in message and "ends early (truncated?)" in message


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../outside.json", "leaves the Jupyter root folder"),
        ("/etc/passwd", "is an absolute path"),
        ("link.json", "is a link to a file outside the Jupyter root folder"),
        (".hidden.json", "is a hidden file"),
        ("", "no file given"),
    ],
)
async def test_trace_refuses_paths_outside_the_root(jp_fetch, course, tmp_path, path, says):
    outside = tmp_path / "outside.json"
    shutil.copy(TRACES / "graph_replay.json", outside)
    (course / "link.json").symlink_to(outside)
    code, message = await refusal(jp_fetch("graphlab", "trace", params={"path": path}))
    assert code == 403 and says in message


async def test_unauthenticated_requests_are_refused(http_server_client, jp_base_url, course):
    for route, method in [("lessons", "GET"), ("trace?path=traces/graph_replay.json", "GET"),
                          ("progress/reset", "POST"), ("lessons/reset", "POST")]:  # fmt: skip
        with pytest.raises(HTTPClientError) as info:
            await http_server_client.fetch(
                f"{jp_base_url}graphlab/{route}",
                method=method,
                body="{}" if method == "POST" else None,
            )
        assert info.value.code == 403, route
    # The script is a page resource: the login page is where a stranger is sent instead.
    response = await http_server_client.fetch(
        f"{jp_base_url}graphlab/plotly.js", follow_redirects=False, raise_error=False
    )
    assert response.code == 302
    assert response.headers["Location"].startswith(f"{jp_base_url}login")


async def test_plotly_js_comes_from_the_plotly_package(jp_fetch):
    response = await jp_fetch("graphlab", "plotly.js")
    assert response.body == PLOTLY_JS.read_bytes()
    assert response.headers["Content-Type"].startswith("text/javascript")
    assert response.headers["Etag"] == f'"plotly-{plotly.__version__}"'


async def test_backend_is_asked_of_a_fresh_python(jp_fetch):
    import torch

    # The probe's child imports torch at a lower priority than everything else on the machine:
    # on a busy one it may take longer than a request's default 20 s, so wait as the server does.
    response = await jp_fetch("graphlab", "backend", request_timeout=backend_probe.TIMEOUT_S)
    reply = json.loads(response.body)
    if torch.cuda.is_available():
        assert reply["name"] == "cuda"
        assert reply["label"] == (
            f"{torch.cuda.get_device_name(0)} · torch {torch.__version__} · "
            f"CUDA {torch.version.cuda}"
        )
    else:
        assert reply["name"] == "emulator"
        assert reply["label"] == f"CPU emulator · torch {torch.__version__}"


def test_resolve_in_root(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "t.json").write_text("{}")
    (tmp_path / "inner.json").symlink_to(tmp_path / "a" / "t.json")
    root = tmp_path.resolve()
    assert resolve_in_root(tmp_path, "a/t.json") == root / "a" / "t.json"
    assert resolve_in_root(tmp_path, "inner.json") == root / "a" / "t.json"  # link inside
    assert resolve_in_root(tmp_path, "a/./t.json") == root / "a" / "t.json"
    for bad in ("a/../a/t.json", "C:t.json", "\\t.json", "a\\..\\t.json", "a/t\x00.json"):
        with pytest.raises(PathRefused):
            resolve_in_root(tmp_path, bad)
    assert resolve_in_root(tmp_path, ".h/x", allow_hidden=True) == root / ".h" / "x"


async def test_a_damaged_lesson_is_still_listed(jp_fetch, jp_root_dir, store):
    (jp_root_dir / "03_outputs.ipynb").write_text("{not a notebook")
    reply = await get_json(jp_fetch, "lessons")
    assert [(x["path"], x["title"], x["exercises"]) for x in reply["lessons"]] == [
        ("03_outputs.ipynb", "Outputs", [])
    ]


# ------------------------------------------------------------------- hostile files, slow files

NESTED = "[" * 100_000 + "]" * 100_000


async def test_nested_json_in_a_lesson_or_the_progress_file_is_never_a_500(
    jp_fetch, jp_root_dir, store, tmp_path
):
    (jp_root_dir / "03_outputs.ipynb").write_text(NESTED)
    reply = await get_json(jp_fetch, "lessons")
    assert [(x["path"], x["title"], x["exercises"]) for x in reply["lessons"]] == [
        ("03_outputs.ipynb", "Outputs", [])
    ]
    (tmp_path / "progress.json").write_text(NESTED)
    code, message = await refusal(jp_fetch("graphlab", "lessons"))
    assert code == 400
    assert message.startswith(f"{tmp_path / 'progress.json'} is not a graphlab progress file")
    assert "\n" not in message


@pytest.fixture
def slow_parse(monkeypatch):
    """Reading a lesson takes a second; returns the paths read, in order, and an event
    set when the first read starts."""
    from graphlab.server import lessons

    read, started = [], threading.Event()
    real = lessons.read_lesson

    def slow(path):
        read.append(Path(path).name)
        started.set()
        time.sleep(1.0)
        return real(path)

    monkeypatch.setattr(lessons, "read_lesson", slow)
    return read, started


async def test_two_requests_that_miss_the_cache_together_parse_each_lesson_once(
    jp_fetch, course, store, slow_parse
):
    read, _ = slow_parse
    first, second = await asyncio.gather(
        get_json(jp_fetch, "lessons"), get_json(jp_fetch, "lessons")
    )
    assert first == second and len(first["lessons"]) == 2
    assert sorted(read) == ["00_start_here.ipynb", "02_static_inputs.ipynb"]
    # Unchanged files are not read again; a saved one is.
    await get_json(jp_fetch, "lessons")
    assert len(read) == 2
    (course / "02_static_inputs.ipynb").write_text(notebook([markdown("# Lesson 02 — Renamed")]))
    reply = await get_json(jp_fetch, "lessons")
    assert read[2:] == ["02_static_inputs.ipynb"]
    assert reply["lessons"][1]["title"] == "Renamed"


async def test_the_server_answers_other_requests_while_a_lesson_is_read(
    jp_fetch, course, store, slow_parse
):
    _, started = slow_parse
    listing = asyncio.ensure_future(get_json(jp_fetch, "lessons"))
    await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
    status = asyncio.ensure_future(jp_fetch("api", "status"))
    done, _ = await asyncio.wait({listing, status}, return_when=asyncio.FIRST_COMPLETED)
    assert done == {status}, "the status request waited for the lessons to be read"
    assert json.loads(status.result().body)["started"]
    assert len((await listing)["lessons"]) == 2


async def test_trace_errors_name_the_file_relative_to_the_root(jp_fetch, course):
    (course / "traces" / "broken.json").write_text('{"traceEvents": [{"ph": "X"')
    (course / "traces" / "folder.json").mkdir()
    for path, says in [("traces/broken.json", "traces/broken.json: ends early (truncated?); "),
                       ("traces/folder.json", "traces/folder.json: is a folder, not a regular"),
                       ("traces/none.json", "traces/none.json: no such file")]:  # fmt: skip
        code, message = await refusal(jp_fetch("graphlab", "trace", params={"path": path}))
        assert code in (400, 404) and message.startswith(says), message
        assert str(course) not in message


async def test_progress_reset_through_the_server_removes_only_progress(
    jp_fetch, course, monkeypatch, tmp_path
):
    pipe = tmp_path / "progress-pipe"
    os.mkfifo(pipe)
    monkeypatch.setenv(progress.ENV, str(pipe))
    response = await jp_fetch("graphlab", "progress", "reset", method="POST", body="{}")
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert json.loads(response.body) == {
        "ok": True,
        "message": f"progress is off: {pipe} is a pipe, so no check result is read or kept; "
        "nothing to forget",
    }
    assert (await get_json(jp_fetch, "lessons"))["done"] == 0
    foreign = tmp_path / "settings.json"
    foreign.write_text('{"theme": "dark"}')
    monkeypatch.setenv(progress.ENV, str(foreign))
    response = await jp_fetch("graphlab", "progress", "reset", method="POST", body="{}")
    (kept,) = tmp_path.glob("settings.damaged-*.json")
    assert kept.read_text() == '{"theme": "dark"}'
    assert json.loads(response.body)["message"] == (
        f"{foreign} did not hold graphlab progress: it is kept as {kept}"
    )


async def test_a_lesson_reset_whose_record_cannot_be_written_answers_with_a_warning(
    jp_fetch, jp_root_dir
):
    workspace.ensure(jp_root_dir)
    record = jp_root_dir / ".graphlab" / "workspace.json"
    record.unlink()
    record.mkdir()
    body = json.dumps({"path": "02_static_inputs.ipynb"})
    response = await jp_fetch("graphlab", "lessons", "reset", method="POST", body=body)
    reply = json.loads(response.body)
    assert re.fullmatch(r"02_static_inputs\.backup-\d{8}T\d{6}Z\.ipynb", reply["backup"])
    assert reply["warning"].startswith(
        "02_static_inputs.ipynb is reset, but the workspace record could not be updated ("
    )
    assert str(jp_root_dir) not in reply["warning"]


def test_a_path_with_a_nul_byte_is_refused_for_what_it_is(tmp_path):
    with pytest.raises(PathRefused) as refused:
        resolve_in_root(tmp_path, "00_start_here.ipynb\x00.json")
    assert str(refused.value) == (
        "00_start_here.ipynb\\x00.json holds a NUL character, which no file name has"
    )


def probe_with_stand_in(tmp_path: Path, script: str) -> dict:
    """The backend probe's answer when the child's Python is the shell ``script`` instead."""
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\n{script}")
    python.chmod(0o755)
    return asyncio.run(backend_probe.probe_backend(str(python)))


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="needs Unix process priorities")
def test_the_backend_probe_runs_below_the_servers_priority(tmp_path):
    # The stand-in says its own niceness, a moment after it starts so that the server has had
    # time to lower it.
    found = probe_with_stand_in(
        tmp_path, 'sleep 1\necho "{\\"name\\": \\"nice\\", \\"label\\": \\"$(nice)\\"}"\n'
    )
    own = os.getpriority(os.PRIO_PROCESS, 0)
    assert int(found["label"].split()[-1]) == min(19, own + backend_probe.NICENESS)


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="needs Linux's scheduler autogroups"
)
def test_the_backend_probe_runs_in_a_session_whose_autogroup_is_niced_too(tmp_path):
    # The stand-in says its session and its autogroup's line, a moment after it starts.
    found = probe_with_stand_in(
        tmp_path,
        "sleep 1\n"
        'echo "{\\"name\\": \\"nice\\", \\"label\\": '
        '\\"$(ps -o sid= -p $$) $(cat /proc/self/autogroup)\\"}"\n',
    )
    session, _, nice, value = found["label"].split()
    own = backend_probe.autogroup_niceness(Path("/proc/self/autogroup").read_text())
    assert own is not None
    assert int(session) != os.getsid(0)
    assert (nice, int(value)) == ("nice", min(19, own + backend_probe.NICENESS))


@pytest.mark.parametrize(
    ("refusals", "writes"),
    [
        # Linux refuses all but one autogroup niceness a tenth of a second (EAGAIN): try again.
        ([BlockingIOError(errno.EAGAIN, "busy")] * 2, 3),
        ([BlockingIOError(errno.EAGAIN, "busy")] * 40, backend_probe.AUTOGROUP_TRIES),
        # The child has ended (its /proc entry is gone): nothing to lower.
        ([FileNotFoundError(errno.ENOENT, "gone")], 1),
    ],
)
def test_a_refused_autogroup_niceness_is_tried_again_while_it_may_succeed(
    monkeypatch, refusals, writes
):
    tried: list[tuple[str, str]] = []
    left = list(refusals)

    class Proc:  # the two files _lower_priority touches
        def __init__(self, path: str):
            self.path = path

        def read_text(self) -> str:
            return "/autogroup-7 nice 2\n"

        def write_text(self, text: str) -> None:
            tried.append((self.path, text))
            if left:
                raise left.pop(0)

    monkeypatch.setattr(backend_probe, "Path", Proc)
    monkeypatch.setattr(backend_probe.os, "setpriority", lambda *_: None)
    no_wait = asyncio.sleep
    monkeypatch.setattr(backend_probe.asyncio, "sleep", lambda _: no_wait(0))
    asyncio.run(backend_probe._lower_priority(4242))
    assert tried == [("/proc/4242/autogroup", "12")] * writes


def test_an_autogroup_file_is_read_as_the_kernel_writes_it():
    assert backend_probe.autogroup_niceness("/autogroup-4196 nice 0\n") == 0
    assert backend_probe.autogroup_niceness("/autogroup-12 nice -5\n") == -5
    assert backend_probe.autogroup_niceness("/autogroup-12 nice 19") == 19
    # A session in the root autogroup (a container's processes, often): the kernel writes nothing.
    assert backend_probe.autogroup_niceness("") == 0
    assert backend_probe.autogroup_niceness("autogroups, but not as we know them") is None


def test_a_probe_that_never_answers_is_ended_and_said_so(tmp_path, monkeypatch):
    marker = tmp_path / "still-running"
    monkeypatch.setattr(backend_probe, "TIMEOUT_S", 0.5)
    found = probe_with_stand_in(tmp_path, f"sleep 3\ntouch {marker}\n")
    assert found == {"name": "unknown", "label": "backend unknown (no answer in time)"}
    time.sleep(3.5)
    assert not marker.exists()  # the child was ended, not left to run on
