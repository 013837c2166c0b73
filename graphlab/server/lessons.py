"""The lessons the course sidebar lists, with the learner's progress on each.

The lessons are the ``NN_topic.ipynb`` notebooks at the top of the course folder: the server's
root (a learner workspace made by ``graphlab lab``) or, when the root holds none, its
``notebooks/`` folder (a repository checkout, as on Binder). The sidebar asks in JupyterLab's
language: for a translated one it gets the lessons of the course folder's ``<language>/`` folder
(``zh_CN/``) when there are any, else the English ones. Both have the same exercise ids, so the
progress shown is the same. What a lesson holds is
:func:`graphlab.course.syllabus.read_lesson`'s reading; the counts are
:func:`graphlab.course.progress.report`'s, the same as ``graphlab progress`` prints.

The sidebar asks again after every executed cell and every 30 seconds, and a lesson with stored
outputs can weigh tens of megabytes, so a :class:`LessonCache` keeps what each file held: a lesson
is parsed again only when its file changed (another inode, modification time or size). The
server calls :func:`lessons_reply` on a worker thread, never on its event loop, and two requests
that find the same file changed parse it once between them.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from graphlab.course.languages import ENGLISH, TRANSLATED, lessons_folder
from graphlab.course.progress import report
from graphlab.course.syllabus import LESSON_NAME, Lesson, read_lesson
from graphlab.errors import GraphlabError

__all__ = ["LessonCache", "course_folder", "lessons_reply"]


def course_folder(root: Path) -> Path:
    """The folder whose ``NN_*.ipynb`` notebooks are the lessons (see the module docstring)."""
    for folder in (root, root / "notebooks"):
        if folder.is_dir() and any(LESSON_NAME.match(p.name) for p in folder.iterdir()):
            return folder
    return root


def _lesson(path: Path) -> Lesson:
    """The lesson at ``path``; a notebook that cannot be read is still listed, without
    exercises and titled by its file name, so that the learner can open it or reset it."""
    try:
        return read_lesson(path)
    except GraphlabError:
        title = path.stem[3:].replace("_", " ").capitalize()
        return Lesson(path.name, path.stem, path.name[:2], title, (), path)


class LessonCache:
    """Each lesson file's reading, kept until the file changes; safe to share between threads.

    A file is known by its path and its (inode, modification time in ns, size): a lesson saved
    by JupyterLab or replaced by a reset gets a new one. While one thread parses a file, another
    that wants the same file waits for that parse instead of starting its own.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read: dict[Path, tuple[tuple[int, int, int], Lesson]] = {}
        self._reading: dict[tuple[Path, tuple[int, int, int]], Future[Lesson]] = {}

    def lesson(self, path: Path) -> Lesson:
        """The lesson in ``path``, parsed now only if the file changed since it was last read."""
        try:
            info = path.stat()
        except OSError:  # gone since the folder was listed: listed by its name, as if damaged
            return _lesson(path)
        key = (info.st_ino, info.st_mtime_ns, info.st_size)
        with self._lock:
            known = self._read.get(path)
            if known is not None and known[0] == key:
                return known[1]
            parse = self._reading.get((path, key))
            mine = parse is None
            if parse is None:
                parse = self._reading[path, key] = Future()
        if not mine:
            return parse.result()
        try:
            lesson = _lesson(path)
        except BaseException as exc:
            with self._lock:
                del self._reading[path, key]
            parse.set_exception(exc)
            raise
        with self._lock:
            del self._reading[path, key]
            self._read[path] = (key, lesson)
        parse.set_result(lesson)
        return lesson

    def keep_only(self, paths: set[Path]) -> None:
        """Forget the files that are no longer lessons (deleted or renamed)."""
        with self._lock:
            for gone in self._read.keys() - paths:
                del self._read[gone]


def lessons_reply(
    root: Path, results: dict[str, Any], cache: LessonCache, language: str = ENGLISH
) -> dict[str, Any]:
    """The JSON answer of ``GET /graphlab/lessons?lang=…``: :func:`report`'s rows, each with its
    ``path`` relative to the server root ``root`` (what the browser opens), the folder and the
    language listed (``language`` where the course folder has lessons in it, else English; a
    language the course does not know is English). The lessons are read through ``cache``. It
    reads files: call it off the event loop."""
    course_root = course_folder(root)
    folder = lessons_folder(course_root, language if language in TRANSLATED else ENGLISH)
    paths = [p for p in sorted(folder.iterdir()) if LESSON_NAME.match(p.name) and p.is_file()]
    cache.keep_only(set(paths))
    course = [cache.lesson(p) for p in paths]
    reply = report(course, results)
    for row, lesson in zip(reply["lessons"], course, strict=True):
        row["path"] = lesson.path.relative_to(root).as_posix()
    reply["folder"] = folder.relative_to(root).as_posix() if folder != root else ""
    reply["language"] = folder.name if folder != course_root else ENGLISH
    return reply
