"""The command line: ``graphlab gaps``, ``graphlab doctor`` and ``graphlab lab``.

``eager.json`` below is a SYNTHETIC Kineto-shaped trace: the hand-worked eager chain of
test_gaps.py written as Kineto would (µs with three decimals), so its expected figures are the
ones worked out there.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from lesson_notebooks import ship_chinese_lessons, ship_two_lessons
from memory_cap import HAS_PROC, run_with_memory_cap

from graphlab import __version__
from graphlab.cli import doctor, lab, main
from graphlab.trace.timeline import Timeline

TRACES = Path(__file__).parent / "traces"


def kineto_event(cat, name, ts, dur, corr, **extra):
    args = {"correlation": corr, **extra}
    pid, tid = (0, 7) if cat == "kernel" else (100, 101)
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


@pytest.fixture
def eager_trace(tmp_path: Path) -> Path:
    # launches end at 5, 10, 11 µs; kernels run [6, 7) [11, 12) [12.5, 13.5) µs on stream 7.
    events = [
        kineto_event("cuda_runtime", "cudaLaunchKernel", 0.0, 5.0, 1),
        kineto_event("kernel", "k", 6.0, 1.0, 1, stream=7, device=0),
        kineto_event("cuda_runtime", "cudaLaunchKernel", 5.5, 4.5, 2),
        kineto_event("kernel", "k", 11.0, 1.0, 2, stream=7, device=0),
        kineto_event("cuda_runtime", "cudaLaunchKernel", 10.5, 0.5, 3),
        kineto_event("kernel", "k", 12.5, 1.0, 3, stream=7, device=0),
    ]
    path = tmp_path / "eager.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------------- gaps


def test_gaps_json(capsys, eager_trace):
    code, out, err = run_cli(capsys, "gaps", str(eager_trace), "--json")
    assert (code, err) == (0, "")
    d = json.loads(out)
    # Worked out in test_gaps.py::test_eager_chain_figures.
    assert (d["kernels"], d["kernel_launches"], d["graph_launches"]) == (3, 3, 0)
    assert (d["span_us"], d["busy_us"], d["idle_us"], d["idle_fraction"]) == (7.5, 3.0, 4.5, 0.6)
    assert d["gaps"] == {"count": 2, "median_us": 2.25, "p90_us": 3.65, "max_us": 4.0}
    assert d["host_bound_gaps"] == 1
    assert d["launch_latency"] == {"count": 3, "median_us": 1.0, "p90_us": 1.4}
    assert [s["stream"] for s in d["streams"]] == [7]
    assert d["streams"][0]["busy_us"] == 3.0


def test_gaps_json_to_an_output_of_text_alone(capsys, eager_trace, monkeypatch):
    # A notebook's output takes text only (no binary buffer): the same JSON goes there as text.
    code, out, _ = run_cli(capsys, "gaps", str(eager_trace), "--json")
    text_only = io.StringIO()
    monkeypatch.setattr(sys, "stdout", text_only)
    assert main(["gaps", str(eager_trace), "--json"]) == code == 0
    assert text_only.getvalue() == out


def test_gaps_report(capsys, eager_trace):
    code, out, _ = run_cli(capsys, "gaps", str(eager_trace))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == str(eager_trace)
    assert "span 7.500 µs, busy 3.000 µs, idle 4.500 µs (60.0% idle)" in out
    assert "host-bound: 1 of 2 gaps (the GPU waited for the host" in out


def test_gaps_on_real_trace_and_on_graphlab_timeline(capsys, tmp_path):
    real = TRACES / "h200_eager8_then_replay8.json"
    code, out, _ = run_cli(capsys, "gaps", str(real), "--json")
    d = json.loads(out)
    # Independently computed from the raw JSON (see test_gaps.py).
    assert (code, d["kernels"], d["graph_launches"], d["busy_us"]) == (0, 16, 1, 15.456)
    own = Timeline.from_chrome_trace(real).save(tmp_path / "timeline.json")
    code, out_own, _ = run_cli(capsys, "gaps", str(own), "--json")
    assert code == 0 and json.loads(out_own) == d


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("not json at all", "not valid JSON"),
        ('{"traceEvents": [{"ph": "X"', "ends early"),
        ('{"rows": []}', "not a Chrome trace"),
        ('{"traceEvents": []}', "no CUDA runtime or GPU events"),
    ],
    ids=["missing", "not-json", "truncated", "not-a-trace", "no-events"],
)
def test_gaps_bad_input_is_one_line_and_exit_2(capsys, tmp_path, content, message):
    path = tmp_path / "trace.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run_cli(capsys, "gaps", str(path))
    assert code == 2 and out == ""
    assert err.startswith("graphlab gaps: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_gaps_bad_input_through_the_real_entry_point(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "graphlab", "gaps", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "is a folder, not a regular file" in proc.stderr


# --------------------------------------------------------------------------------- doctor


def test_doctor_says_what_this_machine_has(capsys):
    code, out, _ = run_cli(capsys, "doctor")
    assert code == 0
    assert f"graphlab    {__version__}" in out
    assert f"torch       {torch.__version__}, CUDA build: " in out
    if torch.cuda.is_available():
        assert "backend     cuda" in out and "live GPU experiments" in out
        assert torch.cuda.get_device_name(0) in out
    else:
        assert "gpu         none visible to torch" in out
        assert "backend     emulator" in out and "CPU emulator" in out
    if torch.version.cuda is None:
        assert "CUDA build: none (CPU-only build)" in out
    import jupyterlab

    assert f"jupyterlab  ok {jupyterlab.__version__}" in out


def test_doctor_reports_missing_and_broken_packages(capsys, monkeypatch):
    assert doctor.package_status("json", "graphlab-no-such-dist") == (
        "missing (pip install graphlab-no-such-dist)"
    )
    # Installed (the distribution exists) but the module cannot be imported.
    status = doctor.package_status("graphlab_no_such_module", "numpy")
    assert status.startswith("broken: numpy ") and "import graphlab_no_such_module" in status
    monkeypatch.setattr(doctor, "NOTEBOOK_PACKAGES", (("x", "graphlab-no-such-dist"),))
    code, out, _ = run_cli(capsys, "doctor")
    assert code == 1 and "x           missing (pip install graphlab-no-such-dist)" in out


# ------------------------------------------------------------------------------------ lab


def lab_args(*argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    lab.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_lab_command_line(tmp_path, monkeypatch):
    monkeypatch.setattr(lab.os, "geteuid", lambda: 1000)  # an ordinary user
    default = lab.build_command(lab_args(), tmp_path)
    assert default == [
        sys.executable,
        "-m",
        "graphlab.cli.lab_server",
        f"--ServerApp.root_dir={tmp_path}",
        "--ServerApp.ip=127.0.0.1",
    ]
    custom = lab.build_command(
        lab_args("--port", "9999", "--no-browser", "--ip", "0.0.0.0"), tmp_path
    )
    assert custom[3:] == [
        f"--ServerApp.root_dir={tmp_path}",
        "--ServerApp.ip=0.0.0.0",
        "--ServerApp.port=9999",
        "--no-browser",
    ]
    assert not any("token" in a.lower() or "password" in a.lower() for a in custom)


def test_lab_as_root_adds_allow_root(tmp_path, monkeypatch):
    # Cloud GPU containers run as root, where JupyterLab will not start without --allow-root.
    monkeypatch.setattr(lab.os, "geteuid", lambda: 0)
    command = lab.build_command(lab_args(), tmp_path)
    assert command[-2:] == ["--ServerApp.ip=127.0.0.1", "--allow-root"]


def test_lab_opens_the_first_lesson_in_the_browser_and_at_the_printed_url(tmp_path, monkeypatch):
    # JupyterLab's default page is what its printed URL and the browser it starts both open.
    monkeypatch.setattr(lab.os, "geteuid", lambda: 1000)
    first = tmp_path / "00_start_here.ipynb"
    assert lab.build_command(lab_args("--no-browser"), tmp_path, first)[3:] == [
        f"--ServerApp.root_dir={tmp_path}",
        "--ServerApp.ip=127.0.0.1",
        "--LabApp.default_url=/lab/tree/00_start_here.ipynb",
        "--no-browser",
    ]


def test_lab_options_are_ones_jupyterlab_knows():
    from jupyter_server.serverapp import ServerApp
    from jupyterlab.labapp import LabApp

    traits = ServerApp.class_traits()
    assert all(name in traits for name in ("root_dir", "ip", "port"))
    assert "default_url" in LabApp.class_traits()
    assert "no-browser" in LabApp.flags and "allow-root" in LabApp.flags


@pytest.fixture
def shipped(tmp_path, monkeypatch) -> Path:
    return ship_two_lessons(tmp_path / "shipped", monkeypatch)


def test_lab_copies_the_lessons_into_the_workspace_once_and_opens_lesson_00(
    capsys, tmp_path, monkeypatch, shipped
):
    launched = []
    monkeypatch.setattr(lab.subprocess, "call", lambda cmd, env: launched.append(cmd) or 0)
    workspace = tmp_path / "course"
    code, out, err = run_cli(capsys, "lab", "--workspace", str(workspace), "--no-browser")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"graphlab lab: copied 2 lesson(s) into {workspace}",
        f"graphlab lab: opening {workspace} in JupyterLab (Ctrl-C to stop)",
    ]
    first = workspace / "00_start_here.ipynb"
    assert launched == [lab.build_command(lab_args("--no-browser"), workspace, first)]
    assert first.read_bytes() == (shipped / "00_start_here.ipynb").read_bytes()

    first.write_text("the learner's work")
    code, out, err = run_cli(capsys, "lab", "--workspace", str(workspace), "--ip", "0.0.0.0")
    assert code == 0 and "reachable from other machines" in err
    assert out == f"graphlab lab: opening {workspace} in JupyterLab (Ctrl-C to stop)\n"
    assert first.read_text() == "the learner's work"


def test_lab_workspace_defaults_to_graphlab_course_in_the_home_folder(
    capsys, tmp_path, monkeypatch, shipped
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(lab.subprocess, "call", lambda cmd, env: 0)
    assert lab_args().workspace == "~/graphlab-course"
    assert run_cli(capsys, "lab")[0] == 0
    copied = sorted(p.name for p in (tmp_path / "home" / "graphlab-course").glob("*.ipynb"))
    assert copied == ["00_start_here.ipynb", "01_kernel_gaps.ipynb"]


def test_lab_in_chinese_opens_the_chinese_lessons_in_a_chinese_jupyterlab(
    capsys, tmp_path, monkeypatch, shipped
):
    ship_chinese_lessons(shipped)
    launched = []
    monkeypatch.setattr(lab.subprocess, "call", lambda cmd, env: launched.append((cmd, env)) or 0)
    monkeypatch.setattr(lab, "has_language_pack", lambda language: language == "zh_CN")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/etc/mine")
    workspace = tmp_path / "course"
    argv = ("lab", "--workspace", str(workspace), "--no-browser")
    code, out, err = run_cli(capsys, *argv, "--lang", "zh_CN")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"graphlab lab: copied 4 lesson(s) into {workspace}",
        f"graphlab lab: opening {workspace} in JupyterLab (Ctrl-C to stop)",
    ]
    ((command, env),) = launched
    first = workspace / "zh_CN" / "00_start_here.ipynb"
    assert command == lab.build_command(lab_args("--no-browser"), workspace, first)
    assert "--LabApp.default_url=/lab/tree/zh_CN/00_start_here.ipynb" in command
    assert first.read_bytes() == (shipped / "zh_CN" / "00_start_here.ipynb").read_bytes()
    # JupyterLab's language comes from the workspace's config folder, first on the path; the
    # learner's settings folder is not changed.
    config = workspace / ".graphlab" / "lab_config" / "zh_CN"
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [
        str(config),
        str(lab.LAB_CONFIG),
        "/etc/mine",
    ]
    overrides = config / "labconfig" / "default_setting_overrides.json"
    assert json.loads(overrides.read_text()) == {
        "@jupyterlab/translation-extension:plugin": {"locale": "zh_CN"}
    }
    assert env.get("JUPYTERLAB_SETTINGS_DIR") == os.environ.get("JUPYTERLAB_SETTINGS_DIR")

    # In English again: the English lesson 00, and JupyterLab's own language.
    launched.clear()
    assert run_cli(capsys, *argv)[0] == 0
    ((command, env),) = launched
    assert "--LabApp.default_url=/lab/tree/00_start_here.ipynb" in command
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0] == str(lab.LAB_CONFIG)


def test_lab_in_chinese_without_the_language_pack_says_what_to_install(
    capsys, tmp_path, monkeypatch, shipped
):
    ship_chinese_lessons(shipped)
    monkeypatch.setattr(lab.subprocess, "call", lambda cmd, env: 0)
    monkeypatch.setattr(lab, "has_language_pack", lambda language: False)
    code, _, err = run_cli(capsys, "lab", "--workspace", str(tmp_path / "w"), "--lang", "zh_CN")
    assert (code, err) == (
        0,
        "graphlab lab: JupyterLab has no zh_CN language pack, so its menus stay in English: "
        "pip install jupyterlab-language-pack-zh-CN\n",
    )


def test_a_language_pack_is_found_by_jupyterlabs_entry_point():
    # The dev extras install the zh-CN pack, as a learner would.
    assert lab.has_language_pack("zh_CN")
    assert not lab.has_language_pack("xx_XX")


def test_lab_refuses_a_language_it_does_not_know_in_one_line(capsys, tmp_path, shipped):
    code, out, err = run_cli(capsys, "lab", "--workspace", str(tmp_path / "w"), "--lang", "fr")
    assert (code, out) == (2, "")
    assert err == "graphlab lab: the course has no language 'fr': use one of en, zh_CN\n"
    assert not (tmp_path / "w").exists()


def test_lab_refuses_a_bad_port_or_workspace_in_one_line(capsys, tmp_path, shipped):
    code, _, err = run_cli(capsys, "lab", "--workspace", str(tmp_path), "--port", "70000")
    assert code == 2 and "not a TCP port" in err
    (tmp_path / "a-file").write_text("")
    code, _, err = run_cli(capsys, "lab", "--workspace", str(tmp_path / "a-file"))
    refused = f"{tmp_path / 'a-file'} is a file: choose a folder for the course workspace"
    assert (code, err) == (2, f"graphlab lab: {refused}\n")


# ------------------------------------------------------------------------ IPython magics


@pytest.fixture
def ipython():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "graphlab")
    return shell


def test_line_magic_runs_commands(ipython, capsys, eager_trace):
    assert ipython.run_line_magic("graphlab", f"gaps {eager_trace} --json") is None
    d = json.loads(capsys.readouterr().out)
    assert (d["kernels"], d["busy_us"], d["host_bound_gaps"]) == (3, 3.0, 1)
    assert ipython.run_line_magic("graphlab", f"gaps {eager_trace.parent / 'absent.json'}") == 2
    assert "no such file" in capsys.readouterr().err
    assert ipython.run_line_magic("graphlab", "no-such-command") == 2


def test_line_magic_without_a_command_lists_the_notebook_commands(ipython, capsys):
    assert ipython.run_line_magic("graphlab", "") is None
    out = capsys.readouterr().out
    assert out.startswith("usage: %graphlab [-h] COMMAND")
    assert "gaps" in out and "doctor" in out
    assert "lab" not in out.split("positional arguments:")[1].split()


def test_line_magic_reports_an_unclosed_quote_in_one_line(ipython):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="No closing quotation; close the quote"):
        ipython.run_line_magic("graphlab", 'gaps "unclosed')


def test_line_magic_refuses_to_start_a_server(ipython):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="run it in a terminal"):
        ipython.run_line_magic("graphlab", "lab")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without a GPU")
def test_cell_magic_without_gpu_points_to_recordings(ipython, capsys):
    result = ipython.run_cell("%%graphlab_timeline t\nx = 1\n")
    assert not result.success
    assert "graphlab.recording(name).timeline" in str(result.error_in_exec)
    assert "t" not in ipython.user_ns


@pytest.mark.cuda
def test_cell_magic_profiles_the_cell_on_a_gpu(ipython, capsys):
    ipython.run_cell("import torch\nx = torch.ones(4096, device='cuda')\nx.mul_(2)\n")
    result = ipython.run_cell("%%graphlab_timeline tl\nfor _ in range(5):\n    x.mul_(2)\n")
    assert result.success
    s = ipython.user_ns["tl"].summary()
    assert (s.kernels, s.kernel_launches, s.graph_launches) == (5, 5, 0)
    assert "5 kernels on 1 stream" in capsys.readouterr().out


def test_a_reader_that_stops_early_gets_no_traceback(eager_trace):
    # `graphlab gaps --json | head`: the pipe closes before graphlab writes (closed here at once).
    child = subprocess.Popen(
        [sys.executable, "-m", "graphlab", "gaps", str(eager_trace), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    child.stdout.close()
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 0
    assert stderr.decode() == ""


# ------------------------------------------------------------------ hostile and huge traces

ESCAPE = "\x1b[2J\x1b]8;;https://example.invalid\x07"  # clear the screen, start a link


def test_control_characters_in_gpu_name_and_path_never_reach_the_terminal(capsys, tmp_path):
    trace = {
        "deviceProperties": [{"id": 0, "name": f"NVIDIA H200{ESCAPE}"}],
        "traceEvents": [kineto_event("kernel", "k", 1.0, 1.0, 1, stream=7, device=0)],
    }
    path = tmp_path / "trace\x1b[2J\x07.json"  # a file name may hold control characters too
    path.write_text(json.dumps(trace))
    code, out, err = run_cli(capsys, "gaps", str(path))
    assert code == 0 and err == ""
    assert "\x1b" not in out and "\x07" not in out
    assert out.splitlines()[0].endswith("trace\\x1b[2J\\x07.json")
    assert "GPU work on NVIDIA H200\\x1b[2J\\x1b]8;;https://example.invalid\\x07" in out
    code, out, err = run_cli(capsys, "gaps", str(tmp_path / "absent\x1b[2J.json"))
    assert code == 2 and err.count("\n") == 1 and "\x1b" not in err


def test_suspect_events_are_named_on_stderr_after_the_figures(capsys, tmp_path):
    events = [
        kineto_event("kernel", "k", 1.0, 1.0, 1, stream=7, device=0),
        kineto_event("kernel", "k", 1.0, 1.0, 1, stream=7, device=0),
        kineto_event("kernel", "k", 3.0, 0.0, 2, stream=7, device=0),
    ]
    path = tmp_path / "suspect.json"
    path.write_text(json.dumps({"traceEvents": events}))
    code, out, err = run_cli(capsys, "gaps", str(path), "--json")
    assert code == 0 and json.loads(out)["kernels"] == 3
    assert err.splitlines() == [
        f"graphlab gaps: warning: {path}: 1 kernel has a missing or zero duration: counted as "
        "kernels, adding no busy time",
        f"graphlab gaps: warning: {path}: 1 event is an exact copy of another event (same kind, "
        "name, times, device, stream, thread and correlation), and each copy is counted: was the "
        "trace merged or written twice? Export it again",
    ]


def test_running_out_of_memory_is_one_line(capsys, eager_trace, monkeypatch):
    def exhausted(self):
        raise MemoryError

    monkeypatch.setattr(Timeline, "summary", exhausted)
    monkeypatch.setattr("graphlab.support.memory.available_bytes", lambda: 3 * 1024**3)
    code, out, err = run_cli(capsys, "gaps", str(eager_trace))
    assert code == 2 and out == ""
    # The CLI's entry says it, once for every command.
    assert err == "graphlab gaps: ran out of memory (3.0 GiB is available now): close other " \
        "programs, or profile fewer steps (torch.profiler.schedule with active=1..3)\n"  # fmt: skip


@pytest.mark.skipif(not HAS_PROC, reason="reads Linux's /proc")
def test_a_trace_beyond_the_memory_left_is_refused_in_one_line(tmp_path):
    path = tmp_path / "big.json"
    event = json.dumps(kineto_event("kernel", "k", 1.0, 1.0, 1, stream=7, device=0))
    with path.open("w") as f:  # about 60 MB: reading it needs more than the 64 MB left
        f.write('{"traceEvents": [' + ",".join([event] * 400_000) + "]}")
    result = run_with_memory_cap(64 * 1024**2, "gaps", str(path), "--json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert re.fullmatch(
        rf"graphlab gaps: {path}: reading \d+ MiB needs about \d+ MiB of memory and \d+ MiB is "
        r"available: .*\n",
        result.stderr,
    )


def test_the_course_lab_reads_a_page_config_that_switches_off_the_default_tours(monkeypatch):
    # jupyterlab_server merges the labconfig/page_config.json of every folder on Jupyter's
    # config path: the environment graphlab lab starts JupyterLab with must give the
    # default tours' plugin as disabled, and keep a config path the learner had set.
    from jupyterlab_server.config import get_page_config

    env = lab.lab_environment({"JUPYTER_CONFIG_PATH": "/etc/learner-jupyter", "HOME": "/home/x"})
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [
        str(lab.LAB_CONFIG),
        "/etc/learner-jupyter",
    ]
    assert env["HOME"] == "/home/x"
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", env["JUPYTER_CONFIG_PATH"])
    assert "jupyterlab-tour:default-tours" in get_page_config([])["disabledExtensions"]
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "")
    assert (
        "jupyterlab-tour:default-tours"
        not in get_page_config(labextensions_path=[])["disabledExtensions"]
    )


# ---------------------------------------------------- messages that name what is wrong, and where

_KERNEL_TEXT = (
    '{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {ts}, "dur": 1.0, '
    '"args": {{"correlation": 1, "stream": 7, "device": 0}}}}'
)


def test_a_number_too_long_to_read_names_the_file(capsys, tmp_path):
    # Before: "graphlab gaps: : holds a value no trace has (...)", with no path.
    path = tmp_path / "long.json"
    path.write_text('{"traceEvents": [' + _KERNEL_TEXT.format(ts="1" + "0" * 5000) + "]}")
    code, out, err = run_cli(capsys, "gaps", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"graphlab gaps: {path}: holds a number of more than 4,300 digits, which no trace has; "
        "export it again\n"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_or_a_device_is_named_and_a_regular_file_asked_for(capsys, tmp_path):
    # Before: "not a file (a folder?)" for both.
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO (named pipe)"), (Path(os.devnull), "a character device")):
        code, out, err = run_cli(capsys, "gaps", str(path))
        assert (code, out) == (2, "")
        assert err == (
            f"graphlab gaps: {path}: is {kind}, not a regular file; pass the trace's .json file\n"
        )


def test_an_empty_path_is_refused(capsys):
    # Before: ".: not a file (a folder?)", the current folder.
    code, out, err = run_cli(capsys, "gaps", "")
    assert (code, out) == (2, "")
    assert err == "graphlab gaps: the trace's path is empty: pass the trace's .json file\n"


_REPEATED_WARNING = (
    "1 event holds a key twice (or its args do), and only one of the two values was read: was "
    "the trace edited or written by another tool? Export it again"
)


@pytest.mark.parametrize(
    "event",
    [
        _KERNEL_TEXT.format(ts='6.0, "ts": 9.0'),
        _KERNEL_TEXT.format(ts="6.0").replace('"dur": 1.0', '"dur": 1.0, "dur": 2.0'),
    ],
    ids=["ts twice", "dur twice"],
)
def test_an_event_that_repeats_a_key_is_warned_about(capsys, tmp_path, event):
    # Before: read silently with one of the two values.
    path = tmp_path / "repeated.json"
    path.write_text('{"traceEvents": [' + event + "]}")
    code, out, err = run_cli(capsys, "gaps", str(path), "--json")
    assert code == 0 and json.loads(out)["kernels"] == 1
    assert err == f"graphlab gaps: warning: {path}: {_REPEATED_WARNING}\n"


def test_a_name_that_spells_a_key_is_no_repeated_key(capsys, tmp_path):
    # The kernel's name is the text "ts": the batch is parsed again, and no key repeats.
    path = tmp_path / "named.json"
    path.write_text(
        '{"traceEvents": [' + _KERNEL_TEXT.format(ts="6.0").replace('"k"', '"ts"') + "]}"
    )
    code, _, err = run_cli(capsys, "gaps", str(path), "--json")
    assert (code, err) == (0, "")
