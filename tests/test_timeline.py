"""Timeline: the table, graphlab's JSON, Chrome-trace export, and the Kineto loader.

Most traces here are SYNTHETIC: small hand-written Kineto-shaped dicts or files whose expected
values are worked out by hand in the comments. ``h200_eager8_then_replay8.json`` is a real trace
recorded on the H200; its figures were computed once by a separate plain-Python script over the
raw JSON (Decimal microseconds, a loop merging intervals), not by graphlab.
"""

from __future__ import annotations

import contextlib
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlab.errors import TraceError
from graphlab.trace import kineto
from graphlab.trace.events import SCHEMA, TraceWarning, call_name
from graphlab.trace.timeline import Timeline

TRACES = Path(__file__).parent / "traces"

# SYNTHETIC Kineto-shaped trace. Absolute microsecond timestamps with three decimals, as older
# Kineto wrote them: 19 significant digits, more than a float keeps.
SYNTHETIC_TRACE_TEXT = """{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "Synthetic GPU"}],
  "baseTimeNanoseconds": 1733155200000000000,
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 77, "tid": 78,
     "ts": 1733155200000000.001, "dur": 20.000},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 77, "tid": 78,
     "ts": 1733155200000000.123, "dur": 5.001, "args": {"correlation": 11, "cbid": 211}},
    {"ph": "X", "cat": "kernel", "name": "mul_kernel", "pid": 0, "tid": 7,
     "ts": 1733155200000004.999, "dur": 1.002,
     "args": {"correlation": 11, "stream": 7, "device": 0, "grid": [4, 1, 1]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGetDevice", "pid": 77, "tid": 78,
     "ts": 1733155200000006.000, "dur": 0.100, "args": {"correlation": 12}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync_ptsz", "pid": 77, "tid": 78,
     "ts": 1733155200000007.000, "dur": 2.000, "args": {"correlation": 13}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0,
     "tid": 7, "ts": 1733155200000010.500, "dur": 0.250,
     "args": {"correlation": 13, "stream": 7, "device": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMysteryAsync", "pid": 77, "tid": 78,
     "ts": 1733155200000011.000, "dur": 1.000, "args": {"correlation": 14}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 9,
     "ts": 1733155200000012.500, "dur": 0.125,
     "args": {"correlation": 14, "stream": 9, "device": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 77, "tid": 78,
     "ts": 1733155200000013.000, "dur": 3.000, "args": {"correlation": 15}},
    {"ph": "s", "id": 11, "pid": 77, "tid": 78, "ts": 1733155200000000.123, "cat": "ac2g",
     "name": "ac2g"},
    {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 1733155200000004.999, "cat": "ac2g",
     "name": "ac2g", "bp": "e"},
    {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}
  ]
}"""
BASE_NS = 1733155200000000000 // 1000 * 1000  # 1733155200000000.000 µs in ns


@pytest.fixture
def synthetic_path(tmp_path: Path) -> Path:
    path = tmp_path / "synthetic_trace.json"
    path.write_text(SYNTHETIC_TRACE_TEXT)
    return path


COLUMNS = ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")


def columns(t: Timeline) -> dict[str, list]:
    return {col: getattr(t, col).tolist() for col in COLUMNS}


# ------------------------------------------------------------------------------ the table


def test_constructor_sorts_stably_and_fills_defaults():
    t = Timeline(
        kind=["kernel", "launch", "sync", "kernel"],
        name=["b", "cudaLaunchKernel", "cudaDeviceSynchronize", "a"],
        start_ns=[30, 10, 50, 30],
        dur_ns=[5, 4, 1, 2],
        correlation=[1, 1, -1, 2],
    )
    assert len(t) == 4
    # Sorted by start; the two events at 30 keep their given order (b before a).
    assert t.name.tolist() == ["cudaLaunchKernel", "b", "a", "cudaDeviceSynchronize"]
    assert t.start_ns.tolist() == [10, 30, 30, 50]
    assert t.end_ns.tolist() == [14, 35, 32, 51]
    assert t.device.tolist() == [-1, -1, -1, -1]
    assert t.is_gpu.tolist() == [False, True, True, False]
    assert t.start_ns.dtype == np.int64
    with pytest.raises(ValueError):
        t.start_ns[0] = 0  # columns are read-only


def test_select_keeps_meta_and_rows():
    t = Timeline(["launch", "kernel"], ["l", "k"], [0, 5], [1, 1], meta={"source": "test"})
    gpu = t.select(t.is_gpu)
    assert len(gpu) == 1 and gpu.name.tolist() == ["k"] and gpu.meta == {"source": "test"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": ["kernal"]}, "unknown event kind"),
        ({"start_ns": [0.5]}, "must hold integers"),
        ({"dur_ns": [-1]}, "negative duration"),
        ({"stream": [1, 2]}, "has 2 values"),
    ],
)
def test_constructor_refuses_bad_columns(kwargs, message):
    base = {"kind": ["kernel"], "name": ["k"], "start_ns": [0], "dur_ns": [1]}
    with pytest.raises(TraceError, match=message):
        Timeline(**{**base, **kwargs})


def test_call_name_strips_cupti_suffixes():
    assert call_name("cudaLaunchKernel_ptsz_v7000") == "cudaLaunchKernel"
    assert call_name("cudaMemcpyAsync_ptsz") == "cudaMemcpyAsync"
    assert call_name("cudaGraphLaunch") == "cudaGraphLaunch"


# -------------------------------------------------------------------- graphlab's own JSON


def test_dict_round_trip_and_names_stored_once(tmp_path):
    t = Timeline(
        kind=["launch", "kernel", "launch", "kernel"],
        name=["cudaLaunchKernel", "k", "cudaLaunchKernel", "k"],
        start_ns=[
            1733155200000000123,
            1733155200000001000,
            1733155200000002000,
            1733155200000003001,
        ],
        dur_ns=[500, 1001, 500, 999],
        device=[-1, 0, -1, 0],
        stream=[-1, 7, -1, 7],
        thread=[5, -1, 5, -1],
        correlation=[1, 1, 2, 2],
        meta={"source": "test", "x": 0.25},
    )
    d = t.to_dict()
    assert d["schema"] == SCHEMA == "graphlab.timeline/1"
    assert d["names"] == ["cudaLaunchKernel", "k"]
    assert d["events"]["name"] == [0, 1, 0, 1]
    assert columns(Timeline.from_dict(d)) == columns(t)

    path = t.save(tmp_path / "sub" / "t.json")
    again = Timeline.load(path)
    assert columns(again) == columns(t)
    assert again.meta == {"source": "test", "x": 0.25}
    assert sorted(p.name for p in path.parent.iterdir()) == ["t.json"]  # no temp file left


def test_save_is_atomic_when_meta_cannot_be_written(tmp_path):
    path = tmp_path / "t.json"
    Timeline(["kernel"], ["k"], [0], [1]).save(path)
    before = path.read_text()
    bad = Timeline(["kernel"], ["k"], [0], [2], meta={"oops": object()})
    with pytest.raises(TraceError, match="not JSON-serialisable"):
        bad.save(path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"schema": "graphlab.timeline/2"}, "upgrade graphlab"),
        ({"schema": "something else"}, "not a graphlab timeline"),
        ([1, 2], "not a graphlab timeline"),
        ({"schema": SCHEMA, "names": [], "events": {"kind": []}}, "damaged"),
        ({"schema": SCHEMA, "names": ["a"], "events": {}}, "damaged"),
    ],
)
def test_from_dict_refuses_damaged_data(data, message):
    with pytest.raises(TraceError, match=message):
        Timeline.from_dict(data)


# ------------------------------------------------------------------------ Chrome export


def test_chrome_export_keeps_every_nanosecond_and_labels_lanes(tmp_path):
    t = Timeline(
        kind=["launch", "kernel"],
        name=["cudaLaunchKernel", 'k"quoted"'],
        start_ns=[1733155200000000123, 1733155200000004999],
        dur_ns=[5001, 7],
        device=[-1, 0],
        stream=[-1, 7],
        thread=[78, -1],
        correlation=[11, 11],
        meta={"gpu": "Synthetic GPU"},
    )
    path = t.to_chrome_trace(tmp_path / "out.json")
    text = path.read_text()
    # µs with exactly three decimals, written as text: no float rounding.
    assert '"ts":1733155200000000.123,"dur":5.001' in text
    assert '"ts":1733155200000004.999,"dur":0.007' in text
    trace = json.loads(text)
    x = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["cat"] for e in x] == ["cuda_runtime", "kernel"]
    assert x[1]["pid"] == 0 and x[1]["tid"] == 7 and x[1]["args"]["correlation"] == 11
    names = {(e["name"], e["pid"], e["tid"]): e["args"] for e in trace["traceEvents"]}
    host_pid = x[0]["pid"]
    assert host_pid != 0  # the host is not mistaken for GPU 0
    assert names[("process_name", host_pid, 0)] == {"name": "host"}
    assert names[("process_name", 0, 0)] == {"name": "GPU 0 (Synthetic GPU)"}
    assert names[("thread_name", host_pid, 78)] == {"name": "thread 78"}
    assert names[("thread_name", 0, 7)] == {"name": "stream 7"}
    # And it loads back to the same table.
    assert columns(Timeline.from_chrome_trace(path)) == columns(t)


@pytest.mark.parametrize(
    "name",
    [
        "eager_chain.json",
        "graph_replay.json",
        "multistream_replay.json",
        "h200_eager8_then_replay8.json",
    ],
)
def test_real_traces_survive_export_and_reload(tmp_path, name):
    t = Timeline.from_chrome_trace(TRACES / name)
    again = Timeline.from_chrome_trace(t.to_chrome_trace(tmp_path / name))
    assert columns(again) == columns(t) and again.meta == t.meta


def test_chrome_export_of_negative_times():
    t = Timeline(["kernel"], ["k"], [-1], [1001], device=[0], stream=[1])
    assert '"ts":-0.001,"dur":1.001' in t.to_chrome_trace()


# -------------------------------------------------------------------------- Kineto loader


def test_kineto_loader_exact_ns_and_classification(synthetic_path):
    t = Timeline.from_chrome_trace(synthetic_path)
    # cpu_op, cudaGetDevice (no GPU work) and flow/metadata events are not in the table;
    # cudaMysteryAsync is kept as a launch because a memset carries its correlation id.
    assert t.kind.tolist() == ["launch", "kernel", "launch", "memcpy", "launch", "memset", "sync"]
    assert t.name.tolist()[2] == "cudaMemcpyAsync_ptsz"
    assert t.name.tolist()[4] == "cudaMysteryAsync"
    offsets = [123, 4999, 7000, 10500, 11000, 12500, 13000]
    assert t.start_ns.tolist() == [BASE_NS + o for o in offsets]
    assert t.dur_ns.tolist() == [5001, 1002, 2000, 250, 1000, 125, 3000]
    assert t.device.tolist() == [-1, 0, -1, 0, -1, 0, -1]
    assert t.stream.tolist() == [-1, 7, -1, 7, -1, 9, -1]
    assert t.thread.tolist() == [78, -1, 78, -1, 78, -1, 78]
    assert t.correlation.tolist() == [11, 11, 13, 13, 14, 14, 15]
    assert t.meta["source"] == "kineto"
    assert t.meta["gpu"] == "Synthetic GPU"
    assert t.meta["base_time_ns"] == 1733155200000000000
    assert t.meta["host_pid"] == 77
    assert t.meta["skipped"] == {
        "cpu_op": 1,
        "ph s": 1,
        "ph f": 1,
        "ph M": 1,
        "cuda_runtime (neither launch nor sync)": 1,
    }


def test_kineto_loader_accepts_dict_gzip_and_own_timeline(synthetic_path, tmp_path):
    from_file = Timeline.from_chrome_trace(synthetic_path)
    exact_dict = kineto.read_json(synthetic_path)  # parsed with Decimal: still exact
    assert columns(Timeline.from_chrome_trace(exact_dict)) == columns(from_file)
    gz = tmp_path / "trace.json.gz"
    gz.write_bytes(gzip.compress(synthetic_path.read_bytes()))
    assert columns(Timeline.from_chrome_trace(gz)) == columns(from_file)
    own = from_file.save(tmp_path / "own.json")
    assert columns(Timeline.from_chrome_trace(own)) == columns(from_file)


def test_real_h200_trace_loads():
    t = Timeline.from_chrome_trace(TRACES / "h200_eager8_then_replay8.json")
    # Counted in the raw file: 16 kernel events, 8 cudaLaunchKernel + 1 cudaGraphLaunch,
    # 2 cudaDeviceSynchronize; cudaStreamIsCapturing is dropped.
    assert int(np.count_nonzero(t.kind == "kernel")) == 16
    assert int(np.count_nonzero(t.kind == "launch")) == 9
    assert int(np.count_nonzero(t.kind == "sync")) == 2
    assert t.meta["gpu"] == "NVIDIA H200"
    replay = t.select(t.correlation == 95)  # the cudaGraphLaunch's correlation id
    assert replay.kind.tolist() == ["launch"] + ["kernel"] * 8
    # First replay kernel: "ts": 5368438496844.259 µs after the base time.
    assert replay.start_ns.tolist()[1] == 5368438496844259


def test_real_graph_replay_links_each_replay_to_its_launch():
    # Counted in the raw file: cudaGraphLaunch correlations 1494 and 1503, 20 kernels each;
    # 2 cudaStreamIsCapturing (no GPU work, dropped) and 2 cudaDeviceSynchronize.
    t = Timeline.from_chrome_trace(TRACES / "graph_replay.json")
    launches = t.select(t.kind == "launch")
    assert launches.name.tolist() == ["cudaGraphLaunch", "cudaGraphLaunch"]
    assert launches.correlation.tolist() == [1494, 1503]
    for corr in (1494, 1503):
        assert int(np.count_nonzero((t.kind == "kernel") & (t.correlation == corr))) == 20
    assert int(np.count_nonzero(t.kind == "sync")) == 2
    assert t.meta["skipped"]["cuda_runtime (neither launch nor sync)"] == 2


def test_real_multistream_replay_tracks():
    # Counted in the raw file: two gemm kernels on streams 7 and 144 and the add on stream 7,
    # all with the cudaGraphLaunch's correlation id 3596.
    t = Timeline.from_chrome_trace(TRACES / "multistream_replay.json")
    gpu = t.select(t.is_gpu)
    assert sorted(zip(gpu.stream.tolist(), gpu.correlation.tolist(), strict=True)) == [
        (7, 3596),
        (7, 3596),
        (144, 3596),
    ]
    assert t.select(t.correlation == 3596).kind.tolist().count("launch") == 1


def write(tmp_path: Path, text: str | bytes, name: str = "trace.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("this is not json", "not valid JSON"),
        (SYNTHETIC_TRACE_TEXT[:400], "ends early"),
        (b"\xff\xfe\x00binary", "not a text JSON file"),
        ('{"hello": 1}', "not a Chrome trace"),
        ('"just a string"', "not a Chrome trace"),
        ('{"traceEvents": []}', "no CUDA runtime or GPU events"),
        (
            '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, '
            '"dur": 2}]}',
            r"no CUDA runtime or GPU events \(1 cpu_op\)",
        ),
        (
            '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": NaN, "dur": 1}]}',
            "damaged",
        ),
        (
            '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}',
            "damaged",
        ),
        (
            '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 1}]}',
            "damaged",
        ),
        ('{"schema": "graphlab.recording/1"}', "graphlab.recording"),
    ],
    ids=[
        "empty",
        "not-json",
        "truncated",
        "binary",
        "json-object-not-trace",
        "json-string",
        "no-events",
        "only-cpu-ops",
        "nan-ts",
        "negative-dur",
        "missing-ts",
        "a-recording",
    ],
)
def test_bad_trace_files_raise_trace_error_with_advice(tmp_path, content, message):
    with pytest.raises(TraceError, match=message):
        Timeline.from_chrome_trace(write(tmp_path, content))


def test_missing_file_folder_and_wrong_type(tmp_path):
    with pytest.raises(TraceError, match=r"no such file.*export_chrome_trace"):
        Timeline.from_chrome_trace(tmp_path / "absent.json")
    with pytest.raises(TraceError, match="is a folder, not a regular file"):
        Timeline.from_chrome_trace(tmp_path)
    with pytest.raises(TraceError, match="cannot read a trace from int"):
        Timeline.from_chrome_trace(42)


def test_huge_files_are_refused_before_reading(tmp_path, monkeypatch):
    path = write(tmp_path, SYNTHETIC_TRACE_TEXT)
    monkeypatch.setattr(kineto, "MAX_TRACE_BYTES", 100)
    with pytest.raises(TraceError, match="more than graphlab reads"):
        Timeline.from_chrome_trace(path)


def test_finished_cpu_profiler_without_cuda_events_says_what_to_do():
    # A real torch.profiler run on the CPU: exported and parsed, but it has no CUDA activity.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        torch.ones(8).mul(2)
    with pytest.raises(TraceError, match=r"ProfilerActivity\.CUDA"):
        Timeline.from_chrome_trace(prof)


def test_profiler_object_is_exported_and_loaded(synthetic_path):
    class FinishedProfiler:  # stands in for a torch.profiler.profile on a GPU machine
        def export_chrome_trace(self, path):
            Path(path).write_text(synthetic_path.read_text())

    class UnfinishedProfiler:
        def export_chrome_trace(self, path):
            raise RuntimeError("profiler not started")

    t = Timeline.from_chrome_trace(FinishedProfiler())
    assert columns(t) == columns(Timeline.from_chrome_trace(synthetic_path))
    with pytest.raises(TraceError, match=r"after the `with torch\.profiler\.profile"):
        Timeline.from_chrome_trace(UnfinishedProfiler())


# ------------------------------------------------- property: bad input only ever TraceError

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
event_fields = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.sampled_from(["X", "M", "f", "s", "i"]) | json_values,
        "cat": st.sampled_from(["kernel", "gpu_memcpy", "cuda_runtime", "cuda_driver", "cpu_op"])
        | json_values,
        "name": st.sampled_from(["cudaLaunchKernel", "cudaGraphLaunch", "cudaMystery"])
        | json_values,
        "ts": st.integers(-(2**70), 2**70) | st.decimals(allow_nan=True) | json_values,
        "dur": st.integers(-5, 2**70) | st.decimals(allow_nan=True) | json_values,
        "pid": json_values,
        "tid": json_values,
        "args": st.fixed_dictionaries(
            {},
            optional={
                "correlation": json_values,
                "stream": json_values,
                "device": json_values,
                "graphlab_kind": json_values | st.sampled_from(["launch", "sync", "kernel"]),
            },
        )
        | json_values,
    },
)
# Well-formed events, so that the analysis also runs on many of the generated traces.
small_ids = st.integers(-1, 3)
plausible_events = st.fixed_dictionaries(
    {
        "ph": st.just("X"),
        "cat": st.sampled_from(["kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime"]),
        "name": st.sampled_from(["cudaLaunchKernel", "cudaGraphLaunch", "cudaMemcpyAsync", "k"]),
        "ts": st.decimals(0, 10**6, places=3),
        "dur": st.decimals(0, 100, places=3),
        "pid": small_ids,
        "tid": small_ids,
        "args": st.fixed_dictionaries(
            {"correlation": small_ids, "stream": small_ids, "device": small_ids}
        ),
    }
)
traces = st.one_of(
    json_values,
    st.fixed_dictionaries({"traceEvents": st.lists(event_fields, max_size=8)}),
    st.fixed_dictionaries({"traceEvents": st.lists(plausible_events | event_fields, max_size=12)}),
    st.lists(event_fields, max_size=8),
)


def load_or_trace_error(src):
    try:
        t = Timeline.from_chrome_trace(src)
    except TraceError:
        return None
    t.summary()  # and the analysis of whatever loaded must not fail either
    return t


@settings(max_examples=150, deadline=None)
@given(traces)
def test_any_parsed_json_loads_or_raises_trace_error(data):
    load_or_trace_error(data)


@settings(max_examples=60, deadline=None)
@given(traces, st.integers(0, 400))
def test_any_file_text_or_prefix_loads_or_raises_trace_error(tmp_path_factory, data, cut):
    text = json.dumps(data, default=str)  # Decimals as strings; NaN/Infinity stay as tokens
    path = tmp_path_factory.mktemp("prop") / "trace.json"
    path.write_text(text[: max(cut, len(text) // 2)])
    load_or_trace_error(path)


@settings(max_examples=100, deadline=None)
@given(
    st.fixed_dictionaries(
        {"schema": st.just(SCHEMA)},
        optional={"names": json_values, "events": json_values, "meta": json_values},
    )
    | st.fixed_dictionaries(
        {
            "schema": st.just(SCHEMA),
            "names": st.lists(st.text(max_size=3), max_size=3),
            "events": st.dictionaries(
                st.sampled_from(COLUMNS), st.lists(json_values, max_size=3), max_size=8
            ),
        }
    )
)
def test_any_timeline_dict_loads_or_raises_trace_error(data):
    with contextlib.suppress(TraceError):
        Timeline.from_dict(data).summary()


def test_deeply_nested_json_is_refused(tmp_path):
    with pytest.raises(TraceError, match="nested too deeply"):
        Timeline.from_chrome_trace(write(tmp_path, "[" * 100_000 + "]" * 100_000))


# ------------------------------------------------------------- values a table cannot hold


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("start_ns", 2**64 - 1),  # numpy reads it as uint64; it used to wrap round to -1
        ("start_ns", 2**63 - 1),
        ("start_ns", 2**62),
        ("start_ns", -(2**62) - 1),
        ("dur_ns", 2**62),
        ("correlation", 2**63),
    ],
)
def test_times_and_ids_beyond_what_a_table_holds_are_refused(column, value):
    base = {"kind": ["kernel"], "name": ["k"], "start_ns": [0], "dur_ns": [1]}
    with pytest.raises(TraceError, match=r"damaged|beyond"):
        Timeline(**{**base, column: [value]})


def test_a_span_beyond_what_a_table_holds_is_refused():
    # Each time alone is in range, but end - start would not fit the analysis' arithmetic.
    with pytest.raises(TraceError, match="span"):
        Timeline(["kernel", "kernel"], ["k", "k"], [-(2**62), 2**62 - 10], [1, 1])
    # The widest table that is accepted analyses to exact figures.
    t = Timeline(["kernel", "kernel"], ["k", "k"], [-(2**61), 2**61 - 1], [1, 1])
    assert (t.summary().span_ns, t.summary().busy_ns) == (2**62, 2)


def test_a_saved_timeline_with_times_near_2_63_is_refused(tmp_path, capsys):
    data = Timeline(["kernel", "kernel"], ["k", "k"], [0, 10], [5, 5]).to_dict()
    data["events"]["start_ns"] = [2**63 - 20, 2**63 - 10]
    path = tmp_path / "timeline.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TraceError, match="outside what a timeline holds"):
        Timeline.load(path)
    from graphlab.cli import main

    assert main(["gaps", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "outside what a timeline holds" in err


# --------------------------------------------------------------------- NaN is not JSON


def test_save_writes_strict_json_when_meta_holds_nan(tmp_path):
    t = Timeline(["kernel"], ["k"], [0], [1], meta={"source": "test", "x": float("nan")})
    with pytest.warns(TraceWarning, match=r"NaN or infinity \(at x\).*written as null"):
        path = t.save(tmp_path / "t.json")
    text = path.read_text()
    json.loads(text, parse_constant=pytest.fail)  # no bare NaN
    assert Timeline.load(path).meta == {"source": "test", "x": None}
    with pytest.warns(TraceWarning, match=r"\(at x\)"):
        exported = t.to_chrome_trace(tmp_path / "t.trace.json")
    json.loads(exported.read_text(), parse_constant=pytest.fail)
