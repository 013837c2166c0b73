"""``%%solution``: an exercise's solution runs only when the learner asks for it, and nbval runs
every solution because notebooks/conftest.py asks for it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from IPython.core.error import UsageError
from lesson_notebooks import solution_cell
from nbformat.v4 import new_code_cell, new_notebook

from graphlab.course import progress
from graphlab.course.solutions import RUN_SOLUTIONS

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = (
    "Solution hidden: press Show solution (or run it with `%%solution replay_step --revealed`) "
    "to use it.\n"
)


@pytest.fixture
def ipython(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.delenv(RUN_SOLUTIONS, raising=False)
    monkeypatch.setattr(progress, "_solutions_run", set())
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "graphlab")
    shell.user_ns.pop("answer", None)
    yield shell
    shell.user_ns.pop("answer", None)


def test_a_solution_is_not_run_unless_revealed(ipython, capsys):
    capsys.readouterr()
    result = ipython.run_cell("%%solution replay_step\nanswer = 42\n")
    assert result.success
    assert capsys.readouterr().out == HIDDEN
    assert "answer" not in ipython.user_ns
    assert progress._solutions_run == set()


def test_a_revealed_solution_runs_in_the_notebooks_namespace(ipython, capsys):
    capsys.readouterr()
    result = ipython.run_cell("%%solution replay_step --revealed\ndef step():\n    return 42\n")
    assert result.success
    assert capsys.readouterr().out == ""
    assert ipython.user_ns["step"]() == 42
    # A check passed in this kernel from now on is a pass after revealing the solution.
    assert progress._solutions_run == {"replay_step"}


@pytest.mark.parametrize(("value", "runs"), [("1", True), ("0", False), ("", False)])
def test_the_environment_variable_runs_every_solution(ipython, capsys, monkeypatch, value, runs):
    monkeypatch.setenv(RUN_SOLUTIONS, value)
    capsys.readouterr()
    assert ipython.run_cell("%%solution replay_step\nanswer = 42\n").success
    assert ("answer" in ipython.user_ns) is runs
    assert capsys.readouterr().out == ("" if runs else HIDDEN)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("", "%%solution"),
        ("--revealed", "%%solution --revealed"),
        ("one two", "%%solution one two"),
        ("../x --revealed", "%%solution ../x --revealed"),
    ],
)
def test_a_solution_line_without_one_exercise_id_is_refused(ipython, line, shown):
    result = ipython.run_cell(f"%%solution {line}\nanswer = 42\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert str(result.error_in_exec) == (
        f"{shown}: a solution cell begins %%solution EXERCISE_ID [--revealed]"
    )
    assert "answer" not in ipython.user_ns


def test_a_failing_solution_fails_its_cell(ipython, capsys):
    result = ipython.run_cell("%%solution replay_step --revealed\nanswer = 1 / 0\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert str(result.error_in_exec) == (
        "the solution of exercise 'replay_step' failed (its error is above)"
    )
    assert "ZeroDivisionError" in capsys.readouterr().out


def nbval(folder: Path, notebook: Path) -> subprocess.CompletedProcess:
    """Run nbval on ``notebook`` in a pytest of its own, the way the project runs the lessons."""
    (folder / "pytest.ini").write_text("[pytest]\n")  # keep the repository's settings out
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(RUN_SOLUTIONS, None)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval-lax"]
    return subprocess.run(
        [*command, "--nbval-current-env", str(notebook), str(folder / "test_after.py")],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow  # runs nbval in a fresh pytest
def test_nbval_kernels_run_the_solutions_and_nothing_else_sees_the_variable(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    cells = [
        new_code_cell("%load_ext graphlab"),
        solution_cell("demo", "answer = 42"),
        new_code_cell(
            f"import os\nassert answer == 42\nassert os.environ[{RUN_SOLUTIONS!r}] == '1'\n"
        ),
    ]
    notebook = lessons / "demo.ipynb"
    nbformat.write(new_notebook(cells=cells), notebook)
    # A test that runs after the notebook, outside notebooks/: the variable is gone again.
    (tmp_path / "test_after.py").write_text(
        f"import os\n\ndef test_after():\n    assert {RUN_SOLUTIONS!r} not in os.environ\n"
    )
    without = nbval(tmp_path, notebook)
    assert "1 failed, 3 passed" in without.stdout, without.stdout[-3000:]
    assert "NameError" in without.stdout  # hidden: the solution did not define `answer`

    shutil.copy(ROOT / "notebooks" / "conftest.py", lessons / "conftest.py")
    with_conftest = nbval(tmp_path, notebook)
    assert "4 passed" in with_conftest.stdout, with_conftest.stdout[-3000:]
