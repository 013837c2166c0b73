"""A toy decoder layer, and three ways to run it on batches of prompts of different lengths.

Lesson 11 asks why serving engines capture *pieces* of a model step in CUDA graphs rather than the
whole step. This module holds the layer and the runners that the lesson and ``graphlab record``
compare. It is plain PyTorch and takes graphlab's ``cuda`` (``torch.cuda`` on a GPU, the CPU
emulator elsewhere), so it is captured and replayed the same way on both.

**The batch.** Prompts are packed token by token, as servers pack them: ``x`` has one row per token,
shape ``(tokens, hidden)``, and ``seq_lens`` says how many consecutive rows belong to each prompt
(``[5, 11, 7]``: rows 0-4, 5-15 and 16-22). There is no embedding: ``x`` holds the hidden states
that enter the layer.

**The layer** (:class:`DecoderLayer`): LayerNorm, QKV projection, causal self-attention within each
prompt, output projection plus residual, LayerNorm, MLP (Linear, GELU, Linear) plus residual. All
of it except attention treats each row on its own, so its work depends on the number of tokens
only. Attention mixes the rows of a prompt, so it depends on how the batch splits into prompts:
the batch's *make-up*.

**Two ways to compute attention** (``attention=``, see :data:`ATTENTION`):

- ``"loop"``: one small attention per prompt, a Python loop over ``seq_lens``. Its kernels and their
  sizes follow the make-up, so a capture would freeze the split of the batch it saw.
- ``"masked"``: one attention over all the rows, with a block-diagonal causal mask computed on the
  device from :func:`metadata` (each row's prompt and position). The make-up is then data in a
  tensor, which a graph of fixed shapes can take; the price is work on every pair of rows.

**The runners.** Eagerly: ``layer(x, seq_lens, attention)``. :class:`FullGraph` captures the whole
layer for a bucket of ``size`` tokens, with masked attention over all ``size`` rows, padding
included. :class:`PiecewiseGraphs` captures two graphs per bucket, the part before attention and
the part after it, and runs attention eagerly between their replays on the real rows only. Both
take a batch the same way: copy ``x`` into the first rows of ``static_x``, call
``replay(seq_lens)``, read the first rows of ``static_out``. The rows after the batch are padding:
they never change the real rows (the per-row parts keep rows apart, and the mask keeps each
padding row to itself), and what the graph writes into them means nothing.

:class:`BatchDescriptor` and :func:`describe` give the key a dispatcher looks graphs up by.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from graphlab.backend import cuda_module
from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

from .side_stream import capture_on_side_stream

__all__ = [
    "ATTENTION",
    "BatchDescriptor",
    "DecoderLayer",
    "FullGraph",
    "PiecewiseGraphs",
    "check_seq_lens",
    "describe",
    "metadata",
    "pool_bytes",
]

ATTENTION = ("loop", "masked")

# Eager runs of each captured function on the capture stream before its capture: what is created
# on first use (cuBLAS handles and workspaces, allocator blocks) then exists before capture.
WARMUP = 2


def check_seq_lens(seq_lens: Iterable[int], limit: int | None = None) -> list[int]:
    """``seq_lens`` as a list of prompt lengths; GraphlabError unless each is a whole number >= 1
    and, when ``limit`` is given, they add up to at most ``limit`` tokens."""
    lens = list(seq_lens) if isinstance(seq_lens, Iterable) else None
    if not lens or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in lens):
        raise GraphlabError(
            _(
                "seq_lens must be a non-empty list of prompt lengths (whole numbers >= "
                "1), not {seq_lens}"
            ).format(seq_lens=repr(seq_lens))
        )
    if limit is not None and sum(lens) > limit:
        raise GraphlabError(
            _(
                "a batch of {total} tokens does not fit a graph of {limit} tokens: "
                "replay the graph of a bucket of at least {total} tokens, or run the "
                "batch eagerly"
            ).format(total=sum(lens), limit=limit)
        )
    return lens


def _check_attention(attention: str) -> str:
    if attention not in ATTENTION:
        raise GraphlabError(
            _("attention must be one of {choices}, not {given}").format(
                choices=ATTENTION, given=repr(attention)
            )
        )
    return attention


def metadata(seq_lens: Sequence[int], size: int | None = None) -> torch.Tensor:
    """What masked attention needs to know about a batch: a ``(2, size)`` int64 CPU tensor.

    Row 0 is each token's prompt (0, 1, ...), row 1 its position in that prompt. ``size`` (default:
    the batch's tokens) pads the batch: padding token ``i`` gets prompt ``-1 - i`` and position 0,
    a prompt of its own, so that it attends to itself only and no real token attends to it.
    """
    lens = torch.tensor(check_seq_lens(seq_lens, size))
    tokens = int(lens.sum())
    size = tokens if size is None else size
    starts = torch.cumsum(lens, 0) - lens
    meta = torch.zeros(2, size, dtype=torch.int64)
    meta[0, :tokens] = torch.repeat_interleave(torch.arange(len(lens)), lens)
    meta[1, :tokens] = torch.arange(tokens) - torch.repeat_interleave(starts, lens)
    meta[0, tokens:] = -1 - torch.arange(size - tokens)
    return meta


def _copy_to(out: torch.Tensor, host: torch.Tensor) -> torch.Tensor:
    """Copy the CPU tensor ``host`` into ``out`` without making the host wait for the GPU.

    A host-to-device ``copy_`` with ``non_blocking=False`` synchronizes the stream after the copy
    (``memcpy_and_sync`` in ``aten/src/ATen/native/cuda/Copy.cu``, torch 2.4 to 2.13), so the host
    could not queue the next step while the GPU runs this one. A non-blocking copy from pinned
    memory is asynchronous, and the copy records an event on the pinned block, so torch's
    pinned-memory allocator does not hand the block out again before the copy has run.
    """
    if out.is_cuda:
        host = host.pin_memory()
    return out.copy_(host, non_blocking=True)


class DecoderLayer(torch.nn.Module):
    """One pre-norm decoder layer without embedding, for inference (no gradients).

    Args:
        hidden: width of a token's hidden state.
        heads: attention heads (``hidden`` must be a multiple of it).
        ffn: width of the MLP's middle layer.
        device: where the weights live (default: graphlab's live device).
        seed: the weights are drawn from this seed on the CPU, so every device gets the same layer.

    ``layer(x, seq_lens, attention="loop")`` runs it eagerly. :meth:`before_attention`,
    :meth:`attention` and :meth:`after_attention` are its three parts, which the piecewise runner
    calls separately; :meth:`forward_masked` is the step a full graph captures.
    """

    def __init__(
        self,
        hidden: int = 256,
        heads: int = 4,
        ffn: int = 1024,
        device: str | torch.device | None = None,
        seed: int = 0,
    ):
        super().__init__()
        for what, value in (("hidden", hidden), ("heads", heads), ("ffn", ffn)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GraphlabError(
                    _("{what} must be a whole number >= 1, not {value}").format(
                        what=what, value=repr(value)
                    )
                )
        if hidden % heads:
            raise GraphlabError(
                _("hidden ({hidden}) must be a multiple of heads ({heads})").format(
                    hidden=hidden, heads=heads
                )
            )
        self.hidden, self.heads, self.head_dim = hidden, heads, hidden // heads
        # Weights from a private seed, so that the caller's random stream is left alone.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.norm1 = torch.nn.LayerNorm(hidden)
            self.qkv = torch.nn.Linear(hidden, 3 * hidden)
            self.proj = torch.nn.Linear(hidden, hidden)
            self.norm2 = torch.nn.LayerNorm(hidden)
            self.up = torch.nn.Linear(hidden, ffn)
            self.down = torch.nn.Linear(ffn, hidden)
        if device is None:
            from graphlab.backend import backend

            device = backend().device
        self.to(device).requires_grad_(False).eval()

    @property
    def device(self) -> torch.device:
        return self.qkv.weight.device

    def forward(self, x: torch.Tensor, seq_lens: Sequence[int], attention: str = "loop"):
        """The layer, eagerly, on the batch ``x`` split into prompts of ``seq_lens`` tokens."""
        lens = check_seq_lens(seq_lens)
        if sum(lens) != x.shape[0]:
            raise GraphlabError(
                _(
                    "seq_lens add up to {total} tokens but x has {shape} rows: give one "
                    "length per prompt, adding up to the rows of x"
                ).format(total=sum(lens), shape=x.shape[0])
            )
        return self.after_attention(x, self.attention(self.before_attention(x), lens, attention))

    def forward_masked(self, x: torch.Tensor, meta: torch.Tensor) -> torch.Tensor:
        """The layer with masked attention over all rows of ``x``, padding included: a full graph's
        step. ``meta`` is :func:`metadata` of the batch on the device."""
        return self.after_attention(x, self.attend_masked(self.before_attention(x), meta))

    def before_attention(self, x: torch.Tensor) -> torch.Tensor:
        """LayerNorm and QKV projection: ``(tokens, 3 * hidden)``. Row by row."""
        return self.qkv(self.norm1(x))

    def after_attention(self, x: torch.Tensor, attn: torch.Tensor) -> torch.Tensor:
        """Output projection, residual, LayerNorm, MLP, residual. Row by row."""
        h = x + self.proj(attn)
        return h + self.down(torch.nn.functional.gelu(self.up(self.norm2(h))))

    def attention(self, qkv: torch.Tensor, seq_lens: Sequence[int], how: str = "loop"):
        """Causal attention within each prompt, on the real rows only, done ``how`` (see
        :data:`ATTENTION`)."""
        if _check_attention(how) == "loop":
            return self.attend_loop(qkv, seq_lens)
        meta = torch.empty(2, qkv.shape[0], dtype=torch.int64, device=qkv.device)
        return self.attend_masked(qkv, _copy_to(meta, metadata(seq_lens)))

    def attend_loop(self, qkv: torch.Tensor, seq_lens: Sequence[int]) -> torch.Tensor:
        """One attention per prompt: a few kernels per prompt, each on that prompt's rows."""
        q, k, v = self._split_heads(qkv)
        outs, start = [], 0
        for n in seq_lens:
            rows = slice(start, start + n)
            position = torch.arange(n, device=qkv.device)
            later = position[None, :] > position[:, None]  # a token sees no later token
            outs.append(_attend(q[:, rows], k[:, rows], v[:, rows], later))
            start += n
        return self._merge_heads(torch.cat(outs, dim=1))

    def attend_masked(self, qkv: torch.Tensor, meta: torch.Tensor) -> torch.Tensor:
        """One attention over all rows, each row seeing the earlier rows of its own prompt."""
        q, k, v = self._split_heads(qkv)
        prompt, position = meta[0], meta[1]
        hidden = (prompt[:, None] != prompt[None, :]) | (position[None, :] > position[:, None])
        return self._merge_heads(_attend(q, k, v, hidden))

    def _split_heads(self, qkv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(tokens, 3 * hidden)`` -> q, k, v of shape ``(heads, tokens, head_dim)``, q scaled."""
        tokens = qkv.shape[0]
        q, k, v = qkv.view(tokens, 3, self.heads, self.head_dim).permute(1, 2, 0, 3)
        return q * (1 / math.sqrt(self.head_dim)), k, v

    def _merge_heads(self, out: torch.Tensor) -> torch.Tensor:
        return out.transpose(0, 1).reshape(out.shape[1], self.hidden)


def _attend(q, k, v, hidden: torch.Tensor) -> torch.Tensor:
    """Softmax attention in which ``hidden[i, j]`` keeps row i from seeing row j.

    Written out (two matmuls, a masked fill, a softmax) rather than through
    ``scaled_dot_product_attention``, so that the same kernels run eagerly and inside a capture on
    every torch version and device. Every row sees at least itself, so no row is all -inf.
    """
    scores = q @ k.transpose(-1, -2)
    scores.masked_fill_(hidden, float("-inf"))
    return scores.softmax(dim=-1) @ v


class FullGraph:
    """The whole layer in one graph, for batches of up to ``size`` tokens.

    Attention is :meth:`DecoderLayer.attend_masked` over all ``size`` rows: each replay computes
    ``heads * size * size`` attention scores whatever the batch, and the graph's pool holds
    tensors of that size. The batch's make-up reaches the graph as data: :meth:`replay` writes the
    :func:`metadata` of ``seq_lens`` into ``static_metadata`` first.

    Attributes: ``size``, ``static_x`` (input rows), ``static_out`` (output rows, overwritten by
    each replay), ``replays`` (how many so far), ``graphs`` (1), ``pool`` (its memory pool's id).
    """

    graphs = 1

    def __init__(self, layer: DecoderLayer, size: int, pool: Any = None, cuda: Any = None):
        cuda = cuda_module() if cuda is None else cuda
        self.size = _check_size(size)
        self.static_x = torch.zeros(size, layer.hidden, device=layer.device)
        # A valid batch to capture with: one prompt filling the bucket.
        self.static_metadata = metadata([size]).to(layer.device)
        self._graph, self.static_out = capture_on_side_stream(
            cuda,
            lambda: layer.forward_masked(self.static_x, self.static_metadata),
            warmups=WARMUP,
            pool=pool,
        )
        self.pool = self._graph.pool()
        self.replays = 0

    def replay(self, seq_lens: Sequence[int]) -> None:
        """Run the batch of prompts ``seq_lens`` whose rows are in ``static_x[:sum(seq_lens)]``."""
        _copy_to(self.static_metadata, metadata(seq_lens, self.size))
        self._graph.replay()
        self.replays += 1


class PiecewiseGraphs:
    """The layer as two graphs per bucket of ``size`` tokens, with attention eager between them.

    The first graph runs :meth:`DecoderLayer.before_attention` on ``static_x``; attention then runs
    eagerly on the batch's real rows only (``attention``: ``"loop"`` or ``"masked"``) and is copied
    into ``static_attention``; the second graph runs :meth:`DecoderLayer.after_attention`. The
    graphs hold only tensors of ``size`` rows, and the make-up of the batch never enters them. Both
    share one memory pool (``pool``, a new one by default): the second is captured after the first
    and replayed after it, so it may reuse what the first no longer needs.

    Attributes: ``size``, ``attention``, ``static_x``, ``static_out``, ``replays``, ``graphs`` (2),
    ``pool``.
    """

    graphs = 2

    def __init__(
        self,
        layer: DecoderLayer,
        size: int,
        attention: str = "loop",
        pool: Any = None,
        cuda: Any = None,
    ):
        cuda = cuda_module() if cuda is None else cuda
        self.layer = layer
        self.size = _check_size(size)
        self.attention = _check_attention(attention)
        self.static_x = torch.zeros(size, layer.hidden, device=layer.device)
        self.static_attention = torch.zeros(size, layer.hidden, device=layer.device)
        self.pool = cuda.graph_pool_handle() if pool is None else pool
        before, self.static_qkv = capture_on_side_stream(
            cuda, lambda: layer.before_attention(self.static_x), warmups=WARMUP, pool=self.pool
        )
        after, self.static_out = capture_on_side_stream(
            cuda,
            lambda: layer.after_attention(self.static_x, self.static_attention),
            warmups=WARMUP,
            pool=self.pool,
        )
        self._graphs = (before, after)
        self.replays = 0

    def replay(self, seq_lens: Sequence[int], attention: str | None = None) -> None:
        """Run the batch of prompts ``seq_lens`` whose rows are in ``static_x[:sum(seq_lens)]``;
        ``attention`` overrides the runner's way of computing attention for this call."""
        lens = check_seq_lens(seq_lens, self.size)
        how = self.attention if attention is None else _check_attention(attention)
        rows = sum(lens)
        before, after = self._graphs
        before.replay()
        self.static_attention[:rows].copy_(self.layer.attention(self.static_qkv[:rows], lens, how))
        after.replay()
        self.replays += 1


def _check_size(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise GraphlabError(
            _("a bucket's size must be a whole number of tokens >= 1, not {size}").format(
                size=repr(size)
            )
        )
    return size


@dataclass(frozen=True)
class BatchDescriptor:
    """What a dispatcher looks a batch up by: its tokens, and the bucket they pad to.

    ``padded`` is the smallest bucket holding ``num_tokens`` tokens, or None when no bucket is large
    enough (the batch then runs eagerly). ``padding`` is the rows computed for nothing.
    """

    num_tokens: int
    padded: int | None

    @property
    def padding(self) -> int:
        return 0 if self.padded is None else self.padded - self.num_tokens


def describe(seq_lens: Sequence[int], buckets: Iterable[int]) -> BatchDescriptor:
    """The :class:`BatchDescriptor` of the batch ``seq_lens`` among ``buckets`` (sizes in tokens,
    or a dict keyed by them)."""
    tokens = sum(check_seq_lens(seq_lens))
    holding = [size for size in buckets if size >= tokens]
    return BatchDescriptor(tokens, min(holding) if holding else None)


def pool_bytes(pool: Any, cuda: Any = None) -> int:
    """Bytes held by the memory pool ``pool`` (a runner's ``pool``): its segments on a GPU, the
    bytes of its tensors on the emulator (which has no segments, see its ``memory_sizes``)."""
    cuda = cuda_module() if cuda is None else cuda
    return sum(
        segment["total_size"]
        for segment in cuda.memory_snapshot()
        if tuple(segment["segment_pool_id"]) == tuple(pool)
    )
