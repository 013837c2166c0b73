"""The learner's check results, kept for the user and never in a notebook.

Every exercise checker calls :func:`record` with its lesson, exercise and verdict; the course
sidebar, its status-bar item and ``graphlab progress`` read them back with :func:`load`. The store
is one JSON file, by default ``<Jupyter data dir>/graphlab/progress.json`` (``jupyter --data-dir``
prints that folder); the environment variable ``GRAPHLAB_PROGRESS`` names another file (tests,
or one file per learner on a shared hub); make it an absolute path, since kernels run in their
notebook's folder and the Jupyter server in its own. Keeping results out of the notebooks means
a lesson can be reset, pulled or shared without losing or leaking anyone's progress.

Each exercise keeps its latest result::

    {"02_static_inputs": {"check_replay_with_new_inputs": {
        "lesson": "02_static_inputs", "exercise": "check_replay_with_new_inputs",
        "passed": true, "how": "own", "when": "2026-12-02T17:40:55+00:00"}}}

A pass says how it was earned: ``"how": "own"``, or ``"revealed"`` when the exercise's solution
ran in the same kernel before the check (the ``%%solution`` magic tells :func:`solution_ran`).
An own pass is never replaced by a revealed one, and a later own pass upgrades a revealed one:
a learner who looked at the solution can hide it, restart the kernel and earn the exercise.
Entries written before ``how`` existed count as own passes.

The file belongs to the user account, not to a folder or a JupyterLab workspace: every course
folder and workspace of the same account shows the same progress, as a learner who opens the
course in two windows expects (the sidebar says so).

Two kernels may check exercises at the same moment. :func:`record` reads, updates and rewrites
the file while holding an exclusive ``fcntl`` lock on a companion ``.lock`` file, and the rewrite
goes through :mod:`graphlab.support.atomic`, so neither a reader nor a crash ever sees half a
file and no writer drops another's result. Windows has no ``fcntl``: there the file is still
replaced whole, but two kernels recording in the very same instant may each keep only their own
result (the other one is recorded again the next time that check runs).

``GRAPHLAB_PROGRESS=/dev/null`` (any device or pipe) switches progress off: nothing is read from
it, written to it or removed (:func:`off` says so). :func:`reset` removes only a file that holds
graphlab progress; any other file there is moved aside and kept, never deleted.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from graphlab.errors import GraphlabError
from graphlab.support.atomic import atomic_writer
from graphlab.support.backups import unused_name
from graphlab.support.json_text import parse_json

from .syllabus import Lesson

__all__ = [
    "ENV",
    "ProgressError",
    "load",
    "off",
    "record",
    "report",
    "reset",
    "solution_ran",
    "store_path",
]

#: Environment variable naming the progress file instead of the default one.
ENV = "GRAPHLAB_PROGRESS"
_SCHEMA = "graphlab.progress/1"
#: How a pass was earned: on the learner's own, or after the exercise's solution ran.
OWN, REVEALED = "own", "revealed"

# The exercises whose solution ran in this Python process (a notebook's kernel).
_solutions_run: set[str] = set()

try:
    import fcntl
except ImportError:  # Windows: see the module docstring
    fcntl = None


class ProgressError(GraphlabError, ValueError):
    """The progress file cannot be read or written, or a result to record is malformed."""


def store_path() -> Path:
    """The progress file: ``$GRAPHLAB_PROGRESS`` if set, else the Jupyter data directory's."""
    override = os.environ.get(ENV)
    if override:
        return Path(override).expanduser()
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "graphlab" / "progress.json"


def off() -> str | None:
    """One line saying that progress is off, or ``None`` when it is on.

    It is off when the progress path names a device or a pipe (``GRAPHLAB_PROGRESS=/dev/null``):
    then :func:`load` finds no result, :func:`record` keeps none and :func:`reset` removes
    nothing, so the device is never opened, replaced or deleted.
    """
    return _off(store_path())


def load() -> dict[str, dict[str, dict]]:
    """Every stored result: ``{lesson: {exercise: {"lesson", "exercise", "passed", "when"}}}``.

    No file yet means no result yet (``{}``). A file that is not a graphlab progress file is
    refused with :class:`ProgressError`, never overwritten. Progress :func:`off`: ``{}``.
    """
    path = store_path()
    return {} if _off(path) else _read(path)


def solution_ran(exercise: str) -> None:
    """Note that ``exercise``'s solution ran in this kernel: its passes from now on are revealed
    ones. Called by the ``%%solution`` magic when it runs a solution's body."""
    _solutions_run.add(exercise)


def record(lesson: str, exercise: str, passed: bool) -> None:
    """Store the result of one check of ``exercise`` in ``lesson`` (now, in UTC); it replaces
    that exercise's earlier result, except that a revealed pass keeps an earlier own pass."""
    for name, value in (("lesson", lesson), ("exercise", exercise)):
        if not isinstance(value, str) or not value.strip():
            raise ProgressError(f"record() needs the {name} as a non-empty string, not {value!r}")
    if not isinstance(passed, bool):
        raise ProgressError(f"record() needs passed=True or passed=False, not {passed!r}")
    path = store_path()
    if _off(path):
        return
    entry = {"lesson": lesson, "exercise": exercise, "passed": passed, "when": _now()}
    if passed:
        entry["how"] = REVEALED if exercise in _solutions_run else OWN
    with _locked(path):
        results = _read(path)
        earlier = results.get(lesson, {}).get(exercise)
        if entry.get("how") == REVEALED and earlier and _how(earlier) == OWN:
            return
        results.setdefault(lesson, {})[exercise] = entry
        with atomic_writer(path, ProgressError) as out:
            json.dump({"schema": _SCHEMA, "lessons": results}, out, indent=1, sort_keys=True)
            out.write("\n")


def reset() -> str:
    """Forget every stored result; return one line that says what was done.

    Only a regular file holding graphlab progress is removed. Any other file at the progress path
    (damaged, or not progress at all) is moved aside to ``<stem>.damaged-<UTC time><suffix>`` and
    kept. With progress :func:`off` nothing is touched; a folder or a link there is refused.
    """
    path = store_path()
    reason = _off(path)
    if reason:
        return f"{reason}; nothing to forget"
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return f"no check result is stored ({path})"
    except OSError as exc:
        raise ProgressError(f"cannot look at {path} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise ProgressError(
            f"{path} is a folder or a link, not a progress file: nothing was removed; set {ENV} "
            "to a file of its own"
        )
    with _locked(path):
        try:
            _read(path)
        except ProgressError:
            aside = unused_name(path, "damaged")
            _change(os.rename, path, aside)
            return f"{path} did not hold graphlab progress: it is kept as {aside}"
        _change(os.unlink, path)
    return f"forgot every check result ({path})"


def _change(operation, *paths: Path) -> None:
    """Rename or remove the progress file, with one line if the file system refuses."""
    try:
        operation(*paths)
    except OSError as exc:
        raise ProgressError(f"cannot change {paths[0]} ({exc.strerror or exc})") from None


def report(course: list[Lesson], results: dict[str, dict[str, dict]]) -> dict:
    """Each lesson of ``course`` with its exercises passed and failed at their latest check.

    ``results`` is what :func:`load` returns. Only exercises the lesson still has count, so a
    result for a renamed exercise cannot make a lesson read 4/3. Returns
    ``{"lessons": [{"file", "id", "number", "title", "exercises", "passed", "revealed",
    "failed"}, ...], "done": exercises passed, "total": exercises}``; ``revealed`` lists the
    passed exercises whose pass came after their solution ran (see the module docstring).
    """
    rows, done, total = [], 0, 0
    for lesson in course:
        latest = results.get(lesson.id, {})
        checked = [e for e in lesson.exercises if e in latest]
        passed = [e for e in checked if latest[e]["passed"]]
        rows.append(
            {
                "file": lesson.file,
                "id": lesson.id,
                "number": lesson.number,
                "title": lesson.title,
                "exercises": list(lesson.exercises),
                "passed": passed,
                "revealed": [e for e in passed if _how(latest[e]) == REVEALED],
                "failed": [e for e in checked if not latest[e]["passed"]],
            }
        )
        done += len(passed)
        total += len(lesson.exercises)
    return {"lessons": rows, "done": done, "total": total}


def _how(entry: dict) -> str | None:
    """How a stored pass was earned; None for a failure (an entry without ``how`` is own)."""
    return entry.get("how", OWN) if entry["passed"] else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for ``path`` while the block runs (other writers wait).

    The lock is on a separate file: ``path`` itself is replaced by a rename on every write, so a
    lock on it would guard a file that no longer has the name.
    """
    if fcntl is None:
        yield
        return
    lock = path.with_name(path.name + ".lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ProgressError(
            f"cannot write the progress store in {lock.parent} ({exc.strerror or exc}): set "
            f"{ENV} to a file in a folder you can write"
        ) from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def _off(path: Path) -> str | None:
    try:
        mode = path.stat().st_mode  # through links: /dev/stdout is a terminal or a pipe
    except OSError:
        return None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "device"
    elif stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        kind = "pipe"
    else:
        return None
    return f"progress is off: {path} is a {kind}, so no check result is read or kept"


def _read(path: Path) -> dict[str, dict[str, dict]]:
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        reason = exc.strerror or exc
        raise ProgressError(f"cannot read the progress file {path} ({reason})") from None
    damaged = ProgressError(
        f"{path} is not a graphlab progress file: move it away, or forget every result with "
        "`graphlab progress --reset` (which keeps this file under another name)"
    )
    try:
        data = parse_json(text, str(path), ProgressError, "")
    except ProgressError:  # not JSON, or nested too deeply: not a file graphlab wrote
        raise damaged from None
    if not isinstance(data, dict) or data.get("schema") != _SCHEMA:
        raise damaged
    lessons = data.get("lessons")
    if not isinstance(lessons, dict):
        raise damaged
    for lesson, exercises in lessons.items():
        if not isinstance(exercises, dict):
            raise damaged
        for exercise, entry in exercises.items():
            if not (
                isinstance(entry, dict)
                and entry.get("lesson") == lesson
                and entry.get("exercise") == exercise
                and isinstance(entry.get("passed"), bool)
                and isinstance(entry.get("when"), str)
            ):
                raise damaged
    return lessons
