"""The Kineto file reader: columns read fast and exactly, big or hostile files refused early.

A file is read by the columnar route (msgspec, a batch of events at a time, times from their
decimal text); a parsed dict by the per-event route. Both must give the same table for any trace,
so the property test below writes SYNTHETIC traces (random events, plausible and odd) to files
and compares the two. The other traces here are small hand-written SYNTHETIC ones whose expected
values are stated next to them.
"""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
import warnings
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import graphlab.support.memory
from graphlab.errors import TraceError
from graphlab.trace import kineto, kineto_chunks, kineto_columns
from graphlab.trace.decimals import us_texts_to_ns, us_to_ns
from graphlab.trace.events import TraceWarning
from graphlab.trace.timeline import Timeline

COLUMNS = ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")
_NUMBER = re.compile(r'"@@number:([^@"]*)@@"')


def number(text: str) -> str:
    """A JSON number, given as its exact text (Python's json cannot write a Decimal as one)."""
    return f"@@number:{text}@@"


def trace_text(document) -> str:
    """JSON text of ``document`` with every ``number(...)`` written as the bare number."""
    return _NUMBER.sub(r"\1", json.dumps(document, indent=1))


def table(t: Timeline) -> dict:
    meta = {k: v for k, v in t.meta.items() if k != "path"}
    return {"meta": meta, **{col: getattr(t, col).tolist() for col in COLUMNS}}


def load_both(tmp_path: Path, document) -> tuple:
    """The outcome of reading ``document`` as a file and as a parsed dict: (table or error)."""
    text = trace_text(document)
    path = tmp_path / "trace.json"
    path.write_text(text)
    parsed = json.loads(text, parse_float=Decimal)
    if isinstance(parsed, list):  # a file may hold the list alone; a parsed trace is a dict
        parsed = {"traceEvents": parsed}
    outcomes = []
    for src in (path, parsed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            try:
                outcomes.append(table(Timeline.from_chrome_trace(src)))
            except TraceError:
                outcomes.append(TraceError)
    return tuple(outcomes)


# -- both routes give the same table -------------------------------------------------------------

times = st.one_of(
    st.integers(0, 999_999).map(lambda f: number(f"1733155200000000.{f:06d}"[:20])),
    st.integers(0, 10**15).map(lambda ns: number(f"{ns // 1000}.{ns % 1000:03d}")),
    st.integers(-5, 10**6).map(lambda n: number(str(n))),
    st.sampled_from(["1.5E+3", "2e2", "0.0005", "-0.5", "1.25", "4611686018427388"]).map(number),
    st.sampled_from([None, "12", [1]]),
)
ids = st.one_of(
    st.integers(-1, 9), st.sampled_from(["3", "-2", "--5", "²", "x", None, 2**63, -(2**63)])
)
CATEGORIES = ["kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "Kernel",
              "CUDA_RUNTIME", "cpu_op", "ac2g", None]  # fmt: skip
NAMES = ["cudaLaunchKernel", "cudaGraphLaunch_v10000", "cudaDeviceSynchronize", "cudaEventRecord",
         "cudaMemcpyAsync", "k", "", None]  # fmt: skip
events = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.sampled_from(["X", "X", "X", "M", "f", None]),
        "cat": st.sampled_from(CATEGORIES),
        "name": st.sampled_from(NAMES),
        "ts": times,
        "dur": times,
        "pid": ids,
        "tid": ids,
        "args": st.fixed_dictionaries(
            {},
            optional={
                "correlation": ids,
                "device": ids,
                "stream": ids,
                "graphlab_kind": st.sampled_from(["launch", "sync", "kernel", None]),
            },
        )
        | st.none(),
    },
)
# Events of a shape the fast route does not decode (a number as a name, args as a list): their
# batch is read by the per-event route.
odd_events = st.sampled_from(
    [
        {"ph": "X", "cat": "kernel", "name": 7, "ts": 1, "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": [1]},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 1,
         "args": {"correlation": True}},
        "not an event",
    ]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(events | odd_events, max_size=14), st.booleans())
@example(
    [
        {"ph": "X", "cat": "kernel", "name": "k", "ts": number("1733155200000004.999"),
         "dur": number("1.002"), "args": {"correlation": 11, "stream": 7, "device": 0}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMystery", "pid": 5, "tid": "6",
         "ts": number("1733155200000000.123"), "dur": number("5.001"),
         "args": {"correlation": 11}},
    ],
    True,
)  # fmt: skip
def test_file_and_parsed_dict_give_the_same_table(tmp_path_factory, rows, wrapped):
    document = {"traceEvents": rows, "deviceProperties": [{"name": "G"}]} if wrapped else rows
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kineto_chunks, "BATCH_EVENTS", 3)  # several batches, some read each way
        from_file, from_dict = load_both(tmp_path_factory.mktemp("both"), document)
    assert from_file == from_dict


# Events whose text holds what looks like the end of one event and the start of the next
# ("}, {") where it is not: inside a string, or between objects nested in an event's args.
false_cuts = st.sampled_from(
    [
        {"ph": "X", "cat": "kernel", "name": 'a"}, {"b', "ts": 1, "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,
         "args": {"inputs": [{"shape": 1}, {"shape": 2}], "correlation": 3}},
        {"ph": "M", "name": "}, {", "args": {"name": "}, {"}},
    ]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(events | odd_events | false_cuts, max_size=14), st.sampled_from([1, 40, 300, 2000]))
def test_a_trace_cut_into_chunks_gives_the_same_table(tmp_path_factory, rows, chunk_bytes):
    document = {"traceEvents": rows, "deviceProperties": [{"name": "G"}]}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kineto_chunks, "CHUNK_BYTES", chunk_bytes)  # cut after nearly any event
        patch.setattr(kineto_columns, "GROUP_EVENTS", 2)  # columns built every few events
        from_file, from_dict = load_both(tmp_path_factory.mktemp("chunks"), document)
    assert from_file == from_dict


def test_a_false_cut_is_found_and_the_events_are_read_one_text_at_a_time(tmp_path):
    kernel = {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": number("10.000"),
              "dur": number("2.000"), "args": {"correlation": 1}}  # fmt: skip
    tricky = {**kernel, "name": '"}, {"', "ts": number("20.500")}
    text = trace_text({"traceEvents": [{**kernel, "name": "k"}, tricky]})
    array = text[text.index("[") : text.rindex("]") + 1].encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kineto_chunks, "CHUNK_BYTES", 1)
        # The first cut candidate lies inside the second event's name: that chunk cannot parse.
        assert kineto_chunks.read_array(array, "t.json", "") is None
        path = tmp_path / "t.json"
        path.write_text(text)
        t = Timeline.from_chrome_trace(path)
    assert t.name.tolist() == ["k", '"}, {"']
    assert t.start_ns.tolist() == [10_000, 20_500]
    assert t.dur_ns.tolist() == [2_000, 2_000]


# -- exact times ---------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 6).flatmap(
        lambda places: st.decimals(allow_nan=False, allow_infinity=False, places=places)
    )
    | st.integers(-(10**19), 10**19).map(Decimal)
    | st.decimals(min_value=-(10**17), max_value=10**17, places=3)
)
def test_number_texts_read_quickly_are_exact(value):
    texts = [str(value).encode(), format(value, "f").encode(), b"null", b'"1.5"']
    ns, ok = us_texts_to_ns(texts)
    for text, got, quick in zip(texts, ns.tolist(), ok.tolist(), strict=True):
        exact = us_to_ns(Decimal(text.decode())) if text[:1] not in b'n"' else None
        if quick:
            assert got == exact  # whatever is read quickly is read exactly
        elif re.fullmatch(rb"-?\d{1,16}(\.\d{1,3})?", text) and exact is not None:
            pytest.fail(f"{text!r}: a plain three-decimal time was not read quickly")


def test_absolute_timestamps_keep_every_nanosecond_through_the_fast_route(tmp_path):
    # 1733155200000004.999 µs has 19 significant digits; as a double it would be ...005.0.
    ns, ok = us_texts_to_ns([b"1733155200000004.999", b"5368438496578.307", b"-0.001"])
    assert ok.all()
    assert ns.tolist() == [1733155200000004999, 5368438496578307, -1]


# -- big files, unpacking bombs and memory --------------------------------------------------------


def test_a_gzip_bomb_is_refused_from_its_trailer_with_one_message(tmp_path, monkeypatch):
    monkeypatch.setattr(kineto, "MAX_TRACE_BYTES", 1024**2)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (20 * 1024**2) + b"]}"))
    tracemalloc.start()
    try:
        with pytest.raises(TraceError) as info:
            Timeline.from_chrome_trace(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "the 20 MiB its gzip trailer says it unpacks to (if it is damaged, export it again) " \
        "is more than graphlab reads (1.0 MiB)" in message  # fmt: skip
    assert message.count("graphlab reads") == 1  # said once, not wrapped in a second message
    assert peak < 2 * 1024**2  # refused before unpacking


def test_a_gzip_bomb_with_a_false_trailer_is_refused_while_unpacking(tmp_path, monkeypatch):
    monkeypatch.setattr(kineto, "MAX_TRACE_BYTES", 1024**2)
    packed = bytearray(gzip.compress(b'{"traceEvents": [' + b" " * (20 * 1024**2) + b"]}"))
    packed[-4:] = (100).to_bytes(4, "little")  # the trailer claims 100 bytes
    path = tmp_path / "liar.json.gz"
    path.write_bytes(bytes(packed))
    tracemalloc.start()
    try:
        with pytest.raises(TraceError, match=r"over 1\.0 MiB unpacked is more than graphlab reads"):
            Timeline.from_chrome_trace(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024**2  # stopped after the first megabyte or so, not 20 MB later


def test_a_trace_too_big_for_the_memory_available_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "trace.json"
    path.write_text(trace_text({"traceEvents": []}) + " " * 100_000)
    monkeypatch.setattr(graphlab.support.memory, "available_bytes", lambda: 50_000)
    # 100,025 bytes, 98 KiB; reading it needs 1.6 times that.
    expected = r"reading 98 KiB needs about 156 KiB of memory and 49 KiB is available"
    with pytest.raises(TraceError, match=expected):
        Timeline.from_chrome_trace(path)


def test_a_timeline_too_big_to_decode_is_refused_after_one_read(tmp_path, monkeypatch):
    path = Timeline(["kernel"], ["k"], [0], [1]).save(tmp_path / "t.json")
    with path.open("a") as f:
        f.write(" " * (100_000 - path.stat().st_size))  # 100,000 bytes in all
    # Reading needs 1.6 times the file (156 KiB), decoding into Python values 8 times (781 KiB).
    monkeypatch.setattr(graphlab.support.memory, "available_bytes", lambda: 300_000)
    expected = (
        r"t.json: is a graphlab timeline, read whole as Python objects, and that needs about "
        r"781 KiB of memory \(293 KiB available\): free some memory or save a shorter timeline"
    )
    with pytest.raises(TraceError, match=expected):
        Timeline.from_chrome_trace(path)
    monkeypatch.setattr(graphlab.support.memory, "available_bytes", lambda: 800_000)
    t = Timeline.from_chrome_trace(path)
    assert (t.name.tolist(), t.start_ns.tolist(), t.dur_ns.tolist()) == (["k"], [0], [1])


# -- suspect events are named -------------------------------------------------------------------

KERNEL = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7}


def kernel_at(ts: str, dur: str | None, corr: int) -> dict:
    event = {**KERNEL, "ts": number(ts), "args": {"correlation": corr, "stream": 7, "device": 0}}
    if dur is not None:
        event["dur"] = number(dur)
    return event


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([b'"ts"', b'"dur"', b'"du', b'r"', b'"t', b's"', b"x", b'"'])).map(
        b"".join
    ),
    st.binary(max_size=6),
)
def test_the_time_keys_are_counted_as_a_plain_search_counts_them(text, after):
    # A text of pieces of the keys, in a buffer that holds more after it (as the stream's
    # does): each key is counted wherever it starts in the text (a valid JSON text never has
    # two occurrences of one of them overlap).
    def plain(key: bytes) -> int:
        return sum(text.startswith(key, i) for i in range(len(text)))

    counts = kineto_columns._time_keys(bytearray(text + after), len(text))
    assert counts == (plain(b'"ts"'), plain(b'"dur"'))


def test_duplicates_kernels_without_time_and_events_without_phase_warn(tmp_path):
    events = [
        kernel_at("10.000", "1.000", 1),
        kernel_at("10.000", "1.000", 1),  # an exact copy of the first
        kernel_at("20.000", "0.000", 2),  # zero duration
        kernel_at("30.000", None, 3),  # no duration at all
        kernel_at("40.000", "1.000", 4),
        {"cat": "kernel", "name": "k", "ts": 50, "dur": 1},  # no ph
    ]
    path = tmp_path / "suspect.json"
    path.write_text(trace_text({"traceEvents": events}))
    with pytest.warns(TraceWarning) as caught:
        t = Timeline.from_chrome_trace(path)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 3
    assert messages[0].startswith(f"{path}: 1 event has no 'ph' (phase)")
    assert messages[1].startswith(f"{path}: 1 event is an exact copy of another event")
    assert messages[2].startswith(f"{path}: 2 kernels have a missing or zero duration")
    # Nothing is dropped: the copy is counted (the warning says so).
    assert t.summary().kernels == 5


def test_a_clean_trace_warns_about_nothing(tmp_path):
    path = tmp_path / "clean.json"
    path.write_text(trace_text({"traceEvents": [kernel_at("10.000", "1.000", 1)]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Timeline.from_chrome_trace(path)


# -- Python's own JSON ---------------------------------------------------------------------------


def test_nan_in_a_file_is_read_as_python_reads_it(tmp_path):
    # Python's json writes NaN; strict JSON has none. A NaN time is damage, a NaN elsewhere is not.
    path = tmp_path / "python.json"
    event = {**kernel_at("10.000", "1.000", 1), "args": {"occupancy": "@@number:NaN@@"}}
    path.write_text(trace_text({"traceEvents": [event]}))
    assert Timeline.from_chrome_trace(path).start_ns.tolist() == [10_000]
    path.write_text(trace_text({"traceEvents": [kernel_at("NaN", "1.000", 1)]}))
    with pytest.raises(TraceError, match="damaged"):
        Timeline.from_chrome_trace(path)


def test_a_saved_timeline_is_read_from_disk_once(tmp_path, monkeypatch):
    from graphlab.trace import jsonfile

    traces = Path(__file__).parent / "traces"
    original = Timeline.from_chrome_trace(traces / "multistream_replay.json")
    path = original.save(tmp_path / "timeline.json")
    reads = []
    real_read_bytes = jsonfile.read_bytes

    def counting_read_bytes(*args, **kwargs):
        reads.append(args[0])
        return real_read_bytes(*args, **kwargs)

    monkeypatch.setattr(kineto, "read_bytes", counting_read_bytes)
    again = Timeline.from_chrome_trace(path)
    assert reads == [path]
    assert again.to_dict() == original.to_dict()
