"""Writing a file so that no reader ever sees half of it.

Everything graphlab writes for others to read (timelines, Chrome traces, recordings, notebooks)
goes through here: the content goes to a temp file in the destination's folder, which is then
renamed over the destination. A rename within one folder is atomic, so the destination holds
either its old content or all of the new one, never a mix, even if the writer crashes.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from graphlab.errors import GraphlabError

__all__ = ["atomic_writer", "write_text_atomically"]


@contextmanager
def atomic_writer(
    path: str | os.PathLike, error: type[GraphlabError] = GraphlabError
) -> Iterator[TextIO]:
    """Yield a text file whose content replaces ``path`` when the ``with`` block ends cleanly.

    If the block raises, the temp file is removed, ``path`` is left as it was and the exception
    goes on. Missing parent folders are created. The new file is readable by everyone (0644), as
    an ordinary file would be. A destination that exists but is not a regular file (a folder, a
    pipe, a device such as /dev/null, a symbolic link) is refused with ``error``: renaming over it
    would silently replace it. ``error`` is the caller's GraphlabError subclass, so a timeline
    writer raises TraceError and a recording writer RecordingError; a folder that cannot be
    created or written to is reported the same way.
    """
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise error(
            f"{path} exists and is not a regular file (a folder, a pipe, a device or a link): "
            "move it away or write to another path"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise error(
            f"cannot write {path} ({exc.strerror or exc}): choose a path in a folder you can write"
        ) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            yield out
        os.chmod(temp, 0o644)  # mkstemp makes the file private (0600); it is meant to be shared
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_text_atomically(
    path: str | os.PathLike, text: str, error: type[GraphlabError] = GraphlabError
) -> Path:
    """Write ``text`` to ``path`` through :func:`atomic_writer`; return the path written."""
    with atomic_writer(path, error) as out:
        out.write(text)
    return Path(path)
