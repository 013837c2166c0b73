"""Models whose blockers are known, for the tests of graphlab.diagnose (CPU and GPU alike).

Each line that blocks a capture ends with a ``# blocker: KIND`` comment; the tests read the
expected (kind, line) pairs from this file's text, not from the code under test. Every
``NAME()`` returns ``(fn_or_module, example_inputs)``, as ``graphlab diagnose FILE.py:NAME``
expects, on graphlab's device.
"""

from __future__ import annotations

import torch
from torch import nn

from graphlab import DEVICE


class Everything(nn.Module):
    """One of every blocker the emulator can see, each on a line of its own."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.calls = 0
        self.generator = torch.Generator(device=DEVICE).manual_seed(0)

    def forward(self, x):
        self.calls += 1
        h = self.lin(x)
        scale = h.abs().max().item()  # blocker: host-sync
        kept = h.cpu()  # blocker: host-copy
        first = h[0].tolist()  # blocker: host-copy
        print(h.sum())  # blocker: host-sync
        where = torch.nonzero(h > 0)  # blocker: data-dependent-shape
        gen = self.generator
        noise = torch.rand(h.shape, generator=gen, device=DEVICE)  # blocker: rng-generator
        offsets = torch.tensor([1.0, 2.0], device=h.device)  # blocker: host-tensor
        h = h * (self.calls * 0.5)  # blocker: changing-scalar
        if self.calls % 2:  # noqa: SIM108 (a branch of its own is what the test needs)
            h = h + 1  # blocker: branch-changes
        else:
            h = h - 1
        # Each value is used without a copy back to the device: on a GPU, kept.to(h.device) here
        # would be one more blocker (a copy from pageable host memory) that the CPU cannot see.
        return h + noise + offsets.sum() + scale + len(kept) + len(first) + len(where)


def everything():
    torch.manual_seed(0)
    return Everything().to(DEVICE), (torch.randn(4, 8, device=DEVICE),)


def clean():
    """A small MLP that captures: three linear layers and two ReLUs."""
    torch.manual_seed(0)
    layers = [nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4)]
    model = nn.Sequential(*layers)
    return model.to(DEVICE), (torch.randn(8, 16, device=DEVICE),)


def not_a_pair():
    return 42


def raises():
    raise ValueError("no model today")
