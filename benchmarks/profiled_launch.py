"""How much does torch.profiler inflate the host's launch calls? (needs a GPU)

The lessons' timelines come from profiled runs, and their host lanes show launch calls as long as
the profiler made them. This measures the same calls with and without the profiler:

    graph_launch  one replay of a graph of ``--kernels`` tiny elementwise kernels: the host time of
                  ``graph.replay()`` unprofiled, against the ``cudaGraphLaunch`` events of a
                  profiled run of the same replays
    eager_launch  one tiny elementwise kernel launched eagerly: the host time per op of a loop of
                  ``--kernels`` ops unprofiled, against the ``cudaLaunchKernel`` events profiled

Medians over ``--repeats`` runs, in microseconds. Run from the project root on a GPU machine::

    python benchmarks/profiled_launch.py [--kernels 1000] [--repeats 20] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from graphlab.timing.side_stream import side_stream
from graphlab.trace.events import call_name
from graphlab.trace.timeline import Timeline


def _chain(x: torch.Tensor, kernels: int) -> None:
    for _ in range(kernels):
        x.add_(1.0)


def _captured(x: torch.Tensor, kernels: int) -> torch.cuda.CUDAGraph:
    # Warm up on a side stream (lazy initialisation must not be captured), then capture.
    stream = side_stream(torch.cuda)
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        _chain(x, 3)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        _chain(x, kernels)
    torch.cuda.synchronize()
    return graph


def _host_us(step, repeats: int) -> list[float]:
    """Host time of each call of ``step``, with the GPU drained before each so no queue is full."""
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter_ns()
        step()
        times.append((time.perf_counter_ns() - start) / 1e3)
    torch.cuda.synchronize()
    return times


def _profiled_call_us(step, repeats: int, call: str) -> list[float]:
    """Durations of the host runtime calls named ``call`` while ``step`` runs under the profiler."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(repeats):
            step()
            torch.cuda.synchronize()
    timeline = Timeline.from_chrome_trace(prof)
    # CUPTI may suffix a call's name (cudaGraphLaunch_v10000): compare without the suffix.
    named = np.array([call_name(str(n)) == call for n in timeline.name], dtype=bool)
    picked = timeline.select((timeline.kind == "launch") & named)
    return (picked.dur_ns / 1e3).tolist()


def measure(kernels: int, repeats: int) -> dict:
    x = torch.zeros(4096, device="cuda")
    graph = _captured(x, kernels)
    graph.replay()
    eager_loop = _host_us(lambda: _chain(x, kernels), repeats)
    return {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "kernels": kernels,
        "repeats": repeats,
        "graph_launch_us": {
            "unprofiled": statistics.median(_host_us(graph.replay, repeats)),
            "profiled": statistics.median(
                _profiled_call_us(graph.replay, repeats, "cudaGraphLaunch")
            ),
        },
        "eager_launch_us": {
            "unprofiled": statistics.median(eager_loop) / kernels,
            "profiled": statistics.median(
                _profiled_call_us(lambda: _chain(x, kernels), repeats, "cudaLaunchKernel")
            ),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    figures = measure(args.kernels, args.repeats)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
