"""Lesson 01's experiments: chains of short kernels, launched eagerly and replayed.

``chain_<kernels>_k<numel>`` (``experiment.kind == "chain"``)
    :func:`graphlab.timing.workloads.chain`: 10, 100 and 1000 elementwise kernels on 4 Ki, 256 Ki
    and 16 Mi float32 elements. The smallest tensors make every kernel launch-bound (about a
    microsecond of GPU work per launch); 16 Mi floats (64 MiB read and 64 MiB written per kernel)
    keep the GPU busy for longer than a launch takes, so there the graph has little to save.
    ``timings`` is :meth:`graphlab.timing.results.Comparison.to_dict`. ``experiment`` holds the
    workload description plus ``warmup``, ``repeats``, ``iterations`` and ``profile_iterations``.

``--quick`` records the 10- and 100-kernel chains on 4 Ki elements, with 3 repeats.
"""

from __future__ import annotations

from .. import workloads
from .experiment import Experiment, Lesson, loop_iterations, profiled_iterations

__all__ = ["CHAIN_KERNELS", "CHAIN_SIZES", "LESSON"]

CHAIN_KERNELS = (10, 100, 1000)
CHAIN_SIZES = (4096, 262_144, 16_777_216)


def plan(quick: bool) -> list[Experiment]:
    """The chain experiments, by kernels then size (``quick``: two small chains)."""
    if quick:
        return [
            Experiment(
                name=f"chain_{kernels}_k4096",
                kind="chain",
                build=lambda kernels=kernels: workloads.chain(kernels, 4096, device="cuda"),
                iterations=loop_iterations(kernels),
                repeats=3,
                quick=True,
            )
            for kernels in (10, 100)
        ]
    return [
        Experiment(
            name=f"chain_{kernels}_k{numel}",
            kind="chain",
            build=lambda kernels=kernels, numel=numel: workloads.chain(
                kernels, numel, device="cuda"
            ),
            iterations=loop_iterations(kernels),
            profile_iterations=profiled_iterations(kernels),
        )
        for kernels in CHAIN_KERNELS
        for numel in CHAIN_SIZES
    ]


LESSON = Lesson(kind="chain", position=10, plan=plan)
