"""On a GPU: produce each catalogued failure for real and check that graphlab explains it.

Every failure runs in a child process through graphlab.isolated, which is also what these tests
check about isolation: after each failure, the parent process (this pytest) still runs CUDA work.
A child's exception is explained inside the child, on the real exception object with its chain and
traceback, and comes back as IsolatedFailure.explanation.

Run on the H200:  python -m pytest tests/gpu/test_explain_cuda.py -v -rs
"""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
import warnings

import pytest
import torch
from wrong_answers import collect_references, rebinding_step

from graphlab.checks.outputs import check_keep_outputs
from graphlab.checks.static_inputs import check_replay_with_new_inputs
from graphlab.errors import CheckFailed
from graphlab.failures.explanation import explain, explained
from graphlab.failures.isolation import IsolatedFailure, isolated

pytestmark = pytest.mark.cuda

COMPILE_TIMEOUT_S = 400  # a child that compiles with inductor needs minutes, not seconds


@pytest.fixture(autouse=True)
def parent_cuda_still_works():
    """After every test, this process can still launch kernels and read the result."""
    yield
    assert torch.ones(3, device="cuda").sum().item() == 3.0


def failure_of(fn, timeout: float = 120) -> IsolatedFailure:
    try:
        result = isolated(fn, timeout=timeout)
    except IsolatedFailure as failure:
        print(failure.child_traceback or failure)
        return failure
    pytest.fail(f"{fn.__name__} did not fail on this GPU; it returned {result!r}")


# -- producers: each runs in a fresh child process ----------------------------------------------


def item_in_capture():
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        y.sum().item()


def synchronize_in_capture():
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.mul_(2)
        torch.cuda.synchronize()


def stream_query_in_capture():
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.mul_(2)
        torch.cuda.current_stream().query()


def kernel_after_swallowed_error():
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        # The learner hides the first error; the capture stays spoiled.
        with contextlib.suppress(RuntimeError):
            torch.cuda.current_stream().query()
        x.mul_(2)


def cpu_tensor_in_capture():
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.add_(torch.tensor([1.0, 2.0, 3.0, 4.0], device="cuda"))


def capture_on_default_stream():
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    g.capture_begin()
    x.mul_(2)
    g.capture_end()


def fork_without_join():
    x = torch.ones(4, device="cuda")
    side = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            x.mul_(2)


def wait_on_uncaptured_event():
    x = torch.ones(4, device="cuda")
    side = torch.cuda.Stream()
    ready = torch.cuda.Event()
    with torch.cuda.stream(side):
        x.mul_(3)
        ready.record(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.cuda.current_stream().wait_event(ready)
        x.mul_(2)


def query_event_recorded_in_capture():
    x = torch.ones(4, device="cuda")
    done = torch.cuda.Event()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.mul_(2)
        done.record()
    g.replay()
    torch.cuda.synchronize()
    done.query()


def reseed_in_capture():
    x = torch.ones(4, device="cuda")
    new_seed = torch.cuda.initial_seed() + 1
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.cuda.manual_seed(new_seed)
        x.mul_(2)


def random_op_after_failed_capture():
    x = torch.ones(4, device="cuda")
    with contextlib.suppress(RuntimeError), torch.cuda.graph(torch.cuda.CUDAGraph()):
        x.sum().item()
    torch.cuda.set_stream(torch.cuda.default_stream())
    torch.randn(4, device="cuda")


def adam_step_in_capture():
    model = torch.nn.Linear(8, 8, device="cuda")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)  # capturable defaults to False
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    opt.step()  # eager step: the optimizer's state exists before capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        opt.step()


def replay_never_captured():
    torch.cuda.CUDAGraph().replay()


def allocate_too_much_in_capture():
    _, total = torch.cuda.mem_get_info()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.empty(2 * total, dtype=torch.uint8, device="cuda")


def device_assert():
    """Not a graph failure: a device-side assert, which poisons this process's CUDA context."""
    x = torch.arange(4, device="cuda")
    x[torch.tensor([10], device="cuda")].sum().item()


def empty_capture_warnings() -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            sum(range(10))  # CPU work only
    return [str(w.message) for w in caught]


def compiled_output_overwritten():
    """PyTorch's own example: keep an output, call again, then read the kept one."""

    @torch.compile(mode="reduce-overhead")
    def my_model(x):
        return torch.matmul(x, x)

    x = torch.randn(10, 10, device="cuda")
    kept = []
    for _ in range(4):
        kept.append(my_model(x))
        for old in kept[:-1]:
            print(old)  # raises once a later run has overwritten `old`


def _cudagraph_logs_on() -> None:
    """Turn on torch.compile's cudagraph and perf-hint logs (printed on stderr)."""
    wanted = {"cudagraphs", "perf_hints"} & set(
        inspect.signature(torch._logging.set_logs).parameters
    )
    torch._logging.set_logs(**dict.fromkeys(wanted, True))


def compiled_mutating_input() -> None:
    @torch.compile(mode="reduce-overhead")
    def bump(x):
        x.add_(1)
        return x * 2

    x = torch.ones(64, device="cuda")
    _cudagraph_logs_on()
    for _ in range(4):
        bump(x)
    torch.cuda.synchronize()


def compiled_many_shapes() -> None:
    @torch.compile(mode="reduce-overhead", dynamic=True)
    def double(x):
        return x * 2

    _cudagraph_logs_on()
    for n in range(1, 13):
        for _ in range(3):
            double(torch.ones(n, device="cuda"))
    torch.cuda.synchronize()


# -- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("producer", "key"),
    [
        (item_in_capture, "host-sync-in-capture"),
        (synchronize_in_capture, "host-sync-in-capture"),
        (stream_query_in_capture, "capture-unsupported"),
        (kernel_after_swallowed_error, "capture-invalidated"),
        (cpu_tensor_in_capture, "pageable-copy-in-capture"),
        (capture_on_default_stream, "default-stream-capture"),
        (fork_without_join, "unjoined-fork"),
        (wait_on_uncaptured_event, "uncaptured-dependency"),
        (query_event_recorded_in_capture, "captured-event"),
        (reseed_in_capture, "rng-state-in-capture"),
        (random_op_after_failed_capture, "generator-left-in-capture"),
        (adam_step_in_capture, "optimizer-not-capturable"),
        (replay_never_captured, "replay-without-capture"),
        (allocate_too_much_in_capture, "out-of-memory"),
    ],
    ids=lambda p: getattr(p, "__name__", p),
)
def test_real_failure_is_explained(producer, key):
    failure = failure_of(producer)
    assert failure.explanation.key == key, failure.explanation.seen


def test_poisoned_context_stays_in_the_child():
    failure = failure_of(device_assert)
    assert "device-side assert" in str(failure) or "device-side assert" in failure.child_traceback


def test_empty_graph_warning_is_explained():
    messages = isolated(empty_capture_warnings)
    assert [explain(m).key for m in messages if "empty" in m.lower()] == ["empty-graph"]


def compile_failures() -> tuple[str | None, str]:
    """The three torch.compile failures, in one child: inductor's start-up is paid once.

    Returns the explanation key and text of the overwritten-output error (None if none was
    raised); the log lines of the other two go to stderr, where the fixture reads them.
    """
    compiled_mutating_input()
    compiled_many_shapes()
    try:
        compiled_output_overwritten()
    except RuntimeError as exc:
        return explain(exc).key, str(exc)[:300]
    return None, "no error"


@pytest.fixture(scope="module")
def compiled():
    """(overwritten key, its text, the child's stderr lines)."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):  # isolated() copies the child's stderr here
        key, seen = isolated(compile_failures, timeout=COMPILE_TIMEOUT_S)
    sys.stderr.write(stderr.getvalue())
    return key, seen, stderr.getvalue().splitlines()


def test_compiled_output_overwritten_is_explained(compiled):
    key, seen, _ = compiled
    assert key == "output-overwritten", seen


def test_compile_skipping_cudagraphs_is_explained(compiled):
    skips = [line for line in compiled[2] if "skipping cudagraphs due to" in line]
    assert skips, f"no 'skipping cudagraphs' line among {len(compiled[2])} stderr lines"
    assert {explain(line).key for line in skips} == {"compile-skipped-cudagraphs"}


def test_new_graph_per_shape_is_explained(compiled):
    lines = [line for line in compiled[2] if "distinct input size" in line]
    assert lines, f"no 'distinct input size' line among {len(compiled[2])} stderr lines"
    assert {explain(line).key for line in lines} == {"shape-rerecord"}


def test_rebinding_an_input_is_explained_by_the_checker():
    with pytest.raises(CheckFailed) as info:
        check_replay_with_new_inputs(rebinding_step)
    assert explain(info.value).key == "stale-static-input"


def test_keeping_outputs_without_clone_is_explained_by_the_checker():
    with pytest.raises(CheckFailed) as info:
        check_keep_outputs(collect_references)
    assert explain(info.value).key == "output-overwritten"


def test_broken_capture_in_a_cell_leaves_the_next_cell_usable():
    """In this process, not isolated: what a notebook cell wrapped by graphlab's helpers sees."""
    x = torch.ones(4, device="cuda")
    with pytest.raises(RuntimeError) as info, explained(), torch.cuda.graph(torch.cuda.CUDAGraph()):
        x.sum().item()
    assert info.value.__notes__[0].startswith("graphlab explains: The CPU waited for the GPU")
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    # The next cell: warm up, capture, replay, read.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x * 3
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 3
    g.replay()
    torch.cuda.synchronize()
    assert y.tolist() == [3.0, 3.0, 3.0, 3.0]
