"""What to do, with the evidence: a full graph, piecewise, reduce-overhead, or not worth it.

The rules, in order:

1. Blockers found: fixing them all gives a full graph; until then, a piecewise capture (the
   parts between the blocking lines captured, those lines run eagerly) is the way to start.
2. Captured, but a replay is no faster end to end, or the GPU is rarely idle (GPU-bound): not
   worth it, a graph only removes launch gaps.
3. Captured and faster, but paying for the capture takes more calls than the run makes: not
   worth it for this run.
4. Otherwise a full graph; ``torch.compile(mode="reduce-overhead")`` is named instead when it
   replayed every call with no skip and was at least as fast as the manual graph.
"""

from __future__ import annotations

from typing import Any

from graphlab.language import N_

from .profile import kernels_text
from .words import Text

__all__ = ["GPU_BOUND_IDLE", "recommend"]

# Below this idle fraction the GPU is busy almost all the time: launches are hidden.
GPU_BOUND_IDLE = 0.1


def recommend(
    blockers: list[dict[str, Any]],
    profile: dict[str, Any],
    timing: dict[str, Any] | None,
    compiled: dict[str, Any] | None,
    expected_calls: int,
) -> tuple[str, str, list[str]]:
    """``(verdict, one-line advice, evidence)``; verdict is one of "full graph", "piecewise",
    "reduce-overhead" and "not worth it"."""
    evidence: list[str] = [
        Text(
            N_("{kernels} per step, GPU idle {idle:.0%} of the step ({source})"),
            kernels=kernels_text(profile["kernels_per_step"]),
            idle=profile["idle_fraction"],
            source=profile["source"],
        )
    ]
    if blockers:
        lines = ", ".join(_where(b) for b in blockers[:4]) + (" ..." if len(blockers) > 4 else "")
        evidence.append(Text(N_("{count} blocker(s): {lines}"), count=len(blockers), lines=lines))
        return (
            "piecewise",
            Text(
                N_(
                    "Fix the blockers below for a full graph; until then capture the parts "
                    "between them and run these lines eagerly: {lines}."
                ),
                lines=lines,
            ),
            evidence,
        )
    if profile["idle_fraction"] < GPU_BOUND_IDLE:
        evidence.append(
            Text(N_("the GPU is busy almost all the time: there are no launch gaps to remove"))
        )
        advice = Text(N_("The step is GPU-bound: a graph cannot make it faster."))
        return "not worth it", advice, evidence
    if timing is None:
        advice = Text(N_("It captures and replays equal to eager: capture the whole step."))
        return "full graph", advice, evidence
    saving = timing["eager_us"] - timing["replay_us"]
    evidence.append(
        Text(
            N_("{eager:.1f} µs eager vs {replay:.1f} µs replay per step, end to end ({source})"),
            eager=timing["eager_us"],
            replay=timing["replay_us"],
            source=timing["source"],
        )
    )
    n_star = timing["break_even_calls"]
    if saving <= 0 or n_star is None:
        advice = Text(N_("A replay is not faster end to end: keep it eager."))
        return "not worth it", advice, evidence
    evidence.append(Text(N_("the capture pays for itself after {calls:,.0f} calls"), calls=n_star))
    if n_star > expected_calls:
        return (
            "not worth it",
            Text(
                N_("Break-even after {calls:,.0f} calls, beyond this run's {expected:,}."),
                calls=n_star,
                expected=expected_calls,
            ),
            evidence,
        )
    if (
        compiled
        and compiled.get("replayed_every_call")
        and (compiled["per_step_us"] <= timing["replay_us"])
    ):
        evidence.append(
            Text(
                N_("torch.compile reduce-overhead replayed every call at {us:.1f} µs per step"),
                us=compiled["per_step_us"],
            )
        )
        return (
            "reduce-overhead",
            Text(
                N_(
                    "torch.compile(mode='reduce-overhead') replays every call at least as fast "
                    "as a manual graph, and manages the static buffers for you."
                )
            ),
            evidence,
        )
    return (
        "full graph",
        Text(
            N_(
                "Capture the whole step: {saving:.1f} µs saved per call, paid back after "
                "{calls:,.0f} calls."
            ),
            saving=saving,
            calls=n_star,
        ),
        evidence,
    )


def _where(blocker: dict[str, Any]) -> str:
    if blocker["file"] is None:
        return str(blocker["kind"])
    return f"{blocker['file'].rsplit('/', 1)[-1]}:{blocker['line']} ({blocker['kind']})"
