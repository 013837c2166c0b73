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
  ``<name>.backup-<UTC time>.ipynb``. The lesson's name never stands empty, not even for an
  instant: the backup is a second name (a hard link) for the learner's file, then the shipped
  copy, written whole beside it, is renamed over the lesson. A kill at any moment leaves the
  learner's copy or the shipped one there, and the learner's bytes somewhere.
- :func:`sync` also finishes a reset that an older graphlab left half done (a backup, and no
  lesson): it writes the shipped copy back, once.
- Translated lessons (``graphlab lab --lang zh_CN``) live in the workspace's ``zh_CN/`` folder,
  beside the English ones, and are kept exactly as the English ones are; the record names them
  ``zh_CN/<name>``.

What was copied is remembered in ``.graphlab/workspace.json`` inside the workspace (hidden from
JupyterLab's file browser): for each lesson, the digest of the shipped file and of the copy as
written, and the newest backup a reset made of it. That is how an untouched copy is told from
an edited one, a deleted lesson from a new one, and a lesson the learner deleted after a reset
from one whose reset was interrupted.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _
from graphlab.support.atomic import write_text_atomically
from graphlab.support.backups import newest_kept, unused_name
from graphlab.support.json_text import parse_json
from graphlab.support.printable import printable

from . import syllabus
from .languages import TRANSLATED
from .syllabus import lesson_paths, lessons

__all__ = [
    "LessonReset",
    "Sync",
    "WorkspaceError",
    "course_root",
    "ensure",
    "lessons",
    "reset_lesson",
    "sync",
]

_MANIFEST = Path(".graphlab") / "workspace.json"
_SCHEMA = "graphlab.workspace/1"


class WorkspaceError(GraphlabError, ValueError):
    """The workspace folder or a lesson in it cannot be used as asked."""


@dataclass(frozen=True)
class Sync:
    """What :func:`sync` did: the workspace folder, the lessons it added and those it updated,
    and those it restored as shipped because their reset had been interrupted."""

    folder: Path
    added: tuple[str, ...]
    updated: tuple[str, ...]
    restored: tuple[str, ...] = ()


@dataclass(frozen=True)
class LessonReset:
    """What :func:`reset_lesson` did: where the learner's copy is kept (``None`` if the lesson was
    missing) and, if the reset could not be noted in the workspace record, one line saying so
    (the lesson is reset all the same)."""

    backup: Path | None
    warning: str | None = None


def ensure(workspace_dir: str | os.PathLike) -> Path:
    """Make ``workspace_dir`` hold the course (see :func:`sync`); return its absolute path."""
    return sync(workspace_dir).folder


def sync(workspace_dir: str | os.PathLike, languages: tuple[str, ...] = ()) -> Sync:
    """Copy into ``workspace_dir`` every shipped lesson it lacks; update the untouched ones.

    ``languages`` (of :data:`~.languages.TRANSLATED`) adds the shipped lessons in those languages,
    into the workspace's ``<language>/`` folder; the lessons are named ``<language>/<file>`` in
    what is returned. Never writes over a file the learner changed, or that graphlab did not put
    there. The folder is created if missing.
    """
    folder = _folder(workspace_dir)
    manifest = _read_manifest(folder)
    added, updated, restored = [], [], []
    for name, lesson in _shipped(languages):
        target = folder / name
        known = manifest.get(name)
        backup = _interrupted_reset(target, known)
        if backup is not None:
            restored.append(name)
            manifest[name] = _copy(lesson, target) | {"backup": backup.name}
            continue
        if known is None:
            if target.exists() or target.is_symlink():
                continue  # a file graphlab did not write: the learner's
            added.append(name)
        elif not target.is_file() or _digest(target) != known.get("copied"):
            continue  # deleted or edited by the learner
        elif _digest(lesson) == known.get("shipped"):
            continue  # untouched and already the shipped version
        else:
            updated.append(name)
        manifest[name] = (known or {}) | _copy(lesson, target)
    if added or updated or restored:
        _write_manifest(folder, manifest)
    return Sync(folder, tuple(added), tuple(updated), tuple(restored))


def _shipped(languages: tuple[str, ...]) -> list[tuple[str, Path]]:
    """The shipped lessons' files, English first, then those of ``languages`` (where shipped),
    each with its path in a workspace: ``<file>``, ``<language>/<file>``. Found by name alone
    (:func:`~graphlab.course.syllabus.lesson_paths`): copying needs no lesson read."""
    found = [(path.name, path) for path in lesson_paths()]
    for language in languages:
        translated = syllabus.shipped_folder() / language
        if translated.is_dir():
            found += [(f"{language}/{path.name}", path) for path in lesson_paths(translated)]
    return found


def course_root(lesson: Path) -> Path:
    """The workspace (or course folder) that holds the lesson at ``lesson``: its folder, or the
    one above for a translated lesson (``zh_CN/00_start_here.ipynb``)."""
    return lesson.parent.parent if lesson.parent.name in TRANSLATED else lesson.parent


def reset_lesson(workspace_dir: str | os.PathLike, lesson_file: str | os.PathLike) -> LessonReset:
    """Restore a lesson in the workspace as shipped, keeping the learner's copy beside it.

    ``lesson_file`` is the lesson's file name, or its path (relative to the workspace, or
    absolute) inside the workspace; a lesson in the workspace's ``zh_CN/`` folder is restored as
    the Chinese lesson shipped. The learner's copy is kept as ``<name>.backup-<UTC time>.ipynb``
    in the same folder; if the lesson was missing, it is written afresh and there is no backup.
    """
    folder = _folder(workspace_dir)
    given = Path(lesson_file).expanduser()
    target = (folder / given if not given.is_absolute() else given).absolute()
    target = target.parent.resolve() / target.name
    if not target.is_relative_to(folder):
        raise WorkspaceError(
            _("{lesson_file} is not inside the course workspace {folder}").format(
                lesson_file=lesson_file, folder=folder
            )
        )
    in_language = target.parent.parent == folder and target.parent.name in TRANSLATED
    language = target.parent.name if in_language else None
    source = syllabus.shipped_folder() / language if language else syllabus.shipped_folder()
    course = {path.name: path for path in lesson_paths(source)} if source.is_dir() else {}
    name = f"{language}/{target.name}" if language else target.name
    shipped = course.get(target.name)
    if shipped is None:
        raise WorkspaceError(
            _("{target} is not one of the course's lessons: reset one of {course}").format(
                target=target.name, course=", ".join(course)
            )
        )
    if target.exists() and target.samefile(shipped):
        raise WorkspaceError(
            _(
                "{target} is the course's own copy of the lesson, not a workspace copy: "
                "restore it with git checkout -- {target2}, or open the course with "
                "graphlab lab"
            ).format(target=target, target2=target.name)
        )
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise WorkspaceError(
            _("{target} is not a regular file: move it away, then reset again").format(
                target=target
            )
        )
    backup = _keep(target) if target.exists() else None
    try:
        copied = _copy(shipped, target)
    except BaseException:
        if backup is not None:
            _unkeep(target, backup)
        raise
    if folder / name != target:
        return LessonReset(backup)
    kept = backup or newest_kept(target, "backup")
    try:
        manifest = _read_manifest(folder)
        manifest[name] = copied | ({"backup": kept.name} if kept else {})
        _write_manifest(folder, manifest)
    except WorkspaceError as exc:
        return LessonReset(
            backup,
            f"{target.name} is reset, but the workspace record could not be updated ({exc}); "
            "graphlab lab will leave this lesson as it is when the course is updated",
        )
    return LessonReset(backup)


def _keep(target: Path) -> Path:
    """Give the learner's ``target`` a second name, its backup, and return that name.

    A hard link: both names hold the same bytes until the shipped copy is renamed over
    ``target``, so the lesson is never absent. A file system without hard links gets a rename
    instead; should the reset be killed before the shipped copy lands, :func:`sync` puts it there.
    """
    backup = unused_name(target, "backup")
    try:
        os.link(target, backup)
    except OSError:
        os.replace(target, backup)  # a rename: the learner's bytes are kept exactly
    return backup


def _unkeep(target: Path, backup: Path) -> None:
    """Undo :func:`_keep` after a failed write: drop the second name, or rename back."""
    if target.exists() and target.samefile(backup):
        backup.unlink()  # the lesson still holds the learner's bytes under its own name
    else:
        os.replace(backup, target)


def _interrupted_reset(target: Path, known: dict | None) -> Path | None:
    """The backup of a reset that was killed after keeping the learner's copy and before writing
    the shipped one: ``target`` is missing and a backup is newer than any the record knows. A
    lesson deleted after a finished reset has its backup in the record, and stays deleted."""
    if target.exists() or target.is_symlink():
        return None
    backup = newest_kept(target, "backup")
    if backup is None or backup.name == (known or {}).get("backup"):
        return None
    return backup


def _folder(workspace_dir: str | os.PathLike) -> Path:
    if not os.fspath(workspace_dir).strip():
        raise WorkspaceError(
            _(
                "no folder given for the course workspace (the path is empty): name one "
                "with --workspace DIR, or leave the option out for ~/graphlab-course"
            )
        )
    folder = Path(workspace_dir).expanduser()
    try:
        folder = folder.resolve()
        taken = folder.exists() and not folder.is_dir()
        if not taken:
            folder.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or exc
        raise WorkspaceError(
            _(
                "cannot create the course workspace {folder} ({reason}): choose a folder "
                "you can write with --workspace DIR"
            ).format(folder=printable(folder), reason=reason)
        ) from None
    if taken:
        raise WorkspaceError(
            _("{folder} is a file: choose a folder for the course workspace").format(folder=folder)
        )
    return folder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copy(lesson: Path, target: Path) -> dict[str, str]:
    """Write the shipped ``lesson`` to ``target`` (making its folder); return its manifest
    entry."""
    try:
        target.parent.mkdir(exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(
            _(
                "cannot create {parent} ({value}): make the course workspace a folder you can write"
            ).format(parent=printable(target.parent), value=exc.strerror or exc)
        ) from None
    write_text_atomically(target, lesson.read_text(encoding="utf-8"), WorkspaceError)
    return {"shipped": _digest(lesson), "copied": _digest(target)}


def _read_manifest(folder: Path) -> dict[str, dict[str, str]]:
    """What graphlab copied into ``folder``; an unreadable record counts as nothing copied, so
    every existing lesson is then treated as the learner's and left alone."""
    try:
        data = parse_json((folder / _MANIFEST).read_bytes(), str(_MANIFEST), WorkspaceError, "")
    except (OSError, WorkspaceError):
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
