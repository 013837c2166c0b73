"""A trace file read in two halves at once gives exactly what one reader gives.

graphlab/trace/kineto_halves.py has a helper process read the second half of a large trace's
event list while this process reads the first. Here the split is forced on small SYNTHETIC
traces, at every place the list could be split or at random ones: the helper is a stand-in that
reads the second half in this process, through the same read_second_half, except in the tests
of the real helper process. The expected tables are written out by hand where a trace is small
enough; elsewhere the halves are compared with one reader of the same file (table, meta and
warnings, or the very error message).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import warnings
from multiprocessing.connection import Connection

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlab.errors import TraceError
from graphlab.server import trace_report
from graphlab.trace import kineto, kineto_chunks, kineto_halves
from graphlab.trace.events import TraceWarning
from graphlab.trace.timeline import Timeline

COLUMNS = ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")


class InProcess:
    """A stand-in helper: reads the second half in this process when asked for its answer, or
    gives the ``answer`` it is made with."""

    def __init__(self, answer=None, busy: bool = False):
        self._answer, self._busy = answer, busy
        self.requests: list[tuple] = []

    def ask(self, request: tuple) -> bool:
        self.requests.append(request)
        return not self._busy

    def answer(self):
        return self._answer or (True, kineto_halves.read_second_half(*self.requests[-1]))


def outcome(path, helper=None):
    """The table read from ``path`` with ``helper`` (or one reader), with its meta and warnings;
    or the error message. And whether read_in_halves gave the events, in halves or alone (else
    the whole file was read)."""
    halves = []
    read_in_halves = kineto.read_in_halves

    def spy(*args):
        halves.append(read_in_halves(*args))
        return halves[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kineto, "read_in_halves", spy)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TraceWarning)
            try:
                t = kineto.load_trace(path, helper)
            except TraceError as exc:
                return str(exc), False
    read = ({c: getattr(t, c).tolist() for c in COLUMNS}, t.meta, [str(w.message) for w in caught])
    return read, any(h is not None for h in halves)


def split_at(middle: int):
    """kineto_halves._middle, replaced: every list split at ``middle``, however short."""
    return lambda f, head: middle


def launch(i: int, ts: str) -> str:
    return (f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, '
            f'"tid": 1, "ts": {ts}, "dur": 3.000, "args": {{"correlation": {i}}}}}')  # fmt: skip


def kernel(i: int, name: str, ts: str) -> str:
    return (f'{{"ph": "X", "cat": "kernel", "name": {json.dumps(name)}, "pid": 0, "tid": 7, '
            f'"ts": {ts}, "dur": 2.500, "args": {{"correlation": {i}, "stream": 7}}}}')  # fmt: skip


# Two launches and their kernels, a metadata event between them whose name looks like the end
# of one event and the start of the next ("}, {"), and a kernel named so too.
EVENTS = [
    launch(1, "10.001"),
    kernel(1, "k1", "12.345"),
    '{"ph": "M", "name": "}, {", "args": {"name": "}, {"}}',
    launch(2, "20.000"),
    kernel(2, '"}, {"', "22.5"),
]
# What those events are, worked out by hand: µs with three decimals are ns; a kernel's device
# and stream are its args' or else its pid and tid; a launch's thread is its tid.
EXPECTED = {
    "kind": ["launch", "kernel", "launch", "kernel"],
    "name": ["cudaLaunchKernel", "k1", "cudaLaunchKernel", '"}, {"'],
    "start_ns": [10_001, 12_345, 20_000, 22_500],
    "dur_ns": [3_000, 2_500, 3_000, 2_500],
    "device": [-1, 0, -1, 0],
    "stream": [-1, 7, -1, 7],
    "thread": [1, -1, 1, -1],
    "correlation": [1, 1, 2, 2],
}
SKIPPED = {"ph M": 1}


# The same launches and kernels without the metadata event, the last kernel named plainly.
PLAIN = [*EVENTS[:2], *EVENTS[3:4], kernel(2, "k2", "22.5")]
EXPECTED_PLAIN = {**EXPECTED, "name": ["cudaLaunchKernel", "k1", "cudaLaunchKernel", "k2"]}


@pytest.mark.parametrize(
    ("events", "columns", "skipped"),
    [
        (PLAIN, EXPECTED_PLAIN, {}),
        (EVENTS, EXPECTED, SKIPPED),
    ],
    ids=["plain", "names-that-look-like-cuts"],
)
def test_a_trace_split_at_every_place_reads_to_the_same_table(
    tmp_path, monkeypatch, events, columns, skipped
):
    text = '{"schemaVersion": 1, "traceEvents": [' + ",\n ".join(events) + '], "traceName": "t"}'
    path = tmp_path / "t.json"
    path.write_text(text)
    start = text.index("[")
    # The last place where one event ends and the next begins: a list split after it has no
    # second half, and is read whole.
    last_cut = text.rindex("},\n {") - start
    monkeypatch.setattr(kineto_chunks, "CHUNK_BYTES", 1)  # a chunk ends after any event
    streamed = []
    for middle in range(1, len(text) - start):
        monkeypatch.setattr(kineto_halves, "_middle", split_at(middle))
        (read, meta, notes), by_stream = outcome(path, InProcess())
        assert (read, meta["skipped"], notes) == (columns, skipped, []), middle
        streamed.append(by_stream)
    if events is PLAIN:  # in halves wherever a cut lies at or after the middle
        assert streamed == [True] * last_cut + [False] * (len(streamed) - last_cut)
    else:  # a cut at a "}, {" in a name is refused (its chunk does not parse), as one reader
        assert not any(streamed) and not outcome(path)[1]  # of chunks of one event refuses it


def test_the_helper_reads_the_half_after_the_middle(tmp_path, monkeypatch):
    text = '{"traceEvents": [' + ", ".join(PLAIN) + "]}"
    path = tmp_path / "t.json"
    path.write_text(text)
    middle = text.index(launch(2, "20.000")) - text.index("[")  # at the second launch's "{"
    monkeypatch.setattr(kineto_chunks, "CHUNK_BYTES", 1)
    monkeypatch.setattr(kineto_halves, "_middle", split_at(middle))
    helper = InProcess()
    meta = {"source": "kineto", "path": str(path), "skipped": {}, "host_pid": 1}
    assert outcome(path, helper) == ((EXPECTED_PLAIN, meta, []), True)
    half = kineto_halves.read_second_half(*helper.requests[0])
    # The helper begins after the cut at the end of the second launch: the last kernel is its.
    assert half.cut == text.index(kernel(2, "k2", "22.5")) - text.index("[") - 3
    assert half.part.names == ["k2"] and half.after == b"}"
    assert [len(p) for p in half.part.parts["start"]] == [1]


def test_a_small_list_is_read_by_one_process(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ", ".join(EVENTS) + "]}")
    helper = InProcess()
    (columns, _, _), streamed = outcome(path, helper)
    assert columns == EXPECTED and streamed and helper.requests == []


_EVENT_TEXTS = [
    launch(1, "10.001"),
    kernel(2, "k", "12.5"),
    kernel(3, "a}, {b", "13.000"),
    '{"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "args": {"in": [{"s": 1}, {"s": 2}]}}',
    '{"ph": "M", "name": "}, {", "args": {"name": "}]"}}',
    '{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "ts": 2, "dur": 1}',  # a key twice
    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "ts": 1, "dur": 1, "dur": 2}',
    '{"ph": "X", "cat": "kernel", "name": 7, "ts": 1, "dur": 1}',  # read the careful way
    '{"ph": "X", "cat": "kernel", "name": "k", "ts": "bad"}',
    '{"ph": "i", "name": "instant", "ts": 3}',
]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    events=st.lists(st.sampled_from(_EVENT_TEXTS), min_size=1, max_size=10),
    space=st.sampled_from(["", " ", "\n  "]),
    chunk_bytes=st.sampled_from([1, 40, 120, 1 << 19]),
    grid=st.integers(1, 40),
    tail=st.sampled_from(["", ', "traceName": "t"', ', "more": [{"a": [{"b": "}]"}]}]']),
)
def test_any_trace_reads_the_same_in_halves_as_by_one_reader(
    tmp_path, monkeypatch, events, space, chunk_bytes, grid, tail
):
    listed = f"[{space}" + f"{space},{space}".join(events) + f"{space}]"
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents":' + space + listed + tail + "}")
    monkeypatch.setattr(kineto_chunks, "CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(kineto_halves, "_middle", split_at(grid * chunk_bytes))
    assert outcome(path, InProcess())[0] == outcome(path)[0]


@pytest.fixture
def split_trace(tmp_path, monkeypatch):
    """The hand-worked plain trace, split at its second launch."""
    text = '{"traceEvents": [' + ", ".join(PLAIN) + "]}"
    path = tmp_path / "t.json"
    path.write_text(text)
    monkeypatch.setattr(kineto_chunks, "CHUNK_BYTES", 1)
    middle = text.index(launch(2, "20.000")) - text.index("[")
    monkeypatch.setattr(kineto_halves, "_middle", split_at(middle))
    return path


@pytest.mark.parametrize(
    ("helper", "streamed"),
    [
        (InProcess(busy=True), True),  # reading another trace: this process reads alone
        (InProcess(answer=(False, None)), True),  # could not read the file: read here alone
        (InProcess(answer=(True, None)), False),  # its half is to be read whole: so is the file
    ],
    ids=["busy", "failed", "refused"],
)
def test_a_helper_that_cannot_help_leaves_the_same_table(split_trace, helper, streamed):
    (columns, _, _), read_by_stream = outcome(split_trace, helper)
    assert columns == EXPECTED_PLAIN and read_by_stream == streamed and len(helper.requests) == 1


def test_a_file_that_changed_under_the_helper_is_read_whole(split_trace):
    class Changed(InProcess):
        def answer(self):
            read, half = super().answer()
            return read, half._replace(file=(0, 0, 0, 0))

    (columns, _, _), streamed = outcome(split_trace, Changed())
    assert columns == EXPECTED_PLAIN and not streamed


@pytest.mark.parametrize(
    "cut", ["}, {", ", {", "}", "]}"], ids=["in-an-event", "between", "in-the-end", "the-end"]
)
def test_a_truncated_file_says_what_one_reader_says(tmp_path, monkeypatch, cut):
    text = '{"traceEvents": [' + ", ".join(PLAIN) + "]}"
    path = tmp_path / "t.json"
    path.write_text(text[: text.rindex(cut)])
    monkeypatch.setattr(kineto_chunks, "CHUNK_BYTES", 1)
    monkeypatch.setattr(kineto_halves, "_middle", split_at(text.index(launch(2, "20.000"))))
    said = outcome(path, InProcess())
    assert said == outcome(path) and isinstance(said[0], str)
    assert "ends early (truncated?)" in said[0]


def big_trace(path, events: int) -> None:
    """Launches and kernels, 7.123 µs apart, past SPLIT_BYTES; the names vary, so each half
    holds names of its own."""
    lines = []
    for i in range(events // 2):
        ts = 1_000_000 + i * 7.123
        lines.append(launch(i, f"{ts:.3f}"))
        lines.append(kernel(i, f"kernel_{i % 7 if i < events // 4 else i % 11}", f"{ts + 4:.3f}"))
    path.write_text('{"traceEvents": [\n' + ",\n".join(lines) + '\n], "traceName": "big"}')
    assert path.stat().st_size > kineto_halves.SPLIT_BYTES


@pytest.fixture(scope="module")
def helper():
    started = kineto_halves.Helper()
    yield started
    started.close()


def test_the_helper_process_reads_a_large_trace_to_the_same_table(tmp_path, helper):
    path = tmp_path / "big.json"
    big_trace(path, 60_000)
    answers = []
    answer = helper.answer

    def spy():
        answers.append(answer())
        return answers[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(helper, "answer", spy)
        halves, split = outcome(path, helper)
    assert split and answers[0][0] and answers[0][1].part.parts["start"]
    assert halves == outcome(path)[0]
    columns = halves[0]
    assert len(columns["kind"]) == 60_000
    assert columns["start_ns"][-1] == 1_000_000_000 + 29_999 * 7_123 + 4_000
    assert columns["name"][-1] == f"kernel_{29_999 % 11}"


def test_a_helper_whose_process_ended_leaves_the_file_to_this_one(tmp_path):
    path = tmp_path / "big.json"
    big_trace(path, 60_000)
    ended = kineto_halves.Helper()
    ended._process.kill()
    ended._process.wait()
    try:
        assert outcome(path, ended) == (outcome(path)[0], True)  # read here, alone
    finally:
        ended.close()


def test_the_trace_viewer_reads_with_the_helper_to_the_report_of_graphlab_gaps(
    tmp_path, monkeypatch, helper
):
    path = tmp_path / "big.json"
    big_trace(path, 60_000)
    monkeypatch.setattr(trace_report, "_helper", helper)
    loaded = trace_report.TraceCache().get(path, "big.json")
    assert loaded.report("en") == Timeline.from_chrome_trace(path).summary().report()
    assert loaded.events == 60_000


def test_the_helper_says_when_it_cannot_read_the_file(tmp_path):
    # The helper's loop, run here on a pair of pipes: a file it cannot open is answered "not
    # read" (the asker then reads the file alone), and the loop ends when the requests' pipe
    # closes.
    their_requests, requests = os.pipe()
    answers, their_answers = os.pipe()
    serving = threading.Thread(target=kineto_halves._serve, args=(their_requests, their_answers))
    serving.start()
    with Connection(requests, readable=False) as ask, Connection(answers, writable=False) as get:
        assert get.recv() is None  # ready
        ask.send((str(tmp_path / "gone.json"), 0, 1, "gone.json", ""))
        assert get.recv() == (False, None)
    serving.join(timeout=10)
    assert not serving.is_alive()


def test_a_helper_that_cannot_start_leaves_the_server_to_read_alone(monkeypatch):
    monkeypatch.setattr(sys, "executable", shutil.which("false"))
    with pytest.raises(EOFError):
        kineto_halves.Helper()
    monkeypatch.setattr(trace_report, "_helper", None)
    trace_report.warm_up()
    assert trace_report._helper is None
