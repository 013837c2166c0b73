"""Every exercise checker: right answers pass, wrong ones fail with a precise message, and what the
learner sees of either.

The checkers run on the live backend: the CPU emulator here, torch.cuda on a GPU (the GPU runs
these same tests from tests/gpu/test_checks_cuda.py). Expected success lines and messages hold
values worked out by hand from each exercise's setup (see right_answers.py and wrong_answers.py).
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from right_answers import RIGHT, SUCCESS, busy_fraction, collect, collect_on_the_host, step
from wrong_answers import WRONG, chain_as_one_kernel, collect_references, rebinding_step

from graphlab import DEVICE, Timeline, checks, cuda
from graphlab.backend import backend
from graphlab.checks import _feedback, _sections
from graphlab.checks._observe import first_replay_kernels
from graphlab.course.syllabus import lessons as course_lessons
from graphlab.errors import CheckFailed, GraphlabError

ROOT = Path(__file__).resolve().parent.parent
LESSONS = {
    "check_busy_fraction": "00_start_here",
    "check_capture_chain": "01_kernel_gaps",
    "check_kernels_per_replay": "01_kernel_gaps",
    "check_replay_with_new_inputs": "02_static_inputs",
    "check_keep_outputs": "03_outputs",
    "check_reproducible_replays": "04_randomness",
    "check_run_padded": "05_dynamic_shapes",
    "check_padding_waste": "05_dynamic_shapes",
    "check_break_even": "06_does_it_pay",
    "check_captured_training": "07_training",
    "check_shared_pool": "08_memory",
    "check_fork_join": "09_multi_stream",
    "check_matching_replays": "13_nccl",
    "check_dispatch": "11_full_vs_piecewise",
    "check_compiled_replays": "10_torch_compile",
    "check_repoint": "12_changing_a_graph",
    "check_expected_step_time": "14_capture_sizes",
    "check_choose_sizes": "14_capture_sizes",
    "check_fixed_model": "15_debugging_capture",
    "check_fixed_branchy": "16_your_own_model",
    "check_fixed_training": "16_your_own_model",
}
on_emulator = pytest.mark.skipif(backend().is_cuda, reason="about the CPU emulator")


def run(checker: str, answer) -> None:
    """Run ``checks.<checker>`` on the learner's ``answer`` (a tuple when it takes several)."""
    getattr(checks, checker)(*(answer if isinstance(answer, tuple) else (answer,)))


def names(case) -> str:
    answer = case[1] if not isinstance(case[1], tuple) else case[1][0]
    return f"{case[0]}-{getattr(answer, '__name__', 'constant')}"


def test_every_checker_is_covered():
    assert sorted(LESSONS) == sorted(checks.__all__)
    assert {c for c, _ in RIGHT} == set(LESSONS) == {c for c, _, _ in WRONG}


def test_each_checker_records_an_exercise_its_lesson_has():
    # The progress report counts a lesson's exercises by its solution cells' ids.
    exercises = {(lesson.id, e) for lesson in course_lessons() for e in lesson.exercises}
    assert {(lesson, checker) for checker, lesson in LESSONS.items()} == exercises


# --- right and wrong answers ---------------------------------------------------------------------


@pytest.mark.parametrize(("checker", "answer"), RIGHT, ids=[names(c) for c in RIGHT])
def test_right_answers_pass(checker, answer, capsys, progress_log):
    run(checker, answer)
    assert re.fullmatch(SUCCESS[checker], capsys.readouterr().out)
    assert progress_log == [(LESSONS[checker], checker, True)]


@pytest.mark.parametrize(("checker", "answer", "words"), WRONG, ids=[names(c) for c in WRONG])
def test_wrong_answers_fail(checker, answer, words, progress_log):
    with pytest.raises(CheckFailed) as info:
        run(checker, answer)
    assert words in str(info.value)
    assert progress_log == [(LESSONS[checker], checker, False)]


def test_rebinding_message_is_the_lessons(capsys):
    # Lesson 02 prints this message as a checked output: it must not change by accident.
    with pytest.raises(CheckFailed) as info:
        checks.check_replay_with_new_inputs(rebinding_step)
    assert str(info.value) == (
        "your replay returned the first batch's result: the graph still reads the old tensor. "
        "Rebinding a name (static_x = batch) does not change the address the graph reads; copy "
        "the data in place: static_x.copy_(batch)."
    )


def test_one_kernel_instead_of_a_chain_is_named_exactly():
    with pytest.raises(CheckFailed) as info:
        checks.check_capture_chain(chain_as_one_kernel)
    assert str(info.value) == (
        "one replay of your graph ran 1 kernel(s), not the chain's 7: capture `out = out + 1` 7 "
        "times, each its own kernel. A graph replays exactly the kernels you launched while "
        "capturing; it does not merge them (that is fusion)."
    )
    assert info.value.reread == 'lesson 01_kernel_gaps, section 3 "What a graph does not change"'


@on_emulator
def test_cpu_copies_on_the_emulator_are_refused_with_the_reason():
    # On a GPU .cpu() copies an output to the host (accepted, tests/gpu); on the CPU it is a no-op.
    with pytest.raises(CheckFailed) as info:
        checks.check_keep_outputs(collect_on_the_host)
    assert str(info.value).endswith(
        "Keep static_y.clone(). (Here, on the CPU emulator, .cpu() and .to('cpu') return the very "
        "same tensor, not a copy.)"
    )


@pytest.mark.parametrize(
    ("trace", "kernels"),
    [
        ("graph_replay.json", 20),  # 20 ops captured in one graph, replayed twice
        ("multistream_replay.json", 3),  # two matmuls on two streams joined by an add
        ("h200_eager8_then_replay8.json", 8),  # 8 kernels run eagerly, then as one replay
        ("eager_chain.json", None),  # no replay at all
    ],
)
def test_kernels_of_a_replay_are_counted_in_real_gpu_traces(trace, kernels):
    # What a GPU checker reads from its profiled replay, here from traces recorded on the H200.
    timeline = Timeline.from_chrome_trace(ROOT / "tests" / "traces" / trace)
    assert first_replay_kernels(timeline) == kernels


# --- feedback: one block, no traceback -----------------------------------------------------------


def test_a_failure_shows_as_one_block():
    with pytest.raises(CheckFailed) as info:
        checks.check_replay_with_new_inputs(rebinding_step)
    assert info.value._render_traceback_() == [
        "step: not right yet",
        "  your replay returned the first batch's result: the graph still reads the old tensor. "
        "Rebinding a",
        "  name (static_x = batch) does not change the address the graph reads; copy the data in "
        "place:",
        "  static_x.copy_(batch).",
        '  Reread: lesson 02_static_inputs, section 3 "New inputs, the wrong way: rebind the name"',
    ]


def test_ipython_shows_the_block_and_no_traceback(tmp_path):
    # A fresh IPython shell in a child process, so this one's state is left alone.
    script = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_cell("from graphlab.checks import check_busy_fraction")
        shell.run_cell("check_busy_fraction(lambda t: 0.5)")
        shell.run_cell("print('next cell runs')")
        """
    )
    out = _child(script, tmp_path)
    assert out == (
        "busy_fraction: not right yet\n"
        "  busy_fraction gave the same answer, 0.5, for two different timelines: compute it from "
        "its\n"
        "  arguments.\n"
        '  Reread: lesson 00_start_here, section 3 "Reading a timeline"\n'
        "next cell runs\n"
    )


def _child(script: str, home: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "HOME": str(home), "GRAPHLAB_BACKEND": "emulator"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# each checker, and the function of the learner's it calls first
FIRST_CALLED = {
    "check_busy_fraction": "busy_fraction",
    "check_capture_chain": "capture_chain",
    "check_kernels_per_replay": "kernels_per_replay",
    "check_replay_with_new_inputs": "step",
    "check_keep_outputs": "collect",
    "check_reproducible_replays": "two_replays",
    "check_run_padded": "run_padded",
    "check_padding_waste": "padding_waste",
    "check_break_even": "break_even",
    "check_captured_training": "make_optimizer",
    "check_shared_pool": "capture_all",
    "check_fork_join": "capture_fork_join",
    "check_matching_replays": "hangs",
    "check_dispatch": "dispatch",
    "check_compiled_replays": "replayed",
    "check_repoint": "repoint",
    "check_expected_step_time": "expected_step_us",
    "check_choose_sizes": "choose_sizes",
    "check_fixed_model": "make_model",
}


@pytest.mark.parametrize(("checker", "name"), sorted(FIRST_CALLED.items()))
def test_an_untouched_stub_is_not_attempted(checker, name, capsys, progress_log):
    def stub(*args):
        raise NotImplementedError  # what every exercise cell holds before the learner writes

    two = checker in ("check_captured_training", "check_fixed_model")  # they take two answers
    answer = (stub, stub) if two else stub
    run(checker, answer)  # neither PASSED nor an error: Run All goes on
    assert capsys.readouterr().out == (
        f"not attempted yet: {name} — write your answer in the cell above, then run this check "
        "again\n"
    )
    assert progress_log == []


def test_torchs_own_not_implemented_error_is_a_crash_not_a_stub():
    def reads_a_meta_tensor(graph, static_x, static_y, batch):
        return torch.empty(4, device="meta").cpu()

    with pytest.raises(CheckFailed, match=r"^step raised NotImplementedError: Cannot copy out"):
        checks.check_replay_with_new_inputs(reads_a_meta_tensor)


def test_a_crash_shows_the_learners_own_line():
    def crashes(graph, static_x, static_y, batch):
        table = {}
        return table[3]

    line = inspect.getsourcelines(crashes)[1] + 2
    with pytest.raises(CheckFailed) as info:
        checks.check_replay_with_new_inputs(crashes)
    assert str(info.value) == (
        f"step raised KeyError: 3\n  at {__file__}, line {line}, in crashes: return table[3]"
    )
    assert isinstance(info.value.__cause__, KeyError)


@pytest.mark.filterwarnings("ignore:graphlab CPU emulator differs")  # about CPU tensors: none here
def test_a_failed_capture_points_at_its_first_error_explains_it_and_recovers():
    def reads_the_sum(static_x, n):
        g = cuda.CUDAGraph()
        with cuda.graph(g):
            out = static_x + n
            print(f"captured sum {out.sum().item()}")  # a host read: not allowed in a capture
        return g, out

    line = inspect.getsourcelines(reads_the_sum)[1] + 4
    with pytest.raises(CheckFailed) as info:
        checks.check_capture_chain(reads_the_sum)
    message = str(info.value).splitlines()
    assert message[0].startswith("capture_chain raised ")
    # The .item() inside the capture, not the end of the `with` block where the error surfaced.
    assert message[1] == (
        f"  at {__file__}, line {line}, in reads_the_sum: "
        'print(f"captured sum {out.sum().item()}")  # a host read: not allowed in a capture'
    )
    assert message[2] == "The CPU waited for the GPU inside a capture"
    assert message[3].startswith("  Cause: ") and message[4].startswith("  Fix: ")
    assert info.value.reread == "lesson 01_kernel_gaps"
    # The failed capture left its side stream current; the checker put the default one back.
    assert cuda.current_stream() == cuda.default_stream()


# --- answers no checker should choke on (each was once a traceback) ------------------------------


class Unfloatable:
    def __float__(self):
        raise RuntimeError("no float for you")


class Unprintable:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class Unspeakable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


def unspeakable(*args):
    raise Unspeakable


ODD = [
    (
        "check_busy_fraction",
        lambda t: Unfloatable(),
        "busy_fraction should return a number between 0 and 1: float() of what you returned "
        "raised RuntimeError: no float for you.",
    ),
    (
        "check_busy_fraction",
        lambda t: Unprintable(),
        "busy_fraction should return a number between 0 and 1, not an object of type "
        "Unprintable that cannot be shown (RuntimeError).",
    ),
    (
        "check_padding_waste",
        lambda sizes, buckets: 10**5000,
        "padding_waste should return a fraction: what it returned is too large for a float "
        "(about 10**5000).",
    ),
    (
        "check_padding_waste",
        lambda sizes, buckets: torch.empty((), device="meta"),
        "your answer is a tensor on the meta device: it has a shape but no values. Return the "
        "tensor the graph computed.",
    ),
    (
        "check_replay_with_new_inputs",
        lambda *args: torch.empty(4, device="meta"),
        "what step returns is a tensor on the meta device: it has a shape but no values. Return "
        "the tensor the graph computed.",
    ),
    (
        "check_keep_outputs",
        lambda *args: [Unprintable()] * 4,
        "output 0 should be a tensor, not an object of type Unprintable that cannot be shown "
        "(RuntimeError).",
    ),
    (
        "check_shared_pool",
        lambda sizes: Unprintable(),
        "capture_all should return a dict with one entry per size [64, 32, 16]; got an object of "
        "type Unprintable that cannot be shown (RuntimeError).",
    ),
]


@pytest.mark.parametrize(("checker", "answer", "message"), ODD, ids=[c[2][:40] for c in ODD])
def test_odd_answers_get_a_sentence(checker, answer, message):
    with pytest.raises(CheckFailed) as info:
        run(checker, answer)
    assert str(info.value) == message


def test_an_exception_whose_message_raises_is_still_reported():
    line = inspect.getsourcelines(unspeakable)[1] + 1
    with pytest.raises(CheckFailed) as info:
        checks.check_busy_fraction(unspeakable)
    assert str(info.value) == (
        "busy_fraction raised Unspeakable: (its message cannot be shown: __str__ raised "
        f"RuntimeError)\n  at {__file__}, line {line}, in unspeakable: raise Unspeakable"
    )


def test_a_value_the_checker_cannot_read_is_the_answers_fault():
    class Treacherous(list):
        def __len__(self):
            raise ValueError("no length")

    with pytest.raises(CheckFailed) as info:
        checks.check_keep_outputs(lambda *args: Treacherous())
    assert str(info.value).startswith(
        "what collect returned could not be checked: ValueError: no length\n  at "
    )


# --- progress ------------------------------------------------------------------------------------


def test_results_reach_the_learners_progress_file(monkeypatch, tmp_path):
    from graphlab.course import progress

    monkeypatch.undo()  # the real progress store, in a file of this test's own
    monkeypatch.setenv(progress.ENV, str(tmp_path / "progress.json"))
    checks.check_replay_with_new_inputs(step)
    with pytest.raises(CheckFailed):
        checks.check_keep_outputs(collect_references)
    stored = progress.load()
    assert sorted(stored) == ["02_static_inputs", "03_outputs"]
    assert stored["02_static_inputs"]["check_replay_with_new_inputs"]["passed"] is True
    assert stored["03_outputs"]["check_keep_outputs"]["passed"] is False


def test_a_demonstrated_wrong_answer_leaves_progress_alone(progress_log, capsys):
    # Lesson 02 shows what the checker says about rebinding, after the learner's own check.
    checks.check_replay_with_new_inputs(step)
    with pytest.raises(CheckFailed, match="first batch's result"):
        checks.check_replay_with_new_inputs(rebinding_step, record=False)
    assert progress_log == [("02_static_inputs", "check_replay_with_new_inputs", True)]


def test_progress_that_cannot_be_saved_warns_and_keeps_the_result(monkeypatch, capsys):
    def full_disk(*result):
        raise GraphlabError("no space left on the device for progress.json")

    monkeypatch.setattr(_feedback, "_progress", lambda: type("P", (), {"record": full_disk}))
    with pytest.warns(UserWarning, match="^graphlab could not save your progress: no space left"):
        checks.check_keep_outputs(collect)
    assert capsys.readouterr().out.startswith("PASSED kept outputs")


# --- the lessons the checkers point to -----------------------------------------------------------


def _headings(lesson: str) -> set[str]:
    notebook = json.loads((ROOT / "notebooks" / f"{lesson}.ipynb").read_text())
    return {
        line
        for cell in notebook["cells"]
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
        if line.startswith("## ")
    }


@pytest.mark.parametrize("section", _sections.ALL, ids=str)
def test_every_section_a_checker_points_to_exists(section):
    assert f"## {section.number}. {section.title}" in _headings(section.lesson)


def test_checkers_leave_the_default_stream_current():
    # A checker that passed leaves nothing running on a side stream.
    checks.check_busy_fraction(busy_fraction)
    checks.check_replay_with_new_inputs(step)
    assert cuda.current_stream() == cuda.default_stream()
    assert torch.ones(2, device=DEVICE).sum().item() == 2.0
