"""nbval runs the lessons' solutions.

A lesson's solution cells (``%%solution ID``) stay hidden and unrun until the learner asks, so a
plain Run All leaves every exercise to them. The notebook tests must run the solutions instead:
the stored outputs show each checker passing against its solution. nbval starts one kernel per
notebook, with this process's environment, while the notebook's first cell is being set up;
the hook below sets ``GRAPHLAB_RUN_SOLUTIONS=1`` around the set-up of the cells in this folder
only, so a JupyterLab that another test starts in the same run still hides the solutions.

The checkers record each result in the learner's progress file; the kernels nbval starts write to
a file of the test run instead (``GRAPHLAB_PROGRESS``), never to the real one. Each kernel speaks
the language the lesson's stored outputs were produced in (``GRAPHLAB_LANG``), whatever this
machine's locale: the language its provenance names (``metadata.graphlab.language``, written when
``tools/execute_notebooks.py`` runs a translated lesson in its language), English otherwise, as for
a translated lesson that holds the English lesson's outputs.
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path

import pytest

from graphlab.course.languages import ENGLISH
from graphlab.course.progress import ENV as PROGRESS
from graphlab.course.solutions import RUN_SOLUTIONS
from graphlab.language import ENV as LANGUAGE

# One scratch progress file for the whole run, in a fresh temporary folder.
SCRATCH_PROGRESS = Path(tempfile.mkdtemp(prefix="graphlab-nbval-")) / "progress.json"


@cache
def outputs_language(lesson: Path) -> str:
    """The language ``lesson``'s stored outputs were produced in."""
    metadata = json.loads(lesson.read_text(encoding="utf-8"))["metadata"]
    return metadata.get("graphlab", {}).get("language", ENGLISH)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with pytest.MonkeyPatch.context() as env:
        env.setenv(RUN_SOLUTIONS, "1")
        env.setenv(PROGRESS, str(SCRATCH_PROGRESS))
        env.setenv(LANGUAGE, outputs_language(item.path))
        yield
