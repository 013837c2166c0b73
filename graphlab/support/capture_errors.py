"""CUDA's stream-capture errors and the words the runtime uses for them: one table for everyone.

torch reports a failed capture only by the runtime's description of the error
(``cudaGetErrorString``, printed after "CUDA error: "), never by its name, so whoever wants to
know *which* error it was (the timing code, the emulator that imitates the messages, the
failure catalogue, the fidelity tests) reads the description.

Each description is the runtime's own string, the one ``cudaGetErrorString`` returns (read from
``libcudart`` itself: the same words in 11.8.89, 12.1.105, 12.8.90 and 13.0.96, and printed by
torch 2.11 with CUDA 13 on an H200). The API documentation describes some of these errors in
other words (``cudaErrorStreamCaptureUnjoined``: "the capture sequence contains a fork that was
not joined to the primary stream"; ``cudaErrorStreamCaptureUnmatched``: "the capture was not
initiated in this stream"), but a failed capture never prints those. The emulator prints the
runtime's words.
"""

from __future__ import annotations

import re

__all__ = [
    "CAPTURE_ERRORS",
    "cuda_error_of",
    "describe",
    "first_cuda_error",
    "in_text",
    "patterns",
]

CAPTURE_ERRORS: dict[str, tuple[str, ...]] = {
    "cudaErrorStreamCaptureUnsupported": ("operation not permitted when stream is capturing",),
    "cudaErrorStreamCaptureInvalidated": (
        "operation failed due to a previous error during capture",
    ),
    "cudaErrorStreamCaptureMerge": ("operation would result in a merge of separate capture",),
    "cudaErrorStreamCaptureUnmatched": ("capture was not ended in the same stream as it began",),
    "cudaErrorStreamCaptureUnjoined": ("capturing stream has unjoined work",),
    "cudaErrorStreamCaptureIsolation": ("dependency created on uncaptured work in another stream",),
    "cudaErrorStreamCaptureImplicit": (
        "operation would make the legacy stream depend on a capturing blocking stream",
    ),
    "cudaErrorCapturedEvent": (
        "operation not permitted on an event last recorded in a capturing stream",
    ),
}


def describe(name: str) -> str:
    """The runtime's description of the capture error ``name``."""
    return CAPTURE_ERRORS[name][0]


def in_text(text: str) -> str | None:
    """The capture error whose name or description appears in ``text``, if any."""
    for name, wordings in CAPTURE_ERRORS.items():
        if name in text or any(wording in text for wording in wordings):
            return name
    return None


def first_cuda_error(exc: BaseException | None) -> str | None:
    """The capture error that *began* an exception's chain (``cudaErrorStreamCapture...``).

    A failed capture raises twice (the refused call, then "capture invalidated" when the ``with``
    block ends it); the earliest error in the chain of causes and contexts is the cause. An
    exception that carries ``cuda_error`` (the emulator's do) is taken at its word.
    """
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    for error in reversed(chain):
        name = cuda_error_of(error)
        if name:
            return name
    return None


def cuda_error_of(exc: BaseException | None) -> str | None:
    """The capture error one exception reports: its ``cuda_error``, or read from its text."""
    if exc is None:
        return None
    return getattr(exc, "cuda_error", None) or in_text(str(exc))


def patterns(name: str) -> tuple[str, ...]:
    """Regular expressions that recognise ``name`` in a message: its description, and the name."""
    return (
        *(re.escape(w) for w in CAPTURE_ERRORS[name]),
        re.escape(name.removeprefix("cudaError")),
    )
