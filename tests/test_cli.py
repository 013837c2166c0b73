"""The command line as a whole: what each command imports, and running out of memory.

``graphlab gaps`` is meant to read a trace in about the time Python's own ``json.load`` takes, so
it must not pay for torch, plotly or the other commands' modules; ``graphlab --help`` imports no
command at all. Each test that looks at imports runs the command in a fresh interpreter, since this
one has imported everything already.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import graphlab.support.memory
from graphlab.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parent.parent

# Runs graphlab's command line on its arguments, then prints on stderr, as JSON, the modules that
# were imported by then.
_DRIVER = """
import json, sys
import graphlab.cli
try:
    status = graphlab.cli.main(sys.argv[1:])
except SystemExit as exc:  # --help
    status = exc.code
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(status)
"""

# Modules that the commands which need them import when they run, and that no other command may.
HEAVY = ["torch", "plotly", "ipywidgets", "anywidget", "IPython", "jupyter_server", "tqdm"]


def run_and_list_modules(*argv: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    *messages, modules = proc.stderr.splitlines()
    proc.stderr = "\n".join(messages)
    return proc, set(json.loads(modules))


def command_modules(modules: set[str]) -> set[str]:
    """Which commands' modules are among ``modules``."""
    return {name for name, command in COMMANDS.items() if command.module in modules}


def test_gaps_imports_neither_torch_nor_the_other_commands(tmp_path):
    # Kernels [6, 7) [11, 12) [12.5, 13.5) µs: span 7.5 µs, busy 3 µs, two gaps.
    events = [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts, "dur": 1.0,
         "args": {"correlation": i, "stream": 7, "device": 0}}
        for i, ts in enumerate((6.0, 11.0, 12.5), start=1)
    ]  # fmt: skip
    trace = tmp_path / "three.json"
    trace.write_text(json.dumps({"traceEvents": events}))

    proc, modules = run_and_list_modules("gaps", str(trace), "--json")

    assert (proc.returncode, proc.stderr) == (0, "")
    figures = json.loads(proc.stdout)
    assert (figures["kernels"], figures["span_us"], figures["busy_us"]) == (3, 7.5, 3.0)
    assert figures["gaps"]["count"] == 2
    assert [name for name in HEAVY if name in modules] == []
    assert command_modules(modules) == {"gaps"}
    assert not {"graphlab.planner", "graphlab.timing", "graphlab.simulator"} & modules


def test_help_imports_no_command():
    proc, modules = run_and_list_modules("--help")

    assert proc.returncode == 0
    for name, command in COMMANDS.items():
        assert f" {name} {command.help} " in " ".join(proc.stdout.split()) + " "
    assert command_modules(modules) == set()
    assert [name for name in [*HEAVY, "numpy"] if name in modules] == []


def test_a_commands_help_imports_that_command_alone():
    proc, modules = run_and_list_modules("plan", "--help")

    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: graphlab plan [-h] [--hist HIST.json | --requests")
    assert "--max-graphs K" in proc.stdout
    assert command_modules(modules) == {"plan"}


# ------------------------------------------------------------------------- out of memory

# Each command with the arguments it needs to reach its run().
ARGUMENTS = {
    "lab": [],
    "doctor": [],
    "record": [],
    "recordings": [],
    "gaps": ["trace.json"],
    "simulate": ["--kernels", "10", "--kernel-us", "1"],
    "calibrate": [],
    "progress": [],
    "plan": [],
    "diagnose": ["model.py:make"],
}

# What each command says, with 3 GiB of memory available, when it runs out.
OUT_OF_MEMORY = {
    "lab": "close other programs (and notebooks' kernels) and run it again",
    "doctor": "close other programs and run it again",
    "record": "close other programs, or record one experiment at a time with --only NAME",
    "recordings": "close other programs and run it again",
    "gaps": "close other programs, or profile fewer steps (torch.profiler.schedule with "
    "active=1..3)",
    "simulate": "simulate fewer kernels (--kernels)",
    "calibrate": "close other programs, or calibrate from a folder with fewer recordings "
    "(--recordings)",
    "progress": "close other programs and run it again",
    "plan": "close other programs, or plan from a shorter requests file or a smaller histogram",
    "diagnose": "diagnose a smaller model or fewer --steps",
}


def test_every_command_is_covered():
    assert set(ARGUMENTS) == set(OUT_OF_MEMORY) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_running_out_of_memory_is_one_line(name, capsys, monkeypatch):
    def exhausted(args):
        raise MemoryError

    monkeypatch.setattr(importlib.import_module(COMMANDS[name].module), "run", exhausted)
    monkeypatch.setattr(graphlab.support.memory, "available_bytes", lambda: 3 * 1024**3)

    code = main([name, *ARGUMENTS[name]])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"graphlab {name}: ran out of memory (3.0 GiB is available now): {OUT_OF_MEMORY[name]}\n"
    )


def test_running_out_of_memory_where_the_system_does_not_say_how_much_is_left(capsys, monkeypatch):
    def exhausted(*args):
        raise MemoryError

    # Deep inside the command: reading the recordings folder.
    monkeypatch.setattr("graphlab.timing.recordings.scan_recordings", exhausted)
    monkeypatch.setattr(graphlab.support.memory, "available_bytes", lambda: None)

    code = main(["recordings"])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == "graphlab recordings: ran out of memory: close other programs and run it again\n"


# -------------------------------------------------------------------- output to a full disk

# Runs graphlab's command line after the patch in argv[1] (Python source), which stands in for
# what this machine cannot run: a GPU for `record`, JupyterLab for `lab`.
_PATCHED = """
import sys
import graphlab.cli
exec(sys.argv[1])
sys.exit(graphlab.cli.main(sys.argv[2:]))
"""

FULL = "cannot write the output (No space left on device): free some space, or write it elsewhere"


def full_disk_cases(tmp_path: Path) -> dict[str, tuple[str, list[str]]]:
    """Each command, with a patch (or none) and the arguments that make it print to stdout."""
    trace = tmp_path / "trace.json"
    trace.write_text(
        json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                    "ts": 1.0, "dur": 1.0, "args": {"stream": 7, "device": 0}}]})
    )  # fmt: skip
    hist, costs = tmp_path / "hist.json", tmp_path / "costs.json"
    hist.write_text('{"1": 1}')
    costs.write_text(
        '{"sizes": [1], "replay_us": [1], "eager_us": [2], "capture_s": [1], "graph_mib": [1]}'
    )
    model = tmp_path / "model.py"
    model.write_text(
        "import torch\n\n\ndef make():\n    return torch.nn.Linear(4, 4), (torch.randn(2, 4),)\n"
    )
    diagnosed = f"{model}:make"
    return {
        "diagnose": ("", ["diagnose", diagnosed, "--no-compile", "--steps", "1"]),
        "diagnose --json": ("", ["diagnose", diagnosed, "--no-compile", "--steps", "1", "--json"]),
        "gaps": ("", ["gaps", str(trace)]),
        "gaps --json": ("", ["gaps", str(trace), "--json"]),
        "plan": ("", ["plan", "--hist", str(hist), "--costs", str(costs)]),
        "plan --json": ("", ["plan", "--hist", str(hist), "--costs", str(costs), "--json"]),
        "simulate": ("", ["simulate", "--kernels", "10", "--kernel-us", "1"]),
        "simulate --json": ("", ["simulate", "--kernels", "10", "--kernel-us", "1", "--json"]),
        "calibrate": ("", ["calibrate"]),
        "progress": ("", ["progress"]),
        "doctor": ("", ["doctor"]),
        "recordings": ("", ["recordings"]),
        "recordings --json": ("", ["recordings", "--json"]),
        "record": (
            "import graphlab.timing.experiments as e; e.record = lambda **kwargs: []",
            ["record", "--out", str(tmp_path / "rec")],
        ),
        "lab": (
            "import subprocess; subprocess.call = lambda *a, **k: 0",
            ["lab", "--workspace", str(tmp_path / "workspace")],
        ),
    }


CASES = sorted(full_disk_cases(Path("/")))


def test_every_command_is_tried_on_a_full_disk():
    assert {case.split()[0] for case in CASES} == set(COMMANDS)


@pytest.mark.slow  # a fresh Python per command
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("case", CASES)
def test_output_to_a_full_disk_is_one_line(tmp_path, case):
    patch, argv = full_disk_cases(tmp_path)[case]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
           "GRAPHLAB_PROGRESS": str(tmp_path / "progress.json"), "HOME": str(tmp_path)}  # fmt: skip
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-c", _PATCHED, patch, *argv],
            stdout=full, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path, check=False,
        )  # fmt: skip
    # Before, each was an OSError traceback with exit status 1.
    assert (proc.returncode, proc.stderr) == (2, f"graphlab {argv[0]}: {FULL}\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("argv", [["--help"], ["plan", "--help"], ["plan", "measure", "--help"]])
def test_help_to_a_full_disk_is_one_line(argv):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "graphlab", *argv], stdout=full, stderr=subprocess.PIPE,
            text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=False,
        )  # fmt: skip
    # Before, argparse dropped the error: exit status 0 with the help lost.
    prog = " ".join(["graphlab", *argv[:-1]])
    assert (proc.returncode, proc.stderr) == (2, f"{prog}: {FULL}\n")


def test_an_output_error_with_stdout_captured_in_memory_is_one_line(capsys, monkeypatch):
    # A stdout with no file descriptor (as in a notebook or under pytest) is left as it is.
    import errno
    import os

    def full(args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(importlib.import_module(COMMANDS["recordings"].module), "run", full)
    assert main(["recordings"]) == 2
    assert capsys.readouterr() == ("", f"graphlab recordings: {FULL}\n")
