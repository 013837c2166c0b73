"""Measuring a cost table on a GPU: replay, eager step, capture time and memory per batch size.

Two stand-in models, both run as one decode step per call:

- ``decoder``: a small decoder-only transformer (token embedding, pre-norm blocks of attention
  and an MLP, a vocabulary head) that reads a key/value cache of fixed length. The cache is read,
  not extended, so every step at one batch size does the same work.
- ``mlp``: :func:`graphlab.timing.workloads.mlp`, Linear + ReLU blocks.

For each size the step is captured with :func:`graphlab.timing.compare.capture` (warm-up on
the shared side stream first, as ``torch.cuda.graph`` requires); replay and eager times are
CUDA-event times per call (median over repeats, read only after the end event has
completed); capture time is the host time of the capture itself, warm-up excluded.
``graph_mib`` is what the capture leaves reserved once the allocator's cache is emptied: the
graph's private memory pool and its static inputs. Each size gets its own pool, so the table's
sum over sizes is an upper bound for a server that captures every size into one shared pool.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from graphlab.errors import NeedsGPUError, PlannerError

from ..timing.compare import capture, event_time_us
from .inputs import COST_FIELDS, CostTable

__all__ = ["MODELS", "measure_costs", "parse_sizes"]

MODELS = ("decoder", "mlp")
MIB = 2**20
# Decoder shape: small enough to measure 512 sizes in minutes, large enough to launch
# dozens of kernels per step (the regime where graphs pay).
DECODER = {"layers": 4, "width": 512, "heads": 8, "context": 256, "vocab": 4096}
MLP = {"layers": 16, "width": 256}


def parse_sizes(text: str) -> list[int]:
    """``"1-512"``, ``"1,2,4,8"`` or a mix (``"1-8,16,32"``) as sorted distinct sizes."""
    sizes: set[int] = set()
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise PlannerError(
                f"--sizes part {part!r} is not a size or a range: write e.g. 1-512 or 1,2,4,8"
            )
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if low < 1 or high < low:
            raise PlannerError(f"--sizes range {part.strip()!r} must run upwards from 1 or more")
        sizes.update(range(low, high + 1))
    return sorted(sizes)


def _decoder(device: Any) -> Callable[[int], tuple[Callable[..., Any], tuple]]:
    """A builder of (step, inputs) for each batch size, sharing one set of weights."""
    import torch
    from torch.nn import functional

    shape = DECODER
    width, heads, context = shape["width"], shape["heads"], shape["context"]
    head_dim = width // heads
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        layers = torch.nn.ModuleList(
            torch.nn.ModuleDict(
                {
                    "norm1": torch.nn.LayerNorm(width),
                    "query": torch.nn.Linear(width, width),
                    "out": torch.nn.Linear(width, width),
                    "norm2": torch.nn.LayerNorm(width),
                    "up": torch.nn.Linear(width, 4 * width),
                    "down": torch.nn.Linear(4 * width, width),
                }
            )
            for _ in range(shape["layers"])
        )
        embed = torch.nn.Embedding(shape["vocab"], width)
        head = torch.nn.Linear(width, shape["vocab"], bias=False)
    model = torch.nn.ModuleDict({"layers": layers, "embed": embed, "head": head})
    model = model.to(device=device, dtype=torch.float16).eval()

    def step(tokens, keys, values):
        with torch.no_grad():
            x = model["embed"](tokens)
            for n, block in enumerate(model["layers"]):
                q = block["query"](block["norm1"](x)).view(-1, heads, 1, head_dim)
                attended = functional.scaled_dot_product_attention(q, keys[n], values[n])
                x = x + block["out"](attended.reshape(-1, width))
                x = x + block["down"](functional.gelu(block["up"](block["norm2"](x))))
            return model["head"](x)

    def build(batch: int):
        # Drawn on the device: the caches of the largest batches hold hundreds of millions of
        # values, too many to draw on the host in a measurement of 512 sizes.
        generator = torch.Generator(device=device).manual_seed(batch)
        tokens = torch.randint(0, shape["vocab"], (batch,), device=device, generator=generator)
        cache = (len(layers), batch, heads, context, head_dim)
        keys, values = (
            torch.randn(cache, device=device, dtype=torch.float16, generator=generator)
            for _ in range(2)
        )
        return step, (tokens, keys, values)

    return build


def _mlp(device: Any) -> Callable[[int], tuple[Callable[..., Any], tuple]]:
    from ..timing.workloads import mlp

    def build(batch: int):
        workload = mlp(MLP["layers"], MLP["width"], batch, device=device)
        return workload.fn, workload.inputs

    return build


def measure_costs(
    model: str,
    sizes: list[int],
    *,
    repeats: int = 5,
    iterations: int = 20,
    progress: bool = True,
) -> CostTable:
    """Measure ``model`` (``"decoder"`` or ``"mlp"``) at each batch size on the current GPU."""
    if model not in MODELS:
        raise PlannerError(f"unknown model {model!r}: choose {' or '.join(MODELS)}")
    if not sizes:
        raise PlannerError("no sizes to measure: pass --sizes, e.g. 1-512")
    import torch

    if not torch.cuda.is_available():
        raise NeedsGPUError(
            "graphlab plan measure times CUDA graphs and torch sees no CUDA device here: run it "
            "on a GPU machine and pass the COSTS.json it writes to graphlab plan --costs"
        )
    from tqdm.auto import tqdm

    device = torch.device("cuda", torch.cuda.current_device())
    build = (_decoder if model == "decoder" else _mlp)(device)
    rows: dict[str, list[float]] = {name: [] for name in COST_FIELDS}
    for batch in tqdm(sizes, desc=f"plan measure {model}", disable=not progress):
        fn, inputs = build(batch)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        before = torch.cuda.memory_reserved(device)
        captured = capture(fn, *inputs)
        torch.cuda.empty_cache()
        rows["graph_mib"].append((torch.cuda.memory_reserved(device) - before) / MIB)
        rows["capture_s"].append(captured.capture_us / 1e6)
        rows["replay_us"].append(
            float(np.median([event_time_us(captured.replay, iterations) for _ in range(repeats)]))
        )
        rows["eager_us"].append(
            float(np.median([event_time_us(captured.eager, iterations) for _ in range(repeats)]))
        )
        del captured, fn, inputs
        gc.collect()
        torch.cuda.empty_cache()
    shape = DECODER if model == "decoder" else MLP
    meta = {"model": model, "shape": shape, "repeats": repeats, "iterations": iterations}
    return CostTable.from_dict({"sizes": list(sizes), **rows, "meta": meta})
