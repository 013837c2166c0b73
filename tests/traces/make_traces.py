"""Record the three small real Kineto traces that the tests check (run once, on a CUDA GPU).

    python tests/traces/make_traces.py OUTDIR

writes, with torch.profiler (activities CPU + CUDA):

- ``eager_chain.json``: a chain of 20 tiny elementwise kernels (``y = y * 1.0001`` on 4096 floats)
  run eagerly, after a warm-up, so each kernel has its own ``cudaLaunchKernel``.
- ``graph_replay.json``: the same 20 ops captured in one ``torch.cuda.CUDAGraph`` (warm-up on a
  side stream first, one unprofiled replay to upload the graph), replayed twice while profiling:
  two ``cudaGraphLaunch`` calls, 40 kernels, each replay's kernels sharing its correlation id.
- ``multistream_replay.json``: a graph capturing a fork/join across two streams (two independent
  1024x1024 matmuls on streams s1 and s2, joined, then added on the capturing stream), replayed
  once while profiling.

and ``provenance.json`` (GPU, driver, torch, CUDA, Python, date, graphlab version, command:
``graphlab.timing.machine.machine_meta``, as in a recording). The traces are written by
``prof.export_chrome_trace`` unmodified; nothing is stripped (each is a few tens of KB because
the profiled regions are tiny and ``with_stack``/``record_shapes`` are off). The script checks
each file is under 300 KB and says so if not.

Only the stable ``torch.profiler.profile`` API is used; every profiled region ends with
``torch.cuda.synchronize()`` so all GPU work is inside the trace.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # graphlab from this checkout

from graphlab.support.atomic import write_text_atomically
from graphlab.timing.machine import machine_meta

N_OPS = 20
NUMEL = 4096
MATMUL_N = 1024
MAX_BYTES = 300 * 1024
ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


def chain(x: torch.Tensor) -> torch.Tensor:
    """N_OPS elementwise multiplications: one tiny kernel each."""
    y = x
    for _ in range(N_OPS):
        y = y * 1.0001
    return y


def export(prof: profile, path: Path) -> None:
    prof.export_chrome_trace(str(path))
    size = path.stat().st_size
    note = "" if size <= MAX_BYTES else f"  WARNING: over {MAX_BYTES // 1024} KB"
    print(f"wrote {path} ({size / 1024:.1f} KB){note}")


def record_eager(out: Path) -> None:
    x = torch.ones(NUMEL, device="cuda")
    for _ in range(3):  # warm-up: load the kernel, fill the caching allocator
        chain(x)
    torch.cuda.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        chain(x)
        torch.cuda.synchronize()
    export(prof, out / "eager_chain.json")


def record_graph_replay(out: Path) -> None:
    static_x = torch.ones(NUMEL, device="cuda")
    # Warm up on a side stream, as torch.cuda.graphs recommends, so that capture sees no
    # first-use allocations or lazy initialisation.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            chain(static_x)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = chain(static_x)
    graph.replay()  # the first replay uploads the graph; keep it out of the trace
    torch.cuda.synchronize()

    with profile(activities=ACTIVITIES) as prof:
        graph.replay()
        graph.replay()
        torch.cuda.synchronize()
    export(prof, out / "graph_replay.json")
    expected = torch.ones(NUMEL, device="cuda") * (1.0001**N_OPS)
    assert torch.allclose(static_y, expected), "graph replay computed the wrong values"


def record_multistream_replay(out: Path) -> None:
    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda")
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda")
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def fork_join() -> torch.Tensor:
        here = torch.cuda.current_stream()
        s1.wait_stream(here)  # fork: both branches wait for work queued so far
        s2.wait_stream(here)
        with torch.cuda.stream(s1):
            left = a @ a
        with torch.cuda.stream(s2):
            right = b @ b
        here.wait_stream(s1)  # join: the sum waits for both branches
        here.wait_stream(s2)
        return left + right

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up: cuBLAS handles and workspaces for s1 and s2
            fork_join()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = fork_join()
    graph.replay()
    torch.cuda.synchronize()

    with profile(activities=ACTIVITIES) as prof:
        graph.replay()
        torch.cuda.synchronize()
    export(prof, out / "multistream_replay.json")
    assert torch.allclose(static_out, a @ a + b @ b, rtol=1e-3, atol=1e-2), "wrong fork/join sum"


def provenance() -> dict:
    command = "python tests/traces/make_traces.py " + " ".join(sys.argv[1:])
    return {
        **machine_meta(command),
        "files": {
            "eager_chain.json": f"{N_OPS} eager `y = y * 1.0001` on {NUMEL} floats, warmed up",
            "graph_replay.json": f"the same {N_OPS} ops captured in one CUDAGraph, 2 replays",
            "multistream_replay.json": f"fork/join of two {MATMUL_N}x{MATMUL_N} matmuls on two "
            "captured streams, joined by an add, 1 replay",
        },
    }


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print(
            "make_traces.py needs a CUDA GPU (torch.cuda.is_available() is False)", file=sys.stderr
        )
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    record_eager(out)
    record_graph_replay(out)
    record_multistream_replay(out)
    write_text_atomically(out / "provenance.json", json.dumps(provenance(), indent=2) + "\n")
    print(f"wrote {out / 'provenance.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
