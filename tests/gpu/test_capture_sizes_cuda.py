"""Lesson 14's live measurement on a real GPU (``pytest -m cuda``): the four sizes its first
experiment measures, within the course's limits of a minute and 2 GB, with replays faster than
eager steps as in the bundled H200 table, and graph memory that is the graph's pool alone."""

from __future__ import annotations

import time

import pytest
import torch

from graphlab.planner.measure import measure_costs

pytestmark = pytest.mark.cuda

SIZES = [1, 8, 32, 64]  # as notebooks/14_capture_sizes.ipynb, section 1


def test_the_lessons_live_measurement_is_small_and_quick():
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    table = measure_costs("decoder", SIZES, repeats=3, iterations=10, progress=False)
    seconds = time.perf_counter() - start
    assert table.sizes.tolist() == SIZES
    assert seconds < 60, seconds
    assert torch.cuda.max_memory_reserved() < 2 * 2**30
    # The stand-in decoder launches many short kernels: a replay beats an eager step at each size.
    assert (table.replay_us < table.eager_us).all(), (table.replay_us, table.eager_us)
    assert (table.capture_s > 0).all() and (table.graph_mib >= 0).all()
    # The graph's pool alone: the KV cache it reads (2 MiB per batch row) is not counted. A pool
    # holds whole 2 MiB segments, so one row's cache and the smallest pool are both 2 MiB (the
    # H200 measured 2.0 MiB at each of these sizes); from 8 rows on the cache is far larger.
    cache_mib = 2 * table.sizes
    assert (table.graph_mib[1:] < cache_mib[1:]).all(), (table.graph_mib, cache_mib)
    assert table.graph_mib[0] <= cache_mib[0], (table.graph_mib, cache_mib)
    shared = table.meta["shared_pool"]
    assert shared["sizes"] == sorted(SIZES, reverse=True)
    assert shared["reserved_mib"] == sorted(shared["reserved_mib"])  # a pool only grows
