"""A lesson's section headings in the language the learner reads it in.

The checkers send a learner back to a section by its English title (``graphlab.checks``'
sections). A translated lesson keeps each section's number (``## 3. …``) and translates its
title, so the title a Chinese reader sees is found by number in ``zh_CN/NN_topic.ipynb`` beside
the shipped English lesson. Until a lesson is translated its sections have no such title, and
the English one is used.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from .syllabus import shipped_folder

__all__ = ["section_title"]


@cache
def _headings(path: Path, stamp: tuple[int, int]) -> dict[int, str]:
    """The numbered ``##`` headings of the notebook at ``path`` (as of ``stamp``), by number."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found: dict[int, str] = {}
    for cell in cells:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            for match in re.finditer(r"^##\s+(\d+)\.\s+(.+?)\s*$", source, re.M):
                found.setdefault(int(match[1]), match[2])
    return found


def section_title(lesson: str, number: int, language: str) -> str | None:
    """The title of section ``number`` of ``lesson`` (``"02_static_inputs"``) in ``language``'s
    translation, None when that translation or section is not there (or cannot be read)."""
    path = shipped_folder() / language / f"{lesson}.ipynb"
    try:
        stat = path.stat()
        return _headings(path, (stat.st_mtime_ns, stat.st_size)).get(number)
    except (OSError, ValueError, KeyError, TypeError):
        return None
