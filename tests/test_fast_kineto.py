"""The column-wise Kineto reader gives exactly the exact reader's Timeline, or declines.

Checked on the four real H200 traces in tests/traces/, on traces hypothesis generates (mixed
categories, phases, ids written as numbers or digit strings, times with 0-3 decimals), and on
the inputs it must leave to the exact reader (exponents, sub-nanosecond digits, damaged files),
where ``load_trace_fast`` must then give the exact reader's result or its very error.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlab import Timeline
from graphlab.errors import TraceError
from graphlab.trace.fast_kineto import load_trace_fast, read_fast
from graphlab.trace.gaps import summarize
from graphlab.trace.kineto import load_trace

TRACES = Path(__file__).parent / "traces"
REAL = sorted(p for p in TRACES.glob("*.json") if p.name != "provenance.json")
COLUMNS = ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")


def assert_same(fast, exact) -> None:
    assert len(fast) == len(exact)
    for column in COLUMNS:
        np.testing.assert_array_equal(getattr(fast, column), getattr(exact, column), column)
    assert fast.meta == exact.meta
    assert list(fast.meta) == list(exact.meta)
    assert list(fast.meta.get("skipped", {})) == list(exact.meta.get("skipped", {}))


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_traces_read_the_same(path):
    fast = read_fast(path)
    assert fast is not None
    assert_same(fast, load_trace(path))
    assert Timeline.from_chrome_trace(path).summary().to_dict() == (
        summarize(load_trace(path)).to_dict()
    )


def test_gzipped_trace_reads_the_same(tmp_path):
    packed = tmp_path / "graph_replay.json.gz"
    packed.write_bytes(gzip.compress((TRACES / "graph_replay.json").read_bytes()))
    fast = read_fast(packed)
    assert fast is not None
    assert_same(fast, load_trace(packed))


def write(tmp_path: Path, events: list, name: str = "t.json", **top) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events, **top}))
    return path


def raw_trace(tmp_path: Path, ts_text: str, dur_text: str = "1.000") -> Path:
    """A launch and its kernel, the kernel's ts and dur written exactly as given."""
    text = (
        '{"traceEvents": ['
        '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 6,'
        ' "ts": 1.000, "dur": 2.000, "args": {"correlation": 9}},'
        '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,'
        f' "ts": {ts_text}, "dur": {dur_text}, "args": {{"correlation": 9, "stream": 7}}}}'
        "]}"
    )
    path = tmp_path / "raw.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("ts_text", "ns"),
    [
        ("5369924881412.351", 5369924881412351),  # a real Kineto timestamp: 16 digits
        ("0.5", 500),
        ("7", 7000),
        ("-0.5", -500),
        ("12.34", 12340),
        ("999999999999999.999", 999999999999999999),  # the largest it reads itself
    ],
)
def test_times_become_exact_nanoseconds(tmp_path, ts_text, ns):
    fast = read_fast(raw_trace(tmp_path, ts_text))
    assert fast is not None
    kernel = fast.select(fast.kind == "kernel")
    assert kernel.start_ns.tolist() == [ns]
    assert kernel.dur_ns.tolist() == [1000]


@pytest.mark.parametrize("ts_text", ["1e3", "1.0005", '"12.5"', "null", "1000000000000000.0"])
def test_declines_what_only_the_exact_reader_reads(tmp_path, ts_text):
    path = raw_trace(tmp_path, ts_text)
    assert read_fast(path) is None
    try:
        exact = load_trace(path)
    except TraceError as exc:
        with pytest.raises(TraceError, match=f"^{exc}$".replace("(", r"\(").replace(")", r"\)")):
            load_trace_fast(path)
    else:
        assert_same(load_trace_fast(path), exact)


def test_sub_nanosecond_digits_are_rounded_by_the_exact_reader(tmp_path):
    # 1.0005 µs is 1000.5 ns: half-even rounding gives 1000, which only the exact reader does.
    path = raw_trace(tmp_path, "1.0005")
    kernel = load_trace_fast(path)
    assert kernel.select(kernel.kind == "kernel").start_ns.tolist() == [1000]


def test_a_trace_of_host_calls_that_submit_nothing_gets_the_exact_readers_error(tmp_path):
    # cudaEventRecord is kept only as the launch of GPU work that carries its correlation id;
    # with none, nothing is left (hypothesis found the fast reader returning an empty table).
    event = {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 0, "tid": 0,
             "ts": 0, "dur": 0, "args": {"correlation": 1}}  # fmt: skip
    path = write(tmp_path, [event])
    assert read_fast(path) is None
    with pytest.raises(TraceError, match="the trace has no CUDA runtime or GPU events"):
        load_trace_fast(path)


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b'{"traceEvents": 5}', b'{"traceEvents": []}', b"[1, 2]"],
    ids=["empty", "not-json", "no-list", "no-events", "top-level-list"],
)
def test_damaged_files_get_the_exact_readers_error(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert read_fast(path) is None
    with pytest.raises(TraceError) as exact:
        load_trace(path)
    with pytest.raises(TraceError) as fast:
        load_trace_fast(path)
    assert str(fast.value) == str(exact.value)


def test_skipped_counts_and_host_calls_resolved_as_the_exact_reader(tmp_path):
    events = [
        {"ph": "M", "name": "process_name", "pid": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 0, "dur": 9},
        {"name": "no phase"},
        # cudaEventRecord submits no work: dropped unless GPU work carries its correlation
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1,
         "ts": 1, "dur": 1, "args": {"correlation": 4}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1, "args": {"correlation": 5}},
        {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "7", "ts": 3, "dur": 1,
         "args": {"correlation": 5, "device": "0"}},
        {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel_v7000", "pid": "x",
         "tid": 2, "ts": 4, "dur": 1, "args": {"correlation": 6}},
        {"ph": "X", "name": "no category", "ts": 5},
    ]  # fmt: skip
    path = write(tmp_path, events, deviceProperties=[{"name": "NVIDIA H200"}])
    fast = read_fast(path)
    assert fast is not None
    assert_same(fast, load_trace(path))
    assert fast.kind.tolist() == ["launch", "kernel", "launch"]
    assert fast.meta["skipped"] == {
        "ph M": 1,
        "cpu_op": 1,
        "ph ?": 1,
        "uncategorised": 1,
        "cuda_runtime (neither launch nor sync)": 1,
    }
    assert fast.meta["gpu"] == "NVIDIA H200"
    assert fast.meta["host_pid"] == 1


# Hypothesis: random but plausible traces. Every id is an int or a digit string, every time a
# plain decimal with 0-3 decimals, so the fast reader must read each one itself.
_ids = st.one_of(st.integers(-(2**62), 2**62), st.from_regex(r"-?[0-9]{1,18}", fullmatch=True))
_times = st.builds(
    lambda whole, frac, digits: f"{whole}" + (f".{frac:0{digits}d}" if digits else ""),
    st.integers(0, 10**12),
    st.integers(0, 999),
    st.integers(0, 3),
)
_event = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["X", "X", "X", "M", "i"]),
        "cat": st.sampled_from(
            ["kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cpu_op", ""]
        ),
        "name": st.sampled_from(
            [
                "cudaLaunchKernel",
                "cudaGraphLaunch",
                "cudaDeviceSynchronize",
                "cudaMemcpyAsync",
                "cudaEventRecord",
                "cuLaunchKernel",
                "void k<float>()",
            ]
        ),
        "pid": _ids,
        "tid": _ids,
        "ts": _times,
        "dur": _times,
        "args": st.fixed_dictionaries(
            {},
            optional={
                "correlation": st.one_of(st.integers(0, 5), _ids),
                "device": _ids,
                "stream": _ids,
                "graphlab_kind": st.sampled_from(["launch", "sync", "other"]),
            },
        ),
    }
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=st.lists(_event, min_size=1, max_size=25))
def test_generated_traces_read_the_same(tmp_path, events):
    # Times go in as JSON number text, exactly as written, not through a float.
    body = ",".join(
        json.dumps({k: v for k, v in e.items() if k not in ("ts", "dur")})[:-1]
        + f', "ts": {e["ts"]}, "dur": {e["dur"]}}}'
        for e in events
    )
    path = tmp_path / "generated.json"
    path.write_text('{"traceEvents": [' + body + "]}")
    try:
        exact = load_trace(path)
    except TraceError:
        assert read_fast(path) is None  # a trace with nothing to show is the exact reader's
        return
    fast = read_fast(path)
    assert fast is not None
    assert_same(fast, exact)
