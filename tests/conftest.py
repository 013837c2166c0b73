"""Shared pytest configuration.

- GPU-only tests carry ``@pytest.mark.cuda`` and are skipped, with the reason, on machines where
  torch sees no CUDA device.
- The exercise checkers record their results in a list (the ``progress_log`` fixture) instead of
  the learner's progress.
- ``slow`` marks the tests that take seconds to minutes each: every notebook run by nbval, the
  tests that drive a real JupyterLab, JupyterHub or chromium, and those that wait out a time limit
  or start a fresh Python per case. ``pytest -m "not slow"`` runs the rest, the quick check while
  editing.
- The tests read graphlab's messages in English, whatever this machine's locale:
  ``GRAPHLAB_LANG=en`` for the whole run, the kernels nbval starts included (tests of another
  language set it themselves).
- pytest-xdist (``-n auto --dist loadfile`` in pyproject.toml) hands each file to a free worker
  in the order collected here: the files with slow tests come first, so that no long file is left
  to run alone at the end. ``auto`` is one worker more than the CPUs: many slow tests wait (for a
  time limit, a server, a browser) while another can use the CPU.
"""

from __future__ import annotations

import os
import types

import pytest
import torch
from browser import chromium

from graphlab.language import ENV as LANGUAGE

os.environ[LANGUAGE] = "en"

# Slow tests in files that carry no marker of their own: the whole file (each of its tests starts
# a fresh Python) or one test (two processes, one of which waits out a time limit).
SLOW = (
    "tests/test_isolate.py::",
    "tests/test_checks_nccl.py::test_a_replay_the_other_rank_never_makes_hangs_until_the_time_limit",
    "tests/test_checks_nccl.py::test_matching_replays_on_two_gloo_ranks_finish",
)

# The notebooks under tests/browser/ are the browser tests' inputs: those tests run them live in
# JupyterLab (or as the lessons are stored), so nbval does not run them a second time.
collect_ignore_glob = ["browser/*.ipynb"]


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per CPU this process may use, plus one (the whole suite on two
    cores took 527 s with two workers, 415 s with three). PYTEST_XDIST_AUTO_NUM_WORKERS, when
    set, decides instead, as pytest-xdist documents."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


def _is_slow(item: pytest.Item) -> bool:
    return (
        item.path.suffix == ".ipynb"  # a notebook's cell, run by nbval
        or any(item.get_closest_marker(mark) for mark in ("browser", "hub", "slow"))
        or item.nodeid.startswith(SLOW)
    )


@pytest.hookimpl(tryfirst=True)  # before -m reads the marks
def pytest_collection_modifyitems(config, items):
    slow_files = set()
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
            slow_files.add(item.path)
    # Stable: a file's tests, and a notebook's cells, keep their order.
    items.sort(key=lambda item: item.path not in slow_files)

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; this machine has none (runs on the H200)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def progress_log(monkeypatch):
    """Where the exercise checkers' results go during tests: a list, never the learner's file.

    A stand-in for graphlab.course.progress with the one function the checkers call,
    record(lesson, exercise, passed), installed where they look the module up.
    """
    from graphlab.checks import _feedback

    log: list[tuple[str, str, bool]] = []
    stand_in = types.SimpleNamespace(record=lambda *result: log.append(result))
    monkeypatch.setattr(_feedback, "_progress", lambda: stand_in)
    return log


@pytest.fixture(scope="module", autouse=True)
def _one_browser_per_file():
    """The browser tests of a file share one chromium (tests/browser/chromium.py); it is closed
    when the file's tests are done, so that no browser outlives its file."""
    yield
    chromium.close()
