"""The fidelity scenarios: one experiment per behaviour of CUDA graphs that the emulator reproduces.

Each scenario takes ``(cuda, device)`` -- ``torch.cuda`` and ``"cuda"`` on a GPU, the emulator and
``"cpu"`` elsewhere -- runs the same code on either, and returns a small JSON-able dict of what can
be *observed*: values worked out exactly in float32, booleans (stale or fresh, overwritten or
kept, masks equal or different), the CUDA error an operation raised. Never timings, never raw
random numbers. Keys starting with ``info_`` are informational (an exception's class and text)
and are not compared between backends.

Every scenario is written to be safe on a real GPU: it warms up on a side stream before capturing,
synchronizes before reading results, catches capture errors, and leaves CUDA usable for the next.
"""

from __future__ import annotations

import copy
import gc
import inspect
import io
import warnings

import torch
import torch.nn.functional as F

from graphlab.failures.recovery import release_failed_captures
from graphlab.support.capture_errors import cuda_error_of
from graphlab.support.torch_internals import clear_cublas_workspaces
from graphlab.timing.side_stream import side_stream

__all__ = [
    "SCENARIOS",
    "run_all",
    "run_one",
]


def _error(exc: BaseException) -> dict:
    first = exc.__context__  # with `with cuda.graph(...)`, the error inside the block, if any
    return {
        "raised": True,
        "is_runtime_error": isinstance(exc, RuntimeError),
        "cuda_error": cuda_error_of(exc),
        "first_cuda_error": cuda_error_of(first),
        "info_class": type(exc).__name__,
        "info_message": str(exc).splitlines()[0][:300] if str(exc) else "",
    }


def _values(t: torch.Tensor) -> list:
    return t.detach().cpu().tolist()


def _warmup(cuda, fn, iters: int = 3) -> None:
    """Run ``fn`` on a side stream first, as the PyTorch docs advise before a capture.

    graphlab's shared side stream, not a new one: the scenarios run again and again in one process
    (benchmarks/memory_rounds.py), and each new stream a matmul runs on keeps a cuBLAS workspace.
    """
    side = side_stream(cuda)
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        for _ in range(iters):
            fn()
    cuda.current_stream().wait_stream(side)
    cuda.synchronize()


def _captured(cuda, fn) -> tuple:
    """Warm ``fn`` up, then capture one call of it: the graph and the output it replays into."""
    _warmup(cuda, fn)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = fn()
    return g, out


def _replayed(cuda, g, y) -> list:
    """Replay ``g``, wait for it, and read its output ``y``."""
    g.replay()
    cuda.synchronize()
    return _values(y)


def _recover(cuda) -> bool:
    """After a failed capture: True if torch.cuda.graph left the capture stream current.

    ``torch.cuda.graph.__exit__`` ends the capture before switching streams back, so when ending
    the capture raises, the side stream stays current; switch back to the default stream. On a
    GPU, also release the memory pool torch keeps for the failed capture, so that running the
    scenarios again and again does not grow reserved memory (benchmarks/memory_rounds.py).
    """
    left_on_side_stream = cuda.current_stream() != cuda.default_stream()
    cuda.set_stream(cuda.default_stream())
    cuda.synchronize()
    release_failed_captures()
    return left_on_side_stream


def _capture_still_works(cuda, device) -> bool:
    x = torch.ones(4, device=device)
    g, y = _captured(cuda, lambda: x * 2)
    g.replay()
    cuda.synchronize()
    return _values(y) == [2.0] * 4 and _values(x * 3) == [3.0] * 4


def _failing_capture(cuda, device, fn, *args) -> dict:
    """Capture ``fn(*args)`` (a mistake): how it failed, and the state CUDA was left in after."""
    g = cuda.CUDAGraph()
    try:
        with cuda.graph(g):
            fn(*args)
    except Exception as exc:
        outcome = _error(exc)
    else:
        outcome = {"raised": False}
    outcome["stream_left_on_capture_stream"] = _recover(cuda)
    outcome["usable_after"] = _capture_still_works(cuda, device)
    return outcome


# 1 -------------------------------------------------------------------------------------------
def static_inputs(cuda, device) -> dict:
    """Copying into the captured input changes the result; rebinding the name does not."""
    x = torch.full((4,), 1.0, device=device)
    captured_x = x

    def fn(t):
        return 2 * t + 1

    g, y = _captured(cuda, lambda: fn(x))
    first = _replayed(cuda, g, y)
    x = torch.full((4,), 10.0, device=device)  # rebinding: the graph still reads captured_x
    after_rebind = _replayed(cuda, g, y)
    captured_x.copy_(torch.tensor([0.0, 1.0, 2.0, 3.0], device=device))
    after_copy = _replayed(cuda, g, y)
    return {
        "after_first_replay": first,
        "after_rebind": after_rebind,
        "after_copy": after_copy,
        "stale_input_reproduced": after_rebind == first,
        "copy_changes_result": after_copy != first,
    }


# 1b, 1c ---------------------------------------------------------------------------------------
def _rebind_storage(cuda, device, move) -> dict:
    """``move(x, new)`` points the captured tensor object at new memory; a view keeps the old."""
    x = torch.full((4,), 1.0, device=device)
    old = x.view(4)  # another tensor on the captured memory: it stays allocated
    g, y = _captured(cuda, lambda: 2 * x + 1)
    move(x, torch.full((4,), 10.0, device=device))
    after_move = _replayed(cuda, g, y)
    old.copy_(torch.tensor([0.0, 1.0, 2.0, 3.0], device=device))
    after_old_view_write = _replayed(cuda, g, y)
    x.copy_(torch.full((4,), 5.0, device=device))  # the new memory: the graph never reads it
    return {
        "after_move": after_move,
        "after_write_through_old_view": after_old_view_write,
        "after_write_to_moved_tensor": _replayed(cuda, g, y),
        "moved_tensor_values": _values(x),
        "old_view_values": _values(old),
        "old_view_still_shares_memory": old.data_ptr() == x.data_ptr(),
    }


def set_keeps_captured_memory(cuda, device) -> dict:
    """After static_x.set_(new), a replay still reads the memory that was captured."""
    return _rebind_storage(cuda, device, lambda x, new: x.set_(new))


def data_assignment_keeps_captured_memory(cuda, device) -> dict:
    """After static_x.data = new, a replay still reads the memory that was captured."""
    return _rebind_storage(cuda, device, lambda x, new: setattr(x, "data", new))


# 1d ------------------------------------------------------------------------------------------
def old_view_after_rebinding(cuda, device) -> dict:
    """A view taken before rebinding the name keeps the input alive, and writes through it count."""
    x = torch.full((3,), 2.0, device=device)
    view = x[:]
    g, y = _captured(cuda, lambda: x * 10)
    x = torch.full((3,), 7.0, device=device)  # the name moves on; the view holds the memory
    after_rebind = _replayed(cuda, g, y)
    view.copy_(torch.tensor([1.0, 2.0, 3.0], device=device))
    return {
        "after_rebind": after_rebind,
        "after_write_through_view": _replayed(cuda, g, y),
        "rebound_name_values": _values(x),
    }


# 1e ------------------------------------------------------------------------------------------
def _rebind_then_allocate(cuda, device) -> tuple[list, bool]:
    x = torch.ones(3, device=device)
    g, y = _captured(cuda, lambda: x * 10)
    captured_address = x.data_ptr()
    x = torch.tensor([7.0, 8.0, 9.0], device=device)  # the captured memory is freed
    z = torch.full((3,), 100.0, device=device)  # ... and may be handed out again
    return _replayed(cuda, g, y), z.data_ptr() == captured_address


def freed_input_reused(cuda, device) -> dict:
    """Rebinding the only name of a captured input frees it; a replay reads the next tensor there.

    Five trials of: x = ones(3); capture y = x * 10; x = tensor([7, 8, 9]); z = full(100); replay.
    On a GPU, y shows what the freed memory holds at replay: z's 100s make it 1000s. (Safe to run:
    torch's caching allocator keeps freed blocks reserved, and the replay only reads there.) The
    emulator keeps the memory (it must, to replay) and warns instead; see
    graphlab.emulator.DIFFERENCES.
    """
    trials = [_rebind_then_allocate(cuda, device) for _ in range(5)]
    return {
        "y_after_replay": [y for y, _ in trials],
        "z_given_the_captured_address": [reused for _, reused in trials],
    }


# 1f ------------------------------------------------------------------------------------------
def input_liveness_check(cuda, device) -> dict:
    """torch.cuda.graph(g, check_input_liveness=True) refuses a replay whose input was freed."""
    if "check_input_liveness" not in inspect.signature(torch.cuda.graph).parameters:
        return {"supported": False, "info_torch": torch.__version__}
    x = torch.ones(3, device=device)
    _warmup(cuda, lambda: x * 10)
    g = cuda.CUDAGraph()
    with cuda.graph(g, check_input_liveness=True):
        y = x * 10
    out = {"supported": True, "first_replay": _replayed(cuda, g, y)}
    x = torch.tensor([7.0, 8.0, 9.0], device=device)
    try:
        g.replay()
        cuda.synchronize()
    except Exception as exc:
        out.update(_error(exc))
        out["message_starts_as_torch"] = str(exc).startswith(
            "CUDA graph replay detected 1 dead tensor(s)."
        )
    else:
        out["raised"] = False
    out["output_after_refused_replay"] = _values(y)
    return out


# 2 -------------------------------------------------------------------------------------------
def outputs_overwritten(cuda, device) -> dict:
    """The next replay overwrites the outputs of the previous one; a clone survives."""
    x = torch.zeros(3, device=device)
    g, y = _captured(cuda, lambda: x + 1)
    x.copy_(torch.tensor([1.0, 2.0, 3.0], device=device))
    g.replay()
    cuda.synchronize()
    kept_reference = y
    kept_clone = y.clone()
    address = y.data_ptr()
    x.copy_(torch.tensor([10.0, 20.0, 30.0], device=device))
    g.replay()
    cuda.synchronize()
    return {
        "reference_after_second_replay": _values(kept_reference),
        "clone_after_second_replay": _values(kept_clone),
        "reference_overwritten": _values(kept_reference) == [11.0, 21.0, 31.0],
        "clone_survives": _values(kept_clone) == [2.0, 3.0, 4.0],
        "same_address_every_replay": y.data_ptr() == address,
    }


# 3 -------------------------------------------------------------------------------------------
def inplace_accumulates(cuda, device) -> dict:
    """x.add_(1) captured once: capture runs nothing, each replay adds one."""
    x = torch.zeros(4, device=device)
    _warmup(cuda, lambda: x.add_(1))
    x.zero_()
    cuda.synchronize()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        x.add_(1)
    cuda.synchronize()
    after_capture = _values(x)
    for _ in range(5):
        g.replay()
    cuda.synchronize()
    return {"after_capture": after_capture, "after_5_replays": _values(x)}


# 4 -------------------------------------------------------------------------------------------
def random_ops(cuda, device) -> dict:
    """Dropout draws a fresh mask each replay; manual_seed before replay makes it reproducible."""
    x = torch.ones(4096, device=device)

    def fn():
        return F.dropout(x, p=0.5, training=True)

    _warmup(cuda, fn)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = fn()
    g.replay()
    cuda.synchronize()
    mask1 = (y != 0).clone()
    g.replay()
    cuda.synchronize()
    mask2 = (y != 0).clone()

    torch.manual_seed(1234)
    g.replay()
    cuda.synchronize()
    seeded1 = (y != 0).clone()
    torch.manual_seed(1234)
    g.replay()
    cuda.synchronize()
    seeded2 = (y != 0).clone()
    torch.manual_seed(1234)
    eager = fn() != 0

    # Does a replay advance the generator that eager random ops use?
    torch.manual_seed(7)
    plain = torch.rand(8, device=device)
    torch.manual_seed(7)
    g.replay()
    after_replay = torch.rand(8, device=device)

    # Does capturing consume random numbers from that generator?
    g2 = cuda.CUDAGraph()
    torch.manual_seed(7)
    with cuda.graph(g2):
        fn()
    after_capture = torch.rand(8, device=device)
    cuda.synchronize()
    kept = mask1.float().mean().item()
    return {
        "masks_differ_between_replays": not torch.equal(mask1, mask2),
        "seeded_replays_equal": torch.equal(seeded1, seeded2),
        "seeded_replay_equals_eager_after_same_seed": torch.equal(seeded2, eager),
        "replay_advances_generator": not torch.equal(plain, after_replay),
        "capture_leaves_generator_alone": torch.equal(plain, after_capture),
        "kept_fraction_near_half": 0.4 < kept < 0.6,
    }


# 5 -------------------------------------------------------------------------------------------
def frozen_shapes(cuda, device) -> dict:
    """Shapes are fixed at capture: a bigger tensor cannot be copied into the static input."""
    x = torch.ones(4, device=device)
    g, y = _captured(cuda, lambda: x * 2)
    out: dict = {}
    try:
        x.copy_(torch.ones(8, device=device))
    except Exception as exc:
        out.update(bigger_copy_raises=True, bigger_copy_error_class=type(exc).__name__)
    else:
        out.update(bigger_copy_raises=False, bigger_copy_error_class=None)
    x.copy_(torch.full((1,), 3.0, device=device))  # broadcasting a single value is accepted
    g.replay()
    cuda.synchronize()
    out["after_broadcast_copy"] = _values(y)
    x = torch.ones(8, device=device)  # a longer tensor under the same name changes nothing
    g.replay()
    cuda.synchronize()
    out["output_shape_after_rebind"] = list(y.shape)
    return out


# 6 -------------------------------------------------------------------------------------------
def python_runs_once(cuda, device) -> dict:
    """Python branches, counters, appends and prints run at capture only; replays skip them."""
    x = torch.ones(3, device=device)
    calls: list[int] = []
    printed = io.StringIO()
    flag = {"double": True}

    def fn():
        calls.append(1)
        print("traced", file=printed)
        if flag["double"]:
            return x * 2
        return x * 3

    _warmup(cuda, fn)
    calls.clear()
    printed.truncate(0)
    printed.seek(0)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = fn()
    calls_after_capture = len(calls)
    flag["double"] = False
    for _ in range(3):
        g.replay()
    cuda.synchronize()
    return {
        "calls_after_capture": calls_after_capture,
        "calls_after_3_replays": len(calls),
        "prints_after_3_replays": printed.getvalue().count("traced"),
        "branch_taken_at_capture": _values(y),
    }


# 7 -------------------------------------------------------------------------------------------
def _host_sync_cases(cuda):
    def assign_through_mask(x):
        z = x * 1
        z[z > 0] = 0.0

    return {
        "item": lambda x: (x * 2).sum().item(),
        "tolist": lambda x: (x * 2).tolist(),
        "cpu": lambda x: (x * 2).cpu(),
        "print": lambda x: print(x * 2, file=io.StringIO()),
        "if_tensor": lambda x: bool((x * 2).sum() > 0),
        "synchronize": lambda x: (x * 2, cuda.synchronize()),
        "nonzero": lambda x: torch.nonzero(x),
        "unique": lambda x: torch.unique(x),
        "boolean_mask_index": lambda x: x[x > 0],
        "masked_select": lambda x: torch.masked_select(x, x > 0),
        "boolean_mask_assign_scalar": assign_through_mask,
    }


def host_sync(cuda, device) -> dict:
    """What needs the host inside a capture fails with a CUDA capture error; CUDA stays usable."""
    results = {}
    for name, body in _host_sync_cases(cuda).items():
        x = torch.arange(-2.0, 3.0, device=device)
        results[name] = _failing_capture(cuda, device, body, x)
    return results


# 8 -------------------------------------------------------------------------------------------
def _pool_bytes(cuda, pool) -> int:
    key = tuple(pool)
    return sum(
        seg["total_size"]
        for seg in cuda.memory_snapshot()
        if tuple(seg.get("segment_pool_id", ())) == key
    )


def memory_pools(cuda, device) -> dict:
    """Tensors allocated in capture stay in the graph's pool until reset; pools can be shared."""
    x = torch.ones(1024, device=device)
    g, y = _captured(cuda, lambda: x * 2 + 1)
    cuda.synchronize()
    pool = g.pool()
    after_capture = _pool_bytes(cuda, pool)
    del y
    gc.collect()
    cuda.empty_cache()
    after_output_deleted = _pool_bytes(cuda, pool)
    g.reset()
    gc.collect()
    cuda.empty_cache()
    after_reset = _pool_bytes(cuda, pool)

    # An output the user still holds keeps its memory after reset, and stays readable.
    g2 = cuda.CUDAGraph()
    with cuda.graph(g2):
        z = x * 3
    g2.replay()
    cuda.synchronize()
    pool2 = g2.pool()
    g2.reset()
    gc.collect()
    cuda.empty_cache()
    held_after_reset = _pool_bytes(cuda, pool2)
    z_after_reset = _values(z[:2])
    del z
    gc.collect()
    cuda.empty_cache()
    after_output_dies = _pool_bytes(cuda, pool2)

    # Two graphs sharing one pool.
    handle = cuda.graph_pool_handle()
    g3, g4, g5 = cuda.CUDAGraph(), cuda.CUDAGraph(), cuda.CUDAGraph()
    with cuda.graph(g3, pool=handle):
        a = x + 1
    with cuda.graph(g4, pool=handle):
        b = a * 2
    with cuda.graph(g5):
        c = x - 1
    g3.replay()
    g4.replay()
    g5.replay()
    cuda.synchronize()
    return {
        "pool_holds_memory_after_capture": after_capture > 0,
        "pool_kept_when_output_deleted": after_output_deleted == after_capture > 0,
        "pool_released_after_reset": after_reset == 0,
        "held_output_keeps_memory_after_reset": held_after_reset > 0,
        "held_output_readable_after_reset": z_after_reset,
        "memory_released_when_output_dies": after_output_dies == 0,
        "shared_pool_same_id": tuple(g3.pool()) == tuple(g4.pool()) == tuple(handle),
        "private_pool_differs": tuple(g5.pool()) != tuple(handle),
        "shared_pool_results": [_values(b[:2]), _values(c[:2])],
        "info_pool_bytes": [after_capture, after_output_deleted, after_reset, held_after_reset],
    }


# 9 -------------------------------------------------------------------------------------------
def fork_join(cuda, device) -> dict:
    """Capture across two streams: joined work is captured; unjoined work fails the capture."""
    x = torch.ones(4, device=device)

    def body(side, join):
        main = cuda.current_stream()
        side.wait_stream(main)  # fork: the side stream joins the capture
        with cuda.stream(side):
            b = x * 3
        a = x * 2
        if join:
            main.wait_stream(side)  # join: the capture stream waits for the side stream
            return a + b
        return a

    side = cuda.Stream()
    _warmup(cuda, lambda: body(side, True))
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        c = body(side, True)
    g.replay()
    cuda.synchronize()
    out = {"joined_result": _values(c)}

    # The same fork and join written with events.
    side2 = cuda.Stream()
    g2 = cuda.CUDAGraph()
    with cuda.graph(g2):
        main = cuda.current_stream()
        forked = cuda.Event()
        forked.record(main)
        side2.wait_event(forked)
        with cuda.stream(side2):
            b = x * 3
        done = cuda.Event()
        done.record(side2)
        main.wait_event(done)
        d = x * 2 + b
    g2.replay()
    cuda.synchronize()
    out["event_joined_result"] = _values(d)

    side3 = cuda.Stream()
    out["unjoined"] = _failing_capture(cuda, device, body, side3, False)
    return out


def capture_on_default_stream(cuda, device) -> dict:
    """capture_begin on the default stream is refused (torch.cuda.graph uses a side stream)."""
    g = cuda.CUDAGraph()
    cuda.set_stream(cuda.default_stream())
    try:
        g.capture_begin()
        g.capture_end()
    except Exception as exc:
        out = _error(exc)
        out["mentions_non_default_stream"] = "non-default stream" in str(exc)
    else:
        out = {"raised": False}
    _recover(cuda)
    out["usable_after"] = _capture_still_works(cuda, device)
    return out


# 10 ------------------------------------------------------------------------------------------
def _batches(device, n):
    gen = torch.Generator().manual_seed(1)  # CPU generator: the same data on every backend
    return [
        (torch.randn(5, 4, generator=gen).to(device), torch.randn(5, 1, generator=gen).to(device))
        for _ in range(n)
    ]


def _close(a, b) -> bool:
    return all(torch.allclose(p, q, rtol=1e-4, atol=1e-6) for p, q in zip(a, b, strict=True))


def training_step(cuda, device) -> dict:
    """Forward, backward and a capturable Adam step captured once equal the same eager steps."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).to(
        device
    )
    reference = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.05, capturable=True)
    ref_opt = torch.optim.Adam(reference.parameters(), lr=0.05, capturable=True)
    batches = _batches(device, 6)
    static_x, static_y = batches[0][0].clone(), batches[0][1].clone()

    def step(m, o, xb, yb):
        o.zero_grad(set_to_none=True)
        loss = F.mse_loss(m(xb), yb)
        loss.backward()
        o.step()
        return loss

    _warmup(cuda, lambda: step(model, opt, static_x, static_y))
    for _ in range(3):
        step(reference, ref_opt, static_x, static_y)
    before = [p.detach().clone() for p in model.parameters()]

    g = cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)  # backward then allocates .grad from the graph's pool
    with cuda.graph(g):
        static_loss = F.mse_loss(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    cuda.synchronize()
    unchanged_by_capture = _close(before, model.parameters())

    graph_losses, eager_losses = [], []
    for xb, yb in batches[1:]:
        static_x.copy_(xb)
        static_y.copy_(yb)
        g.replay()
        graph_losses.append(static_loss.detach().clone())
        eager_losses.append(step(reference, ref_opt, xb, yb).detach())
    cuda.synchronize()
    return {
        "parameters_unchanged_by_capture": unchanged_by_capture,
        "losses_match": _close(graph_losses, eager_losses),
        "parameters_match": _close(model.parameters(), reference.parameters()),
        "grads_match_last_step": _close(
            [p.grad for p in model.parameters()], [p.grad for p in reference.parameters()]
        ),
        "parameters_changed": not _close(before, model.parameters()),
    }


def grad_accumulation(cuda, device) -> dict:
    """Backward captured with .grad already allocated adds into it on every replay."""
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    w = torch.ones(3, device=device, requires_grad=True)
    _warmup(cuda, lambda: (w * x).sum().backward())
    w.grad.zero_()
    cuda.synchronize()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        (w * x).sum().backward()
    cuda.synchronize()
    after_capture = _values(w.grad)
    for _ in range(3):
        g.replay()
    cuda.synchronize()

    v = torch.ones(3, device=device, requires_grad=True)
    _warmup(cuda, lambda: (v * x).sum().backward())
    v.grad = None  # backward during capture allocates .grad in the graph's pool
    g2 = cuda.CUDAGraph()
    with cuda.graph(g2):
        (v * x).sum().backward()
    for _ in range(3):
        g2.replay()
    cuda.synchronize()
    return {
        "existing_grad_after_capture": after_capture,
        "existing_grad_after_3_replays": _values(w.grad),
        "fresh_grad_after_3_replays": _values(v.grad),
    }


def _release_cublas_workspaces(cuda) -> None:
    """Free the cuBLAS workspaces PyTorch keeps per stream, once no graph of ours is alive.

    torch.cuda.make_graphed_callables warms up on a new ``torch.cuda.Stream()`` at every call, and
    the matmuls there leave a cuBLAS workspace (33 MiB on the H200) for the life of the process.
    Only safe when no live graph replays with one of them, as at the end of a scenario: a graph
    reuses the workspace of the stream it was captured on.
    """
    clear = clear_cublas_workspaces()
    if cuda is torch.cuda and clear is not None:
        gc.collect()
        clear()


def graphed_callables(cuda, device) -> dict:
    """make_graphed_callables gives the forward outputs and gradients of the eager module."""
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh()).to(device)
    reference = copy.deepcopy(module)
    gen = torch.Generator().manual_seed(2)
    sample = torch.randn(2, 4, generator=gen).to(device).requires_grad_()
    graphed = cuda.make_graphed_callables(module, (sample,))
    got, expected = [], []
    for _ in range(3):
        data = torch.randn(2, 4, generator=gen).to(device)
        weight = torch.randn(2, 3, generator=gen).to(device)
        for m, result in ((graphed, got), (reference, expected)):
            m.zero_grad(set_to_none=True)
            x = data.clone().requires_grad_()
            out = m(x)
            (out * weight).sum().backward()
            # clone at once: the graphed gradients live in static buffers the next replay reuses
            grads = [p.grad.clone() for p in m.parameters()]
            result.append((out.detach().clone(), x.grad.clone(), grads))
    cuda.synchronize()
    del graphed, module, out  # for a Module, make_graphed_callables patched module itself
    _release_cublas_workspaces(cuda)
    return {
        "forward_matches": _close([g[0] for g in got], [e[0] for e in expected]),
        "input_grads_match": _close([g[1] for g in got], [e[1] for e in expected]),
        "parameter_grads_match": all(
            _close(g[2], e[2]) for g, e in zip(got, expected, strict=True)
        ),
    }


SCENARIOS = {
    "01_static_inputs": static_inputs,
    "01b_set_keeps_captured_memory": set_keeps_captured_memory,
    "01c_data_assignment_keeps_captured_memory": data_assignment_keeps_captured_memory,
    "01d_old_view_after_rebinding": old_view_after_rebinding,
    "01e_freed_input_reused": freed_input_reused,
    "01f_input_liveness_check": input_liveness_check,
    "02_outputs_overwritten": outputs_overwritten,
    "03_inplace_accumulates": inplace_accumulates,
    "04_random_ops": random_ops,
    "05_frozen_shapes": frozen_shapes,
    "06_python_runs_once": python_runs_once,
    "07_host_sync": host_sync,
    "08_memory_pools": memory_pools,
    "09_fork_join": fork_join,
    "10_training_step": training_step,
    "10b_grad_accumulation": grad_accumulation,
    "10c_graphed_callables": graphed_callables,
    "11_capture_on_default_stream": capture_on_default_stream,  # last: it leaves the most behind
}


def run_one(name: str, cuda, device) -> tuple[dict, list]:
    """Run scenario ``name``: its outcome (a crash recorded as such) and every warning it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = SCENARIOS[name](cuda, device)
        except Exception as exc:
            outcome = {"scenario_crashed": f"{type(exc).__name__}: {exc}"[:500]}
            _recover(cuda)
    return outcome, caught


def run_all(cuda, device) -> dict:
    """Run every scenario, in order; a scenario that crashes does not stop the next one."""
    return {name: run_one(name, cuda, device)[0] for name in SCENARIOS}
