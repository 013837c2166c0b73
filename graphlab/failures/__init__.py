"""What goes wrong with CUDA Graphs, in the learner's terms, and how to get back on one's feet.

- :mod:`.catalogue`: the failure modes graphlab recognises, each with its cause, fix and lesson.
- :mod:`.explanation`: :func:`explain` matches an exception, warning or log line to the catalogue.
- :mod:`.recovery`: undo what a failed capture leaves behind (current stream, pool, RNG state).
- :mod:`.isolation`: run a demonstration that may crash CUDA in a child process.
"""

from .explanation import Explanation, explain, explained
from .isolation import IsolatedFailure, demonstrate, isolated
from .recovery import release_failed_captures

__all__ = [
    "Explanation",
    "IsolatedFailure",
    "demonstrate",
    "explain",
    "explained",
    "isolated",
    "release_failed_captures",
]
