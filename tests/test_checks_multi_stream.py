"""Lesson 09's checker, check_fork_join, against correct alternatives and typical mistakes.

It runs on the live backend (the CPU emulator here). The first new input the checker replays on
is 0.37 k - 1.21 for k = 0..6; for k = 0, 2 sin(-1.21) + 3 cos(-1.21) = -0.812174 and, with the
wrong factor 2 on the cosine, 2 sin(-1.21) + 2 cos(-1.21) = -1.165193 (worked out with math.sin
and math.cos).
"""

from __future__ import annotations

from pathlib import Path

import fork_join_answers as answers
import pytest

from graphlab import checks, cuda
from graphlab.checks.multi_stream import NEW_INPUTS
from graphlab.errors import CheckFailed
from graphlab.failures.catalogue import CATALOGUE

pytestmark = pytest.mark.filterwarnings("ignore::graphlab.emulator.EmulatorDifferenceWarning")

ROOT = Path(__file__).resolve().parent.parent
PASSED = (
    "PASSED fork/join captured, replayed on 3 new inputs: streams the sin and cos branches were "
    "captured on: yours 2 vs expected 2\n"
)


@pytest.fixture(autouse=True)
def default_stream_after():
    yield
    cuda.set_stream(cuda.default_stream())


@pytest.mark.parametrize("answer", answers.RIGHT, ids=lambda f: f.__name__)
def test_correct_fork_joins_pass(answer, capsys):
    checks.check_fork_join(answer)
    assert capsys.readouterr().out == PASSED


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (answers.unjoined, "never joined back (CUDA's 'capturing stream has unjoined work')"),
        (answers.joined_too_early, "After the side stream's last captured operation"),
        (answers.one_stream, "both branches were captured on one stream (the capturing stream)"),
        (answers.both_on_side, "both branches were captured on one stream (side)"),
        (answers.cos_before_capture, "the graph computes no cos"),
        (answers.wrong_formula, "expected [-0.812174"),
    ],
    ids=lambda value: getattr(value, "__name__", "message"),
)
def test_mistakes_are_refused_with_their_fix(answer, says):
    with pytest.raises(CheckFailed) as info:
        checks.check_fork_join(answer)
    assert says in str(info.value)
    assert not cuda.is_current_stream_capturing()


def test_the_wrong_formula_shows_yours_against_expected():
    with pytest.raises(CheckFailed) as info:
        checks.check_fork_join(answers.wrong_formula)
    message = str(info.value)
    assert "static_out is [-1.16519" in message
    assert message.startswith("after a replay on [-1.21, -0.84, -0.47, -0.1, 0.27, 0.64, ...]")


def test_unjoined_message_names_the_join_and_the_section():
    with pytest.raises(CheckFailed) as info:
        checks.check_fork_join(answers.unjoined)
    message = str(info.value)
    assert "cuda.current_stream().wait_stream(side)" in message
    assert message.endswith("Reread section 4 of lesson 09_multi_stream.")


def test_fork_before_the_capture_is_a_dependency_on_uncaptured_work():
    """On the emulator the wait of the capturing stream for side, which never joined the
    capture, fails as CUDA's cudaErrorStreamCaptureIsolation does."""
    with pytest.raises(CheckFailed, match="waited for work on a stream that is not part of"):
        checks.check_fork_join(answers.fork_before_capture)


@pytest.mark.parametrize(
    ("returned", "says"),
    [
        (None, "should return a pair (graph, static_out)"),
        ((1, 2, 3), "should return a pair (graph, static_out)"),
        (("graph", None), "the cuda.CUDAGraph you captured into, not str"),
    ],
)
def test_what_is_returned_must_be_the_graph_and_its_output(returned, says):
    with pytest.raises(CheckFailed, match=says.replace("(", r"\(").replace(")", r"\)")):
        checks.check_fork_join(lambda static_x, side: returned)


def test_a_list_is_as_good_a_pair_as_a_tuple(capsys):
    checks.check_fork_join(lambda static_x, side: list(answers.wait_stream(static_x, side)))
    assert capsys.readouterr().out == PASSED


def test_an_output_that_is_not_a_tensor_is_refused():
    def returns_a_list(static_x, side):
        g, out = answers.wait_stream(static_x, side)
        return g, out.tolist()

    with pytest.raises(CheckFailed, match="the tensor the graph writes"):
        checks.check_fork_join(returns_a_list)


def test_a_stale_output_is_refused():
    def output_copied_at_capture(static_x, side):
        g, out = answers.wait_stream(static_x, side)
        g.replay()
        return g, out.clone()  # the first input's result, which no replay rewrites

    with pytest.raises(CheckFailed, match="still holds the result for the first input"):
        checks.check_fork_join(output_copied_at_capture)


def test_the_stub_is_reported_as_such():
    def stub(static_x, side):
        raise NotImplementedError

    with pytest.raises(CheckFailed, match="still the stub"):
        checks.check_fork_join(stub)


def test_new_inputs_are_not_whole_numbers():
    assert all(v != round(v) for values in NEW_INPUTS for v in values)


def test_catalogue_entries_of_lesson_09_name_a_lesson_that_exists():
    keys = {entry.key for entry in CATALOGUE if entry.lesson == "09_multi_stream"}
    assert keys == {"unjoined-fork", "uncaptured-dependency", "captured-event"}
    assert (ROOT / "notebooks" / "09_multi_stream.ipynb").is_file()
