"""What does a failed capture leave reserved, and what gives it back? (needs a GPU)

Every ``torch.cuda.graph`` capture allocates from a private memory pool. When a capture fails
(here: ``.item()`` inside the block), the tensors made before the failure already sit in that
pool. This benchmark fails ``--captures`` captures in a row, once for each way of cleaning up,
each way in a fresh process so that one way's leftovers cannot hide another's, and prints the
memory the caching allocator still reserves and how many private pools still hold segments:

    none         the failed graph object is simply dropped
    empty_cache  del the graph, gc.collect(), torch.cuda.empty_cache()
    reset        graph.reset() first, then as empty_cache
    graphlab     graphlab.release_failed_captures(): ends the allocator's routing into the
                 failed capture's pool and drops its reference, then empty_cache
    succeed      the same number of captures that succeed, graphs dropped (the baseline)

Run from the project root on the GPU machine::

    python benchmarks/failed_capture_memory.py [--captures 20] [--json OUT.json]

The last H200 run's figures: ``benchmarks/results/failed_capture_memory_h200.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
from pathlib import Path

import torch

from graphlab.failures.recovery import release_failed_captures

WAYS = ("none", "empty_cache", "reset", "graphlab", "succeed")
MIB = 2**20


def pools_with_segments() -> set[tuple[int, int]]:
    """The private pools (graph memory) that still hold at least one segment."""
    return {
        tuple(seg["segment_pool_id"])
        for seg in torch.cuda.memory_snapshot()
        if tuple(seg.get("segment_pool_id", (0, 0))) != (0, 0)
    }


def fail_one_capture(way: str, notes: dict) -> None:
    """One capture that fails after allocating ``x * 2`` in its pool, cleaned up ``way``."""
    x = torch.ones(1024, device="cuda")
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            y = x * 2
            if way != "succeed":
                y.sum().item()  # a host sync: not permitted while the stream is capturing
    except RuntimeError as exc:
        notes.setdefault("error", str(exc).splitlines()[0][:160])
    # torch.cuda.graph leaves the capture stream current when ending the capture raises.
    torch.cuda.set_stream(torch.cuda.default_stream())
    torch.cuda.synchronize()
    if way == "none" or way == "succeed":
        return
    if way == "reset":
        graph.reset()
    del graph, y
    gc.collect()
    if way == "graphlab":
        notes["released"] = notes.get("released", 0) + release_failed_captures()
    torch.cuda.empty_cache()


def one_way(way: str, captures: int) -> dict:
    """Run ``captures`` failing captures cleaned up ``way``; the figures afterwards."""
    torch.ones(1, device="cuda")  # CUDA context and allocator up before the first figure
    before = torch.cuda.memory_reserved()
    notes: dict = {}
    for _ in range(captures):
        fail_one_capture(way, notes)
    torch.cuda.synchronize()
    gc.collect()
    after = torch.cuda.memory_reserved()
    held_pools = len(pools_with_segments())
    torch.cuda.empty_cache()
    # Capture still works afterwards?
    x = torch.ones(4, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = x + 1
    graph.replay()
    torch.cuda.synchronize()
    return {
        "way": way,
        "captures": captures,
        "reserved_added_mib": (after - before) / MIB,
        "reserved_added_after_final_empty_cache_mib": (torch.cuda.memory_reserved() - before) / MIB,
        "pools_holding_segments": held_pools,
        "capture_works_after": y.tolist() == [2.0] * 4,
        **notes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captures", type=int, default=20, help="failed captures per way")
    parser.add_argument("--json", metavar="OUT.json", help="also write the figures as JSON")
    parser.add_argument("--way", choices=WAYS, help=argparse.SUPPRESS)  # one way, in a child
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("failed_capture_memory: needs a CUDA GPU; nothing measured")
        return 2
    if args.way:
        print(json.dumps(one_way(args.way, args.captures)))
        return 0
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {args.captures} captures")
    results = []
    for way in WAYS:
        child = subprocess.run(
            [sys.executable, __file__, "--way", way, "--captures", str(args.captures)],
            capture_output=True,
            text=True,
        )
        if child.returncode != 0:
            print(f"{way:<12} FAILED: {child.stderr.strip().splitlines()[-1:]}")
            results.append({"way": way, "failed": child.stderr[-2000:]})
            continue
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        results.append(figures)
        print(
            f"{way:<12} reserved +{figures['reserved_added_mib']:7.1f} MiB, "
            f"{figures['pools_holding_segments']:>3} pools hold segments, "
            f"+{figures['reserved_added_after_final_empty_cache_mib']:7.1f} MiB after a final "
            f"empty_cache; capture works after: {figures['capture_works_after']}; "
            + (f"pools released: {figures['released']}" if "released" in figures else "")
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
