"""What goes wrong with CUDA Graphs, in the learner's terms, and how to get back on one's feet.

- :mod:`.catalogue`: the failure modes graphlab recognises, each with its cause, fix and lesson.
- :mod:`.explanation`: :func:`explain` matches an exception, warning or log line to the catalogue.
- :mod:`.recovery`: undo what a failed capture leaves behind (current stream, pool, RNG state).
- :mod:`.isolation`: run a demonstration that may crash CUDA in a child process.
"""

from __future__ import annotations

from typing import Any

from .explanation import Explanation, explain, explained
from .isolation import IsolatedFailure, demonstrate, isolated

__all__ = [
    "Explanation",
    "IsolatedFailure",
    "demonstrate",
    "explain",
    "explained",
    "isolated",
    "release_failed_captures",
]


def __getattr__(name: str) -> Any:
    # .recovery imports torch (1.5 s of CPU), which the rest of this package does without: the
    # child process that isolated() starts imports this package, and needs torch only if the
    # demonstration does.
    if name == "release_failed_captures":
        from .recovery import release_failed_captures

        return release_failed_captures
    raise AttributeError(f"module 'graphlab.failures' has no attribute {name!r}")
