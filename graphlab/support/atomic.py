"""Writing a file so that no reader ever sees half of it and no failed write leaves a trace.

Everything graphlab writes for others to read (timelines, Chrome traces, recordings, notebooks)
goes through here. The content goes to a temp file in the destination's folder, which is then
renamed over the destination. A rename within one folder is atomic, so the destination holds
either its old content or all of the new one, never a mix, even if the writer crashes.

The temp file has no name while it is written, where Linux allows it (``O_TMPFILE``): if the
process is killed mid-write, nothing of it is left on disk. Elsewhere it is a hidden file named
after the destination and the writing process (``.out.json.<pid>.<random>.tmp``), and the next
write to the same destination removes the ones whose process is gone.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import signal
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TextIO

from graphlab.errors import GraphlabError

__all__ = ["atomic_writer", "write_text_atomically"]

NEW_FILE_MODE = 0o644  # a new file is meant to be shared, whatever the umask


@contextmanager
def atomic_writer(
    path: str | os.PathLike[str], error: type[GraphlabError] = GraphlabError
) -> Iterator[TextIO]:
    """Yield a text file whose content replaces ``path`` when the ``with`` block ends cleanly.

    If the block raises, the temp file is removed, ``path`` is left as it was and the exception
    goes on; an OSError while writing (a full disk, a file-size limit) becomes ``error``, the
    caller's GraphlabError subclass, with one line saying so. Missing parent folders are created.
    A new file is readable by everyone (0644), as an ordinary file would be; a replaced file keeps
    its permissions. A destination that exists but is not a regular file (a folder, a pipe, a
    device such as /dev/null, a symbolic link) is refused with ``error``: renaming over it would
    silently replace it; so is an empty path.
    """
    if not os.fspath(path):
        raise error("no file name given (the path is empty): name the file to write, e.g. out.json")
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise error(
            f"{path} exists and is not a regular file (a folder, a pipe, a device or a link): "
            "move it away or write to another path"
        )
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else NEW_FILE_MODE
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(path)
        temp = _Temp(path)
    except OSError as exc:
        raise error(
            f"cannot write {path} ({exc.strerror or exc}): choose a path in a folder you can write"
        ) from None
    try:
        with (
            _discarded_on_sigterm(temp),
            open(temp.fd, "w", encoding="utf-8", closefd=False) as out,
        ):
            yield out
        temp.commit(mode)
    except OSError as exc:
        temp.discard()
        raise error(
            f"could not write {path} ({exc.strerror or exc}); it is left as it was: "
            "free some disk space or choose another path"
        ) from None
    except BaseException:
        temp.discard()
        raise


def write_text_atomically(
    path: str | os.PathLike[str], text: str, error: type[GraphlabError] = GraphlabError
) -> Path:
    """Write ``text`` to ``path`` through :func:`atomic_writer`; return the path written."""
    with atomic_writer(path, error) as out:
        out.write(text)
    return Path(path)


class _Temp:
    """The file being written: unnamed (``O_TMPFILE``) where possible, else a hidden temp file."""

    def __init__(self, path: Path):
        self.path = path
        self.name: str | None = None  # the temp file's name, once it has one
        unnamed = self._open_unnamed()
        if unnamed is None:
            self.name = _temp_name(path)
            unnamed = os.open(self.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self.fd = unnamed  # -1 once closed

    def _open_unnamed(self) -> int | None:
        flag = getattr(os, "O_TMPFILE", None)
        folder = self.path.parent
        if flag is None or not _unnamed_files_can_be_named(folder, flag):
            return None
        return os.open(folder, flag | os.O_WRONLY, 0o600)

    def commit(self, mode: int) -> None:
        """Give the written file ``mode`` and put it in place of the destination."""
        os.fchmod(self.fd, mode)
        if self.name is None:
            # Name the unnamed file next to the destination, then rename it over the destination.
            name = _temp_name(self.path)
            os.link(f"/proc/self/fd/{self.fd}", name, follow_symlinks=True)
            self.name = name
        os.close(self.fd)
        self.fd = -1
        os.replace(self.name, self.path)
        self.name = None

    def discard(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.name is not None:
            Path(self.name).unlink(missing_ok=True)


@contextmanager
def _discarded_on_sigterm(temp: _Temp) -> Iterator[None]:
    """While writing, a SIGTERM that would kill the process removes the temp file first.

    Only where SIGTERM still has its default action (it kills) and only in the main thread, the
    one Python runs signal handlers in; a program's own SIGTERM handler is left alone.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        temp.discard()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


_LINKABLE: dict[int, bool] = {}  # file system (st_dev) -> whether unnamed files can be named


def _unnamed_files_can_be_named(folder: Path, flag: int) -> bool:
    """Whether ``folder`` takes unnamed files that can later be linked into it (tried once per
    file system: some refuse O_TMPFILE, some sandboxes refuse the link through /proc)."""
    device = folder.stat().st_dev
    if device not in _LINKABLE:
        probe = folder / f".graphlab-probe.{os.getpid()}.{os.urandom(6).hex()}.tmp"
        try:
            fd = os.open(folder, flag | os.O_WRONLY, 0o600)
        except OSError:
            _LINKABLE[device] = False
            return False
        try:
            os.link(f"/proc/self/fd/{fd}", probe, follow_symlinks=True)
            probe.unlink()
            _LINKABLE[device] = True
        except OSError:
            _LINKABLE[device] = False
        finally:
            os.close(fd)
    return _LINKABLE[device]


def _temp_name(path: Path) -> str:
    """A fresh hidden name next to ``path`` that says which process wrote it."""
    return str(path.parent / f".{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")


def _remove_stale_temps(path: Path) -> None:
    """Remove temp files of ``path`` left by writers that were killed (their process is gone)."""
    pattern = re.compile(re.escape(f".{path.name}.") + r"(\d+)\.[^.]+\.tmp")
    for candidate in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        match = pattern.fullmatch(candidate.name)
        if match and not _alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                candidate.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a pid at all: leave its file alone
    return True
