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

Inputs are made from a fixed seed on the CPU and then moved, so every run sees the same values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .errors import GraphlabError

__all__ = ["Workload", "chain", "mlp"]

# Largest tensor a workload may allocate per input, in elements (256 Mi float32 = 1 GiB): a guard
# against a typo such as numel=2**40, which would otherwise fail deep inside the allocator.
MAX_NUMEL = 2**28


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
        from .backend import backend

        return torch.device(backend().device)
    return torch.device(device)


def _positive(value: int, what: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise GraphlabError(f"{what} must be a whole number from 1 to {limit:,}, not {value!r}")
    return value


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

    def run_chain(x: torch.Tensor) -> torch.Tensor:
        for _ in range(kernels):
            x = x + 1.0
        return x

    x = _seeded_randn((numel,), seed).to(_device(device))
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
