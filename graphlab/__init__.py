"""graphlab: a live, testable course on CUDA Graphs in PyTorch.

The public names are listed in ``__all__``. They are loaded on first use so that
``import graphlab`` stays quick and the CLI does not pay for plotting libraries it does not use.

``graphlab.cuda`` is ``torch.cuda`` on a machine with a GPU and the CPU emulator elsewhere;
``graphlab.DEVICE`` is ``"cuda"`` or ``"cpu"`` accordingly; ``graphlab.backend()`` says which is
live and why.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from .backend import backend
from .errors import GraphlabError

if "torch" in sys.modules:
    # A kernel that imported torch first gets the per-learner GPU memory cap now; otherwise it
    # comes with graphlab.backend(), so that `import graphlab` itself never imports torch.
    from .support.memory_cap import apply_from_env

    apply_from_env()

__version__ = "0.1.0"

__all__ = [
    "DEVICE",
    "GraphlabError",
    "Timeline",
    "__version__",
    "backend",
    "compare",
    "cuda",
    "diagnose",
    "explain",
    "isolated",
    "load_ipython_extension",
    "recording",
    "recordings",
    "release_failed_captures",
    "widgets",
]

# Public name -> (module, attribute) for names loaded on first access.
_LAZY = {
    "Timeline": ("graphlab.trace.timeline", "Timeline"),
    "compare": ("graphlab.timing.compare", "compare"),
    "explain": ("graphlab.failures.explanation", "explain"),
    "isolated": ("graphlab.failures.isolation", "isolated"),
    "recording": ("graphlab.timing.recordings", "recording"),
    "recordings": ("graphlab.timing.recordings", "list_recordings"),
    "release_failed_captures": ("graphlab.failures.recovery", "release_failed_captures"),
    "load_ipython_extension": ("graphlab.cli.magics", "load_ipython_extension"),
}

# Subpackages reachable as attributes (``graphlab.widgets.TimelineView``) without an import line;
# loaded on first access because they pull in plotly, ipywidgets or the simulator.
_SUBPACKAGES = {
    "checks": "graphlab.checks",
    # A callable package: graphlab.diagnose(fn, *inputs), and graphlab.diagnose.examples.
    "diagnose": "graphlab.diagnose",
    "simulator": "graphlab.simulator",
    "widgets": "graphlab.widgets",
    "workloads": "graphlab.timing.workloads",
}


def __getattr__(name: str) -> Any:
    if name == "cuda":
        from .backend import cuda_module

        return cuda_module()
    if name == "DEVICE":
        return backend().device
    if name in _SUBPACKAGES:
        return importlib.import_module(_SUBPACKAGES[name])
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        value = getattr(importlib.import_module(module_name), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
