"""Which batch sizes to capture as CUDA graphs for a request mix: the exact planner.

A server replays a graph captured at the smallest size that fits each decode step and pads the
rest; a step larger than every captured size runs eagerly. Each graph costs start-up time and
memory. Given how often each batch size occurs (:class:`Histogram`, or a request trace through
:func:`decode_histogram`) and what each size costs (:class:`CostTable`, measured on a GPU by
``graphlab plan measure``), :func:`best_plan` finds the sizes with the lowest expected step time
under a graph count, memory and start-up budget, exactly; :func:`pareto` lists the best plan per
graph count; :func:`evaluate` prices any list, such as a serving stack's default
(:func:`preset_sizes`). :func:`recorded_costs` and :func:`azure_requests` are the bundled H200
cost table and request trace.
"""

from graphlab.errors import PlannerError

from .bundled import RecordedCosts, azure_requests, recorded_costs
from .evaluate import Plan, SizeUse, evaluate
from .inputs import CostTable, Histogram, load_costs, load_histogram
from .optimise import Constraints, best_plan, pareto
from .presets import PRESETS, fit_to_table, preset_sizes
from .requests import BatchingModel, Requests, decode_histogram, read_requests

__all__ = [
    "PRESETS",
    "BatchingModel",
    "Constraints",
    "CostTable",
    "Histogram",
    "Plan",
    "PlannerError",
    "RecordedCosts",
    "Requests",
    "SizeUse",
    "azure_requests",
    "best_plan",
    "decode_histogram",
    "evaluate",
    "fit_to_table",
    "load_costs",
    "load_histogram",
    "pareto",
    "preset_sizes",
    "read_requests",
    "recorded_costs",
]
