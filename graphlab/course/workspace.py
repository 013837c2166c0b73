"""A learner's own copy of the course: lessons to run and edit, never overwritten by graphlab.

``graphlab lab`` opens JupyterLab on a workspace folder (default ``~/graphlab-course``) rather
than on the lessons as shipped, so running a lesson never touches the stored GPU outputs of the
package or of a repository checkout, and a ``git pull`` or an upgrade never collides with a
learner's edits.

- :func:`ensure` copies the shipped lessons into the workspace the first time, and later adds
  the lessons a new version of the course brings. A lesson the learner has changed, or deleted,
  is left as it is. A lesson they never touched is brought up to date when the shipped one
  changes, since nothing of theirs is lost.
- :func:`reset_lesson` restores one lesson as shipped and keeps the learner's copy next to it as
  ``<name>.backup-<UTC time>.ipynb``.

What was copied is remembered in ``.graphlab/workspace.json`` inside the workspace (hidden from
JupyterLab's file browser): for each lesson, the digest of the shipped file and of the copy as
written. That is how an untouched copy is told from an edited one, and a deleted lesson from a
new one.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from graphlab.errors import GraphlabError
from graphlab.support.atomic import write_text_atomically

from .lessons import Lesson, lessons

__all__ = ["Sync", "WorkspaceError", "ensure", "lessons", "reset_lesson", "sync"]

_MANIFEST = Path(".graphlab") / "workspace.json"
_SCHEMA = "graphlab.workspace/1"


class WorkspaceError(GraphlabError, ValueError):
    """The workspace folder or a lesson in it cannot be used as asked."""


@dataclass(frozen=True)
class Sync:
    """What :func:`sync` did: the workspace folder, the lessons it added and those it updated."""

    folder: Path
    added: tuple[str, ...]
    updated: tuple[str, ...]


def ensure(workspace_dir: str | os.PathLike) -> Path:
    """Make ``workspace_dir`` hold the course (see :func:`sync`); return its absolute path."""
    return sync(workspace_dir).folder


def sync(workspace_dir: str | os.PathLike) -> Sync:
    """Copy into ``workspace_dir`` every shipped lesson it lacks; update the untouched ones.

    Never writes over a file the learner changed, or that graphlab did not put there. The folder
    is created if missing.
    """
    folder = _folder(workspace_dir)
    manifest = _read_manifest(folder)
    added, updated = [], []
    for lesson in lessons():
        target = folder / lesson.file
        known = manifest.get(lesson.file)
        if known is None:
            if target.exists() or target.is_symlink():
                continue  # a file graphlab did not write: the learner's
            added.append(lesson.file)
        elif not target.is_file() or _digest(target) != known.get("copied"):
            continue  # deleted or edited by the learner
        elif _digest(lesson.path) == known.get("shipped"):
            continue  # untouched and already the shipped version
        else:
            updated.append(lesson.file)
        manifest[lesson.file] = _copy(lesson, target)
    if added or updated:
        _write_manifest(folder, manifest)
    return Sync(folder, tuple(added), tuple(updated))


def reset_lesson(workspace_dir: str | os.PathLike, lesson_file: str | os.PathLike) -> Path | None:
    """Restore a lesson in the workspace as shipped; return the backup of the learner's copy.

    ``lesson_file`` is the lesson's file name, or its path (relative to the workspace, or
    absolute) inside the workspace. The learner's copy is renamed to
    ``<name>.backup-<UTC time>.ipynb`` in the same folder and that path is returned; if the
    lesson was missing, it is written afresh and ``None`` is returned.
    """
    folder = _folder(workspace_dir)
    given = Path(lesson_file).expanduser()
    target = (folder / given if not given.is_absolute() else given).absolute()
    target = target.parent.resolve() / target.name
    if not target.is_relative_to(folder):
        raise WorkspaceError(f"{lesson_file} is not inside the course workspace {folder}")
    course = {lesson.file: lesson for lesson in lessons()}
    shipped = course.get(target.name)
    if shipped is None:
        raise WorkspaceError(
            f"{target.name} is not one of the course's lessons: reset one of {', '.join(course)}"
        )
    if target.exists() and target.samefile(shipped.path):
        raise WorkspaceError(
            f"{target} is the course's own copy of the lesson, not a workspace copy: restore it "
            f"with git checkout -- {target.name}, or open the course with graphlab lab"
        )
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise WorkspaceError(f"{target} is not a regular file: move it away, then reset again")
    backup = _backup_path(target) if target.exists() else None
    if backup is not None:
        os.replace(target, backup)  # a rename: the learner's bytes are kept exactly
    try:
        copied = _copy(shipped, target)
    except BaseException:
        if backup is not None:
            os.replace(backup, target)
        raise
    if target.parent == folder:
        manifest = _read_manifest(folder)
        manifest[target.name] = copied
        _write_manifest(folder, manifest)
    return backup


def _folder(workspace_dir: str | os.PathLike) -> Path:
    folder = Path(workspace_dir).expanduser().resolve()
    if folder.exists() and not folder.is_dir():
        raise WorkspaceError(f"{folder} is a file: choose a folder for the course workspace")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(
            f"cannot create the course workspace {folder} ({exc.strerror or exc}): choose a "
            "folder you can write with --workspace DIR"
        ) from None
    return folder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copy(lesson: Lesson, target: Path) -> dict[str, str]:
    """Write the shipped ``lesson`` to ``target``; return its manifest entry."""
    write_text_atomically(target, lesson.path.read_text(encoding="utf-8"), WorkspaceError)
    return {"shipped": _digest(lesson.path), "copied": _digest(target)}


def _backup_path(target: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    backup = target.with_name(f"{target.stem}.backup-{stamp}{target.suffix}")
    count = 1
    while backup.exists() or backup.is_symlink():  # two resets within one second
        count += 1
        backup = target.with_name(f"{target.stem}.backup-{stamp}-{count}{target.suffix}")
    return backup


def _read_manifest(folder: Path) -> dict[str, dict[str, str]]:
    """What graphlab copied into ``folder``; an unreadable record counts as nothing copied, so
    every existing lesson is then treated as the learner's and left alone."""
    try:
        data = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("schema") != _SCHEMA:
        return {}
    copied = data.get("lessons")
    if not isinstance(copied, dict):
        return {}
    return {name: entry for name, entry in copied.items() if isinstance(entry, dict)}


def _write_manifest(folder: Path, manifest: dict[str, dict[str, str]]) -> None:
    text = json.dumps({"schema": _SCHEMA, "lessons": manifest}, indent=1, sort_keys=True)
    write_text_atomically(folder / _MANIFEST, text + "\n", WorkspaceError)
