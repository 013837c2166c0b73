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

from graphlab.language import N_
from graphlab.language import gettext as _

from .columns import ljust

# Flag -> SimParams field, for the numbers a user may override, with its help.
_PARAM_FLAGS = {
    "host_us": N_("host time per eager launch (Python + dispatch + cudaLaunchKernel)"),
    "launch_latency_us": N_("end of a launch call to the earliest start of its work on the GPU"),
    "graph_launch_us": N_("host time per replay (graph.replay() + cudaGraphLaunch)"),
    "node_gap_us": N_("device gap between dependent nodes of a replay"),
    "sync_us": N_("host time a synchronize takes once the GPU is done"),
    "kernel_gap_us": N_("device gap between queued eager kernels on a stream"),
    "replay_gap_us": N_("extra device gap before a replay queued behind earlier work"),
}
# The two runs, as the report names them.
_MODES = {"eager": N_("eager"), "graph": N_("graph")}
# Peak memory per simulated kernel, both runs and their timelines included (measured on 1,000,000
# kernels: about 560 bytes), with room to spare; a run that cannot fit is refused before it starts.
_BYTES_PER_KERNEL = 800

# Without a calibrated file these may be left out (SimParams's default applies).
_OPTIONAL = {"kernel_gap_us": "0", "replay_gap_us": "0"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kernels", type=int, required=True, metavar="N", help=_("kernels per step")
    )
    parser.add_argument(
        "--kernel-us",
        type=float,
        required=True,
        metavar="D",
        help=_("duration of each kernel (µs)"),
    )
    for name, text in _PARAM_FLAGS.items():
        flag = "--" + name.replace("_", "-")
        if name in _OPTIONAL:
            help_text = _("{help}; default: calibrated (else {value})").format(
                help=_(text), value=_OPTIONAL[name]
            )
        else:
            help_text = _("{help}; default: calibrated").format(help=_(text))
        parser.add_argument(flag, type=float, metavar="US", help=help_text)
    parser.add_argument(
        "--capture-us",
        type=float,
        metavar="C",
        help=_("capture cost for the break-even count; default: the calibrated capture model"),
    )
    parser.add_argument(
        "--sync-every",
        type=int,
        metavar="K",
        help=_("host sync after every K kernels (the graph is then one graph per K kernels)"),
    )
    parser.add_argument(
        "--queue-depth",
        type=int,
        metavar="Q",
        help=_("launches the GPU's queue holds; a launch waits for room (default: no limit)"),
    )
    parser.add_argument("--json", action="store_true", help=_("print one JSON object"))
    parser.add_argument(
        "--trace",
        metavar="OUT.json",
        help=_("also write both simulated timelines as one Chrome trace (processes eager, graph)"),
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
            _(
                "the simulator has no calibrated parameters yet (no GPU recordings have been "
                "fitted), so pass them all: missing {flags}"
            ).format(flags=" ".join(missing))
        )
    return simulator_params.SimParams(**{k: v for k, v in given.items() if v is not None})


def simulate_both(args: argparse.Namespace):
    """The :class:`~graphlab.simulator.whatif.WhatIf` for the command line's chain.

    A chain of a valid length is first checked to fit in the memory available.
    """
    from graphlab.simulator import chain
    from graphlab.simulator.model import MAX_KERNELS
    from graphlab.simulator.whatif import what_if

    if 1 <= args.kernels <= MAX_KERNELS:  # (other counts get chain()'s message)
        _check_memory(args.kernels)
    step = chain(args.kernels, args.kernel_us)
    return what_if(
        step,
        _params(args),
        sync_every=args.sync_every,
        capture_us=args.capture_us,
        queue_depth=args.queue_depth,
    )


def _report(result: dict) -> str:
    workload = result["workload"]
    lines = [
        _("simulated: {kernels:,} kernels of {duration:g} µs").format(
            kernels=workload["kernels"], duration=workload["kernel_us"]
        )
    ]
    for mode, name in _MODES.items():
        r = result[mode]
        figures = _(
            "total {total:>12,.3f} µs   per kernel {per_kernel:>9,.3f} µs   GPU idle {idle:.1%}"
        ).format(total=r["total_us"], per_kernel=r["per_kernel_us"], idle=r["idle_fraction"])
        lines.append(f"  {ljust(_(name), 6)} {figures}")
    n_star = result["break_even"]
    if result["capture_us"] is None:
        lines.append("  " + _("break-even: unknown (no capture cost: pass --capture-us)"))
    elif n_star is None:
        lines.append("  " + _("break-even: never (a replay is not faster than eager here)"))
    else:
        shown = f"{n_star:,.2f}" if n_star >= 1 else f"{n_star:.3g}"
        lines.append(
            "  "
            + _("break-even: N* = {steps} steps (capture {capture:,.1f} µs)").format(
                steps=shown, capture=result["capture_us"]
            )
        )
    numbers = ", ".join(f"{k}={v:g}" for k, v in result["params"].items() if v is not None)
    calibration = result["calibration"]
    if not calibration:
        parameters = _("parameters (given by hand): {numbers}").format(numbers=numbers)
    elif calibration.get("overridden"):
        parameters = _("parameters (calibrated on {gpu}; given: {flags}): {numbers}").format(
            gpu=calibration.get("gpu"), flags=", ".join(calibration["overridden"]), numbers=numbers
        )
    else:
        parameters = _("parameters (calibrated on {gpu}): {numbers}").format(
            gpu=calibration.get("gpu"), numbers=numbers
        )
    lines.append("  " + parameters)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from graphlab.errors import SimulatorError

    if args.trace is not None and not args.trace.strip():
        raise SimulatorError(_("--trace needs a file name, e.g. --trace sim.json"))
    outcome = simulate_both(args)
    result = outcome.to_dict()
    result["workload"]["kernel_us"] = args.kernel_us
    if args.trace is not None:
        from graphlab.support.atomic import atomic_writer
        from graphlab.trace.chrome import write_side_by_side

        with atomic_writer(args.trace, SimulatorError) as out:
            write_side_by_side(outcome.timelines, out)
    print(json.dumps(result, indent=2) if args.json else _report(result))
    return 0


def _check_memory(kernels: int) -> None:
    """Refuse, before anything is simulated, a run that cannot fit in the memory available."""
    from graphlab.errors import SimulatorError
    from graphlab.support.memory import describe_bytes, missing_bytes

    short = missing_bytes(kernels * _BYTES_PER_KERNEL)
    if short:
        needed, available = short
        raise SimulatorError(
            _(
                "simulating {kernels:,} kernels needs about {needed} of memory and {available} "
                "is available: simulate at most {most:,} kernels"
            ).format(
                kernels=kernels,
                needed=describe_bytes(needed),
                available=describe_bytes(available),
                most=available // _BYTES_PER_KERNEL,
            )
        )
