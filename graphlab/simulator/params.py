"""The simulator's parameters, and the calibrated set fitted to real H200 recordings.

Seven numbers describe the machine to the simulator (all microseconds):

- ``host_us``: host time per eager op: Python, PyTorch's dispatcher and the ``cudaLaunchKernel``
  call together. The model does not split them; the launch event spans the whole op.
- ``launch_latency_us``: from the end of a launch call to the earliest moment its work can start
  on the GPU (for a replay, the moment its first nodes can start).
- ``graph_launch_us``: host time per replay: ``graph.replay()`` and ``cudaGraphLaunch``.
- ``node_gap_us``: device time between the end of a node of a replay and the start of a node
  that depends on it (the GPU's own scheduling cost, with no host involved).
- ``sync_us``: host time a ``synchronize`` takes once the GPU has finished.
- ``kernel_gap_us``: device time between one eager kernel's end and the start of the next one
  already queued on the same stream (0 unless given: queued kernels then follow back to back).
- ``replay_gap_us``: extra device time before a replay's first node when the stream was still
  busy with earlier work (the GPU setting up the next launched graph), on top of
  ``node_gap_us`` (0 unless given).

Two more describe capture, for the break-even model only: capture of ``n`` kernels costs
``capture_base_us + n * capture_per_kernel_us``.

There are no built-in defaults: numbers for a real GPU only come from
:mod:`graphlab.simulator.calibration`, fitted to recordings and stored with their provenance in
``calibrated_h200.json`` next to this module. Until that file exists, pass every number yourself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from graphlab.errors import SimulatorError
from graphlab.language import gettext as _
from graphlab.timing.break_even import check_duration

__all__ = [
    "CALIBRATED_PATH",
    "MAX_DURATION_US",
    "SimParams",
    "calibrated",
]

CALIBRATED_PATH = Path(__file__).with_name("calibrated_h200.json")

# Longer than any single kernel, launch or sync a course would model; also keeps every simulated
# time well inside int64 nanoseconds.
MAX_DURATION_US = 1_000_000.0


@dataclass(frozen=True)
class SimParams:
    """Host and device costs the simulator charges, in microseconds (see the module docstring).

    ``capture_base_us`` and ``capture_per_kernel_us`` are optional: only the break-even model
    uses them, and without them a break-even count cannot be given. ``calibration`` says where
    the numbers came from (None when they were given by hand); it travels into timelines' meta.
    """

    host_us: float
    launch_latency_us: float
    graph_launch_us: float
    node_gap_us: float
    sync_us: float
    kernel_gap_us: float = 0.0
    replay_gap_us: float = 0.0
    capture_base_us: float | None = None
    capture_per_kernel_us: float | None = None
    calibration: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "calibration" or (value is None and f.name.startswith("capture_")):
                continue
            object.__setattr__(
                self, f.name, check_duration(f.name, value, MAX_DURATION_US, SimulatorError)
            )

    def capture_us(self, n_kernels: int) -> float | None:
        """Modelled capture cost of a graph of ``n_kernels`` kernels, or None if not calibrated."""
        if self.capture_base_us is None or self.capture_per_kernel_us is None:
            return None
        return self.capture_base_us + n_kernels * self.capture_per_kernel_us

    def to_dict(self) -> dict[str, float | None]:
        """The numbers, by name (without ``calibration``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "calibration"}

    def replace(self, **changes: float | None) -> SimParams:
        """A copy with the given numbers changed; None means "keep this one".

        The copy keeps the calibration provenance, listing the numbers that no longer come from it
        under ``"overridden"``.
        """
        changes = {k: v for k, v in changes.items() if v is not None}
        calibration = self.calibration
        if calibration is not None and changes:
            overridden = sorted(set(calibration.get("overridden", [])) | set(changes))
            calibration = {**calibration, "overridden": overridden}
        return SimParams(**{**self.to_dict(), **changes}, calibration=calibration)


def _read_calibration(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise SimulatorError(
            _(
                "no calibrated parameters at {path}: the simulator has not been calibrated "
                "against GPU recordings yet. Pass every parameter yourself (graphlab simulate "
                "--host-us H --launch-latency-us L --graph-launch-us G --node-gap-us X "
                "--sync-us S), or run graphlab calibrate --write once recordings exist"
            ).format(path=path)
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SimulatorError(
            _("calibrated parameters at {path} are unreadable: {reason}").format(
                path=path, reason=exc
            )
        ) from None


def calibrated(path: Path | None = None) -> SimParams:
    """The parameters fitted to the GPU recordings, with their provenance in ``.calibration``.

    ``path`` defaults to the bundled :data:`CALIBRATED_PATH`; SimulatorError if it is missing.
    """
    path = CALIBRATED_PATH if path is None else Path(path)
    data = _read_calibration(path)
    try:
        return SimParams(**data["params"], calibration=data["provenance"])
    except (KeyError, TypeError) as exc:
        raise SimulatorError(
            _("calibrated parameters at {path} are malformed: {reason}").format(
                path=path, reason=exc
            )
        ) from None
