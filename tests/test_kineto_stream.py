"""A trace file read as a stream gives exactly what reading the whole file gives.

graphlab/trace/kineto_stream.py reads a plain Kineto file a chunk at a time and leaves the file to
be read whole wherever it cannot prove the result the same. The documents here are SYNTHETIC and
small, each written to probe one of those places (a key that appears twice, a list that ends
where a ``}]`` in a string or in a nested object suggests it might, text around the list that
looks like events); hypothesis mixes such pieces at random. Each is read both ways and the tables,
or the very error messages, compared; the route each took is checked where it is certain.
"""

from __future__ import annotations

import json
import tracemalloc
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlab.errors import TraceError
from graphlab.trace import kineto, kineto_chunks, kineto_stream
from graphlab.trace.events import TraceWarning

COLUMNS = ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")


def kernel(i: int, **extra) -> dict:
    return {"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 0, "tid": 7, "ts": 10 * i,
            "dur": 2, "args": {"correlation": i, "stream": 7, **extra}}  # fmt: skip


def launch(i: int) -> dict:
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": 10 * i - 5, "dur": 3, "args": {"correlation": i}}  # fmt: skip


def events_text(*events) -> str:
    return ", ".join(e if isinstance(e, str) else json.dumps(e) for e in events)


PLAIN = events_text(launch(1), kernel(1), launch(2), kernel(2))


def outcome(path, monkeypatch, whole: bool):
    """The table read from ``path`` (or its error message), read as a stream where it can be,
    or ``whole``; and whether the stream gave it."""
    streamed = []
    load_streamed = kineto._load_streamed

    def spy(*args):
        streamed.append(True)  # the events were read as a stream (a refusal ends there too)
        table = load_streamed(*args)
        streamed[-1] = table is not None
        return table

    with monkeypatch.context() as patch:
        patch.setattr(kineto, "_load_streamed", spy)
        if whole:
            patch.setattr(kineto, "read_events", lambda *args: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TraceWarning)
            try:
                table = kineto.load_trace(path)
            except TraceError as exc:
                return str(exc), any(streamed)
    notes = [str(w.message) for w in caught]
    return ({c: getattr(table, c).tolist() for c in COLUMNS}, table.meta, notes), any(streamed)


def read_both(tmp_path, monkeypatch, text: str) -> bool:
    """Read ``text`` as a file both ways, assert the same outcome, and say whether it streamed."""
    path = tmp_path / "trace.json"
    path.write_text(text)
    stream, streamed = outcome(path, monkeypatch, whole=False)
    whole, _ = outcome(path, monkeypatch, whole=True)
    assert stream == whole
    return streamed


@pytest.mark.parametrize(
    ("text", "streamed"),
    [
        ('{"schemaVersion": 1, "traceEvents": [' + PLAIN + '], "traceName": "t.json"}', True),
        # Text around the list that looks like events, and a last event whose args hold
        # objects in a list: the list ends at the one "}]" after which its events parse.
        ('{"traceEvents": [' + PLAIN + '], "more": [{"a": 1}, {"b": [{"c": 2}]}]}', True),
        ('{"traceEvents": [' + events_text(kernel(1, inputs=[{"s": 1}, {"s": 2}])) + "]}", True),
        ('{"traceEvents": [' + events_text({**kernel(1), "name": "k}]"}) + "]}", True),
        # "traceEvents" escaped in a string before the key: the key is still found once.
        ('{"note": "\\"traceEvents\\": [{", "traceEvents": [' + PLAIN + "]}", True),
        # The key twice: Python's json and msgspec keep the last.
        (
            '{"traceEvents": [' + PLAIN + '], "traceEvents": [' + events_text(kernel(3)) + "]}",
            False,
        ),
        ('{"traceEvents": [' + PLAIN + '], "trace\\u0045vents": []}', False),
        ('{"meta": {"traceEvents": [' + PLAIN + ']}, "traceEvents": [' + PLAIN + "]}", False),
        # Lists that are not plainly of events, a NaN, damaged files.
        ('{"traceEvents": []}', False),
        ('{"traceEvents": [1, ' + PLAIN + "]}", False),
        ("[" + PLAIN + "]", False),
        ('{"traceEvents": [' + events_text(kernel(1, x="@")).replace('"@"', "NaN") + "]}", False),
        ('{"traceEvents": [' + PLAIN, False),
        ('{"traceEvents": [' + PLAIN + '], "traceName": }', False),
        ('{"schema": "graphlab.recording/1", "traceEvents": [' + PLAIN + "]}", True),
    ],
    ids=[
        "plain",
        "objects-after-the-list",
        "objects-in-the-last-event",
        "a-name-that-ends-a-list",
        "the-key-in-a-string",
        "the-key-twice",
        "the-key-escaped",
        "the-key-nested-first",
        "no-events",
        "not-an-object",
        "no-document",
        "nan",
        "truncated",
        "damaged-after-the-list",
        "another-graphlab-file",
    ],
)
def test_a_file_streams_only_where_it_reads_as_a_whole(tmp_path, monkeypatch, text, streamed):
    assert read_both(tmp_path, monkeypatch, text) == streamed


def test_a_list_that_starts_too_far_in_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(kineto_stream, "_LONGEST_HEAD", 100)
    monkeypatch.setattr(kineto_stream, "_BLOCK", 16)
    text = '{"padding": "' + "x" * 200 + '", "traceEvents": [' + PLAIN + "]}"
    assert not read_both(tmp_path, monkeypatch, text)
    monkeypatch.setattr(kineto_stream, "_LONGEST_HEAD", 1000)
    assert read_both(tmp_path, monkeypatch, text)


def test_an_event_longer_than_a_chunk_may_be_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(kineto_chunks, "CHUNK_BYTES", 1)
    monkeypatch.setattr(kineto_chunks, "LONGEST_CHUNK", 300)
    monkeypatch.setattr(kineto_stream, "_BLOCK", 16)  # the buffer grows an event at a time
    long_event = events_text(kernel(2, note="x" * 400))
    text = '{"traceEvents": [' + events_text(kernel(1), long_event, kernel(3)) + "]}"
    assert not read_both(tmp_path, monkeypatch, text)
    monkeypatch.setattr(kineto_chunks, "LONGEST_CHUNK", 1 << 20)
    assert read_both(tmp_path, monkeypatch, text)


def test_too_many_places_where_the_list_might_end_leave_it_to_the_whole_file(tmp_path, monkeypatch):
    nested = kernel(1, shapes=[[{"s": i}] for i in range(kineto_stream._LAST_CHUNK_TRIES + 1)])
    assert not read_both(tmp_path, monkeypatch, '{"traceEvents": [' + events_text(nested) + "]}")
    fewer = kernel(1, shapes=[[{"s": i}] for i in range(kineto_stream._LAST_CHUNK_TRIES - 1)])
    assert read_both(tmp_path, monkeypatch, '{"traceEvents": [' + events_text(fewer) + "]}")


_HEADS = ['"schemaVersion": 1', '"deviceProperties": [{"id": 0, "name": "G"}, {"id": 1}]',
          '"note": "}, {\\"traceEvents\\": ["', '"baseTimeNanoseconds": 1000']  # fmt: skip
_TAILS = ['"traceName": "t.json"', '"more": [{"a": [{"b": 1}]}, {"c": "}]"}]',
          '"x": {"traceEvents": 1}']  # fmt: skip
_EVENTS = [
    json.dumps(launch(1)),
    json.dumps(kernel(1)),
    json.dumps(kernel(2, inputs=[{"s": 1}, {"s": [2]}])),
    json.dumps({**kernel(3), "name": 'a"}, {"b}]'}),
    json.dumps({"ph": "M", "name": "}, {", "args": {"name": "}]"}}),
    json.dumps({**kernel(4), "ts": "bad"}),
    json.dumps({**kernel(5), "ts ": 2}).replace('"ts "', '"ts"'),  # a key twice
    json.dumps({**launch(6), "dur ": 2}).replace('"dur "', '"dur"'),
    "7",
]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    head=st.lists(st.sampled_from(_HEADS), max_size=3),
    events=st.lists(st.sampled_from(_EVENTS), max_size=8),
    tail=st.lists(st.sampled_from(_TAILS), max_size=2),
    space=st.sampled_from(["", " ", "\n  "]),
    chunk_bytes=st.sampled_from([1, 60, 200, 1 << 19]),
)
def test_any_document_reads_the_same_as_a_stream_and_whole(
    tmp_path, monkeypatch, head, events, tail, space, chunk_bytes
):
    listed = f"[{space}" + f"{space},{space}".join(events) + f"{space}]"
    items = [*head, f'"traceEvents":{space}{listed}', *tail]
    monkeypatch.setattr(kineto_chunks, "CHUNK_BYTES", chunk_bytes)
    read_both(tmp_path, monkeypatch, "{" + f",{space}".join(items) + "}")


def test_a_large_trace_is_read_in_a_fraction_of_its_size(tmp_path):
    # Times as Kineto writes them, microseconds with three decimals.
    kernels = (
        f'{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {i}.250, '
        f'"dur": 0.500, "args": {{"correlation": {i}, "stream": 7, "pad": "{"x" * 600}"}}}}'
        for i in range(1, 40_001)
    )
    path = tmp_path / "large.json"
    path.write_text('{"schemaVersion": 1, "traceEvents": [' + ", ".join(kernels) + "]}")
    size = path.stat().st_size  # about 30 MB
    tracemalloc.start()
    try:
        table = kineto.load_trace(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(table) == 40_000
    assert table.start_ns[-1] == 40_000_250
    assert peak < size / 3  # reading it whole took more than its size
