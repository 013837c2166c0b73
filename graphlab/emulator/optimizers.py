"""Let torch's ``capturable=True`` optimizers run on CPU tensors.

A training step is captured with an optimizer built with ``capturable=True`` (Adam, AdamW, ...):
its step counter then stays a tensor on the device instead of being read on the host. torch
checks the parameters' device against a list of devices it knows graphs for, which does not
include the CPU; the capturable code itself is plain tensor arithmetic that runs on any device.
The emulator adds ``"cpu"`` to that list so that lesson code written for a GPU runs unchanged.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from graphlab.support.torch_internals import capturable_devices_hook

__all__ = ["allow_capturable_optimizers"]


def allow_capturable_optimizers() -> None:
    """Make every torch optimizer module accept ``"cpu"`` as a capturable device (idempotent)."""
    module_name, check = capturable_devices_hook()
    original = getattr(importlib.import_module(module_name), check)
    if getattr(original, "graphlab_cpu", False):
        return

    def with_cpu(*args: Any, **kwargs: Any) -> list[str]:
        return [*original(*args, **kwargs), "cpu"]

    with_cpu.graphlab_cpu = True  # type: ignore[attr-defined]  # the mark read above
    # Each optimizer module imported the function by name, so each binding is replaced.
    for name, module in list(sys.modules.items()):
        if name.startswith("torch.optim") and getattr(module, check, None) is original:
            setattr(module, check, with_cpu)
