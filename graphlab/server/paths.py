"""Which files the course API may read: only those under the Jupyter server's root folder.

The trace endpoint takes a path from the browser. Jupyter's own contents API confines paths to
the server's root, and so must graphlab's: a request for ``../../etc/passwd``, ``/etc/passwd``
or a symbolic link that leads out of the root is refused before any file is opened.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from graphlab.errors import GraphlabError
from graphlab.support.printable import printable

__all__ = ["PathRefused", "relative_to_root", "resolve_in_root"]

_DRIVE = re.compile(r"^[A-Za-z]:")


class PathRefused(GraphlabError, ValueError):
    """A path given to the course API points outside the server's root folder."""


def resolve_in_root(
    root_dir: str | os.PathLike[str], relative: str, allow_hidden: bool = False
) -> Path:
    """The real path of ``relative`` inside ``root_dir``, or :class:`PathRefused`.

    ``relative`` is a path as JupyterLab names files: forward slashes, relative to the root.
    Refused: an empty path, an absolute path (``/x``, ``\\x``, ``C:x``), any ``..`` part, a NUL
    byte, a hidden part (``.x``) unless ``allow_hidden``, and a path whose real location (after
    following symbolic links) is not inside the root's real location.
    """
    if not relative:
        raise PathRefused("no file given: pass a path relative to the Jupyter root folder")
    if "\x00" in relative:
        raise PathRefused(f"{printable(relative)} holds a NUL character, which no file name has")
    if relative.startswith(("/", "\\")) or _DRIVE.match(relative):
        raise PathRefused(
            f"{relative!r} is an absolute path: pass a path relative to the Jupyter root folder"
        )
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if ".." in parts:
        raise PathRefused(f"{relative!r} leaves the Jupyter root folder ('..' is not allowed)")
    if not allow_hidden and any(part.startswith(".") for part in parts):
        raise PathRefused(f"{relative!r} is a hidden file: move it to a visible folder")
    root = Path(root_dir).resolve()
    full = root.joinpath(*parts).resolve()
    if not full.is_relative_to(root):
        raise PathRefused(f"{relative!r} is a link to a file outside the Jupyter root folder")
    return full


def relative_to_root(root_dir: str | os.PathLike[str], message: str) -> str:
    """``message`` with each path inside ``root_dir`` written relative to it.

    Errors from the file readers name files by their full path, which on a hub or a shared
    server says where and as whom it runs; the browser needs only the path it asked for. Paths
    appear as they are or as :func:`~graphlab.support.printable.printable` spells them.
    """
    root = Path(root_dir)
    if root == Path(root.anchor):  # the root is "/": every path is already "/" + its name
        return message
    prefix = str(root) + os.sep
    return message.replace(prefix, "").replace(printable(prefix), "")
