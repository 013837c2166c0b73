"""Measuring a cost table on a GPU: replay, eager step, capture time and memory per batch size.

Two stand-in models, both run as one decode step per call:

- ``decoder``: a small decoder-only transformer (token embedding, pre-norm blocks of attention
  and an MLP, a vocabulary head) that reads a key/value cache of fixed length. The cache is read,
  not extended, so every step at one batch size does the same work.
- ``mlp``: :func:`graphlab.timing.workloads.mlp`, Linear + ReLU blocks.

How each figure is measured, and why:

- **Inputs as a server holds them.** A serving stack allocates its KV cache once, before any
  capture, and every graph reads it in place; only the step's own inputs (the new tokens) are
  copied into the graph's static buffer before a replay. So the decoder's cache is one tensor
  sized for the largest batch measured, each size's graph reads the first ``b`` rows of it, and
  nothing is cloned for the capture (a clone of the cache would be counted as graph memory:
  about 2 MiB per batch row).
- ``graph_mib``: the graph's private memory pool alone, what ``memory_reserved()`` grows by
  across the capture into a fresh pool (warm-up done and the allocator's cache emptied before):
  the intermediates and outputs the graph keeps. Static inputs and the cache are allocated
  before, outside the pool.
- ``replay_us``: end to end as lesson 06 times a replay, the copy of fresh step inputs into the
  static buffer plus the replay; ``eager_us``: the step run on the same fresh inputs. Both are
  CUDA-event times per call over ``iterations`` calls from an idle GPU (median of ``repeats``
  loops), so launch overhead that leaves the GPU idle is counted. The outputs are not cloned: a
  server's next kernel reads the logits where the graph wrote them.
- ``capture_s``: host time of the capture itself (``torch.cuda.graph``: empty the cache,
  capture, instantiate), warm-up excluded.

Separate pools against one shared pool. Each size above is captured into a pool of its own, so a
plan that keeps its graphs in separate pools needs the sum of their ``graph_mib``. Serving stacks
do otherwise: vLLM and SGLang capture every size into one global pool, largest first, so each
smaller graph reuses memory the larger ones freed once their capture ended, and the plan needs
about the largest graph's pool. :func:`measure_shared_pool` measures that directly (the pool's
size after each capture, largest first); ``measure_costs`` stores it in the table's
``meta["shared_pool"]`` so that the planner's shared-pool model (see
:mod:`graphlab.planner.evaluate`) can be checked against it.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from graphlab.errors import NeedsGPUError, PlannerError
from graphlab.language import gettext as _

from ..timing.captured import warm_up
from ..timing.clocks import event_time_us
from ..timing.side_stream import side_stream
from .inputs import COST_FIELDS, CostTable

__all__ = ["MODELS", "measure_costs", "measure_shared_pool", "parse_sizes"]

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
                _(
                    "--sizes part {part!r} is not a size or a range: write e.g. 1-512 or 1,2,4,8"
                ).format(part=part)
            )
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if low < 1 or high < low:
            raise PlannerError(
                _("--sizes range {part!r} must run upwards from 1 or more").format(
                    part=part.strip()
                )
            )
        sizes.update(range(low, high + 1))
    return sorted(sizes)


# A builder returns (step, inputs, fresh) for a batch size: ``inputs`` are what the graph reads,
# ``fresh`` the number of leading inputs that change every step (copied in before each replay).
Builder = Callable[[int], tuple[Callable[..., Any], tuple, int]]


def _decoder(device: Any, largest: int) -> Builder:
    """A builder for each batch size up to ``largest``, sharing one set of weights and one KV
    cache of ``largest`` rows, drawn once (a server allocates its cache once, before capture)."""
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

    # Drawn on the device: the cache of a large batch holds hundreds of millions of values.
    generator = torch.Generator(device=device).manual_seed(0)
    cache = (len(layers), largest, heads, context, head_dim)
    keys, values = (
        torch.randn(cache, device=device, dtype=torch.float16, generator=generator)
        for _ in range(2)
    )

    def build(batch: int):
        if not 1 <= batch <= largest:
            raise PlannerError(
                _("batch size {batch} is outside this cache's 1 to {largest}").format(
                    batch=batch, largest=largest
                )
            )
        generator = torch.Generator(device=device).manual_seed(batch)
        tokens = torch.randint(0, shape["vocab"], (batch,), device=device, generator=generator)
        # The first ``batch`` rows of each layer's cache: a view, contiguous within each layer.
        return step, (tokens, keys[:, :batch], values[:, :batch]), 1

    return build


def _mlp(device: Any, largest: int) -> Builder:
    from ..timing.workloads import mlp

    def build(batch: int):
        workload = mlp(MLP["layers"], MLP["width"], batch, device=device)
        return workload.fn, workload.inputs, len(workload.inputs)

    return build


# Sets of fresh step inputs the timed loops cycle through, as lesson 06's end-to-end loops do.
FRESH_SETS = 4
# Eager runs on the capture stream before each capture (graphlab.timing.captured.warm_up).
WARMUPS = 3


def _capture(fn: Callable[..., Any], inputs: tuple, pool: Any = None) -> tuple[Any, float, float]:
    """Capture ``fn(*inputs)`` into ``pool`` (a fresh one if None) on the side stream.

    Returns the graph, the capture's host time in seconds and what ``memory_reserved()`` grew
    by across it in MiB: the pool's new memory. The outputs are let go (the graph keeps their
    memory in its pool), as vLLM keeps only weak references to them.
    """
    import time

    import torch

    stream = side_stream(torch.cuda)
    warm_up(fn, inputs, stream, WARMUPS)
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    start = time.perf_counter()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=pool, stream=stream):
        fn(*inputs)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    return graph, seconds, (torch.cuda.memory_reserved() - before) / MIB


def _builder(model: str, sizes: list[int]) -> Builder:
    import torch

    if not torch.cuda.is_available():
        raise NeedsGPUError(
            _(
                "graphlab plan measure times CUDA graphs and torch sees no CUDA device here: run "
                "it on a GPU machine and pass the COSTS.json it writes to graphlab plan --costs"
            )
        )
    device = torch.device("cuda", torch.cuda.current_device())
    return (_decoder if model == "decoder" else _mlp)(device, max(sizes))


def _check_request(model: str, sizes: list[int]) -> None:
    if model not in MODELS:
        raise PlannerError(
            _("unknown model {model!r}: choose {choices}").format(
                model=model, choices=_(" or ").join(MODELS)
            )
        )
    if not sizes:
        raise PlannerError(_("no sizes to measure: pass --sizes, e.g. 1-512"))


def _timed(step: Callable[[int], Any], repeats: int, iterations: int) -> float:
    return float(np.median([event_time_us(step, iterations) for _ in range(repeats)]))


def _measure_size(build: Builder, batch: int, repeats: int, iterations: int) -> dict[str, float]:
    """One row of the cost table (see the module docstring)."""
    fn, inputs, fresh = build(batch)
    graph, capture_s, graph_mib = _capture(fn, inputs)
    static, resident = inputs[:fresh], inputs[fresh:]
    sets = [tuple(x.clone() for x in static) for _ in range(FRESH_SETS)]

    def replay(i: int) -> None:
        for buffer, new in zip(static, sets[i % FRESH_SETS], strict=True):
            buffer.copy_(new)
        graph.replay()

    def eager(i: int) -> None:
        fn(*sets[i % FRESH_SETS], *resident)

    return {
        "graph_mib": graph_mib,
        "capture_s": capture_s,
        "replay_us": _timed(replay, repeats, iterations),
        "eager_us": _timed(eager, repeats, iterations),
    }


def measure_shared_pool(model: str, sizes: list[int]) -> dict[str, list[float]]:
    """Capture every size into one shared pool, largest first, as vLLM and SGLang do.

    Returns ``{"sizes": [...] largest first, "reserved_mib": [...]}``: how much memory the
    shared pool holds after each capture, all the graphs still alive. Its last value is the
    memory of capturing every size; its first, the largest graph's pool alone.
    """
    import torch

    _check_request(model, sizes)
    build = _builder(model, sizes)
    order = sorted(sizes, reverse=True)
    # Every input first, outside the pool, so that only the pool's growth is counted.
    steps = [build(batch)[:2] for batch in order]
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    start = torch.cuda.memory_reserved()
    pool = torch.cuda.graph_pool_handle()
    graphs, held = [], []
    for fn, inputs in steps:
        graph, _, _ = _capture(fn, inputs, pool)
        graphs.append(graph)
        torch.cuda.empty_cache()
        held.append((torch.cuda.memory_reserved() - start) / MIB)
    del graphs, steps
    gc.collect()
    torch.cuda.empty_cache()
    return {"sizes": order, "reserved_mib": held}


def measure_costs(
    model: str,
    sizes: list[int],
    *,
    repeats: int = 5,
    iterations: int = 20,
    progress: bool = True,
) -> CostTable:
    """Measure ``model`` (``"decoder"`` or ``"mlp"``) at each batch size on the current GPU,
    then every size again into one shared pool (``meta["shared_pool"]``)."""
    _check_request(model, sizes)
    build = _builder(model, sizes)
    import torch
    from tqdm.auto import tqdm

    rows: dict[str, list[float]] = {name: [] for name in COST_FIELDS}
    for batch in tqdm(sizes, desc=f"plan measure {model}", disable=not progress):
        torch.cuda.synchronize()
        for name, value in _measure_size(build, batch, repeats, iterations).items():
            rows[name].append(value)
        gc.collect()
        torch.cuda.empty_cache()
    del build
    gc.collect()
    shape = DECODER if model == "decoder" else MLP
    meta = {
        "model": model,
        "shape": shape,
        "repeats": repeats,
        "iterations": iterations,
        "replay": "end to end: fresh step inputs copied into the static buffer, then replay",
        "graph_mib": "the graph's private pool alone (inputs and KV cache allocated outside it)",
        "shared_pool": measure_shared_pool(model, sizes),
    }
    return CostTable.from_dict({"sizes": list(sizes), **rows, "meta": meta})
