"""Replay cost of the CPU emulator: a graph of 1,000 small ops vs running them eagerly on the CPU.

The emulator's promise is semantics, not speed, but a replay should not be much slower than the
work it replays (target: no more than about 2x eager). Run::

    python benchmarks/emulator_replay.py [--ops 1000] [--numel 64] [--repeats 30]

It prints the median time per call of the eager function and of one replay, and their ratio.
These are CPU timings of the emulator on this machine; they say nothing about a GPU.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch

from graphlab import emulator as cuda


def chain(x: torch.Tensor, ops: int) -> torch.Tensor:
    """``ops`` small elementwise ops in a row (mul, add, sin in turn)."""
    y = x
    for i in range(ops):
        kind = i % 3
        if kind == 0:
            y = y * 1.0001
        elif kind == 1:
            y = y + 0.5
        else:
            y = torch.sin(y)
    return y


def median_us(fn, repeats: int) -> float:
    fn()  # first call outside the measurement
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--numel", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    x = torch.randn(args.numel)
    g = cuda.CUDAGraph()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with cuda.graph(cuda.CUDAGraph()):  # torch imports its dispatch-mode machinery once
            x + 1
        start = time.perf_counter_ns()
        with cuda.graph(g):
            chain(x, args.ops)
        capture_ms = (time.perf_counter_ns() - start) / 1e6

    eager = median_us(lambda: chain(x, args.ops), args.repeats)
    replay = median_us(g.replay, args.repeats)
    print(f"{args.ops} ops on {args.numel} float32 elements, median of {args.repeats}:")
    print(f"  eager on the CPU : {eager:10.1f} us per call ({eager / args.ops:.2f} us per op)")
    print(f"  emulator replay  : {replay:10.1f} us per replay ({replay / args.ops:.2f} us per op)")
    print(f"  replay / eager   : {replay / eager:10.2f}x   (target: about 2x or less)")
    print(f"  capture (once)   : {capture_ms:10.1f} ms")


if __name__ == "__main__":
    main()
