"""Lesson 15's checker, check_fixed_model, beyond the right and wrong answers every checker meets in
tests/test_checks.py: its expected values are the lesson's own broken model run eagerly, the
message the lesson prints is exact, each mistake sends the learner to the section that shows it,
and a capture that fails leaves nothing behind.

It runs on the live backend (the CPU emulator here; tests/gpu/test_checks_cuda.py runs the shared
right and wrong answers on a GPU).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from right_answers import make_counting_model, step_by_slice_and_detach
from wrong_answers import (
    fixed_step,
    make_model_cpu_counter,
    make_model_right,
    make_model_synced,
    step_rebinding,
    step_replaying_twice,
    step_returning_static_out,
    step_without_replay,
)

from graphlab import DEVICE, checks, cuda
from graphlab.checks.debugging import scaled
from graphlab.errors import CheckFailed

pytestmark = pytest.mark.filterwarnings("ignore::graphlab.emulator.EmulatorDifferenceWarning")

LESSON = Path(__file__).resolve().parent.parent / "notebooks" / "15_debugging_capture.ipynb"
FIRST_ERROR = 'lesson 15_debugging_capture, section 2 "Read the first error, then the catalogue"'
CAPTURED = 'lesson 15_debugging_capture, section 5 "See what was captured"'
EXERCISE = 'lesson 15_debugging_capture, section 8 "Exercise: fix the model"'


def lesson_scaler() -> type:
    """The broken ``Scaler`` exactly as lesson 15 defines it, from the notebook's own cell."""
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    source = next(
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and "class Scaler(" in "".join(c["source"])
    )
    definition = source[: source.index("\n\n\ndef new_batch")]
    namespace = {"torch": torch, "DEVICE": DEVICE}
    exec(definition, namespace)
    return namespace["Scaler"]


def failure_of(make_model, step) -> CheckFailed:
    with pytest.raises(CheckFailed) as info:
        checks.check_fixed_model(make_model, step, record=False)
    assert not cuda.is_current_stream_capturing()
    assert cuda.current_stream() == cuda.default_stream()
    return info.value


def test_the_expected_values_are_worked_out_by_hand():
    # peak 4; weights 0.5, 0.7, ..., 1.5; the third call is cooled by 1 / 1.3
    x = torch.tensor([[1.0, -2.0, 0.5, 4.0, -1.0, 0.0], [0.25, 3.0, -3.5, 2.0, 1.5, -0.75]])
    weights = [0.5, 0.7, 0.9, 1.1, 1.3, 1.5]
    by_hand = [
        [math.tanh(v / 4 * w) / 1.3 for v, w in zip(row, weights, strict=True)]
        for row in x.tolist()
    ]
    assert torch.allclose(scaled(x, 3), torch.tensor(by_hand), rtol=1e-6)


def test_the_expected_values_are_the_lessons_eager_scaler_call_after_call():
    scaler = lesson_scaler()()
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for call in (1, 2, 3, 4):
            x = (torch.randn(4, 6, generator=generator) * call).to(DEVICE)
            assert torch.allclose(scaler(x), scaled(x, call), rtol=1e-6)


@pytest.mark.parametrize(
    ("make_model", "step"),
    [(make_model_right, fixed_step), (make_counting_model, step_by_slice_and_detach)],
)
def test_right_answers_pass_and_leave_the_default_stream_current(make_model, step, capsys):
    checks.check_fixed_model(make_model, step, record=False)
    assert capsys.readouterr().out == (
        "PASSED replays of your fixed model equal to eager calls, on new batches: yours 3 vs "
        "expected 3\n"
    )
    assert cuda.current_stream() == cuda.default_stream()


def test_the_lessons_broken_model_gets_the_message_the_lesson_prints():
    # Lesson 15 prints this message as a checked output: it must not change by accident.
    failure = failure_of(lesson_scaler(), fixed_step)
    assert str(failure) == (
        "your model still makes the CPU wait for the GPU inside the capture (.item(), float(t), "
        "print(t) or a data-dependent shape): keep the value on the GPU, x / x.abs().amax() "
        "instead of x / x.abs().max().item()."
    )
    assert failure.reread == FIRST_ERROR


def test_a_host_sync_in_a_model_with_a_gpu_counter_is_the_same_mistake():
    assert failure_of(make_model_synced, fixed_step).reread == FIRST_ERROR


def test_a_cpu_counter_is_caught_at_the_second_replay_and_sent_to_what_was_captured():
    # The capture is the third call, so the first replay's temperature (1 / 1.3) is right.
    failure = failure_of(make_model_cpu_counter, fixed_step)
    assert str(failure).startswith("replay 2 of your model was cooled as the call during capture")
    assert "self.calls.add_(1)" in str(failure)
    assert failure.reread == CAPTURED


@pytest.mark.parametrize(
    ("step", "words"),
    [
        (step_without_replay, "step never replayed the graph (0 replays for this batch)"),
        (step_replaying_twice, "step replayed the graph 2 times for one batch"),
        (step_rebinding, "after step, static_x does not hold the batch"),
        (step_returning_static_out, "step returned static_out itself (or a view of it)"),
    ],
)
def test_each_wrong_step_is_named_in_one_sentence(step, words):
    failure = failure_of(make_model_right, step)
    assert str(failure).startswith(words)
    assert failure.reread == EXERCISE


def test_a_step_with_the_right_numbers_but_no_replay_is_told_so():
    def eager_step(graph, static_x, static_out, batch):
        static_x.copy_(batch)
        return scaled(batch, 3)  # the first new batch's answer, computed without the graph

    failure = failure_of(make_model_right, eager_step)
    assert "although its numbers are right" in str(failure)


def test_a_model_that_is_not_a_module_is_refused():
    failure = failure_of(lambda: "FixedScaler", fixed_step)
    assert str(failure) == (
        "make_model should return your fixed model (a torch.nn.Module), not 'FixedScaler'."
    )
