"""The loops ``graphlab.compare`` times on a GPU, run through the simulator instead.

The calibration fits the simulator's host costs to measured loop times, and its check compares
the two, so both need the simulated time of exactly the loop that was measured: the event-timed
loop of eager calls or replays (:func:`timed_loop_us`) and the end-to-end replay loop with its
input copy and output clone (:func:`end_to_end_replay_us`).
"""

from __future__ import annotations

from .model import schedule
from .params import SimParams
from .programs import chain, eager, graph

__all__ = ["end_to_end_replay_us", "timed_loop_us"]


def timed_loop_us(mode: str, kernels: int, kernel_us: float, params: SimParams, iterations: int):
    """Simulated GPU time per iteration of ``iterations`` back-to-back calls, event-timed.

    Mirrors how ``graphlab.compare`` times a loop: from an idle GPU, a start event, the loop, an
    end event. The start event reaches the GPU one launch latency after the host starts the loop;
    the end event passes once the loop's last kernel has finished.
    """
    step = chain(kernels, kernel_us)
    if mode == "eager":
        program = eager(step, params, iterations=iterations)
    else:
        program = graph(step, params, replays=iterations)
    s = schedule(program)
    return (int(s.item_end_ns.max()) - program.launch_latency_ns) / 1000 / iterations


def end_to_end_replay_us(kernels: int, kernel_us: float, params: SimParams, iterations: int):
    """Simulated host-clock time per iteration of the end-to-end replay loop.

    Mirrors ``graphlab.compare``'s end-to-end replay: from an idle GPU, each iteration copies a
    new input into the static buffer, replays and clones the output (the copies are kernels as
    long as one chain kernel: same size, one read and one write); then a synchronize.
    """
    program = graph(
        chain(kernels, kernel_us),
        params,
        replays=iterations,
        copy_in_us=[kernel_us],
        copy_out_us=[kernel_us],
    )
    return schedule(program).end_ns / 1000 / iterations
