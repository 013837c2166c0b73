"""Every line of a step that stops it from being captured, found by running the step eagerly.

A real capture stops at the first mistake: CUDA refuses the host read and spoils the capture, and
the learner fixes one line only to meet the next. :func:`find_blockers` runs the step instead
(eagerly, ``calls`` times, on the example inputs) under two torch modes that *watch* rather than
refuse, so one run names them all:

- a :class:`~torch.utils._python_dispatch.TorchDispatchMode` sees every aten operation: reads of
  a value (``aten._local_scalar_dense``), operations whose output shape depends on the data
  (``nonzero``, ``x[mask]``, ...; the emulator's own table in
  :mod:`graphlab.emulator.host_sync`), random operations on a generator of their own,
  collectives (the ``c10d`` namespaces), tensors built from host data inside the step;
- a :class:`~torch.overrides.TorchFunctionMode` sees the Tensor methods that read on the host
  (``.item()``, ``.cpu()``, ``.tolist()``, ``print(t)``, ``if t:``).

A host read counts only for a tensor on the step's own device: on a GPU, ``.item()`` of a CPU
tensor waits for nothing. Two more blockers show only across calls, with the same inputs: a
Python number (or a small CPU tensor) passed to an operation that changes from one call to the
next is frozen into a graph at capture, and so is a Python branch that chose another path.
Optimizers are watched through torch's global ``step()`` hooks: one with ``capturable=False``
(the default of Adam, AdamW and their kin) keeps its step count on the host, and the host reads
inside its ``step()`` are that one blocker, not several.

Each blocker carries the user's source line: the innermost frame of the call stack that is
neither torch's nor graphlab's own code (a lesson's example models count as the user's).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from types import FrameType
from typing import Any

import torch
from torch.optim import Optimizer
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from torch.overrides import TorchFunctionMode
from torch.utils.hooks import RemovableHandle

from graphlab.emulator.host_sync import COPY, DYNAMIC, host_method, op_problem
from graphlab.language import N_
from graphlab.support.torch_internals import DispatchMode, tree_leaves

from .fixes import FIXES
from .words import Text

__all__ = ["Blocker", "Scan", "find_blockers", "user_site"]

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_GRAPHLAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_EXAMPLES = os.path.join(_GRAPHLAB_DIR, "diagnose", "examples.py")
_STDLIB = sysconfig.get_paths()["stdlib"] + os.sep
_COLLECTIVES = ("c10d", "_c10d_functional", "c10d_functional")
_LIFT_FRESH = torch.ops.aten.lift_fresh.default
_COPIES = (torch.ops.aten._to_copy.default, torch.ops.aten.copy_.default)
# Values of small CPU tensors are compared between calls; larger ones are data, not settings.
_SMALL = 16

# Where a blocker is in the user's code: (file, line), both None when no frame is theirs.
Site = tuple[str | None, int | None]


@dataclass(frozen=True)
class Blocker:
    """One thing that stops the step from being captured (or replayed right), and where it is.

    ``kind`` is one of :data:`graphlab.diagnose.fixes.FIXES`' keys; ``file`` and ``line`` the
    user's source line (None when no frame of the user's was on the stack); ``message`` what
    happens there; ``fix`` what to do, from graphlab's failure catalogue.
    """

    kind: str
    file: str | None
    line: int | None
    message: str
    fix: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def where(self) -> str:
        """``file:line``, or "(no source line)"."""
        return "(no source line)" if self.file is None else f"{self.file}:{self.line}"


def _machinery(filename: str) -> bool:
    """True for torch's, graphlab's (but the example models') and the standard library's code,
    frozen modules included; code typed at a prompt (``<stdin>``, ``<string>``) is the user's."""
    if filename == _EXAMPLES:
        return False
    return filename.startswith((_TORCH_DIR, _GRAPHLAB_DIR, _STDLIB, "<frozen "))


def user_site() -> Site:
    """``(file, line)`` of the innermost frame on the stack that is the user's own code."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not _machinery(os.path.abspath(name) if os.sep in name else name):
            return name, frame.f_lineno
        frame = frame.f_back
    return None, None


class _Scan:
    """What one scan has found so far, and the operations of each call."""

    def __init__(self, device: torch.device):
        self.device = device
        self.found: dict[tuple[str, str | None, int | None], Blocker] = {}
        # each call's operations: (name, user's site, the numbers it was given)
        self.calls: list[list[tuple[str, Site, tuple[Any, ...]]]] = []
        self.optimizer_site: Site | None = None  # set while a non-capturable step() runs
        self.optimizers: list[Optimizer] = []  # every optimizer whose step() the step called
        self.quiet = False  # the scan's own reads of values are not the step's

    def add(self, kind: str, message: str, site: Site | None = None) -> None:
        file, line = site if site is not None else user_site()
        key = (kind, file, line)
        if key not in self.found:
            self.found[key] = Blocker(kind, file, line, message, FIXES[kind])

    def on_device(self, tensors: Sequence[Any]) -> bool:
        return any(
            isinstance(t, torch.Tensor) and t.device.type == self.device.type for t in tensors
        )

    def settings(self, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """The Python numbers and small CPU tensors' values an operation was given."""
        values: list[Any] = []
        self.quiet = True
        try:
            for leaf in tree_leaves((args, kwargs)):
                if isinstance(leaf, (bool, int, float)):
                    values.append(leaf)
                elif (
                    isinstance(leaf, torch.Tensor)
                    and leaf.device.type == "cpu"
                    and self.device.type != "cpu"
                    and leaf.numel() <= _SMALL
                ):
                    values.append(tuple(leaf.reshape(-1).tolist()))
        finally:
            self.quiet = False
        return tuple(values)


class _Ops(DispatchMode):
    """Watches every aten operation of the step (see the module docstring)."""

    def __init__(self, scan: _Scan):
        super().__init__()  # type: ignore[no-untyped-call]  # torch's is unannotated
        self.scan = scan

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        scan = self.scan
        if scan.quiet or scan.optimizer_site is not None:
            return func(*args, **kwargs)
        site = user_site()
        problem = op_problem(func, args)
        if problem is not None and scan.on_device(tree_leaves(args)):
            what, (why, _) = problem
            kind = "data-dependent-shape" if problem[1] is DYNAMIC else "host-sync"
            scan.add(kind, Text(N_("{what} {why}"), what=Text(what), why=Text(why)), site)
        if func.namespace in _COLLECTIVES:
            scan.add(
                "collective",
                Text(N_("{op} is a collective: every rank must capture it"), op=str(func)),
                site,
            )
        if torch.Tag.nondeterministic_seeded in func.tags and kwargs.get("generator") is not None:
            scan.add(
                "rng-generator",
                Text(
                    N_(
                        "{op} draws from a torch.Generator of its own, which a graph does not "
                        "advance between replays unless it is registered with the graph"
                    ),
                    op=str(func),
                ),
                site,
            )
        if func in _COPIES and scan.device.type != "cpu" and _host_to_device(args, kwargs):
            scan.add(
                "host-copy",
                Text(
                    N_(
                        "copies a tensor from pageable host memory to the device, which torch "
                        "refuses during capture (and a graph would replay the value copied at "
                        "capture)"
                    )
                ),
                site,
            )
        out = func(*args, **kwargs)
        if func is _LIFT_FRESH and (out.numel() > 1 or out.device.type != "cpu"):
            scan.add(
                "host-tensor",
                Text(
                    N_(
                        "torch.tensor(...) builds a tensor from host data inside the step: a graph "
                        "copies it once, at capture, and replays that copy"
                    )
                ),
                site,
            )
        scan.calls[-1].append((str(func), site, scan.settings(args, kwargs)))
        return out


def _host_to_device(args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """A copy (``x.cuda()``, ``x.to(device)``, ``y.copy_(x)``) from unpinned host memory to a
    device: ``_to_copy`` of a CPU tensor to another device, or ``copy_`` into a device tensor."""
    source = args[1] if len(args) > 1 else args[0]
    if not isinstance(source, torch.Tensor) or source.device.type != "cpu" or source.is_pinned():
        return False
    if len(args) > 1:  # copy_(destination, source)
        return bool(args[0].device.type != "cpu")
    device = kwargs.get("device")
    return device is not None and torch.device(device).type != "cpu"


class _Methods(TorchFunctionMode):
    """Watches the Tensor methods that read a value on the host."""

    def __init__(self, scan: _Scan):
        super().__init__()
        self.scan = scan

    def __torch_function__(
        self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        scan = self.scan
        found = host_method(func)
        if (
            found is not None
            and not scan.quiet
            and scan.optimizer_site is None
            and scan.on_device(args[:1])
        ):
            what, (why, _) = found
            kind = "host-copy" if found[1] is COPY else "host-sync"
            scan.add(kind, Text(N_("{what} {why}"), what=Text(what), why=Text(why)))
            # One host read, seen whole: the operations it runs inside (printing a tensor runs
            # dozens, which depend on the values) are not kernels of the step.
            scan.quiet = True
            try:
                return func(*args, **(kwargs or {}))
            finally:
                scan.quiet = False
        return func(*args, **(kwargs or {}))


def _not_capturable(optimizer: Optimizer) -> bool:
    """An optimizer whose step() keeps its step count on the host (``capturable=False``)."""
    return any(
        "capturable" in group and not group["capturable"] and not group.get("fused")
        for group in optimizer.param_groups
    )


def _optimizer_hooks(scan: _Scan) -> tuple[RemovableHandle, RemovableHandle]:
    def before(optimizer: Optimizer, args: Any, kwargs: Any) -> None:
        if not any(o is optimizer for o in scan.optimizers):
            scan.optimizers.append(optimizer)
        if not _not_capturable(optimizer):
            return
        site = user_site()
        scan.add(
            "optimizer",
            Text(
                N_(
                    "{optimizer}.step() runs with capturable=False: it keeps its step count on "
                    "the host, and torch refuses to capture it"
                ),
                optimizer=type(optimizer).__name__,
            ),
            site,
        )
        scan.optimizer_site = site

    def after(optimizer: Optimizer, args: Any, kwargs: Any) -> None:
        scan.optimizer_site = None

    return register_optimizer_step_pre_hook(before), register_optimizer_step_post_hook(after)


def _compare_calls(scan: _Scan) -> None:
    """Blockers that show only between calls with the same inputs: frozen numbers and branches.

    The first call is left out: like a warm-up, it may do one-off work (an optimizer creating its
    state, ``.grad`` tensors being allocated) that the calls after it, and a capture, never do.
    """
    for earlier, later in zip(scan.calls[1:], scan.calls[2:], strict=False):
        for (op_a, site_a, values_a), (op_b, site_b, values_b) in zip(earlier, later, strict=False):
            if (op_a, site_a) != (op_b, site_b):
                scan.add(
                    "branch-changes",
                    Text(
                        N_(
                            "with the same inputs, this call ran {op} where the one before ran "
                            "{earlier}: Python chose another path, but a graph replays the path "
                            "taken at capture"
                        ),
                        op=op_b,
                        earlier=op_a,
                    ),
                    site_b,
                )
                return
            if values_a != values_b:
                scan.add(
                    "changing-scalar",
                    Text(
                        N_(
                            "{op} got {values} where the call before got {earlier}: a graph "
                            "keeps the value it saw at capture"
                        ),
                        op=op_b,
                        values=_short(values_b),
                        earlier=_short(values_a),
                    ),
                    site_b,
                )
        if len(earlier) != len(later):
            scan.add(
                "branch-changes",
                Text(
                    N_(
                        "with the same inputs, one call ran {earlier} operations and the next "
                        "{later}: Python chose another path, but a graph replays one path"
                    ),
                    earlier=len(earlier),
                    later=len(later),
                ),
                later[-1][1] if len(later) > len(earlier) else earlier[-1][1],
            )


def _short(values: tuple[Any, ...]) -> str:
    text = repr(values if len(values) != 1 else values[0])
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Scan:
    """What :func:`find_blockers` found.

    ``blockers`` in the order first met; ``ops`` the operations that do work (a kernel each on a
    GPU) in the last call, by name; ``optimizers`` those whose ``step()`` ran.
    """

    blockers: list[Blocker]
    ops: list[str]
    optimizers: list[Optimizer]

    @property
    def kernels(self) -> int:
        return len(self.ops)


def find_blockers(
    fn: Callable[..., Any], inputs: Sequence[Any], *, calls: int = 3, optimizer: Any = None
) -> Scan:
    """Run ``fn(*inputs)`` ``calls`` times, watching, and say what stops it from being captured.

    ``calls`` must be at least 3 for the between-call blockers (the first call is a warm-up).
    ``optimizer``, when given, is checked even if ``fn`` never calls its ``step()``. The step
    really runs: a training step updates its weights ``calls`` times.
    """
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    on_gpu = [x.device for x in tensors if x.device.type != "cpu"]
    device = on_gpu[0] if on_gpu else torch.device("cpu")
    scan = _Scan(device)
    for position, x in enumerate(inputs):
        if on_gpu and isinstance(x, torch.Tensor) and x.device.type == "cpu":
            scan.add(
                "host-tensor",
                Text(
                    N_(
                        "example input {position} is a CPU tensor: a graph reads device memory "
                        "only, so the step would copy it in during the capture"
                    ),
                    position=position,
                ),
                (None, None),
            )
    if optimizer is not None and _not_capturable(optimizer):
        scan.add(
            "optimizer",
            Text(
                N_(
                    "{optimizer} was made with capturable=False: its step() keeps its step count "
                    "on the host, and torch refuses to capture it"
                ),
                optimizer=type(optimizer).__name__,
            ),
            (None, None),
        )
    hooks = _optimizer_hooks(scan)
    try:
        for _ in range(calls):
            scan.calls.append([])
            with _Ops(scan), _Methods(scan):
                fn(*inputs)
    finally:
        for hook in hooks:
            hook.remove()
    _compare_calls(scan)
    blockers = list(scan.found.values())
    # The optimizer named at its step() line makes the line-less entry redundant.
    if any(b.kind == "optimizer" and b.file for b in blockers):
        blockers = [b for b in blockers if b.kind != "optimizer" or b.file]
    if optimizer is not None and not any(o is optimizer for o in scan.optimizers):
        scan.optimizers.append(optimizer)
    ops = [op[0] for op in scan.calls[-1] if not _no_work(op[0])]
    return Scan(blockers, ops, scan.optimizers)


# Operations that launch no kernel on a GPU: views, metadata and bare allocations.
_NO_WORK = ("aten.view", "aten.t.", "aten.transpose", "aten.permute", "aten.expand",
            "aten.unsqueeze", "aten.squeeze", "aten.slice", "aten.select", "aten.detach",
            "aten.alias", "aten.empty", "aten._unsafe_view", "aten.reshape", "aten.as_strided",
            "aten.split", "aten.unbind", "aten.lift_fresh", "aten._local_scalar_dense",
            "aten.new_empty", "aten.chunk", "aten.narrow", "aten.diagonal", "aten.unflatten",
            "aten.flatten", "aten.sym_size", "aten.is_same_size")  # fmt: skip


def _no_work(op: str) -> bool:
    return op.startswith(_NO_WORK)
