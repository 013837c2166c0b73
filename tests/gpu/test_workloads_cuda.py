"""Workloads size themselves to the GPU memory left (needs a GPU: ``pytest -m cuda`` on the H200).

A smaller card is mimicked with ``torch.cuda.set_per_process_memory_fraction``: the caching
allocator then refuses to go past that share of the H200's memory, as a 16 GB card would.
"""

from __future__ import annotations

import re

import pytest
import torch

from graphlab import workloads
from graphlab.errors import GraphlabError

pytestmark = pytest.mark.cuda

GB = 10**9


@pytest.fixture
def card_of():
    """Call with a size in GB to make the H200 behave like a card of that size."""

    def cap(gigabytes: float) -> None:
        torch.cuda.empty_cache()
        total = torch.cuda.mem_get_info()[1]
        torch.cuda.set_per_process_memory_fraction(gigabytes * GB / total)

    yield cap
    torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.empty_cache()


def test_usable_memory_follows_the_cap(card_of):
    card_of(16)
    usable = workloads.usable_gpu_bytes(torch.device("cuda"))
    assert 0 < usable <= 16 * GB - torch.cuda.memory_allocated()


def test_a_workload_too_large_for_a_16_gb_card_is_refused_before_allocating(card_of):
    card_of(16)
    allocated = torch.cuda.memory_allocated()
    # 4 layers of 32768 x 32768 float32 weights: 16 GiB, more than half of a 16 GB card.
    with pytest.raises(GraphlabError, match=r"mlp\(layers=4, width=32768, batch=4\) needs about"):
        workloads.mlp(4, 32_768, 4, device="cuda")
    assert torch.cuda.memory_allocated() == allocated


def test_the_largest_chain_on_a_16_gb_card_runs(card_of):
    card_of(16)
    w = workloads.chain(10, workloads.MAX_NUMEL, device="cuda")  # 4 GiB at its peak
    torch.testing.assert_close(w()[:4], w.inputs[0][:4] + 10, atol=1e-5, rtol=0)


def test_the_suggested_numel_fits(card_of):
    card_of(4)  # half of 4 GB is less than the 4 GiB the largest chain needs
    with pytest.raises(GraphlabError) as info:
        workloads.chain(10, workloads.MAX_NUMEL, device="cuda")
    largest = int(re.search(r"use numel <= ([\d,]+)", str(info.value)).group(1).replace(",", ""))
    assert 0 < largest < workloads.MAX_NUMEL
    w = workloads.chain(10, largest, device="cuda")
    torch.testing.assert_close(w()[:4], w.inputs[0][:4] + 10, atol=1e-5, rtol=0)
