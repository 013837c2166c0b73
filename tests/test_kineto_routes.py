"""A trace file, read column-wise, gives exactly the table of its parsed dict, read event by event.

Checked on the four real H200 traces in tests/traces/, on traces hypothesis generates (mixed
categories, phases, ids written as numbers or digit strings, times with 0-3 decimals), and on
the inputs the quick parse of times leaves to the careful one (exponents, sub-nanosecond digits,
strings), where the file must give the parsed dict's result or its very error.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlab import Timeline
from graphlab.errors import TraceError
from graphlab.trace.gaps import summarize
from graphlab.trace.kineto import load_trace

TRACES = Path(__file__).parent / "traces"
REAL = sorted(p for p in TRACES.glob("*.json") if p.name != "provenance.json")
COLUMNS = ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")


def parsed(path: Path) -> dict:
    """The trace at ``path`` parsed as the per-event reader expects (numbers exact)."""
    return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else
                      path.read_text(), parse_float=Decimal)  # fmt: skip


def without_path(meta: dict) -> dict:
    return {k: v for k, v in meta.items() if k != "path"}


def assert_same(from_file, from_dict) -> None:
    assert len(from_file) == len(from_dict)
    for column in COLUMNS:
        np.testing.assert_array_equal(
            getattr(from_file, column), getattr(from_dict, column), column
        )
    assert without_path(from_file.meta) == from_dict.meta
    assert list(without_path(from_file.meta)) == list(from_dict.meta)
    assert list(from_file.meta.get("skipped", {})) == list(from_dict.meta.get("skipped", {}))


def assert_same_outcome(path: Path) -> None:
    """The file and its parsed dict give the same table, or the same error."""
    try:
        from_dict = load_trace(parsed(path))
    except TraceError as exc:
        with pytest.raises(TraceError) as from_file:
            load_trace(path)
        assert str(from_file.value) == f"{path}: {exc}"
    else:
        assert_same(load_trace(path), from_dict)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_traces_read_the_same(path):
    assert_same(load_trace(path), load_trace(parsed(path)))
    assert Timeline.from_chrome_trace(path).summary().to_dict() == (
        summarize(load_trace(parsed(path))).to_dict()
    )


def test_gzipped_trace_reads_the_same(tmp_path):
    packed = tmp_path / "graph_replay.json.gz"
    packed.write_bytes(gzip.compress((TRACES / "graph_replay.json").read_bytes()))
    assert_same(load_trace(packed), load_trace(parsed(packed)))


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
        ("999999999999999.999", 999999999999999999),
        ("1733155200000004.999", 1733155200000004999),  # an epoch timestamp: 19 digits
    ],
)
def test_times_become_exact_nanoseconds(tmp_path, ts_text, ns):
    table = load_trace(raw_trace(tmp_path, ts_text))
    kernel = table.select(table.kind == "kernel")
    assert kernel.start_ns.tolist() == [ns]
    assert kernel.dur_ns.tolist() == [1000]


@pytest.mark.parametrize("ts_text", ["1e3", "1.0005", '"12.5"', "null", "1000000000000000.0"])
def test_times_the_quick_parse_leaves_are_read_as_the_parsed_dict_reads_them(tmp_path, ts_text):
    assert_same_outcome(raw_trace(tmp_path, ts_text))


def test_sub_nanosecond_digits_are_rounded_half_even(tmp_path):
    # 1.0005 µs is 1000.5 ns: half-even rounding gives 1000.
    table = load_trace(raw_trace(tmp_path, "1.0005"))
    assert table.select(table.kind == "kernel").start_ns.tolist() == [1000]


def test_a_trace_of_host_calls_that_submit_nothing_is_refused(tmp_path):
    # cudaEventRecord is kept only as the launch of GPU work that carries its correlation id;
    # with none, nothing is left (hypothesis found an empty table once).
    event = {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 0, "tid": 0,
             "ts": 0, "dur": 0, "args": {"correlation": 1}}  # fmt: skip
    path = write(tmp_path, [event])
    with pytest.raises(TraceError, match="the trace has no CUDA runtime or GPU events"):
        load_trace(path)
    assert_same_outcome(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"{not json", "is not valid JSON"),
        (b'{"traceEvents": 5}', "not a Chrome trace"),
        (b'{"traceEvents": []}', r"no CUDA runtime or GPU events \(no events\)"),
        (b"[1, 2]", r"no CUDA runtime or GPU events \(2 ph \?\)"),
    ],
    ids=["empty", "not-json", "no-list", "no-events", "top-level-list"],
)
def test_damaged_files_get_one_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TraceError, match=message):
        load_trace(path)


def test_skipped_counts_and_host_calls_resolved_as_the_parsed_dict(tmp_path):
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
    with pytest.warns(UserWarning, match="no 'ph'"):
        table = load_trace(path)
    assert_same(table, load_trace(parsed(path)))
    assert table.kind.tolist() == ["launch", "kernel", "launch"]
    assert table.meta["skipped"] == {
        "ph M": 1,
        "cpu_op": 1,
        "ph ?": 1,
        "uncategorised": 1,
        "cuda_runtime (neither launch nor sync)": 1,
    }
    assert table.meta["gpu"] == "NVIDIA H200"
    assert table.meta["host_pid"] == 1


# Hypothesis: random but plausible traces. Every id is an int or a digit string, every time a
# plain decimal with 0-3 decimals, so the quick parse of times reads each one itself.
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
    assert_same_outcome(path)
