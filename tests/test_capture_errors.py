"""graphlab.support.capture_errors: which CUDA capture error a message reports."""

from __future__ import annotations

import pytest

from graphlab.errors import CaptureError
from graphlab.failures import explain
from graphlab.support.capture_errors import (
    CAPTURE_ERRORS,
    cuda_error_of,
    describe,
    first_cuda_error,
    in_text,
)

INVALIDATED = "CUDA error: operation failed due to a previous error during capture"


def test_the_root_cause_of_a_failed_capture_is_named():
    # torch's messages carry only the runtime's description (cudaGetErrorString) of the error.
    try:
        try:
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        finally:
            raise RuntimeError(INVALIDATED)
    except RuntimeError as exc:
        assert first_cuda_error(exc) == "cudaErrorStreamCaptureUnsupported"
        assert cuda_error_of(exc) == "cudaErrorStreamCaptureInvalidated"
    assert first_cuda_error(RuntimeError(INVALIDATED)) == "cudaErrorStreamCaptureInvalidated"
    assert first_cuda_error(RuntimeError("CUDA error: out of memory")) is None
    assert first_cuda_error(None) is None


# The runtime's strings, read from libcudart.so itself (`strings`, the error's name followed by its
# description): identical in nvidia-cuda-runtime-cu11 11.8.89, -cu12 12.1.105 and 12.8.90 and
# nvidia-cuda-runtime 13.0.96. The API documentation's wordings ("a fork that was not joined to
# the primary stream", "not initiated in this stream") are never printed.
RUNTIME_STRINGS = {
    "cudaErrorStreamCaptureUnjoined": "capturing stream has unjoined work",
    "cudaErrorStreamCaptureUnmatched": "capture was not ended in the same stream as it began",
}


@pytest.mark.parametrize(("name", "words"), RUNTIME_STRINGS.items())
def test_each_error_is_known_by_the_runtimes_own_words(name, words):
    assert describe(name) == words
    assert in_text(f"CUDA error: {words}") == name


def test_the_unjoined_fork_is_explained_from_the_runtimes_words():
    assert explain(RuntimeError("CUDA error: capturing stream has unjoined work")).key == (
        "unjoined-fork"
    )


def test_an_emulator_error_is_taken_at_its_word():
    exc = CaptureError("anything at all", cuda_error="cudaErrorStreamCaptureIsolation")
    assert cuda_error_of(exc) == "cudaErrorStreamCaptureIsolation"


def test_the_emulator_prints_the_current_wording():
    assert describe("cudaErrorStreamCaptureUnjoined") == "capturing stream has unjoined work"
    assert all(isinstance(w, str) and w for ws in CAPTURE_ERRORS.values() for w in ws)
