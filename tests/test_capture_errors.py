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


@pytest.mark.parametrize(
    "text",
    [
        # CUDA 13's words (printed on the H200, tests/fidelity/h200_outcomes.json) ...
        "CUDA error: capturing stream has unjoined work",
        # ... and the words of CUDA 12 and earlier for the same error.
        "CUDA error: capture sequence contains a fork that was not joined to the primary stream",
    ],
)
def test_both_wordings_of_the_unjoined_fork_are_recognised_everywhere(text):
    assert in_text(text) == "cudaErrorStreamCaptureUnjoined"
    assert explain(RuntimeError(text)).key == "unjoined-fork"


def test_an_emulator_error_is_taken_at_its_word():
    exc = CaptureError("anything at all", cuda_error="cudaErrorStreamCaptureIsolation")
    assert cuda_error_of(exc) == "cudaErrorStreamCaptureIsolation"


def test_the_emulator_prints_the_current_wording():
    assert describe("cudaErrorStreamCaptureUnjoined") == "capturing stream has unjoined work"
    assert all(isinstance(w, str) and w for ws in CAPTURE_ERRORS.values() for w in ws)
