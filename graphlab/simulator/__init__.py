"""A discrete-event simulator of a host thread launching GPU work, calibrated to real recordings.

Ask "what if my kernels were longer, my launches cheaper, my loop synced every step?" and get a
:class:`graphlab.Timeline`, the same kind of table a profiler gives, so the same gap analysis,
widgets and CLI work on it::

    from graphlab.simulator import calibrated, chain, eager, graph, simulate
    params = calibrated()                      # fitted to the bundled H200 recordings
    step = chain(1000, kernel_us=1.0)
    eager_tl = simulate(eager(step, params))
    graph_tl = simulate(graph(step, params))
    what_if(step, params).to_dict()  # both, with totals, idle fractions and break-even

The break-even model N* = C / (t_e - t_r) is :mod:`graphlab.timing.break_even`;
:mod:`graphlab.simulator.break_even` fills in its numbers from a simulation or a measurement.
"""

from .model import Program, Schedule, schedule, simulate
from .params import SimParams, calibrated
from .programs import Step, chain, eager, fork_join, graph, model_step
from .whatif import WhatIf, what_if

__all__ = [
    "Program",
    "Schedule",
    "SimParams",
    "Step",
    "WhatIf",
    "calibrated",
    "chain",
    "eager",
    "fork_join",
    "graph",
    "model_step",
    "schedule",
    "simulate",
    "what_if",
]
