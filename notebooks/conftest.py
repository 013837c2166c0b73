"""nbval runs the lessons' solutions.

A lesson's solution cells (``%%solution ID``) stay hidden and unrun until the learner asks, so a
plain Run All leaves every exercise to them. The notebook tests must run the solutions instead:
the stored outputs show each checker passing against its solution. nbval starts one kernel per
notebook, with this process's environment, while the notebook's first cell is being set up;
the hook below sets ``GRAPHLAB_RUN_SOLUTIONS=1`` around the set-up of the cells in this folder
only, so a JupyterLab that another test starts in the same run still hides the solutions.

The checkers record each result in the learner's progress file; the kernels nbval starts write to
a file of the test run instead (``GRAPHLAB_PROGRESS``), never to the real one. Each kernel speaks
its lesson's language, as the stored outputs do, whatever this machine's locale: English for
``notebooks/NN_*.ipynb``, Chinese for ``notebooks/zh_CN/`` (``GRAPHLAB_LANG``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from graphlab.course.languages import ENGLISH, TRANSLATED
from graphlab.course.progress import ENV as PROGRESS
from graphlab.course.solutions import RUN_SOLUTIONS
from graphlab.language import ENV as LANGUAGE

# One scratch progress file for the whole run, in a fresh temporary folder.
SCRATCH_PROGRESS = Path(tempfile.mkdtemp(prefix="graphlab-nbval-")) / "progress.json"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with pytest.MonkeyPatch.context() as env:
        env.setenv(RUN_SOLUTIONS, "1")
        env.setenv(PROGRESS, str(SCRATCH_PROGRESS))
        folder = item.path.parent.name
        env.setenv(LANGUAGE, folder if folder in TRANSLATED else ENGLISH)
        yield
