"""Does GPU memory stay flat when the course's experiments run again and again? (needs a GPU)

A workshop runs every notebook top to bottom, often more than once, in one kernel. If an
experiment kept its graphs or their private memory pools alive, reserved memory would climb with
every run until the card is full. This benchmark runs, ROUNDS times in one process, every timing
experiment of ``graphlab record`` (the quick set unless ``--full``) and every fidelity scenario
(tests/fidelity/scenarios.py), and prints after each round the memory the caching allocator
reserves and the memory live tensors hold. It ends with the growth of reserved memory after round
1 (target: under 5 %) and the peak reserved, which must fit a 16 GB card.

Run from the project root on the GPU machine::

    python benchmarks/memory_rounds.py                    # quick experiments, 10 rounds
    python benchmarks/memory_rounds.py --full --json $OUT/memory_rounds.json
    python benchmarks/memory_rounds.py --card-gb 16     # as if on a 16 GB card

The figures of the last runs on the H200 are in ``benchmarks/results/``: ``memory_rounds_h200.json``
(quick, 10 rounds), ``memory_rounds_fidelity_h200.json`` (``--only fidelity``) and
``memory_rounds_full_16gb_h200.json`` (``--full --rounds 3 --card-gb 16``).

Exit status 0 when the growth is under the target, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
TARGET_GROWTH = 0.05
SMALL_CARD_BYTES = 16 * 10**9  # a "16 GB" card, in the vendor's decimal gigabytes
MIB = 2**20


def experiments(full: bool) -> dict[str, Callable[[], object]]:
    """Name -> a callable running one experiment to completion and dropping what it made."""
    from graphlab.timing.experiments import experiments as record_experiments
    from graphlab.timing.experiments import measure_experiment

    sys.path.insert(0, str(ROOT / "tests" / "fidelity"))
    import scenarios

    runs: dict[str, Callable[[], object]] = {
        f"record:{exp.name}": (lambda exp=exp: measure_experiment(exp))
        for exp in record_experiments(quick=not full)
    }
    for name, scenario in scenarios.SCENARIOS.items():
        runs[f"fidelity:{name}"] = lambda scenario=scenario: scenario(torch.cuda, "cuda")
    return runs


def settled() -> tuple[int, int]:
    """(reserved, allocated) bytes once the GPU is idle and Python has dropped its garbage."""
    torch.cuda.synchronize()
    gc.collect()
    return torch.cuda.memory_reserved(), torch.cuda.memory_allocated()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="how many times to run them all")
    parser.add_argument("--full", action="store_true", help="all record experiments, not --quick")
    parser.add_argument("--json", metavar="OUT.json", help="also write the figures as JSON")
    parser.add_argument(
        "--only", choices=["record", "fidelity"], help="run only that group of experiments"
    )
    parser.add_argument(
        "--card-gb",
        type=float,
        metavar="GB",
        help="behave like a card of GB gigabytes (torch.cuda.set_per_process_memory_fraction)",
    )
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("memory_rounds: needs a CUDA GPU (measures GPU memory); nothing measured")
        return 2
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (growth is measured after round 1)")

    if args.card_gb:
        total = torch.cuda.mem_get_info()[1]
        torch.cuda.set_per_process_memory_fraction(min(1.0, args.card_gb * 1e9 / total))
        print(f"memory capped at {args.card_gb:g} GB, as on a card of that size")
    runs = experiments(args.full)
    if args.only:
        runs = {name: run for name, run in runs.items() if name.startswith(f"{args.only}:")}
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {len(runs)} experiments")
    # MiB of reserved memory each run of an experiment added (negative: it let some go), and of
    # allocated memory: live tensors (or cuBLAS workspaces) rather than the allocator's cache.
    per_experiment: dict[str, list[float]] = {name: [] for name in runs}
    allocated_per_experiment: dict[str, list[float]] = {name: [] for name in runs}
    failures: dict[str, str] = {}
    rounds = []
    torch.cuda.reset_peak_memory_stats()
    for r in range(1, args.rounds + 1):
        start = time.perf_counter()
        for name, run in runs.items():
            torch.cuda.synchronize()  # reserved memory does not depend on garbage collection
            before = torch.cuda.memory_reserved()
            allocated_before = torch.cuda.memory_allocated()
            try:
                run()
            except Exception as exc:  # report and go on: the point is what memory does
                failures.setdefault(name, f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
            torch.cuda.synchronize()
            per_experiment[name].append((torch.cuda.memory_reserved() - before) / MIB)
            allocated_per_experiment[name].append(
                (torch.cuda.memory_allocated() - allocated_before) / MIB
            )
        reserved, allocated = settled()
        rounds.append(
            {
                "round": r,
                "reserved_mib": reserved / MIB,
                "allocated_mib": allocated / MIB,
                "seconds": time.perf_counter() - start,
            }
        )
        first = rounds[0]["reserved_mib"]
        growth = (reserved / MIB - first) / first if first else 0.0
        print(
            f"round {r:>2}: reserved {reserved / MIB:10.1f} MiB   allocated "
            f"{allocated / MIB:10.1f} MiB   growth since round 1 {growth:+7.2%}   "
            f"({rounds[-1]['seconds']:.1f} s)"
        )

    first, last = rounds[0]["reserved_mib"], rounds[-1]["reserved_mib"]
    growth = (last - first) / first if first else 0.0
    peak = torch.cuda.max_memory_reserved()
    # What each experiment added over rounds 2..N: the part round 1's warm-up does not explain.
    growers = sorted(
        ((sum(values[1:]), name) for name, values in per_experiment.items()), reverse=True
    )
    print(f"\nreserved after round 1: {first:.1f} MiB; after round {args.rounds}: {last:.1f} MiB")
    print(f"growth after round 1: {growth:+.2%} (target < {TARGET_GROWTH:.0%})")
    print(
        f"peak reserved: {peak / MIB:.1f} MiB "
        f"({'fits' if peak < SMALL_CARD_BYTES else 'does NOT fit'} a 16 GB card)"
    )
    print(f"reserved memory added by each experiment over rounds 2-{args.rounds} (largest first):")
    for delta, name in growers[:8]:
        allocated = sum(allocated_per_experiment[name][1:])
        print(f"  {name:<45} {delta:+9.1f} MiB   (allocated {allocated:+9.1f} MiB)")
    for group in ("record", "fidelity"):
        total = sum(d for d, name in growers if name.startswith(f"{group}:"))
        print(f"  all {group} experiments together: {total:+.1f} MiB")
    for name, message in failures.items():
        print(f"FAILED {name}: {message}")

    if args.json:
        figures = {
            "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "full": args.full,
            "card_gb": args.card_gb,
            "rounds": rounds,
            "growth_after_round_1": growth,
            "target_growth": TARGET_GROWTH,
            "peak_reserved_mib": peak / MIB,
            "reserved_added_per_run_mib": per_experiment,
            "allocated_added_per_run_mib": allocated_per_experiment,
            "failures": failures,
        }
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0 if growth < TARGET_GROWTH else 1


if __name__ == "__main__":
    sys.exit(main())
