"""What needs the host inside a capture, and the errors CUDA gives for it.

While a stream is being captured nothing runs: kernels are recorded, not executed. Anything that
must wait for a result on the host therefore cannot work, and CUDA refuses it with
``cudaErrorStreamCaptureUnsupported`` ("operation not permitted when stream is capturing"). The
refusal also *invalidates* the capture, so ending it then fails with
``cudaErrorStreamCaptureInvalidated`` ("operation failed due to a previous error during capture");
with ``torch.cuda.graph(...)`` that second error is the one the ``with`` block raises.

Three families of operations need the host:

- reading a value (``.item()``, ``print(t)``, ``if t:``, ``float(t)``): a copy to host memory
  and a wait. Copies of whole tensors to pageable host memory (``.cpu()``, ``.tolist()``,
  ``.numpy()``) are refused by torch itself before CUDA sees them ("Cannot copy between CPU and
  CUDA tensors during CUDA graph capture unless the CPU tensor is pinned"): that error does *not*
  invalidate the capture, which then ends normally with whatever was captured before it;
- synchronizing (``torch.cuda.synchronize()``, ``Stream/Event.synchronize()``, ``query()``);
- operations whose output *shape* depends on the data (``nonzero``, ``unique``, ``x[mask]``,
  ``masked_select``, ...): the size must be read back before the output can be allocated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from graphlab.errors import CaptureError
from graphlab.language import N_
from graphlab.support.capture_errors import describe

__all__ = [
    "COPY",
    "DYNAMIC",
    "INVALIDATED",
    "ISOLATION",
    "READ",
    "SYNC",
    "UNJOINED",
    "UNSUPPORTED",
    "capture_error",
    "copy_refusal",
    "host_method",
    "op_problem",
]

UNSUPPORTED = "cudaErrorStreamCaptureUnsupported"
INVALIDATED = "cudaErrorStreamCaptureInvalidated"
UNJOINED = "cudaErrorStreamCaptureUnjoined"
ISOLATION = "cudaErrorStreamCaptureIsolation"


READ = (
    N_(
        "copies a value from the GPU to host memory and waits for it, but captured work has not "
        "run (capture only records it), so there is nothing to read yet."
    ),
    N_(
        "read results after replay() and a synchronize(), outside the capture; keep host reads, "
        "prints and `if tensor:` tests out of the captured region."
    ),
)
# torch's own refusal of a copy to pageable host memory (seen on the H200, torch 2.11).
PAGEABLE_COPY = (
    "Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is "
    "pinned. Please use tensor.pin_memory() or allocate the tensor with pin_memory=True."
)
COPY = (
    N_(
        "copies a tensor from the GPU into pageable host memory, which torch refuses during "
        "capture (the capture itself goes on, and ends with the work captured before this line)."
    ),
    N_(
        "read results after replay() and a synchronize(), outside the capture; or, to capture the "
        "copy itself, copy into a pinned buffer made beforehand: "
        "`host = torch.empty(shape, pin_memory=True)` then `host.copy_(y, non_blocking=True)`."
    ),
)
SYNC = (
    N_(
        "waits for the GPU, but captured work does not run during capture, so the wait could "
        "never end."
    ),
    N_("synchronize before the capture begins or after it ends, never inside it."),
)
DYNAMIC = (
    N_(
        "has an output whose shape depends on the data: its size must be copied back to the host "
        "before the output can be allocated, and a graph's shapes are fixed at capture."
    ),
    N_(
        "use a fixed-shape form instead: torch.where(mask, x, 0), masked_fill, multiplying by the "
        "mask, or nonzero_static(size=...); or run this step outside the graph."
    ),
)

_aten = torch.ops.aten
_OPS = {
    _aten._local_scalar_dense.default: (N_("reading a tensor's value"), READ),
    _aten.is_nonzero.default: ("`if tensor:` / bool(tensor)", READ),
    _aten.equal.default: ("torch.equal", READ),
    _aten.nonzero.default: ("nonzero", DYNAMIC),
    _aten._unique2.default: ("unique", DYNAMIC),
    _aten.unique_dim.default: ("unique(dim=...)", DYNAMIC),
    _aten.unique_consecutive.default: ("unique_consecutive", DYNAMIC),
    _aten.masked_select.default: ("masked_select", DYNAMIC),
    _aten.bincount.default: ("bincount", DYNAMIC),
}
_MASKED_INDEX = {
    _aten.index.Tensor: N_("indexing with a boolean mask (x[mask])"),
    _aten.index_put_.default: N_("assigning through a boolean mask (x[mask] = v)"),
    _aten.index_put.default: N_("assigning through a boolean mask (x[mask] = v)"),
}

_T = torch.Tensor
_COPIES = {
    _T.tolist: ".tolist()",
    _T.cpu: ".cpu()",
    _T.numpy: ".numpy()",
    _T.__array__: "numpy.asarray(tensor)",
}
_METHODS = {
    _T.item: ".item()",
    _T.__repr__: N_("printing a tensor"),
    _T.__format__: N_("formatting a tensor"),
    _T.__bool__: "`if tensor:` / bool(tensor)",
    _T.__float__: "float(tensor)",
    _T.__int__: "int(tensor)",
    _T.__index__: N_("using a tensor as an index"),
}


def op_problem(func: Any, args: Sequence[Any]) -> tuple[str, tuple[str, str]] | None:
    """``(what, (why, fix))`` if aten op ``func`` called with ``args`` needs the host, else None."""
    found = _OPS.get(func)
    if found is not None:
        return found
    if func in _MASKED_INDEX and _has_mask(args[1]) and not _fills_one_value(func, args):
        return _MASKED_INDEX[func], DYNAMIC
    if func is _aten.repeat_interleave.Tensor:
        return N_("repeat_interleave with tensor repeats"), DYNAMIC
    return None


def _fills_one_value(func: Any, args: Sequence[Any]) -> bool:
    """``x[mask] = 0.0``: torch turns it into ``masked_fill_``, which needs no host."""
    if func is _aten.index.Tensor:
        return False
    indices, values = args[1], args[2]
    accumulate = len(args) > 3 and args[3]
    return (
        len([i for i in indices if i is not None]) == 1 and values.numel() == 1 and not accumulate
    )


def _has_mask(indices: Sequence[Any]) -> bool:
    return any(
        isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in indices
    )


def host_method(func: Any) -> tuple[str, tuple[str, str]] | None:
    """``(what, (why, fix))`` if Tensor method ``func`` reads values on the host, else None."""
    if func in _COPIES:
        return _COPIES[func], COPY
    if func in _METHODS:
        return _METHODS[func], READ
    return None


def copy_refusal(what: str) -> CaptureError:
    """torch's refusal of a copy to pageable host memory during capture (no CUDA error)."""
    why, fix = COPY
    return CaptureError(f"{PAGEABLE_COPY} [{what} {why} Fix: {fix} CPU emulator.]")


def capture_error(cuda_error: str, detail: str) -> CaptureError:
    """A :class:`CaptureError` worded like torch's (``CUDA error: <runtime message>``)."""
    return CaptureError(
        f"CUDA error: {describe(cuda_error)} ({cuda_error}). {detail} "
        "[CPU emulator; on a GPU torch raises torch.AcceleratorError with this CUDA error.]",
        cuda_error=cuda_error,
    )
