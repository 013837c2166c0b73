"""``graphlab simulate``: a chain of kernels run eagerly and as a graph replay, simulated.

The same N kernels are run once eagerly (N launches, then a sync) and once as one replay of a
captured graph (one launch, then a sync), with the calibrated H200 parameters unless flags
override them. It prints the total, the cost per kernel and the GPU's idle fraction for each,
and the break-even count N* = C / (t_eager - t_replay): how many steps a capture costing C needs
to pay for itself. C comes from the calibrated capture model (a fixed part plus a part per
kernel, fitted to the capture times measured with the recordings) unless --capture-us is given.
"""

from __future__ import annotations

import argparse
import json

HELP = "Simulate N kernels eager vs one graph replay: totals, idle time, break-even."

# Flag -> SimParams field, for the numbers a user may override.
_PARAM_FLAGS = {
    "host_us": "host time per eager launch (Python + dispatch + cudaLaunchKernel)",
    "launch_latency_us": "end of a launch call to the earliest start of its work on the GPU",
    "graph_launch_us": "host time per replay (graph.replay() + cudaGraphLaunch)",
    "node_gap_us": "device gap between dependent nodes of a replay",
    "sync_us": "host time a synchronize takes once the GPU is done",
    "kernel_gap_us": "device gap between queued eager kernels on a stream",
    "replay_gap_us": "extra device gap before a replay queued behind earlier work",
}
_STREAM_TID = 1000  # thread id of stream s in the combined trace: 1000 + s

# Without a calibrated file these may be left out (SimParams's default applies).
_OPTIONAL = {"kernel_gap_us": "0", "replay_gap_us": "0"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernels", type=int, required=True, metavar="N", help="kernels per step")
    parser.add_argument(
        "--kernel-us", type=float, required=True, metavar="D", help="duration of each kernel (µs)"
    )
    for name, text in _PARAM_FLAGS.items():
        flag = "--" + name.replace("_", "-")
        default = "calibrated" + (f" (else {_OPTIONAL[name]})" if name in _OPTIONAL else "")
        parser.add_argument(flag, type=float, metavar="US", help=f"{text}; default: {default}")
    parser.add_argument(
        "--capture-us",
        type=float,
        metavar="C",
        help="capture cost for the break-even count; default: the calibrated capture model",
    )
    parser.add_argument(
        "--sync-every",
        type=int,
        metavar="K",
        help="host sync after every K kernels (the graph is then one graph per K kernels)",
    )
    parser.add_argument(
        "--queue-depth",
        type=int,
        metavar="Q",
        help="launches the GPU's queue holds; a launch waits for room (default: no limit)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--trace",
        metavar="OUT.json",
        help="also write both simulated timelines as one Chrome trace (processes eager, graph)",
    )


def _params(args: argparse.Namespace):
    """Calibrated parameters with the user's overrides; without calibration, all must be given."""
    from graphlab.errors import SimulatorError
    from graphlab.simulator import params as simulator_params

    given = {name: getattr(args, name) for name in _PARAM_FLAGS}
    if simulator_params.CALIBRATED_PATH.exists():
        return simulator_params.calibrated().replace(**given)
    missing = [
        "--" + name.replace("_", "-")
        for name, value in given.items()
        if value is None and name not in _OPTIONAL
    ]
    if missing:
        raise SimulatorError(
            "the simulator has no calibrated parameters yet (no GPU recordings have been fitted), "
            f"so pass them all: missing {' '.join(missing)}"
        )
    return simulator_params.SimParams(**{k: v for k, v in given.items() if v is not None})


def simulate_both(args: argparse.Namespace):
    """The :class:`~graphlab.simulator.whatif.WhatIf` for the command line's chain."""
    from graphlab.simulator import chain
    from graphlab.simulator.whatif import what_if

    step = chain(args.kernels, args.kernel_us)
    return what_if(
        step,
        _params(args),
        sync_every=args.sync_every,
        capture_us=args.capture_us,
        queue_depth=args.queue_depth,
    )


def combined_chrome_trace(timelines: dict) -> dict:
    """One Chrome trace holding several timelines, one process per name (``eager``, ``graph``).

    Each timeline's own export is reused; its events move to the process of its name, with the
    host thread and each GPU stream as labelled threads. All runs start at time 0, side by side,
    for viewing (Perfetto, chrome://tracing); correlation ids are shifted so that each stays
    unique in the file and still links a launch to its own kernels.
    """
    events = []
    shift = 0
    for pid, (label, timeline) in enumerate(timelines.items(), start=1):
        trace = json.loads(timeline.to_chrome_trace())
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": label}})
        lanes = {}
        for event in trace["traceEvents"]:
            if event.get("ph") != "X":
                continue
            # Streams and host threads share one process here: keep their thread ids apart.
            stream = event["args"].get("stream")
            if stream is None:
                tid, lanes[event["tid"]] = event["tid"], f"host thread {event['tid']}"
            else:
                tid = _STREAM_TID + stream
                lanes[tid] = f"stream {stream}"
            args = dict(event["args"])
            if "correlation" in args:
                args["correlation"] += shift
            events.append({**event, "pid": pid, "tid": tid, "args": args})
        shift += int(timeline.correlation.max()) + 1 if len(timeline) else 0
        events.extend(
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": lane}}
            for tid, lane in lanes.items()
        )
    return {"displayTimeUnit": "ns", "traceEvents": events}


def _report(result: dict) -> str:
    workload = result["workload"]
    lines = [f"simulated: {workload['kernels']:,} kernels of {workload['kernel_us']:g} µs"]
    for mode in ("eager", "graph"):
        r = result[mode]
        lines.append(
            f"  {mode:<6} total {r['total_us']:>12,.3f} µs   per kernel "
            f"{r['per_kernel_us']:>9,.3f} µs   GPU idle {r['idle_fraction']:.1%}"
        )
    n_star = result["break_even"]
    if result["capture_us"] is None:
        lines.append("  break-even: unknown (no capture cost: pass --capture-us)")
    elif n_star is None:
        lines.append("  break-even: never (a replay is not faster than eager here)")
    else:
        shown = f"{n_star:,.2f}" if n_star >= 1 else f"{n_star:.3g}"
        lines.append(f"  break-even: N* = {shown} steps (capture {result['capture_us']:,.1f} µs)")
    calibration = result["calibration"]
    source = "given by hand"
    if calibration:
        source = f"calibrated on {calibration.get('gpu')}"
        if calibration.get("overridden"):
            source += f"; given: {', '.join(calibration['overridden'])}"
    numbers = ", ".join(f"{k}={v:g}" for k, v in result["params"].items() if v is not None)
    lines.append(f"  parameters ({source}): {numbers}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    outcome = simulate_both(args)
    result = outcome.to_dict()
    result["workload"]["kernel_us"] = args.kernel_us
    if args.trace:
        from graphlab.errors import SimulatorError
        from graphlab.support.atomic import write_text_atomically

        text = json.dumps(combined_chrome_trace(outcome.timelines), separators=(",", ":"))
        write_text_atomically(args.trace, text, SimulatorError)
    print(json.dumps(result, indent=2) if args.json else _report(result))
    return 0
