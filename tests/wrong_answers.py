"""Typical wrong answers to the lessons' exercises, shared by the checker and explainer tests.

Each is what a learner plausibly writes; the checkers must reject it with a precise message, and
``graphlab.explain`` must recognise that message.
"""

from __future__ import annotations


def rebinding_step(graph, static_x, static_y, batch):
    """Lesson 02: rebinds the name instead of copying into the captured input buffer."""
    static_x = batch  # noqa: F841  (the mistake: the graph still reads the old tensor)
    graph.replay()
    return static_y


def collect_references(graph, static_x, static_y, batches):
    """Lesson 03: keeps the output tensor itself, which the next replay overwrites."""
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y)
    return kept
