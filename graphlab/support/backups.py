"""Names for the copies graphlab keeps instead of deleting: ``<stem>.<label>-<UTC time><suffix>``.

A lesson reset keeps the learner's copy as ``02_static_inputs.backup-20261203T221500Z.ipynb``; a
progress reset keeps a file that is not graphlab progress as
``progress.damaged-20261203T221500Z.json``. The time says when, the suffix still opens the file
with the right application, and the name no longer matches what graphlab reads (a lesson is
``NN_topic.ipynb``), so the copy is never taken for the original.
"""

from __future__ import annotations

import glob
import re
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["newest_kept", "unused_name"]


def unused_name(path: Path, label: str) -> Path:
    """A name beside ``path`` that nothing holds yet: ``<stem>.<label>-<UTC time><suffix>``, with
    ``-2``, ``-3``, ... after the time when copies are made within one second."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = path.with_name(f"{path.stem}.{label}-{stamp}{path.suffix}")
    count = 1
    while kept.exists() or kept.is_symlink():
        count += 1
        kept = path.with_name(f"{path.stem}.{label}-{stamp}-{count}{path.suffix}")
    return kept


def newest_kept(path: Path, label: str) -> Path | None:
    """The most recent copy :func:`unused_name` named for ``path`` that is still there, if any."""
    pattern = re.compile(
        re.escape(f"{path.stem}.{label}-") + r"(\d{8}T\d{6}Z)(?:-(\d+))?" + re.escape(path.suffix)
    )
    found = []
    for candidate in path.parent.glob(f"{glob.escape(path.stem)}.{label}-*"):
        match = pattern.fullmatch(candidate.name)
        if match and candidate.is_file():
            found.append(((match.group(1), int(match.group(2) or 1)), candidate))
    return max(found)[1] if found else None
