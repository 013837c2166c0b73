"""Read torch.profiler / Kineto Chrome-trace JSON into a :class:`~.events.EventTable`.

What Kineto writes (PyTorch's ``prof.export_chrome_trace(path)``): a JSON object whose
``traceEvents`` list holds complete events (``"ph": "X"``) with ``ts`` and ``dur`` in microseconds,
printed with exactly three decimals (nanoseconds), relative to ``baseTimeNanoseconds``.

- Host CUDA API calls have category ``cuda_runtime`` (``cudaLaunchKernel``, ``cudaGraphLaunch``,
  ...) or ``cuda_driver`` (``cuLaunchKernel``, as Triton calls it); ``pid``/``tid`` are the host
  process and thread; ``args.correlation`` links the call to the GPU work it submitted.
- GPU work has category ``kernel``, ``gpu_memcpy`` or ``gpu_memset``; ``pid`` is the device and
  ``tid`` the stream; ``args`` carry ``device``, ``stream``, ``correlation``, ``grid``, ``block``.
- Everything else (``cpu_op``, ``python_function``, ``user_annotation``, ``ac2g`` flow arrows,
  metadata) is not part of the table; the loader counts what it skipped in ``meta["skipped"]``.

Numbers are parsed as :class:`decimal.Decimal` and converted to integer nanoseconds, so no float
rounding can lose a nanosecond (an absolute microsecond timestamp with three decimals has 19
significant digits; a double keeps about 16).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
import zlib
from collections import Counter
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from graphlab.errors import TraceError

from .events import SCHEMA, SYNC_CALLS, EventTable, call_name, plain_json

__all__ = ["MAX_TRACE_BYTES", "load_trace", "read_json"]

# Refuse files larger than this: parsing JSON needs several times the file size in memory.
MAX_TRACE_BYTES = 2 * 1024**3

# Host calls that submit work to a stream, recognised by name even when the trace holds no GPU
# event with their correlation id (the profiler window may have closed before the work ran).
_LAUNCH_PREFIXES = (
    "cudaLaunch",
    "cuLaunch",
    "cudaGraphLaunch",
    "cuGraphLaunch",
    "cudaMemcpy",
    "cuMemcpy",
    "cudaMemset",
    "cuMemset",
)
# Largest |time| in µs accepted: 2**62 ns (about 146 years), so start + duration fits in int64.
_MAX_US = 2**62 // 1000
_DIGITS = re.compile(r"-?[0-9]{1,18}")
_GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
_HOST_CATEGORIES = {"cuda_runtime", "cuda_driver"}
_EXPORT_ADVICE = (
    "record one with torch.profiler: `with torch.profiler.profile(activities=["
    "ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof: ...` then "
    "`prof.export_chrome_trace('trace.json')`"
)


def read_json(path: str | os.PathLike) -> Any:
    """Parse a JSON (or gzipped JSON) file with floats as Decimal; TraceError when it can't."""
    p = Path(path)
    if not p.exists():
        raise TraceError(f"{p}: no such file; {_EXPORT_ADVICE}")
    if not p.is_file():
        raise TraceError(f"{p}: not a file (a folder?); pass the trace's .json file")
    size = p.stat().st_size
    if size > MAX_TRACE_BYTES:
        raise TraceError(
            f"{p}: {size / 1024**3:.1f} GiB is more than graphlab reads "
            f"({MAX_TRACE_BYTES // 1024**3} GiB): profile fewer steps "
            "(torch.profiler.schedule with active=1..3) and export again"
        )
    if size == 0:
        raise TraceError(f"{p}: the file is empty; {_EXPORT_ADVICE}")
    try:
        with p.open("rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        if gzipped:
            with gzip.open(p, "rb") as f:
                raw = f.read(MAX_TRACE_BYTES + 1)
            if len(raw) > MAX_TRACE_BYTES:
                raise TraceError(f"{p}: unpacks to more than 2 GiB; profile fewer steps")
        else:
            raw = p.read_bytes()
        return json.loads(raw, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        # A file cut short fails at its very end, or inside a string that never closes.
        truncated = exc.pos >= len(raw.rstrip()) - 1 or exc.msg.startswith("Unterminated")
        what = "ends early (truncated?)" if truncated else f"is not valid JSON ({exc.msg})"
        raise TraceError(
            f"{p}: {what} at line {exc.lineno}; re-export the trace, {_EXPORT_ADVICE}"
        ) from None
    except UnicodeDecodeError:
        raise TraceError(f"{p}: not a text JSON file; {_EXPORT_ADVICE}") from None
    except ValueError as exc:  # e.g. an integer with thousands of digits
        raise TraceError(f"{p}: holds a value no trace has ({exc}); {_EXPORT_ADVICE}") from None
    except RecursionError:
        raise TraceError(f"{p}: JSON nested too deeply to be a trace; {_EXPORT_ADVICE}") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(f"{p}: cannot be read ({exc}); check the file") from None


def load_trace(src) -> Any:
    """An event table from a Kineto trace path, parsed dict, or finished ``torch.profiler.profile``.

    A graphlab timeline (``{"schema": "graphlab.timeline/1", ...}``) is accepted as well.
    """
    if isinstance(src, (str, os.PathLike)):
        data, origin = read_json(src), str(src)
    elif isinstance(src, dict):
        data, origin = src, None
    elif hasattr(src, "export_chrome_trace"):
        data, origin = _export_profiler(src), None
    else:
        raise TraceError(
            f"cannot read a trace from {type(src).__name__}: pass a path to a Chrome-trace JSON "
            "file, its parsed dict, or a finished torch.profiler.profile"
        )
    where = f"{origin}: " if origin else ""
    if isinstance(data, dict) and data.get("schema") == SCHEMA:
        return EventTable.from_dict(data)
    if isinstance(data, dict) and str(data.get("schema", "")).startswith("graphlab."):
        raise TraceError(
            f"{where}this is a {data['schema']} file, not a trace: load recordings with "
            "graphlab.recording(name) and use its .timeline('eager' or 'graph')"
        )
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise TraceError(
            f"{where}JSON, but not a Chrome trace (no 'traceEvents' list); {_EXPORT_ADVICE}"
        )
    columns, skipped, host_pid = _table_from_events(events, where)
    if not columns["kind"]:
        found = ", ".join(f"{n} {cat}" for cat, n in skipped.most_common(4)) or "no events"
        raise TraceError(
            f"{where}the trace has no CUDA runtime or GPU events ({found}): profile with "
            "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a machine with a GPU"
        )
    meta = _meta(data, origin, skipped)
    if host_pid is not None:
        meta.setdefault("host_pid", host_pid)
    return EventTable(**columns, meta=meta)


def _export_profiler(prof) -> Any:
    """Export a finished profiler to a temp file and parse it back."""
    with tempfile.TemporaryDirectory(prefix="graphlab-trace-") as tmp:
        path = Path(tmp) / "trace.json"
        try:
            prof.export_chrome_trace(str(path))
        except (RuntimeError, AssertionError, AttributeError) as exc:
            raise TraceError(
                f"the profiler could not export its trace ({exc}): call Timeline.from_chrome_trace"
                "(prof) after the `with torch.profiler.profile(...) as prof:` block has ended"
            ) from None
        if not path.exists():
            raise TraceError(
                "the profiler wrote no trace: call Timeline.from_chrome_trace(prof) after the "
                "`with torch.profiler.profile(...) as prof:` block has ended"
            )
        return read_json(path)


def _ns(value: Any) -> int | None:
    """Kineto microseconds (int, Decimal, or float from a caller's own json.load) to int ns.

    None for anything that is not a finite number.
    """
    if isinstance(value, float):
        # repr gives the shortest decimal that reads back as this float: the text Kineto wrote.
        value = Decimal(repr(value))
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    if isinstance(value, Decimal) and (not value.is_finite() or value.adjusted() > 16):
        return None  # NaN, Infinity, or so large that arithmetic on it would overflow
    if abs(value) > _MAX_US:
        return None
    return int((Decimal(value) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def _int(value: Any, default: int = -1) -> int:
    """An int64 id from an int or a string of digits; ``default`` otherwise."""
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63:
        return value
    return default


def _table_from_events(events: list, where: str) -> tuple[dict[str, list], Counter, int | None]:
    """Columns of the table, a count of skipped events per category, and the host process id."""
    columns: dict[str, list] = {
        k: []
        for k in ("kind", "name", "start_ns", "dur_ns", "device", "stream", "thread", "correlation")
    }
    skipped: Counter = Counter()
    host_other = []  # runtime calls that are neither launch nor sync by name: (index, corr)
    host_pid = None
    for event in events:
        if not isinstance(event, dict) or event.get("ph") != "X":
            phase = event.get("ph", "?") if isinstance(event, dict) else "?"
            skipped[f"ph {phase}"] += 1
            continue
        cat = str(event.get("cat", "")).lower()
        name = str(event.get("name", ""))
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        # Timeline.to_chrome_trace writes the kind of each host event; trust only known ones.
        forced = (
            args.get("graphlab_kind") if args.get("graphlab_kind") in ("launch", "sync") else None
        )
        if cat in _GPU_CATEGORIES:
            kind = _GPU_CATEGORIES[cat]
        elif cat in _HOST_CATEGORIES:
            kind = forced or _host_kind(call_name(name))
        else:
            skipped[cat or "uncategorised"] += 1
            continue
        start, dur = _ns(event.get("ts")), _ns(event.get("dur", 0))
        if start is None or dur is None or dur < 0:
            raise TraceError(
                f"{where}event {name!r} ({cat}) has a missing, non-numeric or negative "
                f"'ts'/'dur' ({event.get('ts')!r}, {event.get('dur')!r}): the trace is damaged; "
                "re-export it"
            )
        corr = _int(args.get("correlation"))
        if kind in _GPU_CATEGORIES.values():
            device = _int(args.get("device"), _int(event.get("pid")))
            stream = _int(args.get("stream"), _int(event.get("tid")))
            thread = -1
        else:
            device = stream = -1
            thread = _int(event.get("tid"))
            if host_pid is None:
                host_pid = _int(event.get("pid"), None)
            if kind is None:
                host_other.append((len(columns["kind"]), corr))
        columns["kind"].append(kind)
        columns["name"].append(name)
        columns["start_ns"].append(start)
        columns["dur_ns"].append(dur)
        columns["device"].append(device)
        columns["stream"].append(stream)
        columns["thread"].append(thread)
        columns["correlation"].append(corr)
    _resolve_other_host_calls(columns, host_other, skipped)
    return columns, skipped, host_pid


def _host_kind(call: str) -> str | None:
    if call in SYNC_CALLS:
        return "sync"
    if call.startswith(_LAUNCH_PREFIXES):
        return "launch"
    return None


def _resolve_other_host_calls(columns: dict[str, list], others: list, skipped: Counter) -> None:
    """Keep an unnamed runtime call as a launch if GPU work carries its correlation; drop the rest.

    (cudaEventRecord, cudaGetDevice, cudaStreamIsCapturing ... submit no work of their own.)
    """
    if not others:
        return
    gpu_correlations = {
        c
        for k, c in zip(columns["kind"], columns["correlation"], strict=True)
        if k in _GPU_CATEGORIES.values() and c >= 0
    }
    drop = set()
    for index, corr in others:
        if corr >= 0 and corr in gpu_correlations:
            columns["kind"][index] = "launch"
        else:
            drop.add(index)
            skipped["cuda_runtime (neither launch nor sync)"] += 1
    if drop:
        for key, values in columns.items():
            columns[key] = [v for i, v in enumerate(values) if i not in drop]


def _meta(data: Any, origin: str | None, skipped: Counter) -> dict[str, Any]:
    """Where the table came from; a trace written by Timeline.to_chrome_trace keeps its own."""
    own = data.get("graphlab") if isinstance(data, dict) else None
    if isinstance(own, dict) and isinstance(own.get("meta"), dict):
        return plain_json(own["meta"])
    meta: dict[str, Any] = {"source": "kineto"}
    if origin:
        meta["path"] = origin
    if isinstance(data, dict):
        base = data.get("baseTimeNanoseconds")
        if isinstance(base, int):
            meta["base_time_ns"] = base
        props = data.get("deviceProperties")
        if isinstance(props, list) and props and isinstance(props[0], dict):
            names = [str(p.get("name")) for p in props if isinstance(p, dict) and p.get("name")]
            if names:
                meta["gpu"] = names[0]
                meta["gpus"] = names
    meta["skipped"] = dict(skipped)
    return meta
