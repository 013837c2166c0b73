"""graphlab.diagnose on the CPU: every blocker named with its line, the capture attempt, the
report's forms, the CLI and the cell magic. (tests/gpu/test_diagnose_cuda.py runs on a GPU.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import graphlab
from graphlab.diagnose import examples
from graphlab.diagnose.blockers import find_blockers
from graphlab.diagnose.fixes import FIXES

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import diagnose_models  # noqa: E402

MODELS = HERE / "diagnose_models.py"
EXAMPLES = Path(examples.__file__)
ROOT = HERE.parent
JSON_KEYS = {
    "capturable", "blockers", "kernels", "eager_us", "replay_us", "break_even_calls",
    "recommendation", "backend",
}  # fmt: skip


def marked(path: Path) -> list[tuple[str, int]]:
    """``(kind, line)`` of every line of ``path`` that ends with ``# blocker: KIND``."""
    found = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        match = re.search(r"# blocker: ([a-z-]+)$", text)
        if match:
            found.append((match.group(1), number))
    return found


def line_of(path: Path, text: str) -> int:
    (number,) = [i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


def test_every_blocker_is_named_with_its_line_and_the_catalogue_fix():
    fn, inputs = diagnose_models.everything()
    scan = find_blockers(fn, inputs)
    expected = marked(MODELS)
    assert len(expected) == 9
    assert [(b.kind, b.line) for b in scan.blockers] == expected
    assert {b.file for b in scan.blockers} == {str(MODELS)}
    assert all(b.fix == FIXES[b.kind] for b in scan.blockers)


def test_a_clean_model_has_no_blocker_and_its_kernels_are_counted():
    fn, inputs = diagnose_models.clean()
    scan = find_blockers(fn, inputs)
    assert scan.blockers == []
    # Three addmm and two relu: the five kernels of this MLP.
    assert scan.ops == ["aten.addmm.default", "aten.relu.default"] * 2 + ["aten.addmm.default"]


def test_the_lesson_models_blockers():
    fn, inputs = examples.branchy()
    kinds = [(b.kind, b.line) for b in find_blockers(fn, inputs).blockers]
    assert kinds == [
        ("host-sync", line_of(EXAMPLES, "if h.mean().item() > 0:")),
        ("data-dependent-shape", line_of(EXAMPLES, "return h[h > 0].sum()")),
    ]
    fn, inputs = examples.training_step()
    (blocker,) = find_blockers(fn, inputs).blockers
    assert (blocker.kind, blocker.line) == ("optimizer", line_of(EXAMPLES, "optimizer.step()"))
    fn, inputs = examples.training_step(capturable=True)
    assert find_blockers(fn, inputs).blockers == []


def test_an_optimizer_passed_but_never_stepped_is_still_checked():
    model = torch.nn.Linear(4, 1)
    adam = torch.optim.Adam(model.parameters())
    scan = find_blockers(model, (torch.randn(2, 4),), optimizer=adam)
    assert [(b.kind, b.file) for b in scan.blockers] == [("optimizer", None)]


def test_diagnose_a_model_that_captures():
    fn, inputs = diagnose_models.clean()
    report = graphlab.diagnose(fn, *inputs, steps=4)
    d = report.to_dict()
    assert set(d) >= JSON_KEYS
    assert (d["capturable"], d["blockers"], d["kernels"]) == (True, [], 5)
    assert d["backend"] == "CPU emulator + simulator"
    assert d["capture"]["captured"] and d["capture"]["replay_equals_eager"]
    assert d["capture"]["pool_bytes"] > 0  # the graph's private pool holds its output at least
    assert d["timing"]["estimate"] is True
    assert "5 kernels of 3 µs assumed" in d["timing"]["source"]
    n_star = d["timing"]["capture_us"] / (d["eager_us"] - d["replay_us"])
    assert d["break_even_calls"] == pytest.approx(n_star)
    assert "GPU only" in d["compiled"]["needs_gpu"]
    json.dumps(d)


def test_one_kernel_and_one_input_are_counted_in_the_singular():
    report = graphlab.diagnose(torch.nn.Linear(4, 4), torch.randn(2, 4), steps=1, compile=False)
    text = str(report)
    assert "1 kernel per step;" in text and "1 kernels" not in text
    assert report.timing["source"].endswith(", 1 kernel of 3 µs assumed, 1 input copy")


def test_diagnose_a_model_that_does_not_capture():
    fn, inputs = examples.branchy()
    d = graphlab.diagnose(fn, *inputs).to_dict()
    assert (d["capturable"], d["eager_us"], d["replay_us"]) == (False, None, None)
    assert d["capture"]["captured"] is False
    assert "cudaErrorStreamCapture" in d["capture"]["error"]
    # A long error is cut after a whole sentence, not mid-word ("the graph object can b…").
    assert len(d["capture"]["error"]) <= 300
    assert d["capture"]["error"].endswith(". …") or not d["capture"]["error"].endswith("…")
    assert d["recommendation"] == "piecewise"
    # The failed capture left its side stream current; the diagnosis put the caller's back.
    assert graphlab.cuda.current_stream() == graphlab.cuda.default_stream()
    assert f"examples.py:{line_of(EXAMPLES, '.item() > 0')}" in d["advice"]


def test_several_shapes_give_one_graph_each_and_the_padding_of_one():
    model = torch.nn.Linear(4, 4)
    d = graphlab.diagnose(
        model, torch.randn(2, 4), more_inputs=[(torch.randn(8, 4),), (torch.randn(2, 4),)]
    ).shapes
    # Rows 2, 8, 2 padded to 8: 12 of 24 rows are real.
    assert (d["graphs"], d["pad_to_rows"], d["padding_fraction"]) == (2, 8, 0.5)


def test_report_forms():
    fn, inputs = examples.branchy()
    report = graphlab.diagnose(fn, *inputs)
    text = str(report)
    assert "Blockers (2)" in text and "Recommendation: piecewise" in text
    html = report._repr_html_()
    assert f"examples.py:{line_of(EXAMPLES, 'return h[h > 0].sum()')}" in html
    assert "data-dependent shape" in html
    assert report._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ((42, torch.randn(2)), "function or an nn.Module"),
        ((torch.nn.Linear(2, 2), 3.0), "example inputs as tensors"),
    ],
)
def test_bad_arguments_say_what_to_do(value, message):
    with pytest.raises(graphlab.GraphlabError, match=message):
        graphlab.diagnose(*value)


# ----------------------------------------------------------------------------------- CLI


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphlab", "diagnose", *args],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )  # fmt: skip


@pytest.mark.slow  # a fresh Python importing torch per run
def test_cli_json_for_a_model_that_captures_and_one_that_does_not():
    done = cli(f"{MODELS}:clean", "--json", "--steps", "3")
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert set(d) >= JSON_KEYS and d["capturable"] is True and d["kernels"] == 5
    done = cli(f"{EXAMPLES}:training_step", "--json")
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert d["capturable"] is False
    assert [(b["kind"], b["line"]) for b in d["blockers"]] == [
        ("optimizer", line_of(EXAMPLES, "optimizer.step()"))
    ]


@pytest.mark.slow  # a fresh Python importing torch per case
@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_file.py:make", "no_such_file.py: no such file"),
        (f"{MODELS}:absent", "has no function 'absent'"),
        (f"{MODELS}", "is not FILE.py:NAME"),
        (f"{MODELS}:not_a_pair", "returned a int, not (fn_or_module, example_inputs)"),
        (f"{MODELS}:raises", "raises() raised ValueError: no model today"),
    ],
)
def test_cli_unusable_file_or_name_is_one_line_and_exit_2(target, message):
    done = cli(target)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr


# --------------------------------------------------------------------------------- magic


def test_cell_magic_diagnoses_the_last_call(capsys):
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "graphlab")
    cell = (
        "from graphlab.diagnose.examples import branchy\n"
        "model, (x,) = branchy()\n"
        "model(x)\n"
    )  # fmt: skip
    report = shell.run_cell_magic("graphlab_diagnose", "", cell)
    assert [b["kind"] for b in report.blockers] == ["host-sync", "data-dependent-shape"]
    with pytest.raises(UsageError, match="end the cell with a call"):
        shell.run_cell_magic("graphlab_diagnose", "", "y = 1\n")


def test_a_collective_is_named_at_its_line():

    import torch.distributed as dist

    # An in-process store: a TCP store on a just-freed port could hang destroy_process_group
    # (seen on torch 2.5), and one rank needs no network.
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
    try:

        def step(x):
            y = x * 2
            dist.all_reduce(y)
            return y

        (blocker,) = find_blockers(step, (torch.randn(4),)).blockers
    finally:
        dist.destroy_process_group()
    # all_reduce is the step's third line, counting its def
    assert (blocker.kind, blocker.line) == ("collective", step.__code__.co_firstlineno + 2)
    assert blocker.fix == FIXES["collective"]


def test_code_without_a_file_is_the_users_too():
    # A step typed at a prompt or run by exec (the cell magic's setup lines) has no file.
    namespace = {}
    exec(compile("def step(x):\n    return x.sum().item()\n", "<cell>", "exec"), namespace)
    (blocker,) = find_blockers(namespace["step"], (torch.randn(3),)).blockers
    assert (blocker.kind, blocker.file, blocker.line) == ("host-sync", "<cell>", 2)
