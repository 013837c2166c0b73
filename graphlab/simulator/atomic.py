"""Writing a file so that no reader ever sees half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import SimulatorError

__all__ = ["write_atomically"]


def write_atomically(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` through a temp file in the same folder, then rename it.

    The rename is atomic, so ``path`` holds either its old content or all of ``text``; on any
    error the temp file is removed and ``path`` is untouched. A path that exists but is not a
    regular file (``/dev/null``, a pipe, a folder) is refused: renaming over it would replace it.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise SimulatorError(f"{path} exists and is not a regular file: write to a file path")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temp, 0o644)  # mkstemp makes files private; these are meant to be shared
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
