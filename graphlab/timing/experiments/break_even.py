"""Lesson 06's experiments: after how many iterations has a capture paid for itself?

``break_even_<workload>`` (``experiment.kind == "break_even"``)
    A few workloads of different kernel counts and sizes (chains, and a small MLP). ``timings``
    holds the :class:`~graphlab.timing.results.Comparison` (capture C, end-to-end t_e and t_r, and
    the model's N* = C / (t_e − t_r) as ``break_even``) plus ``timings["cumulative"]``, the
    measured totals from :func:`graphlab.timing.compare.measure_cumulative_totals`: ``counts`` (N),
    ``eager_total_us`` (N eager iterations), ``graph_total_us`` (capture + N replays with input
    copies and output clones), ``repeats`` (medians over that many runs) and ``crossing`` (the
    smallest measured N whose graph total is no longer than the eager one, or null).
    ``experiment.workload`` is the workload's description. Lesson 06 and the simulator compare the
    model with the crossing.

An experiment with ``counts`` gets its totals measured by
:func:`~graphlab.timing.experiments.experiment.describe_comparison`. ``--quick`` records the
10-kernel chain on 4 Ki elements up to N = 20, with 3 repeats and one run of totals.
"""

from __future__ import annotations

from .. import workloads
from ..cumulative import BREAK_EVEN_COUNTS
from .experiment import Experiment, Lesson, loop_iterations, profiled_iterations

__all__ = ["LESSON"]


def plan(quick: bool) -> list[Experiment]:
    """The break-even experiments, one per workload (``quick``: the short chain only)."""
    if quick:
        return [
            Experiment(
                name="break_even_chain_10_k4096",
                kind="break_even",
                build=lambda: workloads.chain(10, 4096, device="cuda"),
                iterations=loop_iterations(10),
                repeats=3,
                counts=(1, 2, 5, 10, 20),
                cumulative_repeats=1,
                quick=True,
            )
        ]
    # Break-even workloads: launch-bound chains short and long, a GPU-bound chain where the graph
    # saves almost nothing per iteration, and a small MLP. The 1000-kernel chain stops at 200
    # iterations: its break-even lies at a few iterations and each eager iteration costs ms.
    break_even = [
        ("chain_10_k4096", lambda: workloads.chain(10, 4096, device="cuda"), 10, BREAK_EVEN_COUNTS),
        (
            "chain_100_k262144",
            lambda: workloads.chain(100, 262_144, device="cuda"),
            100,
            BREAK_EVEN_COUNTS,
        ),
        (
            "chain_1000_k4096",
            lambda: workloads.chain(1000, 4096, device="cuda"),
            1000,
            BREAK_EVEN_COUNTS[:8],
        ),
        (
            "chain_20_k16777216",
            lambda: workloads.chain(20, 16_777_216, device="cuda"),
            20,
            BREAK_EVEN_COUNTS,
        ),
        ("mlp_l16_w64_b4", lambda: workloads.mlp(16, 64, 4, device="cuda"), 32, BREAK_EVEN_COUNTS),
    ]
    return [
        Experiment(
            name=f"break_even_{name}",
            kind="break_even",
            build=build,
            iterations=loop_iterations(kernels),
            profile_iterations=profiled_iterations(kernels),
            counts=counts,
        )
        for name, build, kernels, counts in break_even
    ]


LESSON = Lesson(kind="break_even", position=30, plan=plan)
