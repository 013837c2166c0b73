"""Lesson 09's checker, check_fork_join, beyond the right and wrong answers every checker meets in
tests/test_checks.py: the messages the lesson shows, the section each mistake sends the learner
back to, and the lesson behind the catalogue's multi-stream failures.

It runs on the live backend (the CPU emulator here; tests/gpu/test_multi_stream_cuda.py collects
the tests that hold on a GPU too).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from right_answers import capture_fork_join
from wrong_answers import (
    fork_before_capture,
    fork_join_joined_too_early,
    fork_join_on_one_stream,
    fork_join_unjoined,
    fork_join_wrong_factor,
)

from graphlab import checks, cuda
from graphlab.backend import backend
from graphlab.checks.multi_stream import NEW_INPUTS
from graphlab.errors import CheckFailed
from graphlab.failures.catalogue import CATALOGUE

pytestmark = pytest.mark.filterwarnings("ignore::graphlab.emulator.EmulatorDifferenceWarning")

ROOT = Path(__file__).resolve().parent.parent
FORK_JOIN = 'lesson 09_multi_stream, section 1 "Fork and join inside a capture"'
UNJOINED = 'lesson 09_multi_stream, section 4 "Forget the join: the capture fails"'
EXERCISE = 'lesson 09_multi_stream, section 6 "Exercise: fork and join"'


def failure_of(answer) -> CheckFailed:
    with pytest.raises(CheckFailed) as info:
        checks.check_fork_join(answer, record=False)
    assert not cuda.is_current_stream_capturing()
    assert cuda.current_stream() == cuda.default_stream()
    return info.value


def test_the_one_stream_message_is_the_lessons():
    # Lesson 09 prints this message as a checked output: it must not change by accident.
    failure = failure_of(fork_join_on_one_stream)
    assert str(failure) == (
        "both branches were captured on one stream (the capturing stream), so the graph runs one "
        "after the other and they can never overlap. Fork: side.wait_stream(cuda.current_stream())"
        "; put b = static_x.cos() * 3 in `with cuda.stream(side):` and keep a on the capturing "
        "stream; join: cuda.current_stream().wait_stream(side) before a + b."
    )
    assert failure.reread == FORK_JOIN


@pytest.mark.parametrize("answer", [fork_join_unjoined, fork_join_joined_too_early])
def test_an_unjoined_fork_is_told_where_the_join_goes(answer):
    failure = failure_of(answer)
    assert "cuda.current_stream().wait_stream(side)" in str(failure)
    assert failure.reread == UNJOINED


def test_wrong_values_show_yours_against_expected():
    failure = failure_of(fork_join_wrong_factor)
    assert str(failure).startswith(
        "after a replay on [-1.21, -0.84, -0.47, -0.1, 0.27, 0.64, ...] static_out is [-1.16519"
    )
    assert "expected [-0.812174" in str(failure)
    assert failure.reread == EXERCISE


@pytest.mark.skipif(backend().is_cuda, reason="about the CPU emulator")
def test_a_fork_before_the_capture_is_a_dependency_on_uncaptured_work():
    """On the emulator the capturing stream's wait for side, which never joined the capture,
    fails as CUDA's cudaErrorStreamCaptureIsolation does."""
    failure = failure_of(fork_before_capture)
    assert "waited for work on a stream that is not part of the capture" in str(failure)
    assert failure.reread == FORK_JOIN


def test_the_checker_leaves_the_default_stream_current(capsys):
    checks.check_fork_join(capture_fork_join, record=False)
    assert capsys.readouterr().out.startswith("PASSED fork/join captured")
    assert cuda.current_stream() == cuda.default_stream()


def test_new_inputs_are_not_whole_numbers():
    assert all(v != round(v) for values in NEW_INPUTS for v in values)


def test_catalogue_entries_of_lesson_09_name_a_lesson_that_exists():
    keys = {entry.key for entry in CATALOGUE if entry.lesson == "09_multi_stream"}
    assert keys == {"unjoined-fork", "uncaptured-dependency", "captured-event"}
    assert (ROOT / "notebooks" / "09_multi_stream.ipynb").is_file()
