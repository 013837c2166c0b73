"""The emulator's process-wide state: the current stream and the capture under way, if any.

torch allows one capture at a time in a process, so one slot is enough. The emulator follows one
thread of work, as a notebook has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .host_sync import SYNC

if TYPE_CHECKING:
    from .capture import Capture
    from .streams import Stream

__all__ = ["capture", "check_host_sync", "current"]

current: Stream  # the current stream; streams.py sets it to the default stream on import
capture: Capture | None = None  # the capture under way


def check_host_sync(what: str, stream: Stream | None) -> None:
    """Fail the capture under way if ``what`` waits for ``stream`` (None: for the whole device).

    Waiting for work that is being captured can never finish, because captured work does not
    run; CUDA refuses the call and invalidates the capture.
    """
    if capture is None or (stream is not None and stream not in capture.streams):
        return
    raise capture.fail(what, SYNC)
