"""Small, documented workloads shared by ``graphlab record``, the tests and the notebooks.

Each builder returns a :class:`Workload`: a function, the tensors it takes, and a JSON-ready
description that a recording stores under ``"experiment"``. The functions are ordinary PyTorch code,
so the same workload runs eagerly, inside ``torch.cuda.graph`` capture on a GPU, and on the CPU
emulator.

- :func:`chain` — ``kernels`` tiny elementwise kernels in a row (``x = x + 1.0`` each), the
  textbook case of a launch-bound loop: on a small tensor each kernel runs for about a
  microsecond, far less than the host needs to launch it.
- :func:`mlp` — a small inference MLP (Linear + ReLU layers under ``torch.no_grad``), a realistic
  mix of cuBLAS matrix multiplies and elementwise kernels.
- :func:`fork_join` — two independent branches of matrix multiplies, on two streams forked from
  the caller's stream and joined back into it (or, for comparison, one after the other on one
  stream): what lesson 09 captures to show that a graph keeps the branches' overlap.

Inputs are made from a fixed seed on the CPU and then moved, so every run sees the same values.

On a GPU each builder first checks that the workload fits in the memory this process can still
use (:func:`check_fits`), so that a size meant for an H200 is refused with the largest size that
fits this card (a 16 GB one, say) instead of failing with an out-of-memory error halfway through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import torch

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

__all__ = ["Workload", "chain", "check_fits", "fork_join", "mlp"]

# Largest tensor a workload may allocate per input, in elements (256 Mi float32 = 1 GiB): a guard
# against a typo such as numel=2**40, which would otherwise fail deep inside the allocator.
MAX_NUMEL = 2**28


# A workload may take this share of the GPU memory still free when it is built: the graph's
# private pool, the warm-up on a side stream and the learner's own tensors need the rest.
FREE_MEMORY_SHARE = 0.5
# Float32 tensors of a chain's size alive at its peak: the input, the step being read and the one
# being written, plus the static input a capture keeps (a graph's pool reuses freed steps).
CHAIN_TENSORS = 4
FLOAT32 = 4
GIB = 2**30


@dataclass(frozen=True)
class Workload:
    """A function and its inputs: call ``workload.fn(*workload.inputs)``.

    ``description`` is JSON-serialisable and says what the workload is (``kind`` and its sizes).
    """

    name: str
    fn: Callable[..., Any]
    inputs: tuple[torch.Tensor, ...]
    description: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> Any:
        return self.fn(*self.inputs)


def _device(device: str | torch.device | None) -> torch.device:
    if device is None:
        from graphlab.backend import backend

        return torch.device(backend().device)
    return torch.device(device)


def _positive(value: int, what: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise GraphlabError(
            _("{what} must be a whole number from 1 to {limit:,}, not {value}").format(
                what=what, limit=limit, value=repr(value)
            )
        )
    return value


def usable_gpu_bytes(device: torch.device) -> int | None:
    """Bytes this process may still allocate on ``device``; None when it is not a CUDA device.

    That is the device's free memory plus what the caching allocator holds unused, capped by
    ``torch.cuda.set_per_process_memory_fraction`` when one is set (how a 16 GB card is mimicked
    on a larger one).
    """
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    # An index, not "cuda": get_per_process_memory_fraction refuses a device without one.
    index = torch.cuda.current_device() if device.index is None else device.index
    free, total = torch.cuda.mem_get_info(index)
    allocated = torch.cuda.memory_allocated(index)
    usable = free + torch.cuda.memory_reserved(index) - allocated
    fraction = getattr(torch.cuda, "get_per_process_memory_fraction", None)
    if fraction is not None:
        usable = min(usable, int(fraction(index) * total) - allocated)
    return max(usable, 0)


def check_fits(needed: int, usable: int | None, what: str, advice: str) -> None:
    """Refuse a workload of ``needed`` bytes that does not fit the GPU memory left to it.

    ``usable`` is what :func:`usable_gpu_bytes` returned (None: no GPU, nothing to check); the
    workload may take :data:`FREE_MEMORY_SHARE` of it. ``advice`` names the size that would fit.
    """
    if usable is None or needed <= FREE_MEMORY_SHARE * usable:
        return
    raise GraphlabError(
        _(
            "{what} needs about {needed:.2f} GiB of GPU memory and this process can "
            "use {usable:.2f} GiB more, of which a workload may take half: {advice}"
        ).format(what=what, needed=needed / GIB, usable=usable / GIB, advice=advice)
    )


def _seeded_randn(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    generator = torch.Generator(device="cpu").manual_seed(seed)
    return torch.randn(shape, generator=generator)


def chain(
    kernels: int, numel: int, device: str | torch.device | None = None, seed: int = 0
) -> Workload:
    """``kernels`` elementwise additions in a row on one float32 tensor of ``numel`` elements.

    Each step is ``x = x + 1.0``: exactly one elementwise kernel, reading and writing ``numel``
    floats, with nothing for the host to do but launch it. The result is the input plus
    ``kernels`` (up to float32 rounding). ``device`` defaults to ``graphlab.DEVICE``.
    """
    kernels = _positive(kernels, "kernels", 100_000)
    numel = _positive(numel, "numel", MAX_NUMEL)
    dev = _device(device)
    usable = usable_gpu_bytes(dev)
    per_element = CHAIN_TENSORS * FLOAT32
    if usable is not None:
        largest = max(int(FREE_MEMORY_SHARE * usable) // per_element, 1)
        check_fits(
            numel * per_element,
            usable,
            f"chain({kernels}, numel={numel:,})",
            f"use numel <= {largest:,} on this GPU.",
        )

    def run_chain(x: torch.Tensor) -> torch.Tensor:
        for _kernel in range(kernels):
            x = x + 1.0
        return x

    x = _seeded_randn((numel,), seed).to(dev)
    return Workload(
        name=f"chain_{kernels}_k{numel}",
        fn=run_chain,
        inputs=(x,),
        description={
            "kind": "chain",
            "kernels": kernels,
            "numel": numel,
            "dtype": "float32",
            "op": "x = x + 1.0 (one elementwise add kernel per step)",
        },
    )


def mlp(
    layers: int = 16,
    width: int = 64,
    batch: int = 4,
    device: str | torch.device | None = None,
    seed: int = 0,
) -> Workload:
    """Inference through ``layers`` blocks of ``Linear(width, width)`` + ``ReLU``, batch ``batch``.

    Runs under ``torch.no_grad()`` (a forward pass as a server would run it). Each block launches
    a matrix multiply (with its bias) and a ReLU; the exact kernels depend on the cuBLAS version,
    so read them from a profiled timeline rather than assuming a count.
    """
    layers = _positive(layers, "layers", 10_000)
    width = _positive(width, "width", 65_536)
    batch = _positive(batch, "batch", 65_536)
    dev = _device(device)
    # The weights and biases, plus the input and two activations alive at a time.
    needed = FLOAT32 * (layers * (width * width + width) + 3 * batch * width)
    check_fits(
        needed,
        usable_gpu_bytes(dev),
        f"mlp(layers={layers}, width={width}, batch={batch})",
        "use fewer layers or a smaller width (the weights grow with width squared).",
    )
    # Build the weights from a private seed so that the caller's global RNG stream is untouched.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        blocks: list[torch.nn.Module] = []
        for _ in range(layers):
            blocks += [torch.nn.Linear(width, width), torch.nn.ReLU()]
        model = torch.nn.Sequential(*blocks).to(dev).eval()

    def run_mlp(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return model(x)

    x = _seeded_randn((batch, width), seed + 1).to(dev)
    return Workload(
        name=f"mlp_l{layers}_w{width}_b{batch}",
        fn=run_mlp,
        inputs=(x,),
        description={
            "kind": "mlp",
            "layers": layers,
            "width": width,
            "batch": batch,
            "dtype": "float32",
            "op": "Linear + ReLU blocks, inference under torch.no_grad()",
        },
    )


def fork_join(
    steps: int = 4,
    n: int = 1024,
    streams: int = 2,
    device: str | torch.device | None = None,
    seed: int = 0,
) -> Workload:
    """Two independent branches of ``steps`` × (``n``×``n`` matmul, tanh), added at the end.

    Branch A runs on the caller's stream. With ``streams=2`` branch B runs on a second stream: the
    second stream first waits for the caller's (a fork: B reads the input the caller wrote), and
    the caller waits for it before the add (a join). Inside a capture that makes a graph with two
    parallel branches. With ``streams=1`` B runs after A on the caller's stream: the same kernels
    in one line, which cannot overlap. Each call launches ``4 * steps + 1`` kernels.

    On an H200 (torch 2.11) a 1024×1024 float32 matmul runs as 128 thread blocks of 128 threads,
    about one per multiprocessor and a small share of each, so two of them fit side by side (a
    profiled replay of two such branches: ``tests/traces/multistream_replay.json``).

    ``device`` defaults to ``graphlab.DEVICE``; on the CPU the streams are the emulator's, which
    keep the capture's bookkeeping but run everything in order.
    """
    steps = _positive(steps, "steps", 10_000)
    n = _positive(n, "n", 16_384)
    if streams not in (1, 2):
        raise GraphlabError(
            _("streams must be 1 or 2, not {streams}").format(streams=repr(streams))
        )
    dev = _device(device)
    # The input, two weights, two live activations per branch, the output and a graph's copy
    # of the input.
    check_fits(
        FLOAT32 * n * n * 9,
        usable_gpu_bytes(dev),
        f"fork_join(steps={steps}, n={n})",
        "use a smaller n (memory grows with n squared).",
    )
    api = _stream_api(dev)
    second = _second_stream(api, _device_index(dev)) if streams == 2 else None
    x = _seeded_randn((n, n), seed).to(dev)
    # Scaled so that each product keeps values of order 1 and tanh stays out of saturation.
    w_a = (_seeded_randn((n, n), seed + 1) / n**0.5).to(dev)
    w_b = (_seeded_randn((n, n), seed + 2) / n**0.5).to(dev)

    def branch(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        for _step in range(steps):
            h = torch.tanh(h @ w)
        return h

    def run_fork_join(x: torch.Tensor) -> torch.Tensor:
        if second is None:
            return branch(x, w_a) + branch(x, w_b)
        caller = api.current_stream()
        second.wait_stream(caller)  # fork
        with api.stream(second):
            b = branch(x, w_b)
        a = branch(x, w_a)
        caller.wait_stream(second)  # join
        return a + b

    return Workload(
        name=f"fork_join_{streams}stream{'s' if streams == 2 else ''}_k{steps}_n{n}",
        fn=run_fork_join,
        inputs=(x,),
        description={
            "kind": "fork_join",
            "steps": steps,
            "n": n,
            "streams": streams,
            "kernels": 4 * steps + 1,
            "dtype": "float32",
            "op": (
                "two branches of `h = tanh(h @ w)` from the same input, added: on two streams "
                "(fork, join) or one after the other on one stream"
            ),
        },
    )


def _stream_api(device: torch.device):
    """The stream functions for ``device``: torch.cuda's, or the CPU emulator's."""
    if device.type == "cuda":
        return torch.cuda
    from graphlab import emulator

    return emulator


def _device_index(device: torch.device) -> int:
    if device.type != "cuda":
        return 0
    return torch.cuda.current_device() if device.index is None else device.index


@cache
def _second_stream(api, device: int):
    # One per device for the life of the process: a stream that runs a matmul keeps a cuBLAS
    # workspace until the process ends (see graphlab.timing.side_stream), so rebuilding the
    # workload must not make a new one. It must differ from graphlab's side stream, on which
    # graphlab.compare captures: a fork onto the capturing stream itself would be no fork.
    return api.Stream(device=device) if api is torch.cuda else api.Stream()
