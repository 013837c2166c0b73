"""The checkers of lesson 14 beyond the right and wrong answers that tests/test_checks.py runs for
every checker (right_answers.py, wrong_answers.py): whole messages with the section they send the
learner to, the hand-worked cases against the planner's own pricing, and the exercise's setup."""

from __future__ import annotations

import pytest
from wrong_answers import step_time_in_the_largest_graph, step_time_without_padding

from graphlab import checks
from graphlab.checks.capture_sizes import CHOICE, choice_setup, step_time_cases
from graphlab.errors import CheckFailed
from graphlab.planner import evaluate

PRICING = 'lesson 14_capture_sizes, section 3 "What a plan costs"'


def test_the_hand_worked_cases_are_what_the_planner_prices():
    for plan, histogram, costs, expected in step_time_cases():
        assert evaluate(plan, histogram, costs).expected_step_us == pytest.approx(expected, 1e-12)


def test_pricing_without_padding_is_named_whole(progress_log):
    with pytest.raises(CheckFailed) as info:
        checks.check_expected_step_time(step_time_without_padding)
    # Without padding, batch 1 costs replay_us of 1 (10.5) instead of 2 (11): 3 * 0.5 less, over
    # 15 steps: 21.7333 - 0.1 = 21.6333.
    assert str(info.value) == (
        "for sizes [2, 4] and the histogram {1: 3, 2: 5, 4: 1, 5: 2, 6: 4} you returned 21.6333, "
        "expected 21.7333: you priced each batch size at its own replay time. A step of b rows "
        "replays the graph of the smallest captured size s >= b, padded with s - b rows, so it "
        "costs replay_us of s, not of b."
    )
    assert info.value.reread == PRICING
    assert progress_log == [("14_capture_sizes", "check_expected_step_time", False)]


def test_steps_above_the_largest_graph_are_eager():
    with pytest.raises(CheckFailed) as info:
        checks.check_expected_step_time(step_time_in_the_largest_graph, record=False)
    # 5 and 6 in the graph of 4 (13 µs): (33 + 55 + 13 + 6 * 13) / 15 = 179 / 15.
    assert str(info.value).startswith(
        "for sizes [2, 4] and the histogram {1: 3, 2: 5, 4: 1, 5: 2, 6: 4} you returned 11.9333, "
        "expected 21.7333: batch sizes [5, 6] are above the largest captured size 4"
    )


def test_the_choice_exercise_is_set_as_the_lesson_says():
    histogram, costs, preset = choice_setup()
    assert CHOICE["max_graphs"] == 6 and CHOICE["memory_mib"] == 2.0
    assert int(histogram.sizes.max()) == 47  # section 6: "largest batch 47"
    assert preset == [1, 2, 4, 8, 16, 32, 64]
    # 7 graphs of 2 MiB each in the H200 table: 2 MiB in one shared pool, 14 in separate ones
    assert evaluate(preset, histogram, costs).memory_mib == 2.0
    assert evaluate(preset, histogram, costs, shared_pool=False).memory_mib == 14.0


def test_a_choice_over_the_budget_names_the_memory(progress_log):
    with pytest.raises(CheckFailed) as info:
        checks.check_choose_sizes(lambda histogram, costs, k, mib: [16, 32, 47, 200])
    # Size 200 keeps 24 MiB in the H200 table, the others 2: in one pool, the largest.
    assert str(info.value) == (
        "your sizes [16, 32, 47, 200] keep 24 MiB of graphs in one shared pool (their largest "
        "graph_mib), over the 2 MiB budget: a larger graph holds more memory, so pick smaller "
        "sizes."
    )
    # Sent back to how a plan is priced, not to the planner the exercise asks not to use.
    assert info.value.reread == 'lesson 14_capture_sizes, section 3 "What a plan costs"'
    assert progress_log == [("14_capture_sizes", "check_choose_sizes", False)]
