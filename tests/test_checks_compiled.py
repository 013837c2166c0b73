"""Lesson 10's checker, check_compiled_replays: each kind of wrong verdict is refused with the
evidence it missed, and two correct ways of deciding pass."""

from __future__ import annotations

import numpy as np
import pytest
from right_answers import replayed, replayed_by_the_log
from wrong_answers import (
    constant,
    replayed_exactly_once,
    replayed_if_any_replay,
    replayed_ignoring_skips,
    replayed_unless_skipped,
    replayed_without_counting_replays,
)

from graphlab.checks import check_compiled_replays
from graphlab.errors import CheckFailed

SUCCESS = "PASSED calls that really replayed, of 8: yours 2 vs expected 2\n"


@pytest.mark.parametrize("answer", [replayed, replayed_by_the_log])
def test_correct_verdicts_pass(answer, capsys):
    check_compiled_replays(answer)
    assert capsys.readouterr().out == SUCCESS


def test_a_numpy_bool_is_a_verdict(capsys):
    check_compiled_replays(lambda calls: np.bool_(replayed(calls)))
    assert capsys.readouterr().out == SUCCESS


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        # says True for the warm-up call, which captured the tree's pool graph and replayed nothing
        (constant(True), "the first call (warm-up) {'captures': 1, 'replays': 0"),
        (constant(False), "no capture, 1 replay(s), no skip) but you said it did not"),
        # the recording call replays once, right after its capture
        (replayed_if_any_replay, "the second call (recording) {'captures': 1, 'replays': 1"),
        (replayed_unless_skipped, "so it recorded (or warmed up) rather than replayed"),
        (
            replayed_ignoring_skips,
            "a compiled region was skipped ('skipping cudagraphs due to cpu device (arg1_1)')",
        ),
        (replayed_without_counting_replays, "a call that ran eagerly without a word"),
        (replayed_exactly_once, "no capture, 3 replay(s), no skip"),
        (constant(1), "replayed should return True or False, not 1."),
    ],
)
def test_each_kind_of_wrong_verdict_is_refused(answer, words):
    with pytest.raises(CheckFailed) as failure:
        check_compiled_replays(answer)
    assert words in str(failure.value)


def test_the_learner_cannot_change_the_cases():
    def erases_the_log(calls):
        calls["log"].clear()
        return replayed(calls)

    check_compiled_replays(erases_the_log)
    check_compiled_replays(replayed)  # the next check still sees the skip lines


def test_the_verdicts_go_to_the_progress_of_lesson_10(progress_log):
    check_compiled_replays(replayed)
    with pytest.raises(CheckFailed):
        check_compiled_replays(constant(True))
    assert progress_log == [
        ("10_torch_compile", "check_compiled_replays", True),
        ("10_torch_compile", "check_compiled_replays", False),
    ]


def test_the_stub_is_not_attempted(capsys):
    def stub(calls):
        raise NotImplementedError

    check_compiled_replays(stub)
    assert capsys.readouterr().out.startswith("not attempted yet: replayed")
