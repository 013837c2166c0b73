"""nbval runs the lessons' solutions.

A lesson's solution cells (``%%solution ID``) stay hidden and unrun until the learner asks, so a
plain Run All leaves every exercise to them. The notebook tests must run the solutions instead:
the stored outputs show each checker passing against its solution. nbval starts one kernel per
notebook, with this process's environment, while the notebook's first cell is being set up;
the hook below sets ``GRAPHLAB_RUN_SOLUTIONS=1`` around the set-up of the cells in this folder
only, so a JupyterLab that another test starts in the same run still hides the solutions.
"""

from __future__ import annotations

import os

import pytest

from graphlab.cli.magics import RUN_SOLUTIONS


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    before = os.environ.get(RUN_SOLUTIONS)
    os.environ[RUN_SOLUTIONS] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[RUN_SOLUTIONS]
        else:
            os.environ[RUN_SOLUTIONS] = before
