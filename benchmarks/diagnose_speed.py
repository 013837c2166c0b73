"""How long ``graphlab.diagnose`` takes on lesson 16's decoder step (targets: under 20 s on an
NVIDIA H200, under 30 s on a 2-core CPU).

Run ``python benchmarks/diagnose_speed.py``. It builds the decoder with
``graphlab.diagnose.examples.decoder_step()`` and times the whole call, wall clock, as a learner
waits for it: on a GPU that includes starting the child process, the profile, torch.compile's
three first calls, the capture attempt and ``graphlab.compare``'s timing loops; on a CPU the
blocker scan, the emulator's capture and the simulator's estimate. The first run in a process
also pays for one-off imports and, on a GPU, for compiling; both are printed, with the CPU time
of this process (the child's, on a GPU, is not in it) and the load average, since on a shared
machine the wall time also counts waiting for a core.

The last H200 run (torch 2.11, 2026-12-04) is ``benchmarks/results/diagnose_h200.txt``: this
script's output, then ``graphlab diagnose graphlab/diagnose/examples.py:NAME --json`` for
``decoder_step``, ``branchy`` and ``training_step``, each followed by its exit status.
"""

from __future__ import annotations

import os
import time

import graphlab
from graphlab.diagnose import examples

RUNS = 2


def main() -> None:
    model, inputs = examples.decoder_step()
    print(f"backend: {graphlab.backend().name}; load average before: {os.getloadavg()[0]:.1f}")
    for run in range(1, RUNS + 1):
        wall, cpu = time.perf_counter(), time.process_time()
        report = graphlab.diagnose(model, *inputs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            f"run {run}: {wall:6.1f} s wall, {cpu:6.1f} s CPU in this process; "
            f"capturable={report.capturable}, {report.kernels} kernels, "
            f"recommendation: {report.recommendation}"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
