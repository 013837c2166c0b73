"""Lesson 09's experiments: two branches forked onto a second stream and joined, captured.

``fork_join_<2streams|1stream>_k<steps>_n<n>`` (``experiment.kind == "fork_join"``)
    :func:`graphlab.timing.workloads.fork_join`: two independent branches of ``steps`` ×
    (``n``×``n`` float32 matmul, tanh) joined by an add, for n = 1024 and 256. ``2streams`` runs
    the second branch on a second stream forked from the caller's and joined back into it, so
    that the graph holds two parallel branches; ``1stream`` runs the same kernels one after the
    other on one stream. Their graph timelines show whether a replay keeps the branches' overlap
    (lesson 09). ``timings`` and ``experiment`` as for the chains
    (:mod:`~graphlab.timing.experiments.kernel_chains`).

``--quick`` records none of them.
"""

from __future__ import annotations

from .. import workloads
from .experiment import Experiment, Lesson, loop_iterations

__all__ = ["FORK_JOIN", "LESSON"]

# (steps per branch, n) of the fork/join experiments, each recorded on two streams and on one.
FORK_JOIN = ((4, 1024), (4, 256))


def plan(quick: bool) -> list[Experiment]:
    """Each of :data:`FORK_JOIN` on two streams, then on one (none when ``quick``)."""
    if quick:
        return []
    return [
        Experiment(
            name=f"fork_join_{'2streams' if streams == 2 else '1stream'}_k{steps}_n{n}",
            kind="fork_join",
            build=lambda steps=steps, n=n, streams=streams: workloads.fork_join(
                steps, n, streams, device="cuda"
            ),
            iterations=loop_iterations(4 * steps + 1),
        )
        for steps, n in FORK_JOIN
        for streams in (2, 1)
    ]


LESSON = Lesson(kind="fork_join", position=20, plan=plan)
