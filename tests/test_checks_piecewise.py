"""check_dispatch (lesson 11) beyond the right and wrong answers that tests/test_checks.py runs
for every checker (right_answers.py, wrong_answers.py): the whole message of a failure, with the
section it sends the learner to, and a mistake only the full graphs reveal."""

from __future__ import annotations

import pytest
from wrong_answers import dispatch_eagerly, dispatch_view, replay_in_bucket

from graphlab import checks
from graphlab.backend import backend
from graphlab.errors import CheckFailed
from graphlab.timing.decoder import describe


def test_a_batch_that_never_reaches_a_graph_is_named_with_its_bucket(progress_log):
    with pytest.raises(CheckFailed) as info:
        checks.check_dispatch(dispatch_eagerly)
    assert str(info.value) == (
        "for a batch of 5 tokens, which fits the bucket of 8, no graph was replayed (piecewise "
        "graphs): copy the rows into graphs[8].static_x[:5] and call graphs[8].replay(seq_lens)."
    )
    assert info.value.reread == 'lesson 11_full_vs_piecewise, section 5 "A dispatcher and its key"'
    assert progress_log == [("11_full_vs_piecewise", "check_dispatch", False)]


def test_an_output_that_is_static_out_sends_the_learner_to_lesson_03(progress_log):
    with pytest.raises(CheckFailed) as info:
        checks.check_dispatch(dispatch_view)
    advice = (
        "Keep static_out[:5].clone() (or .cpu(), which copies to the host)."
        if backend().is_cuda
        else "Keep static_out[:5].clone(). (Here, on the CPU emulator, .cpu() and .to('cpu') "
        "return the very same tensor, not a copy.)"
    )
    assert str(info.value) == (
        "the output for the batch of 5 tokens shares memory with the bucket's static_out, which "
        f"the next replay overwrites. {advice}"
    )
    assert info.value.reread == 'lesson 03_outputs, section 3 "Keep copies"'


def test_skipping_the_metadata_is_caught_on_the_full_graphs(progress_log):
    """Replaying a full graph without giving it the batch's prompts keeps the metadata of the
    batch before: right on piecewise graphs, which never read it, wrong on full graphs."""

    def skips_metadata(graphs, layer, x, seq_lens):
        runner = graphs.get(describe(seq_lens, graphs).padded)
        if runner is None:
            return layer(x, seq_lens)
        if not hasattr(runner, "static_metadata"):
            return replay_in_bucket(graphs, x, seq_lens).static_out[: x.shape[0]].clone()
        runner.static_x[: x.shape[0]].copy_(x)
        runner._graph.replay()  # the graph alone: the metadata stays the capture's, one prompt
        runner.replays += 1
        return runner.static_out[: x.shape[0]].clone()

    with pytest.raises(
        CheckFailed, match=r"^for the batch of prompts \[3, 2\] your output differs"
    ):
        checks.check_dispatch(skips_metadata)
    assert progress_log == [("11_full_vs_piecewise", "check_dispatch", False)]
