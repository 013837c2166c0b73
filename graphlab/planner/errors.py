"""The planner's error: bad histograms, cost tables, traces and constraints."""

from __future__ import annotations

from ..errors import GraphlabError

__all__ = ["PlannerError"]


class PlannerError(GraphlabError, ValueError):
    """A histogram, cost table, request trace or constraint the planner cannot use.

    The message is one line that names the offending value and says what to change.
    """
