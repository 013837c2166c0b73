"""Lesson 13's exercise and demonstration: which ranks wait when replays do not match.

The right and wrong answers of ``check_matching_replays`` also run with every other checker's in
test_checks.py; here each kind of wrong answer must get its own full explanation, and the gloo
demonstration must really hang and be stopped at its time limit.
"""

from __future__ import annotations

import signal

import pytest
from right_answers import hangs, hangs_walking_the_ranks
from wrong_answers import (
    hangs_at_positions,
    hangs_comparing_graphs,
    hangs_lowest_rank_only,
    hangs_with_finished_ranks,
)

from graphlab.checks import check_matching_replays
from graphlab.checks.nccl import replay_on_gloo_ranks
from graphlab.errors import CheckFailed
from graphlab.failures import IsolatedFailure, isolated
from graphlab.failures.catalogue import CATALOGUE

A, B, G = "all_reduce 4096", "all_reduce 1024", "all_gather 4096"


@pytest.mark.parametrize("answer", [hangs, hangs_walking_the_ranks])
def test_two_different_right_answers_pass(answer, capsys):
    check_matching_replays(answer, record=False)
    assert capsys.readouterr().out == (
        "PASSED waiting ranks of the last case: yours {0: 1, 1: 3, 2: 1} vs expected "
        "{0: 1, 1: 3, 2: 1}\n"
    )


WRONG = [
    (
        hangs_comparing_graphs,
        f"for replays {[[[A, B], [], [G]], [[A], [B, G]]]} you returned {{0: 0, 1: 0}}, "
        "expected {}. Every rank launches the same collectives in the same order; where the "
        "graphs are cut does not matter, NCCL pairs collectives by their order.",
    ),
    (
        hangs_with_finished_ranks,
        f"for replays {[[[A], [A], [A]], [[A], [A]]]} you returned {{0: 2, 1: 1}}, expected "
        "{0: 2}. A rank that has no collective left at the mismatch launches nothing there and "
        "does not wait: leave it out.",
    ),
    (
        hangs_lowest_rank_only,
        f"for replays {[[[A], [A, B]], [[A], [A], [G]]]} you returned {{0: 1}}, expected "
        "{0: 1, 1: 2}. Every rank that launched a collective at the first mismatch waits, not "
        "only one of them.",
    ),
    (
        hangs_at_positions,
        f"for replays {[[[A], [A, B]], [[A], [A], [G]]]} you returned {{0: 2, 1: 2}}, expected "
        "{0: 1, 1: 2}. Those are collective positions; return the step, the index of the replay "
        "(graph) that holds the waiting collective on that rank.",
    ),
]


@pytest.mark.parametrize(("answer", "message"), WRONG, ids=[w[0].__name__ for w in WRONG])
def test_each_kind_of_wrong_answer_is_named(answer, message):
    with pytest.raises(CheckFailed) as info:
        check_matching_replays(answer, record=False)
    assert str(info.value) == message


def test_a_result_that_is_not_a_dict_is_refused():
    with pytest.raises(CheckFailed) as info:
        check_matching_replays(lambda replays: [0, 2], record=False)
    assert str(info.value) == "hangs should return a dict {rank: step}, not [0, 2]."


def test_none_counts_as_no_rank_waiting(capsys):
    # hangs_walking_the_ranks returns None where nothing waits; the first case is such a case.
    check_matching_replays(hangs_walking_the_ranks, record=False)
    assert capsys.readouterr().out.startswith("PASSED")


def test_the_catalogue_sends_a_collective_timeout_to_this_lesson():
    (entry,) = [e for e in CATALOGUE if e.key == "nccl-mismatch"]
    assert entry.lesson == "13_nccl"


def test_matching_replays_on_two_gloo_ranks_finish():
    # Rank 1 cuts the same two collectives into different graphs: they still meet.
    assert isolated(replay_on_gloo_ranks, [[[A, B]], [[A], [B]]], hold_s=1, timeout=120) == [0, 0]


def test_a_replay_the_other_rank_never_makes_hangs_until_the_time_limit(capfd, monkeypatch):
    # Unbuffered, as a notebook runner may run the kernel: each rank line must still be whole.
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    with pytest.raises(IsolatedFailure) as info:
        isolated(replay_on_gloo_ranks, [[[A], [A], [A]], [[A], [A]]], hold_s=300, timeout=40)
    failure = info.value
    # Stopped at the time limit (not ended by itself within its 300 s hold), and reaped.
    assert failure.timed_out
    assert failure.exitcode == -signal.SIGTERM
    assert str(failure).startswith("the isolated run did not finish within 40 s and was stopped\n")
    assert failure.explanation.key == "child-timeout"
    assert "a collective that another rank never launches" in failure.explanation.cause
    # Both ranks got through their first two replays; rank 0 started its third and never ended it.
    # The two ranks' lines interleave in any order, but each is whole.
    launch = "rank {}: replay {} launches ['all_reduce 4096']"
    done = "rank {}: replay {} done"
    rank_0 = [launch.format(0, 0), done.format(0, 0), launch.format(0, 1), done.format(0, 1)]
    rank_1 = [launch.format(1, 0), done.format(1, 0), launch.format(1, 1), done.format(1, 1)]
    expected = [*rank_0, launch.format(0, 2), *rank_1, "rank 1: no replay left"]
    assert sorted(capfd.readouterr().out.splitlines()) == sorted(expected)
