"""Bad input is refused with one GraphlabError, never a stray exception, a traceback or a half file.

Property-based (hypothesis): traces, graphlab timelines, recordings, simulator parameters and the
CLI entries are fed damaged, truncated, mistyped, non-finite, empty and oversized input. Whatever
comes in, the only exceptions allowed out are GraphlabError subclasses; what is accepted must
analyse cleanly; the CLI exits with 0 or 2 and prints no traceback; a failed command leaves no
output file behind.
"""

from __future__ import annotations

import copy
import gzip
import json
import math
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphlab.cli import main
from graphlab.errors import GraphlabError
from graphlab.simulator import chain, eager, graph, simulate
from graphlab.simulator.params import SimParams
from graphlab.timing.recordings import recording
from graphlab.timing.results import Comparison
from graphlab.trace.events import KINDS
from graphlab.trace.timeline import Timeline

REAL_TRACE = Path(__file__).parent / "traces" / "h200_eager8_then_replay8.json"
PARAMS = ("host_us", "launch_latency_us", "graph_launch_us", "node_gap_us", "sync_us")

settings.register_profile(
    "bad_input",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("bad_input")

# -- strategies -----------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def mostly(plausible):
    """Usually a plausible value, sometimes any JSON value at all."""
    return st.one_of(plausible, plausible, plausible, json_values)


numbers = st.integers(min_value=-5, max_value=10**7) | st.floats(
    allow_nan=True, allow_infinity=True
)
trace_events = st.fixed_dictionaries(
    {},
    optional={
        "ph": mostly(st.sampled_from(["X", "X", "X", "i", "M", "f"])),
        "cat": mostly(
            st.sampled_from(
                ["kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cpu_op"]
            )
        ),
        "name": mostly(
            st.sampled_from(
                [
                    "cudaLaunchKernel",
                    "cudaGraphLaunch",
                    "cudaDeviceSynchronize",
                    "cudaEventRecord",
                    "void k<float>()",
                    "<script>alert(1)</script>",
                ]
            )
        ),
        "ts": mostly(numbers),
        "dur": mostly(numbers),
        "pid": mostly(st.integers(-1, 8) | st.sampled_from(["0", "-1", "--5", "²", "7a"])),
        "tid": mostly(st.integers(-1, 8) | st.sampled_from(["3", "", "x"])),
        "args": mostly(
            st.fixed_dictionaries(
                {},
                optional={
                    "correlation": mostly(st.integers(-1, 30)),
                    "device": mostly(st.integers(-1, 3)),
                    "stream": mostly(st.integers(-1, 20)),
                    "graphlab_kind": mostly(st.sampled_from(KINDS)),
                },
            )
        ),
    },
)
chrome_traces = st.one_of(
    st.fixed_dictionaries(
        {"traceEvents": st.lists(trace_events, max_size=25)},
        optional={
            "baseTimeNanoseconds": mostly(st.integers(0, 2**62)),
            "deviceProperties": json_values,
            "graphlab": json_values,
            "schema": mostly(st.sampled_from(["graphlab.timeline/1", "graphlab.timeline/9"])),
        },
    ),
    st.lists(trace_events, max_size=10),
    json_values,
)


def outcome(fn):
    """fn's result, or the GraphlabError it raised. Any other exception fails the test."""
    try:
        return fn()
    except GraphlabError as exc:
        assert str(exc).strip(), "a GraphlabError must say what is wrong"
        return exc


def check_analysis(timeline: Timeline) -> None:
    """An accepted timeline analyses to finite, consistent, JSON-clean figures."""
    figures = outcome(lambda: timeline.summary().to_dict())
    if isinstance(figures, GraphlabError):
        return
    json.dumps(figures, allow_nan=False)  # `graphlab gaps --json` must print valid JSON
    if figures["span_us"]:
        assert math.isclose(figures["busy_us"] + figures["idle_us"], figures["span_us"])
        assert 0.0 <= figures["idle_fraction"] <= 1.0
    assert figures["gaps"]["count"] >= 0


def mutations(document):
    """Strategy: ``document`` with one value somewhere replaced by junk, or one key removed."""
    paths = []

    def walk(node, path):
        paths.append(path)
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node[:3]):
                walk(value, (*path, index))

    walk(document, ())

    def apply(choice):
        path, junk, delete = choice
        doc = copy.deepcopy(document)
        if not path:
            return junk
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if delete and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = junk
        return doc

    return st.tuples(st.sampled_from(paths), json_values, st.booleans()).map(apply)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("bad_input")


# -- traces ---------------------------------------------------------------------------------------


@given(chrome_traces)
@example(
    {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "pid": "--5"}]}
)
@example(
    {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "tid": "²"}]}
)
@example(
    {
        "traceEvents": [
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "k",
                "ts": 1,
                "dur": 1,
                "args": {"graphlab_kind": [1]},
            },
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 2, "dur": 1},
        ]
    }
)
@example({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "dur": -0.5}]})
@example({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": float("nan")}]})
@example({"traceEvents": []})
def test_chrome_trace_dicts(trace):
    result = outcome(lambda: Timeline.from_chrome_trace(trace))
    if isinstance(result, Timeline):
        assert len(result) > 0
        assert (result.dur_ns >= 0).all()
        check_analysis(result)


REAL_BYTES = REAL_TRACE.read_bytes()


@given(st.integers(min_value=0, max_value=len(REAL_BYTES) - 1), st.booleans())
def test_truncated_real_trace_file(workdir, cut, gzipped):
    data = REAL_BYTES[:cut]
    path = workdir / ("cut.json.gz" if gzipped else "cut.json")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    result = outcome(lambda: Timeline.from_chrome_trace(path))
    if isinstance(result, Timeline):
        check_analysis(result)
    if cut < len(REAL_BYTES.rstrip()):  # a cut file is never valid JSON
        assert isinstance(result, GraphlabError)


@given(st.binary(max_size=200))
@example(b"")
@example(b"\x1f\x8b\x08\x00garbage")
@example(b'{"traceEvents": [{"ph": "X", "ts": ' + b"1" * 5000 + b"}]}")
@example(b"[" * 100_000 + b"]" * 100_000)
@example("\ufeff{}".encode())
def test_arbitrary_bytes_as_trace_file(workdir, data):
    path = workdir / "bytes.json"
    path.write_bytes(data)
    outcome(lambda: Timeline.from_chrome_trace(path))
    outcome(lambda: Timeline.load(path))


def test_missing_file_and_folder(workdir):
    assert isinstance(
        outcome(lambda: Timeline.from_chrome_trace(workdir / "nope.json")), GraphlabError
    )
    assert isinstance(outcome(lambda: Timeline.from_chrome_trace(workdir)), GraphlabError)


def test_huge_file_is_refused_without_reading_it(workdir, monkeypatch):
    import graphlab.trace.kineto

    path = workdir / "huge.json"
    path.write_bytes(b'{"traceEvents": []}' + b" " * 4096)
    monkeypatch.setattr(graphlab.trace.kineto, "MAX_TRACE_BYTES", 1024)
    result = outcome(lambda: Timeline.from_chrome_trace(path))
    assert isinstance(result, GraphlabError)
    assert "more than graphlab reads" in str(result)


# -- graphlab timelines ---------------------------------------------------------------------------

TIMELINE_DICT = Timeline.from_chrome_trace(REAL_TRACE).to_dict()


@given(mutations(TIMELINE_DICT))
def test_damaged_timeline_dicts(doc):
    result = outcome(lambda: Timeline.from_dict(doc))
    if isinstance(result, Timeline):
        check_analysis(result)


@given(mutations(TIMELINE_DICT))
def test_damaged_timeline_files(workdir, doc):
    path = workdir / "timeline.json"
    try:
        path.write_text(json.dumps(doc))
    except ValueError:  # junk that JSON cannot hold (circular) is not a file anyone can have
        return
    result = outcome(lambda: Timeline.load(path))
    if isinstance(result, Timeline):
        check_analysis(result)


# -- the analysis over any well-formed table ------------------------------------------------

events = st.tuples(
    st.sampled_from(KINDS),
    st.sampled_from(["cudaLaunchKernel", "cudaGraphLaunch", "cudaDeviceSynchronize", "k1", "k2"]),
    st.integers(0, 10**6),
    st.integers(0, 10**4),
    st.integers(-1, 1),
    st.integers(-1, 3),
    st.integers(-1, 2),
    st.integers(-1, 6),
)


@given(st.lists(events, max_size=40))
def test_analysis_of_any_table(rows):
    columns = list(zip(*rows, strict=True)) if rows else [[]] * 8
    names = ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")
    timeline = Timeline(**dict(zip(names, columns, strict=True)))
    check_analysis(timeline)


# -- recordings -----------------------------------------------------------------------------------


def fixture_recording() -> dict:
    """A well-formed recording document. A TEST FIXTURE: no number in it was measured."""
    small = Timeline.from_chrome_trace(REAL_TRACE).to_dict()
    return {
        "schema": "graphlab.recording/1",
        "name": "fixture",
        "meta": {
            "gpu": "FIXTURE GPU (test data, not a measurement)",
            "driver": "0",
            "torch": "0",
            "cuda": "0",
            "python": "3",
            "date": "2026-12-02T00:00:00Z",
            "graphlab": "0",
            "command": "none: hand-written test fixture",
        },
        "experiment": {"kind": "chain", "kernels": 8, "numel": 4096},
        "timings": Comparison(
            capture_us=1.0,
            first_replay_us=1.0,
            eager_us=1.0,
            replay_us=1.0,
            eager_end_to_end_us=1.0,
            replay_end_to_end_us=1.0,
            eager_spread_us=(1.0, 1.0),
            replay_spread_us=(1.0, 1.0),
            repeats=1,
            iterations=1,
            break_even=None,
        ).to_dict(),
        "timelines": {"eager": small, "graph": small},
    }


def load_and_use(folder: Path, name: str = "fixture"):
    rec = recording(name, directory=folder)
    check_analysis(rec.timeline("eager"))
    check_analysis(rec.timeline("graph"))
    return rec.label, repr(rec)


def test_fixture_recording_loads(workdir):
    folder = workdir / "good"
    folder.mkdir(exist_ok=True)
    (folder / "fixture.json").write_text(json.dumps(fixture_recording()))
    label, _ = load_and_use(folder)
    assert label.startswith("recorded on FIXTURE GPU (test data, not a measurement)")


@given(mutations(fixture_recording()))
def test_damaged_recordings(workdir, doc):
    folder = workdir / "recordings"
    folder.mkdir(exist_ok=True)
    try:
        (folder / "fixture.json").write_text(json.dumps(doc))
    except ValueError:
        return
    outcome(lambda: load_and_use(folder))


@given(
    st.binary(max_size=300)
    | st.integers(0, 4000).map(lambda n: json.dumps(fixture_recording()).encode()[:n])
)
@example(b"[" * 100_000)
@example(b'{"schema": ' + b"7" * 5000 + b"}")
def test_recording_files_of_any_bytes(workdir, data):
    folder = workdir / "raw_recordings"
    folder.mkdir(exist_ok=True)
    (folder / "fixture.json").write_bytes(data)
    outcome(lambda: load_and_use(folder))


@given(json_values)
def test_recording_names(name):
    outcome(lambda: recording(name))


# -- simulator parameters ------------------------------------------------------------------

durations = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.text(max_size=6)
    | st.none()
    | st.just([1.0])
)


@given(st.fixed_dictionaries({name: durations for name in PARAMS}))
@example(dict.fromkeys(PARAMS, 10**400))
def test_simulator_parameters(values):
    outcome(lambda: SimParams(**values))


@given(
    st.integers(-3, 300) | st.floats(allow_nan=True) | st.text(max_size=3),
    durations,
    st.none() | st.integers(-2, 50),
    st.fixed_dictionaries({name: st.floats(0, 50) for name in PARAMS}),
)
def test_simulating_any_workload(kernels, kernel_us, sync_every, values):
    def run():
        params = SimParams(**values)
        step = chain(kernels, kernel_us)
        for build in (eager, graph):
            check_analysis(simulate(build(step, params, sync_every=sync_every)))

    outcome(run)


# -- the command line ----------------------------------------------------------------------


def run_cli(argv, capsys):
    """Exit status and captured output of ``graphlab ARGV``, however it ends."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse's usage errors
        status = exit_.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@given(st.binary(max_size=120) | st.integers(0, len(REAL_BYTES)).map(lambda n: REAL_BYTES[:n]))
@example(b"[" * 100_000)
def test_cli_gaps_on_any_file(workdir, capsys, data):
    path = workdir / "cli_trace.json"
    path.write_bytes(data)
    status, out, err = run_cli(["gaps", path, "--json"], capsys)
    assert status in (0, 2)
    if status == 2:
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("graphlab gaps: ")
    else:
        json.loads(out, parse_constant=pytest.fail)  # NaN/Infinity are not JSON


def test_cli_gaps_on_the_real_trace(capsys):
    status, out, _ = run_cli(["gaps", REAL_TRACE, "--json"], capsys)
    assert status == 0
    assert json.loads(out)["kernels"] == 16  # 8 eager + 8 replayed, counted in the trace by hand


numeric_text = st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e400", "abc", "", "2.5", "10"])


@given(
    st.fixed_dictionaries(
        {"--kernels": numeric_text, "--kernel-us": numeric_text},
        optional={f"--{p.replace('_', '-')}": numeric_text for p in PARAMS}
        | {"--capture-us": numeric_text, "--sync-every": numeric_text},
    )
)
def test_cli_simulate_with_any_numbers(workdir, capsys, flags):
    trace = workdir / "sim_trace.json"
    trace.unlink(missing_ok=True)
    argv = ["simulate", "--json", "--trace", trace]
    for flag, value in flags.items():
        argv += [f"{flag}={value}"]
    status, out, err = run_cli(argv, capsys)
    assert status in (0, 2)
    if status == 2:
        assert out == ""
        assert not trace.exists(), "a failed command must leave no output file"
        assert err.strip().splitlines()[-1].startswith("graphlab simulate: ")
        assert not list(workdir.glob(".sim_trace.json.*")), "a temp file was left behind"
    else:
        json.loads(out, parse_constant=pytest.fail)
        json.loads(trace.read_text())


# -- notebook checkers ----------------------------------------------------------------------------

tensors = st.builds(
    lambda shape, dtype, fill: torch.full(shape, fill).to(dtype),
    st.lists(st.integers(0, 5), max_size=3).map(tuple),
    st.sampled_from([torch.float32, torch.float64, torch.int64, torch.bool]),
    st.floats(allow_nan=True, allow_infinity=True, width=32) | st.integers(-3, 3),
)
answers = st.recursive(
    scalars | tensors,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.integers(0, 9), inner, max_size=3)
    ),
    max_leaves=8,
)
raised = st.sampled_from(
    [
        ValueError("bad value"),
        KeyError("missing"),
        ZeroDivisionError("division by zero"),
        TypeError("wrong type"),
        IndexError("out of range"),
        AttributeError("no attribute"),
        RuntimeError("CUDA error: operation not permitted when stream is capturing"),
        RecursionError("maximum recursion depth exceeded"),
    ]
)


def learner(behaviour):
    """A learner's function that ignores its arguments and returns, or raises, ``behaviour``."""

    def answer(*args, **kwargs):
        if isinstance(behaviour, BaseException):
            raise behaviour
        return behaviour

    return answer


def checkers():
    """Every ``check_*`` defined in a module of graphlab.checks, found by walking the package, so
    that a checker added later is covered without being listed here."""
    import importlib
    import pkgutil

    import graphlab.checks

    found = {}
    for info in pkgutil.iter_modules(graphlab.checks.__path__):
        module = importlib.import_module(f"graphlab.checks.{info.name}")
        for name, value in vars(module).items():
            if name.startswith("check_") and getattr(value, "__module__", "") == module.__name__:
                found[name] = value
    return [found[name] for name in sorted(found)]


def learners_of(check) -> list[str]:
    """The names of the learner's functions that ``check`` takes, as its failures name them."""
    import inspect

    return list(inspect.signature(check.__wrapped__).parameters)


def test_every_checker_is_exported_and_takes_learner_functions():
    import graphlab.checks

    assert [c.__name__ for c in checkers()] == sorted(graphlab.checks.__all__)
    assert len(checkers()) == 21  # the lessons' table in graphlab/checks/__init__.py, counted
    assert {len(learners_of(c)) for c in checkers()} == {1, 2}


@pytest.mark.parametrize("check", checkers(), ids=lambda c: c.__name__)
@settings(max_examples=40)
@given(behaviours=st.lists(answers | raised, min_size=2, max_size=2))
def test_checkers_refuse_any_wrong_answer_with_checkfailed(check, behaviours, capsys):
    """A wrong answer, of any type, is refused with one CheckFailed that names the exercise and
    the section to reread; never accepted, never another exception."""
    from graphlab.errors import CheckFailed

    names = learners_of(check)
    with pytest.raises(CheckFailed) as info:
        check(*[learner(b) for b, _ in zip(behaviours, names, strict=False)], record=False)
    failure = info.value
    assert str(failure).strip()
    assert failure.exercise == " and ".join(names)
    assert failure.reread.startswith("lesson ")
    assert "PASSED" not in capsys.readouterr().out


# -- output files ---------------------------------------------------------------------------------


def _not_regular_targets(folder: Path) -> dict[str, Path]:
    """Paths a writer must refuse: a folder, a named pipe, and a path under a regular file."""
    import os

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a_folder").mkdir(exist_ok=True)
    pipe = folder / "a_pipe.json"
    if not pipe.exists():
        os.mkfifo(pipe)
    (folder / "a_file").write_text("keep me")
    return {
        "folder": folder / "a_folder",
        "pipe": pipe,
        "under_a_file": folder / "a_file" / "out.json",
    }


def _unchanged(folder: Path) -> None:
    import stat

    assert (folder / "a_folder").is_dir()
    assert stat.S_ISFIFO((folder / "a_pipe.json").stat().st_mode), "a pipe was replaced"
    assert (folder / "a_file").read_text() == "keep me"
    assert not [p.name for p in folder.rglob("*.tmp")], "a temp file was left behind"


@pytest.mark.parametrize("writer", ["save", "to_chrome_trace"])
def test_timeline_writers_refuse_paths_that_are_not_files(tmp_path, writer):
    timeline = Timeline.from_chrome_trace(REAL_TRACE)
    for target in _not_regular_targets(tmp_path).values():
        with pytest.raises(GraphlabError):
            getattr(timeline, writer)(target)
    _unchanged(tmp_path)
    written = getattr(timeline, writer)(tmp_path / "new" / "out.json")
    assert len(Timeline.from_chrome_trace(written)) == len(timeline)


def test_recording_writer_refuses_paths_that_are_not_folders(tmp_path):
    from graphlab.timing.experiments import write_recording

    targets = _not_regular_targets(tmp_path)
    for target in (targets["pipe"], tmp_path / "a_file"):
        with pytest.raises(GraphlabError):
            write_recording(fixture_recording(), target)
    _unchanged(tmp_path)


# -- the progress store under a checker -----------------------------------------------------------

NESTED_JSON = "[" * 100_000 + "]" * 100_000


def store_failures():
    """What a progress store may raise: its own one line, or errors nobody foresaw."""
    return [
        RecursionError("maximum recursion depth exceeded while decoding a JSON array"),
        MemoryError(),
        KeyError("lessons"),
        UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"),
        ValueError("I/O operation on closed file"),
    ]


@pytest.mark.parametrize("failure", store_failures(), ids=lambda e: type(e).__name__)
def test_a_checkers_verdict_never_depends_on_the_progress_store(monkeypatch, capsys, failure):
    from right_answers import busy_fraction

    from graphlab.checks import _feedback
    from graphlab.checks.start_here import check_busy_fraction
    from graphlab.errors import CheckFailed

    def broken(*result):
        raise failure

    monkeypatch.setattr(_feedback, "_progress", lambda: type("P", (), {"record": broken}))
    says = f"^graphlab could not save your progress: {type(failure).__name__}: "
    with pytest.warns(UserWarning, match=says):
        check_busy_fraction(busy_fraction)
    assert capsys.readouterr().out.startswith("PASSED")
    with pytest.warns(UserWarning, match=says), pytest.raises(CheckFailed):
        check_busy_fraction(learner(0.5))


def test_a_checker_with_a_nested_progress_file_keeps_its_verdict(monkeypatch, tmp_path, capsys):
    from right_answers import busy_fraction

    from graphlab.checks.start_here import check_busy_fraction
    from graphlab.course import progress

    monkeypatch.undo()  # the real progress store, in a file of this test's own
    store = tmp_path / "progress.json"
    store.write_text(NESTED_JSON)
    monkeypatch.setenv(progress.ENV, str(store))
    with pytest.warns(UserWarning) as warned:
        check_busy_fraction(busy_fraction)
    assert capsys.readouterr().out.startswith("PASSED")
    assert [str(w.message) for w in warned] == [
        f"graphlab could not save your progress: {store} is not a graphlab progress file: move "
        "it away, or forget every result with `graphlab progress --reset` (which keeps this "
        "file under another name)"
    ]
    assert store.read_text() == NESTED_JSON


# -- the shared JSON reader -----------------------------------------------------------------------


class _Refused(GraphlabError):
    pass


@settings(max_examples=300)
@given(st.text() | st.binary() | st.builds(lambda v: json.dumps(v), json_values))
@example('{"a": ' * 50_000 + "1" + "}" * 50_000)
@example("[" * 100_000 + "]" * 100_000)
@example("[" * 101 + "]" * 101)
@example("1" + "0" * 5000)
@example(b"\xef\xbb\xbf{}")
@example('{"a": 1}'.encode("utf-16"))
@example(b'"\xed\xa0\x80"')  # a UTF-16 surrogate written as UTF-8
@example("1e999999")
@example('"' + "\\" * 10_001 + '"')
def test_the_json_reader_returns_a_value_or_one_line(text):
    from graphlab.support.json_text import MAX_DEPTH, parse_json

    try:
        value = parse_json(text, "f.json", _Refused, "write it again")
    except _Refused as exc:
        message = str(exc)
        assert message.startswith("f.json ") and message.endswith(": write it again")
        assert "\n" not in message
        return
    json.dumps(value)  # what was accepted can be written back
    depth, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            depth = max(depth, level)
            stack.extend(
                (c, level + 1) for c in (item.values() if isinstance(item, dict) else item)
            )
    assert depth <= MAX_DEPTH
