"""graphlab's helpers reuse one side stream, so rerunning them holds GPU memory flat (needs a GPU).

Each stream a matmul runs on keeps a cuBLAS workspace for the life of the process (33 MiB on the
H200). With a fresh ``torch.cuda.Stream()`` per capture, every one of the first 32 captures left
one more behind; with graphlab.timing.side_stream the memory after the tenth capture is the memory
after the first, to the byte.
"""

from __future__ import annotations

import gc

import pytest
import torch

from graphlab.support.torch_internals import clear_cublas_workspaces
from graphlab.timing.captured import capture
from graphlab.timing.side_stream import side_stream

pytestmark = pytest.mark.cuda


def test_one_side_stream_per_device():
    first = side_stream(torch.cuda)
    assert side_stream(torch.cuda) is first
    assert first != torch.cuda.default_stream()


def allocated_after(fn) -> int:
    """Bytes allocated once ``fn`` has run, the GPU is idle and its garbage is collected."""
    fn()
    torch.cuda.synchronize()
    gc.collect()
    return torch.cuda.memory_allocated()


def test_repeated_captures_of_a_matmul_hold_allocated_memory_flat():
    # Start with no workspace kept, as in a fresh process: otherwise streams earlier tests used
    # would already have theirs, and a capture on one of them would add nothing either way.
    gc.collect()
    clear_cublas_workspaces()()
    a = torch.arange(256 * 256, dtype=torch.float32, device="cuda").reshape(256, 256) / 65536
    b = a.t().contiguous()

    def once():
        captured = capture(torch.mm, a, b)
        captured.replay()

    first = allocated_after(once)
    later = [allocated_after(once) for _ in range(10)]
    assert later == [first] * 10
