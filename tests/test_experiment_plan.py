"""The plan of ``graphlab record``: lessons found among the experiments package's modules.

A lesson's module joins the plan by defining ``LESSON``; nothing else names it. These tests add a
module on a folder of pytest's tmp_path to the package's search path, so the package is left alone.
"""

from __future__ import annotations

import dataclasses
import sys
import textwrap

import pytest

from graphlab.errors import GraphlabError
from graphlab.timing import experiments as package
from graphlab.timing.experiments import multi_stream, plan

EXTRA = """
from graphlab.timing.experiments.experiment import Experiment, Lesson

def _plan(quick):
    return [] if quick else [Experiment("extra_one", "extra", build=lambda: None, iterations=1)]

LESSON = Lesson(kind="extra", position=35, plan=_plan)
"""


@pytest.fixture
def fresh_plan():
    plan.lessons.cache_clear()
    yield
    plan.lessons.cache_clear()


def test_the_plan_runs_the_lessons_in_their_positions(fresh_plan):
    assert [(lesson.kind, lesson.position) for lesson in plan.lessons()] == [
        ("chain", 10),
        ("fork_join", 20),
        ("break_even", 30),
        ("decoder", 40),
    ]
    assert [e.name for e in package.experiments(quick=True)] == [
        "chain_10_k4096",
        "chain_100_k4096",
        "break_even_chain_10_k4096",
    ]


def test_a_new_module_with_a_lesson_joins_the_plan_at_its_position(
    tmp_path, monkeypatch, fresh_plan
):
    (tmp_path / "extra_lesson.py").write_text(textwrap.dedent(EXTRA))
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, f"{package.__name__}.extra_lesson", raising=False)
    try:
        names = [e.name for e in package.experiments()]
        assert names.index("extra_one") == names.index("break_even_mlp_l16_w64_b4") + 1
        assert names[names.index("extra_one") + 1] == "decoder_full_vs_piecewise"
        assert "extra_one" not in [e.name for e in package.experiments(quick=True)]
        assert plan.lesson_of("extra").position == 35
    finally:
        sys.modules.pop(f"{package.__name__}.extra_lesson", None)


def test_two_lessons_at_one_position_are_refused(monkeypatch, fresh_plan):
    monkeypatch.setattr(
        multi_stream, "LESSON", dataclasses.replace(multi_stream.LESSON, position=10)
    )
    with pytest.raises(GraphlabError, match=r"share the position 10: give each module's LESSON"):
        plan.lessons()


def test_an_experiment_of_no_lesson_gets_the_default_steps(fresh_plan):
    from graphlab.timing.experiments.experiment import capture_workload, describe_comparison
    from graphlab.timing.profiled import profile_timelines

    lesson = plan.lesson_of("made by hand")
    assert (lesson.describe, lesson.capture, lesson.profile) == (
        describe_comparison,
        capture_workload,
        profile_timelines,
    )
    assert lesson.plan(False) == []
