"""graphlab.diagnose on a GPU (``pytest -m cuda``): the same blockers at the same lines as on the
CPU, CUDA's own refusal of the capture, and the report's figures against ``graphlab.compare``
run separately.

Tolerance of the timing comparison: the report and the separate ``compare`` are two runs of the
same median-of-20 measurement in two processes, so their figures differ by timing noise only. A
step of a few dozen µs moves by a few µs between runs on the H200 (launch jitter, clocks), so
the figures must agree within 50% or 10 µs, whichever is larger; a report that, say, timed a
profiled run (about twice eager's launch cost) or left the input copy out of the replay would
fall outside it for the MLP's short step.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import graphlab
from graphlab.diagnose import examples
from graphlab.diagnose.blockers import find_blockers

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import diagnose_models  # noqa: E402
from test_diagnose import EXAMPLES, JSON_KEYS, MODELS, line_of, marked  # noqa: E402

pytestmark = pytest.mark.cuda


def close(report_us: float, compare_us: float) -> bool:
    return abs(report_us - compare_us) <= max(0.5 * compare_us, 10.0)


def test_every_blocker_is_found_at_its_line_on_the_gpu():
    fn, inputs = diagnose_models.everything()
    assert inputs[0].is_cuda
    scan = find_blockers(fn, inputs)
    assert [(b.kind, b.line) for b in scan.blockers] == marked(MODELS)


def test_an_input_left_on_the_cpu_and_its_copy_in_are_blockers():
    model = torch.nn.Linear(4, 4).cuda()

    def step(x, scale):
        return model(x) * scale.cuda()

    scan = find_blockers(step, (torch.randn(2, 4).cuda(), torch.ones(1)))
    assert [(b.kind, b.line) for b in scan.blockers] == [
        ("host-tensor", None),
        ("host-copy", step.__code__.co_firstlineno + 1),
    ]
    assert "example input 1 is a CPU tensor" in scan.blockers[0].message


def test_a_model_that_captures_against_compare_run_separately():
    fn, inputs = diagnose_models.clean()
    d = graphlab.diagnose(fn, *inputs).to_dict()
    assert d["backend"].startswith("live CUDA (")
    assert (d["capturable"], d["blockers"], d["kernels"]) == (True, [], 5)
    assert d["capture"]["replay_equals_eager"] is True
    assert d["capture"]["pool_bytes"] > 0  # the private pool holds at least the output
    assert d["profile"]["kernels_per_step"] >= 5  # cuBLAS may split a matmul in two kernels
    assert d["timing"]["estimate"] is False
    assert d["break_even_calls"] == pytest.approx(
        d["timing"]["capture_us"] / (d["eager_us"] - d["replay_us"])
    )
    measured = graphlab.compare(fn, *inputs, iterations=10)
    assert close(d["eager_us"], measured.eager_end_to_end_us), (d, measured)
    assert close(d["replay_us"], measured.replay_end_to_end_us), (d, measured)
    assert close(d["timing"]["eager_gpu_us"], measured.eager_us), (d, measured)
    compiled = d["compiled"]
    assert compiled["skips"] == 0 and compiled["replayed_every_call"], compiled
    assert compiled["partitions"] == 1.0


def test_the_lesson_decoder_captures_and_replays_equal_to_eager():
    model, inputs = examples.decoder_step()
    d = graphlab.diagnose(model, *inputs).to_dict()
    # 42 operations on the CPU; attention may take another kernel path on a GPU
    assert d["capturable"] and d["kernels"] >= 42
    assert d["profile"]["launch_bound"] is True
    assert d["recommendation"] in ("full graph", "reduce-overhead")
    assert d["replay_us"] < d["eager_us"]


def test_a_host_read_and_a_mask_fail_cudas_capture_and_are_named():
    fn, inputs = examples.branchy()
    d = graphlab.diagnose(fn, *inputs, compile=False).to_dict()
    assert [(b["kind"], b["line"]) for b in d["blockers"]] == [
        ("host-sync", line_of(EXAMPLES, "if h.mean().item() > 0:")),
        ("data-dependent-shape", line_of(EXAMPLES, "return h[h > 0].sum()")),
    ]
    assert d["capture"]["captured"] is False
    assert d["capture"]["explanation"] == "The CPU waited for the GPU inside a capture"
    # The learner's own process is untouched: a capture still works here.
    g = torch.cuda.CUDAGraph()
    x = torch.ones(4, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = x * 2
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        y = x * 2
    g.replay()
    assert y.tolist() == [2.0] * 4


def test_a_non_capturable_optimizer_is_refused_by_torch_and_named():
    step, inputs = examples.training_step()
    d = graphlab.diagnose(step, *inputs, compile=False).to_dict()
    assert [(b["kind"], b["line"]) for b in d["blockers"]] == [
        ("optimizer", line_of(EXAMPLES, "optimizer.step()"))
    ]
    assert "capturable is False" in d["capture"]["error"]
    step, inputs = examples.training_step(capturable=True)
    assert graphlab.diagnose(step, *inputs, compile=False).capturable is True


def test_cli_json_on_the_gpu():
    done = subprocess.run(
        [sys.executable, "-m", "graphlab", "diagnose", f"{MODELS}:clean", "--json"],
        capture_output=True, text=True, cwd=HERE.parent, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert set(d) >= JSON_KEYS and d["capturable"] is True
    assert d["backend"].startswith("live CUDA (")
