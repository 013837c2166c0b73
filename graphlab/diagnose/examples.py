"""Three small models for lesson 16, "Your own model", built here so that nothing is downloaded.

- :func:`decoder_step`: one decode step of a small transformer decoder (a token's hidden state
  attends to a fixed key/value cache): it captures cleanly, and its many short kernels make it
  launch-bound, the case a graph helps.
- :class:`Branchy` and :func:`branchy`: a model whose forward reads a value with ``.item()`` to
  choose a branch and keeps the positive activations with a boolean mask (a data-dependent
  shape): two blockers.
- :func:`training_step`: one training step of a small MLP with ``torch.optim.Adam`` made the
  default way, ``capturable=False``: a third blocker.

Each ``NAME()`` returns ``(fn_or_module, example_inputs)``, the form ``graphlab diagnose
FILE.py:NAME`` expects, on graphlab's device (the GPU when there is one). Weights come from a
fixed seed, so two calls build the same model.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from graphlab.backend import backend

__all__ = [
    "Branchy",
    "DecoderStep",
    "branchy",
    "decoder_step",
    "training_step",
]

SEED = 16


class _Layer(nn.Module):
    """Pre-norm attention over a key/value cache, then an MLP: the kernels of one decode step."""

    keys: torch.Tensor  # buffers, registered in __init__
    values: torch.Tensor

    def __init__(self, width: int, heads: int, cache: int, batch: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.q = nn.Linear(width, width)
        self.out = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )
        shape = (batch, heads, cache, width // heads)
        self.register_buffer("keys", torch.randn(shape))
        self.register_buffer("values", torch.randn(shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, width = x.shape
        q = self.q(self.norm1(x)).view(batch, self.heads, 1, width // self.heads)
        attended = nn.functional.scaled_dot_product_attention(q, self.keys, self.values)
        x = x + self.out(attended.reshape(batch, width))
        mlp: torch.Tensor = self.mlp(self.norm2(x))
        return x + mlp


class DecoderStep(nn.Module):
    """A decoder's step for one new token per sequence: ``hidden (batch, width) -> logits``."""

    def __init__(
        self,
        layers: int = 4,
        width: int = 256,
        heads: int = 4,
        cache: int = 128,
        batch: int = 8,
        vocab: int = 1024,
    ):
        super().__init__()
        self.layers = nn.ModuleList(_Layer(width, heads, cache, batch) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            hidden = layer(hidden)
        logits: torch.Tensor = self.head(self.norm(hidden))
        return logits


def decoder_step(batch: int = 8) -> tuple[DecoderStep, tuple[torch.Tensor]]:
    """``(DecoderStep, (hidden,))`` on graphlab's device, in eval mode (no dropout)."""
    device = backend().device
    torch.manual_seed(SEED)
    model = DecoderStep(batch=batch).to(device).eval()
    return model, (torch.randn(batch, 256, device=device),)


class Branchy(nn.Module):
    """A projection that doubles its output when the mean is positive, then sums what is > 0.

    ``.item()`` reads the mean on the host to choose the branch, and ``h[h > 0]`` has as many
    elements as the data has positive values: neither can be captured.
    """

    def __init__(self, width: int = 64):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h: torch.Tensor = self.proj(x)
        if h.mean().item() > 0:
            h = h * 2
        return h[h > 0].sum()


def branchy() -> tuple[Branchy, tuple[torch.Tensor]]:
    """``(Branchy, (x,))`` on graphlab's device."""
    device = backend().device
    torch.manual_seed(SEED)
    return Branchy().to(device), (torch.randn(32, 64, device=device),)


def training_step(
    capturable: bool = False,
) -> tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """``(step, (x, target))``: forward, backward and ``Adam.step()`` of a small MLP.

    ``capturable=False`` is Adam's default; a graph needs ``capturable=True``. The step returns
    the loss (before the update), a tensor, so that it can be compared between eager and replay.
    """
    device = backend().device
    torch.manual_seed(SEED)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=capturable)

    def step(x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)  # keep .grad's memory: a graph writes into it
        return loss.detach()

    step.model, step.optimizer = model, optimizer  # type: ignore[attr-defined]
    return step, (torch.randn(16, 32, device=device), torch.randn(16, 1, device=device))
