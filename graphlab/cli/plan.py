"""``graphlab plan``: which batch sizes to capture for a request mix, and ``plan measure``.

``graphlab plan --hist HIST.json --costs COSTS.json`` prints the optimal plan under the
constraints, the best plan per graph count (the Pareto list) and, with ``--compare``, the same
figures for serving stacks' default lists. ``--requests requests.csv`` replaces ``--hist`` with
the decode histogram of a continuous-batching model of those requests.

The exact search grows with the candidate sizes times the graphs allowed; past
:data:`SEARCH_LIMIT` (about 5 s) it is refused up front, with what to change, rather than left
to run for minutes.

``graphlab plan measure --model decoder|mlp --sizes 1-512 --out COSTS.json`` measures a cost
table on the GPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from graphlab.language import gettext as _

from .columns import ljust

DEFAULT_MAX_GRAPHS = 32
# The exact search does one step per candidate size and graph count (twice: the optimum and the
# Pareto list), about 5 µs each in Python: 2**19 of them take about 5 s on one CPU core, and a
# million-size histogram with 32 graphs would take minutes with nothing to show. Larger plans are
# refused up front with what to change; benchmarks/planner_speed.py's largest case (8192 sizes,
# 64 graphs) is exactly at this limit.
SEARCH_LIMIT = 2**19


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--hist",
        metavar="HIST.json",
        help=_('decode steps per batch size, {"<batch size>": count}'),
    )
    source.add_argument(
        "--requests",
        metavar="REQUESTS.csv",
        help=_(
            "a request trace (arrival time, prompt tokens, output tokens) turned into a "
            "histogram by a continuous-batching model"
        ),
    )
    parser.add_argument(
        "--costs",
        metavar="COSTS.json",
        help=_("per-size replay_us, eager_us, capture_s and graph_mib (graphlab plan measure)"),
    )
    parser.add_argument(
        "--max-graphs",
        type=_whole_number,
        default=DEFAULT_MAX_GRAPHS,
        metavar="K",
        help=_("capture at most K sizes (default {default})").format(default=DEFAULT_MAX_GRAPHS),
    )
    parser.add_argument(
        "--memory-mib", type=float, metavar="M", help=_("memory budget of all graphs")
    )
    parser.add_argument(
        "--startup-s", type=float, metavar="S", help=_("start-up budget: total capture time")
    )
    parser.add_argument(
        "--multiple-of",
        type=_whole_number,
        default=1,
        metavar="M",
        help=_("captured sizes must be multiples of M (tensor parallelism, speculative tokens)"),
    )
    parser.add_argument(
        "--keep-largest",
        action="store_true",
        help=_("always capture the largest allowed size of the cost table"),
    )
    parser.add_argument(
        "--separate-pools",
        dest="shared_pool",
        action="store_false",
        help=_(
            "each graph keeps its own memory pool (memory: the sum); default: one shared pool, "
            "as vLLM and SGLang capture (memory: the largest graph's pool)"
        ),
    )
    parser.add_argument(
        "--compare",
        metavar="LIST",
        help=_("also price presets, comma-separated from: vllm, sglang, trtllm, tgi, pow2"),
    )
    parser.add_argument("--json", action="store_true", help=_("print one JSON object"))
    model = parser.add_argument_group(_("continuous-batching model (with --requests)"))
    model.add_argument("--max-batch", type=int, default=256, help=_("requests decoded at once"))
    model.add_argument("--step-ms", type=float, default=20.0, help=_("duration of one step"))
    model.add_argument(
        "--rate-scale",
        type=float,
        default=1.0,
        help=_("replay the requests at this multiple of their rate"),
    )
    model.add_argument(
        "--prefill",
        choices=("none", "separate"),
        default="none",
        help=_("none: prompts cost no step; separate: admitting requests costs prefill steps"),
    )
    model.add_argument(
        "--prefill-tokens",
        type=int,
        default=8192,
        help=_("prompt tokens one prefill step handles"),
    )

    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    measure = actions.add_parser(
        "measure",
        help=_("measure a cost table on the GPU"),
        description=_("Measure replay, eager step, capture time and graph memory per batch size."),
    )
    measure.add_argument("--model", choices=("decoder", "mlp"), default="decoder")
    measure.add_argument(
        "--sizes", default="1-512", help=_("sizes to measure, e.g. 1-512 or 1,2,4,8")
    )
    measure.add_argument("--out", required=True, metavar="COSTS.json", help=_("where to write"))
    measure.add_argument("--repeats", type=int, default=5, help=_("timed repeats per size"))
    measure.add_argument("--iterations", type=int, default=20, help=_("calls per timed repeat"))


def _whole_number(text: str) -> int:
    """An integer flag's value, at most the largest batch size the planner holds."""
    from graphlab.planner.inputs import LARGEST_SIZE

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("{text} is not a whole number").format(text=repr(text[:40]))
        ) from None
    if abs(value) > LARGEST_SIZE:
        raise argparse.ArgumentTypeError(
            _("{text} is larger than {largest:,}").format(text=text[:40], largest=LARGEST_SIZE)
        )
    return value


def run(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) == "measure":
        return _measure(args)
    from graphlab.errors import PlannerError

    if args.costs is None or (args.hist is None and args.requests is None):
        raise PlannerError(
            _(
                "give a cost table and a workload: graphlab plan --costs COSTS.json "
                "(--hist HIST.json | --requests REQUESTS.csv)"
            )
        )
    result = plan_result(args)
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


def plan_result(args: argparse.Namespace) -> dict:
    """Everything ``graphlab plan --json`` prints, as a dict."""
    from graphlab.errors import PlannerError
    from graphlab.planner.evaluate import evaluate
    from graphlab.planner.inputs import check_in_range, load_costs, load_histogram
    from graphlab.planner.optimise import Constraints, best_plan, pareto
    from graphlab.planner.presets import PRESETS, fit_to_table, preset_sizes

    constraints = _from_args(Constraints, args)
    names = []
    if args.compare is not None:
        names = [name.strip() for name in args.compare.split(",") if name.strip()]
        unknown = [name for name in names if name not in PRESETS]
        if unknown or not names:
            raise PlannerError(
                _("--compare {value}: name presets from {presets}, separated by commas").format(
                    value=repr(args.compare), presets=", ".join(PRESETS)
                )
            )
    source: dict = {}
    if args.requests is not None:
        from graphlab.planner.requests import BatchingModel, decode_histogram, read_requests

        model = _from_args(BatchingModel, args)
        requests = read_requests(args.requests)
        histogram = decode_histogram(requests, model)
        source = {
            "requests_file": str(args.requests),
            "requests": len(requests),
            "model": dataclasses.asdict(model),
        }
    else:
        histogram = load_histogram(args.hist)
        source = {"hist": str(args.hist)}
    source.update(
        steps=histogram.total,
        batch_sizes=len(histogram.sizes),
        largest_batch=int(histogram.sizes[-1]),
    )
    # Before the cost table is read: a search too large is refused without reading it.
    _check_search_size(histogram, constraints)
    costs = load_costs(args.costs)
    # Priced before planning, so a histogram beyond the cost table fails with its own message.
    costs.positions(histogram.sizes)
    check_in_range(histogram, costs)

    best = best_plan(histogram, costs, constraints)
    result = {
        "workload": source,
        "constraints": dataclasses.asdict(constraints),
        **best.to_dict(),
        "pareto": [_summary(plan) for plan in pareto(histogram, costs, constraints)],
    }
    if names:
        result["compare"] = {}
        for name in names:
            listed = preset_sizes(name)
            plan = evaluate(fit_to_table(listed, costs), histogram, costs, constraints.shared_pool)
            result["compare"][name] = {
                "preset_sizes": listed,
                **plan.to_dict(),
                "fits_budgets": plan.fits(constraints.memory_mib, constraints.startup_s),
                "within_max_graphs": plan.graphs <= constraints.max_graphs,
            }
    return result


def _check_search_size(histogram, constraints) -> None:
    """Refuse a plan whose exact search could exceed :data:`SEARCH_LIMIT` steps.

    The planner keeps at most one candidate size per batch size of the histogram, and among the
    multiples of ``--multiple-of`` at most those up to the largest batch and one above it, so
    the bound needs no cost table.
    """
    from graphlab.errors import PlannerError

    largest = int(histogram.sizes[-1])
    candidates = min(len(histogram.sizes), largest // constraints.multiple_of + 1)
    graphs = min(constraints.max_graphs, candidates)
    if candidates * graphs > SEARCH_LIMIT:
        raise PlannerError(
            _(
                "planning {sizes:,} batch sizes for up to {graphs} graphs takes {steps:,} search "
                "steps, over the {limit:,} (about 5 s) the planner allows: bucket the histogram's "
                "batch sizes, capture multiples of a step (--multiple-of) or lower --max-graphs"
            ).format(sizes=candidates, graphs=graphs, steps=candidates * graphs, limit=SEARCH_LIMIT)
        )


def _from_args(cls, args: argparse.Namespace):
    """A settings dataclass built from the flags of the same names."""
    return cls(**{field.name: getattr(args, field.name) for field in dataclasses.fields(cls)})


def _summary(plan) -> dict:
    figures = plan.to_dict()
    figures.pop("per_size")
    return figures


def report(result: dict) -> str:
    """The human-readable form of :func:`plan_result`'s figures."""
    source = result["workload"]
    origin = source.get("requests_file") or source.get("hist")
    workload = _(
        "workload: {origin}: {steps:,.0f} decode steps, {sizes} batch sizes up to {largest}"
    ).format(
        origin=origin,
        steps=source["steps"],
        sizes=source["batch_sizes"],
        largest=source["largest_batch"],
    )
    sizes = ", ".join(map(str, result["sizes"])) or _("(none: every step eager)")
    lines = [
        workload,
        _row(_("optimal"), result),
        "  " + _("sizes: {sizes}").format(sizes=sizes),
        _("pareto (best plan per graph count):"),
        *(_row("", point) for point in result["pareto"]),
    ]
    for name, figures in result.get("compare", {}).items():
        notes = []
        if not figures["fits_budgets"]:
            notes.append(_("over budget"))
        if not figures["within_max_graphs"]:
            notes.append(_("more graphs than --max-graphs"))
        lines.append(_row(name, figures) + (f"  ({', '.join(notes)})" if notes else ""))
    return "\n".join(lines)


def _row(label: str, figures: dict) -> str:
    text = _(
        "{step:>10,.2f} µs/step  {graphs:>3} graphs  hit {hit:6.1%}  padding {padding:6.1%}  "
        "capture {capture:7.2f} s  memory {memory:9,.1f} MiB"
    ).format(
        step=figures["expected_step_us"],
        graphs=figures["graphs"],
        hit=figures["hit_rate"],
        padding=figures["padding_waste"],
        capture=figures["capture_s"],
        memory=figures["memory_mib"],
    )
    return f"{ljust(label, 14)} {text}"


def _measure(args: argparse.Namespace) -> int:
    from graphlab.errors import PlannerError
    from graphlab.planner.measure import measure_costs, parse_sizes
    from graphlab.support.atomic import write_text_atomically
    from graphlab.timing.machine import machine_meta

    for flag, value in (("--repeats", args.repeats), ("--iterations", args.iterations)):
        if value < 1:
            raise PlannerError(_("{flag} is {value}: use 1 or more").format(flag=flag, value=value))
    table = measure_costs(
        args.model, parse_sizes(args.sizes), repeats=args.repeats, iterations=args.iterations
    )
    data = table.to_dict()
    command = (
        f"graphlab plan measure --model {args.model} --sizes {args.sizes} --out {args.out} "
        f"--repeats {args.repeats} --iterations {args.iterations}"
    )
    data["meta"] = {**data.get("meta", {}), **machine_meta(command)}
    write_text_atomically(args.out, json.dumps(data, indent=1) + "\n", PlannerError)
    print(
        _("wrote {path}: {count} sizes of the {model} model").format(
            path=args.out, count=len(table.sizes), model=args.model
        )
    )
    return 0
