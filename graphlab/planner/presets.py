"""The fixed capture-size lists that serving stacks use by default, to compare a plan with.

Each list is rebuilt from the stack's public source, at the version named beside it, for a single
GPU with the stack's defaults and no speculative decoding. ``max_size`` stands for the stack's
largest captured size, which each derives from its own settings.

- ``vllm``: vLLM, ``vllm/config/vllm.py``, ``VllmConfig._set_cudagraph_sizes`` (main at commit
  000fc94b, the v0.28 line): 1, 2, 4, then every 8 below 256, then every 16 from 256 up to the
  largest size, ``min(2 * max_num_seqs, 512)`` (1024 on data-centre Blackwell GPUs). With the
  default ``max_num_seqs`` of large-memory GPUs that is 512 on an H200.
- ``sglang``: SGLang 0.5, ``python/sglang/srt/server_args.py``,
  ``ServerArgs._generate_cuda_graph_batch_sizes``: 1, 2, 4, 8, 12, every 8 from 16 to 256,
  every 16 from 272 below 512, every 32 from 512, cut at ``cuda_graph_max_bs``; its default on
  an H200 (under 160 GB) at tensor parallelism below 4 is 256.
- ``trtllm``: TensorRT-LLM, ``tensorrt_llm/llmapi/llm_args.py``,
  ``BaseCudaGraphConfig._generate_cuda_graph_batch_sizes`` (main at commit 00043967, after
  1.0), with ``enable_padding=True``: 1, 2, 4, every 8 up to 128, then steps of 64, plus the
  largest size (default 128). Without padding TensorRT-LLM replays a graph only for a batch of
  exactly a captured size, a dispatch rule this planner's model does not have, so the padded
  list is the one comparable here.
- ``tgi``: Text Generation Inference v3.3.7, ``launcher/src/main.rs`` (``--cuda-graphs``):
  1, 2, 4, 8, 16, 32, whatever the largest batch.
- ``pow2``: powers of two up to the largest size, the usual hand-written list.

A preset size the cost table does not list cannot be priced, so :func:`fit_to_table` moves each
to the smallest table size at least as large (a graph at least as large serves the same steps)
and a size above the table to the table's largest; sizes that meet merge.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graphlab.errors import PlannerError
from graphlab.language import gettext as _

from .inputs import CostTable

__all__ = ["PRESETS", "fit_to_table", "preset_sizes"]


def _vllm(max_size: int) -> list[int]:
    sizes = [s for s in (1, 2, 4) if s <= max_size]
    sizes += list(range(8, min(max_size + 1, 256), 8))
    sizes += list(range(256, max_size + 1, 16))
    return sizes


def _sglang(max_size: int) -> list[int]:
    sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16)]
    sizes += range(512, max_size + 1, 32)
    return [s for s in sizes if s <= max_size]


def _trtllm(max_size: int) -> list[int]:
    sizes = [1, 2, 4, *range(8, 129, 8)]
    while sizes[-1] + 64 <= max_size:
        sizes.append(sizes[-1] + 64)
    sizes = [s for s in sizes if s <= max_size]
    if not sizes or sizes[-1] != max_size:
        sizes.append(max_size)
    return sizes


def _tgi(max_size: int) -> list[int]:
    return [1, 2, 4, 8, 16, 32]


def _pow2(max_size: int) -> list[int]:
    return [1 << i for i in range(max_size.bit_length()) if 1 << i <= max_size]


# name -> (list builder, the stack's default largest size on one H200)
PRESETS: dict[str, tuple[Callable[[int], list[int]], int]] = {
    "vllm": (_vllm, 512),
    "sglang": (_sglang, 256),
    "trtllm": (_trtllm, 128),
    "tgi": (_tgi, 32),
    "pow2": (_pow2, 512),
}


def preset_sizes(name: str, max_size: int | None = None) -> list[int]:
    """The sizes preset ``name`` captures, up to ``max_size`` (default: the stack's own)."""
    if name not in PRESETS:
        raise PlannerError(
            _("unknown preset {name!r}: choose from {choices}").format(
                name=name, choices=", ".join(PRESETS)
            )
        )
    build, default = PRESETS[name]
    limit = default if max_size is None else max_size
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise PlannerError(
            _("the largest preset size is {value!r}: use a whole number from 1 up").format(
                value=limit
            )
        )
    return build(limit)


def fit_to_table(sizes: list[int], costs: CostTable) -> list[int]:
    """``sizes`` moved onto the cost table's sizes (see the module docstring), sorted."""
    at = np.searchsorted(costs.sizes, np.asarray(sizes, dtype=np.int64), side="left")
    at = np.minimum(at, len(costs.sizes) - 1)
    return sorted({int(s) for s in costs.sizes[at]})
