"""The ``%%solution`` convention: how an exercise's solution cell stays hidden until asked for.

A solution cell begins ``%%solution ID [--revealed]`` (its metadata follows
``graphlab/course/cell_metadata.schema.json``). Its body runs, in the notebook's namespace so that
it defines what the exercise asks for, only when the learner asks for it: with ``--revealed``,
which the course extension's "Show solution" adds, or when the environment variable
``GRAPHLAB_RUN_SOLUTIONS`` is ``1`` (the notebook tests and the tools that store a lesson's outputs
set it). Otherwise the cell prints one line and does nothing, so Run All leaves every exercise to
the learner, in JupyterLab, Notebook 7, Colab or Kaggle alike. Once a solution has run, a pass of
its exercise in that kernel counts as revealed, not earned
(:func:`graphlab.course.progress.solution_ran`).

The ``%%solution`` magic (:mod:`graphlab.cli.magics`) only hands its line and cell to
:func:`run_solution`.
"""

from __future__ import annotations

import json
import os
import re

from IPython.core.error import UsageError

from . import progress
from .syllabus import CELL_METADATA_SCHEMA

__all__ = ["EXERCISE_ID", "RUN_SOLUTIONS", "run_solution", "solution_options"]

#: Environment variable that makes every ``%%solution`` cell run, revealed or not.
RUN_SOLUTIONS = "GRAPHLAB_RUN_SOLUTIONS"
#: An exercise id as the cell metadata schema defines it.
EXERCISE_ID = re.compile(
    json.loads(CELL_METADATA_SCHEMA.read_text(encoding="utf-8"))["properties"]["exercise"][
        "pattern"
    ]
)


def solution_options(line: str) -> tuple[str, bool]:
    """``(exercise id, revealed)`` from a ``%%solution`` line; UsageError if it is not one."""
    words = line.split()
    revealed = "--revealed" in words
    rest = [word for word in words if word != "--revealed"]
    if len(rest) != 1 or not EXERCISE_ID.fullmatch(rest[0]):
        given = f"%%solution {line.strip()}".strip()
        raise UsageError(f"{given}: a solution cell begins %%solution EXERCISE_ID [--revealed]")
    return rest[0], revealed


def run_solution(shell, line: str, cell: str) -> None:
    """Run the solution ``cell`` in ``shell`` if it is revealed or solutions are switched on."""
    exercise, revealed = solution_options(line)
    if not (revealed or os.environ.get(RUN_SOLUTIONS) == "1"):
        print(
            f"Solution hidden: press Show solution (or run it with "
            f"`%%solution {exercise} --revealed`) to use it."
        )
        return
    # From now on a pass of this exercise in this kernel is a revealed one, not the learner's.
    progress.solution_ran(exercise)
    result = shell.run_cell(cell, store_history=False)
    if not result.success:
        # Its traceback is already shown; failing the cell too stops Run All and nbval here.
        raise UsageError(f"the solution of exercise {exercise!r} failed (its error is above)")
