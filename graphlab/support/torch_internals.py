"""Every private PyTorch API graphlab uses, in one place, checked when graphlab first needs it.

The CPU emulator and the recovery after a failed capture reach into PyTorch below its public API:
dispatch modes, pytrees, op schemas, version counters, the caching allocator's pool hooks. Private
APIs change between releases without notice, so no other module touches them: each is used only
through a function here, which adapts to the versions graphlab is tested on, and :func:`check`
names what is missing with the versions that work instead of failing later with an AttributeError
deep inside a lesson.

Tested on torch 2.5 and 2.13 (CPU) and torch 2.11 (NVIDIA H200, CUDA 13).
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import Any

import torch

from graphlab.errors import GraphlabError

__all__ = [
    "TESTED",
    "DispatchMode",
    "TorchInternalsError",
    "arg_tree_leaves",
    "capturable_devices_hook",
    "check",
    "clear_cublas_workspaces",
    "compile_counters",
    "end_allocate_to_pool",
    "op_schema",
    "overload_name",
    "public_function",
    "release_pool",
    "storage_id",
    "storage_use_count",
    "tree_flatten",
    "tree_leaves",
    "tree_map_only",
    "tree_unflatten",
]

#: The torch releases graphlab's test suite runs on.
TESTED = "torch 2.5 and 2.13 on the CPU, torch 2.11 on a GPU"


class TorchInternalsError(GraphlabError):
    """This torch lacks a private API graphlab needs."""


def _missing(what: str) -> TorchInternalsError:
    return TorchInternalsError(
        f"this torch ({torch.__version__}) has no {what}, which graphlab's emulator needs; "
        f"graphlab is tested with {TESTED}: install one of those (pip install 'torch>=2.5')"
    )


try:
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import (
        arg_tree_leaves,
        tree_flatten,
        tree_leaves,
        tree_map_only,
        tree_unflatten,
    )
except ImportError as exc:  # pragma: no cover - only on untested torch releases
    raise _missing(f"torch.utils._python_dispatch / torch.utils._pytree ({exc})") from None


class DispatchMode(TorchDispatchMode):
    """A TorchDispatchMode whose ``__torch_dispatch__`` torch.compile does not trace, as torch
    makes every mode's, without importing torch.compile's front end (torch._dynamo) before
    torch.compile is used.

    torch 2.13 wraps each subclass's ``__torch_dispatch__`` in ``torch._disable_dynamo``, which
    imports torch._dynamo on the method's first call: 1.2-1.7 s of CPU in every kernel's first
    emulated capture and in every child process that captures. torch._dynamo can trace a frame
    only once it is imported (only it installs the frame hook that traces), so until then the
    method runs as written; from then on it runs under ``torch._dynamo.disable``, as torch's
    wrapper runs it. On a torch that wraps nothing, the method gains the same protection.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        written = cls.__dict__.get("__torch_dispatch__")
        super().__init_subclass__(**kwargs)  # type: ignore[no-untyped-call]  # torch: unannotated
        if written is not None:
            cls.__torch_dispatch__ = _skipped_by_dynamo(written)  # type: ignore[method-assign]


def _skipped_by_dynamo(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method``, run under ``torch._dynamo.disable`` once torch._dynamo is imported."""
    disabled: Callable[..., Any] | None = None

    @functools.wraps(method)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        nonlocal disabled
        if disabled is None:
            # getattr: torch._dynamo may be in sys.modules while it is still being imported.
            disable = getattr(sys.modules.get("torch._dynamo"), "disable", None)
            if disable is None:
                return method(*args, **kwargs)
            disabled = disable(method, recursive=True)
        return disabled(*args, **kwargs)

    return dispatch


# The optimizers' list of devices whose ``capturable=True`` path they allow (torch >= 2.1).
_CAPTURABLE_MODULE = "torch.optim.optimizer"
_CAPTURABLE_CHECK = "_get_capturable_supported_devices"


def check() -> None:
    """Raise :class:`TorchInternalsError` naming the first private API this torch lacks."""
    required: dict[str, Callable[[], object]] = {
        "torch._C._VariableFunctions": lambda: torch._C._VariableFunctions,
        "torch._C._storage_Use_Count": lambda: torch._C._storage_Use_Count,
        "UntypedStorage._cdata": lambda: torch.empty(1).untyped_storage()._cdata,
        "OpOverload._schema": lambda: torch.ops.aten.add.Tensor._schema,
        "OpOverload._overloadname": lambda: torch.ops.aten.add.Tensor._overloadname,
        f"{_CAPTURABLE_MODULE}.{_CAPTURABLE_CHECK}": lambda: getattr(
            importlib.import_module(_CAPTURABLE_MODULE), _CAPTURABLE_CHECK
        ),
    }
    for name, get in required.items():
        try:
            get()
        except AttributeError:
            raise _missing(name) from None


def public_function(name: str) -> Callable[..., Any] | None:
    """``torch.<name>`` as the C function itself (``torch.add``), or None if there is none."""
    return getattr(torch._C._VariableFunctions, name, None)


def op_schema(op: Any) -> Any:
    """The schema (arguments, returns, aliasing) of an aten operator overload."""
    return op._schema


def overload_name(op: Any) -> str:
    """An aten overload's own name: ``"Tensor"`` for ``aten.add.Tensor``."""
    return str(op._overloadname)


def storage_id(storage: torch.UntypedStorage) -> int:
    """The address of a storage's C++ object: one id per storage while it is alive."""
    return int(storage._cdata)


def storage_use_count(sid: int) -> int:
    """How many references the storage with id ``sid`` has: tensors, views, saved tensors, and
    its Python object (always, from torch 2.13; while something holds it, on torch 2.5)."""
    return int(torch._C._storage_Use_Count(sid))


def capturable_devices_hook() -> tuple[str, str]:
    """Where the optimizers' capturable-device check lives: (module name, function name)."""
    return _CAPTURABLE_MODULE, _CAPTURABLE_CHECK


def end_allocate_to_pool() -> Callable[[int, tuple[int, int]], None] | None:
    """The allocator's "stop routing into this graph pool" hook, or None on this build."""
    return getattr(torch._C, "_cuda_endAllocateToPool", None)


def release_pool() -> Callable[[int, tuple[int, int]], None] | None:
    """The allocator's "drop a reference to this graph pool" hook, or None on this build."""
    return getattr(torch._C, "_cuda_releasePool", None)


def clear_cublas_workspaces() -> Callable[[], None] | None:
    """The hook that frees the cuBLAS workspaces kept per stream, or None on this build."""
    return getattr(torch._C, "_cuda_clearCublasWorkspaces", None)


def compile_counters() -> Any:
    """torch.compile's event counters, e.g. ``["inductor"]["cudagraph_skips"]`` (torch 2.1+).

    Imported when asked for: importing torch._dynamo takes seconds.
    """
    from torch._dynamo.utils import counters

    return counters
