"""An error message cut to a length a learner reads, at the end of a sentence where it can be.

PyTorch and the CUDA runtime write long error messages, and graphlab's own emulator adds a note
to some. A box that shows "what you saw", a checker's feedback and ``graphlab diagnose`` each keep
a few hundred characters of one; cut at a fixed length, the last word is broken ("the graph object
can b…"). :func:`shorten` keeps whole sentences instead, or at least whole words.
"""

from __future__ import annotations

__all__ = ["shorten"]


def shorten(text: str, limit: int) -> str:
    """``text`` whole if it has at most ``limit`` characters, else cut to fit, ending in "…".

    The cut falls after the last sentence that fits (an English full stop before a space, or a
    Chinese one), or else after the last word that fits, as long as that keeps at least half of
    ``limit``; otherwise (a path, a repr, Chinese text with no full stop) at the limit itself.
    """
    if len(text) <= limit:
        return text
    room = limit - 2  # characters that may stay before " …"
    # After the last full stop that fits, or else before the space after the last whole word.
    kept = max(text.rfind(". ", 0, room + 1), text.rfind("。", 0, room)) + 1
    if kept < limit // 2:
        kept = text.rfind(" ", 0, room + 1)
    if kept >= limit // 2:
        return text[:kept].rstrip() + " …"
    return text[: limit - 1].rstrip() + "…"
