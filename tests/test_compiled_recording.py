"""The lesson 10 measurement's parts that need no GPU: what watch_cudagraphs collects and puts
back, and how load_compiled refuses a missing or foreign file."""

from __future__ import annotations

import json
import logging

import pytest
import torch
from torch._dynamo.utils import counters

from graphlab.errors import RecordingError
from graphlab.timing import experiments

SKIP = "skipping cudagraphs due to mutated inputs (1 instances)"


def test_watch_cudagraphs_keeps_the_skip_lines_and_counts_the_skips():
    logger = logging.getLogger(experiments.CUDAGRAPHS_LOGGER)
    level, handlers = logger.level, list(logger.handlers)
    with experiments.watch_cudagraphs() as calls:
        logger.warning(SKIP)
        counters["inductor"]["cudagraph_skips"] += 3
    logger.warning("after the block: not kept")
    assert calls.to_dict() == {"captures": 0, "replays": 0, "cudagraph_skips": 3, "log": [SKIP]}
    assert (logger.level, logger.handlers) == (level, handlers)


def test_watch_cudagraphs_hears_a_logger_that_a_logging_config_disabled():
    logger = logging.getLogger(experiments.CUDAGRAPHS_LOGGER)
    logger.disabled = True  # what logging.config.dictConfig does to loggers it does not name
    try:
        with experiments.watch_cudagraphs() as calls:
            logger.warning(SKIP)
        assert calls.log == [SKIP]
        assert logger.disabled
    finally:
        logger.disabled = False


def test_watch_cudagraphs_puts_the_graph_methods_back_even_after_an_error():
    replay, capture_begin = torch.cuda.CUDAGraph.replay, torch.cuda.CUDAGraph.capture_begin
    with pytest.raises(ValueError), experiments.watch_cudagraphs():
        assert torch.cuda.CUDAGraph.replay is not replay
        raise ValueError("inside the block")
    assert torch.cuda.CUDAGraph.replay is replay
    assert torch.cuda.CUDAGraph.capture_begin is capture_begin


def test_load_compiled_without_a_recording_says_how_to_make_one(tmp_path):
    with pytest.raises(RecordingError, match=r"record_compiled\(\)"):
        experiments.load_compiled(tmp_path)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ({"schema": "graphlab.recording/1"}, "is not a graphlab.compiled/1 recording"),
        ({"schema": "graphlab.compiled/1", "meta": {}, "timings": {}}, "lacks experiment, steady"),
        ([1, 2], "is not a graphlab.compiled/1 recording"),
    ],
)
def test_load_compiled_refuses_what_is_not_its_recording(tmp_path, content, words):
    (tmp_path / "compiled_mlp_l16_w64_b4.json").write_text(json.dumps(content))
    with pytest.raises(RecordingError, match=words):
        experiments.load_compiled(tmp_path)


def test_log_lines_keep_paths_relative_to_the_project_and_site_packages():
    import logging

    from graphlab.timing.experiments.torch_compile import _PROJECT_ROOT, _LogLines

    lines: list[str] = []
    message = (
        f'File "{_PROJECT_ROOT}graphlab/timing/experiments/torch_compile.py", '
        "line 904, in reads_cpu_tensor; "
        'File "/opt/venv/lib/python3.12/site-packages/torch/_inductor/cudagraph_utils.py"'
    )
    _LogLines(lines).emit(
        logging.LogRecord("cudagraphs", logging.WARNING, "", 0, message, None, None)
    )
    assert lines == [
        'File "graphlab/timing/experiments/torch_compile.py", line 904, in reads_cpu_tensor; '
        'File "torch/_inductor/cudagraph_utils.py"'
    ]


OVERWRITTEN = (
    "Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. "
    "Stack trace: File x.py, line 3."
)
FIRST_SENTENCE = (
    "Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"
)


@pytest.mark.parametrize(
    ("row", "said"),
    [
        (
            {"captures": 1, "replays": 0, "error": OVERWRITTEN, "right": None},
            ("warm-up", "raised: " + FIRST_SENTENCE),
        ),
        (
            {"captures": 1, "replays": 1, "error": OVERWRITTEN, "right": None},
            ("recording", "raised: " + FIRST_SENTENCE),
        ),
        (
            {"captures": 0, "replays": 1, "error": None, "right": False},
            ("replay", "WRONG values, no error"),
        ),
        ({"captures": 0, "replays": 1, "error": None, "right": True}, ("replay", "right values")),
    ],
)
def test_a_kept_output_row_names_the_stage_from_its_counts_and_what_reading_gave(row, said):
    assert experiments.kept_output_row({"call": 1, **row}) == said
