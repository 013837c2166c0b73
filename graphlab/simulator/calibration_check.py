"""The calibration's check: every recording's timed loops, measured vs simulated.

:func:`check` simulates each chain recording's loops with the fitted parameters, through the
simulator itself rather than the fit's formulas, and :func:`format_table` prints measured vs
simulated per-iteration times (eager, replay and the end-to-end replay loop) with the errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from graphlab.language import gettext as _

from .observations import ChainObservation
from .params import SimParams
from .timed_loops import end_to_end_replay_us, timed_loop_us

__all__ = ["CheckRow", "check", "format_table"]


@dataclass(frozen=True)
class CheckRow:
    """Measured vs simulated per-iteration times of one recording (µs), and relative errors."""

    name: str
    kernels: int
    numel: int
    eager_measured_us: float
    eager_simulated_us: float
    replay_measured_us: float
    replay_simulated_us: float
    end_to_end_measured_us: float
    end_to_end_simulated_us: float

    @property
    def eager_error(self) -> float:
        return self.eager_simulated_us / self.eager_measured_us - 1

    @property
    def replay_error(self) -> float:
        return self.replay_simulated_us / self.replay_measured_us - 1

    @property
    def end_to_end_error(self) -> float:
        return self.end_to_end_simulated_us / self.end_to_end_measured_us - 1

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "eager_error": self.eager_error,
            "replay_error": self.replay_error,
            "end_to_end_error": self.end_to_end_error,
        }


def check(observations: Sequence[ChainObservation], params: SimParams) -> list[CheckRow]:
    """Simulate every recording's timed loops with ``params``; compare with the measurements."""
    rows = []
    for o in observations:
        n, d, r = o.kernels, o.kernel_us, o.iterations
        rows.append(
            CheckRow(
                name=o.name,
                kernels=n,
                numel=o.numel,
                eager_measured_us=o.eager_us,
                eager_simulated_us=timed_loop_us("eager", n, d, params, r),
                replay_measured_us=o.replay_us,
                replay_simulated_us=timed_loop_us("graph", n, d, params, r),
                end_to_end_measured_us=o.replay_end_to_end_us,
                end_to_end_simulated_us=end_to_end_replay_us(n, d, params, r),
            )
        )
    return rows


def format_table(rows: Sequence[CheckRow]) -> str:
    """The check as a Markdown table: per recording, measured vs simulated, and the error."""
    lines = [
        _(
            "| recording | N | elements | eager measured µs | simulated | error "
            "| replay measured µs | simulated | error | e2e replay measured µs | simulated "
            "| error |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.kernels} | {r.numel:,} "
            f"| {r.eager_measured_us:,.1f} | {r.eager_simulated_us:,.1f} | {r.eager_error:+.1%} "
            f"| {r.replay_measured_us:,.1f} | {r.replay_simulated_us:,.1f} "
            f"| {r.replay_error:+.1%} | {r.end_to_end_measured_us:,.1f} "
            f"| {r.end_to_end_simulated_us:,.1f} | {r.end_to_end_error:+.1%} |"
        )
    return "\n".join(lines)
