"""What ``GET /graphlab/lessons`` costs with one large lesson, and how long it holds the server.

Run::

    python benchmarks/lessons_endpoint.py [--megabytes 52]

It writes a course folder of two small lessons and one of ``--megabytes`` MB (a notebook whose
outputs are base64 images, as a lesson with stored figures is), then prints:

- the reply built with every lesson parsed (the first request, or one after a file changed) and
  built from the cache (every later request while nothing changed);
- the longest time an asyncio event loop could not run anything else while one reply was built
  on it (how the endpoint answered before), and while it was built on a worker thread with
  ``run_in_executor`` (how it answers now): a ticker coroutine that wakes every millisecond
  records its longest wait. On a worker the loop still waits while ``json.loads`` and the UTF-8
  decoding of the big file run, since both hold the interpreter lock for their whole call; the
  reading of the file and every request answered from the cache no longer hold it up at all.

Also the machine's load average: on a shared machine other work stretches every wall-clock
figure here.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def notebook(title: str, megabytes: float) -> str:
    """A lesson titled ``title`` whose image outputs add up to about ``megabytes`` MB."""
    image = base64.b64encode(os.urandom(750_000)).decode()  # 1 MB of base64 per output
    outputs = [
        {"output_type": "display_data", "data": {"image/png": image}, "metadata": {}}
        for _ in range(round(megabytes))
    ]
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": f"# Lesson — {title}"},
        {"cell_type": "code", "metadata": {}, "source": "plot()", "outputs": outputs,
         "execution_count": 1},
    ]  # fmt: skip
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


async def longest_stall(build) -> tuple[float, float]:
    """(seconds ``build()`` took, longest wait in seconds of a 1 ms ticker meanwhile)."""
    longest, running = 0.0, True

    async def ticker():
        nonlocal longest
        while running:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            longest = max(longest, time.perf_counter() - before - 0.001)

    tick = asyncio.ensure_future(ticker())
    await asyncio.sleep(0.01)
    started = time.perf_counter()
    await build()
    took = time.perf_counter() - started
    running = False
    await tick
    return took, longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=52)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from graphlab.server.lessons import LessonCache, lessons_reply

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "00_start_here.ipynb").write_text(notebook("Start here", 0))
        (root / "01_kernel_gaps.ipynb").write_text(notebook("Kernel gaps", 0))
        (root / "02_static_inputs.ipynb").write_text(notebook("Static inputs", args.megabytes))
        size = (root / "02_static_inputs.ipynb").stat().st_size / 1e6
        print(f"course: 3 lessons, the largest {size:.1f} MB")

        cache = LessonCache()
        started = time.perf_counter()
        lessons_reply(root, {}, cache)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        lessons_reply(root, {}, cache)
        warm = time.perf_counter() - started
        print(f"reply, every lesson parsed: {cold * 1000:8.1f} ms")
        print(f"reply, from the cache:      {warm * 1000:8.1f} ms")

        async def on_the_loop():
            lessons_reply(root, {}, LessonCache())

        async def on_a_worker():
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, lessons_reply, root, {}, LessonCache())

        for label, build in (("on the event loop", on_the_loop), ("on a worker", on_a_worker)):
            took, stall = asyncio.run(longest_stall(build))
            print(
                f"parsed {label:17}: {took * 1000:8.1f} ms, "
                f"longest the loop waited: {stall * 1000:8.1f} ms"
            )
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
