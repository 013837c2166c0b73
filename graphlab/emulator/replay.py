"""How each recorded operation is replayed, decided once per aten op.

A GPU replay re-runs each kernel on the same addresses. The emulator re-runs each recorded aten op
on the same memory (through the graph's own aliases of the tensors it used, see
:mod:`graphlab.emulator.storages`), writing into the outputs it produced at capture:

- an op that writes one of its arguments (``add_``, ``copy_``, ``out=`` forms, optimizer
  ``_foreach_*_`` ops) is simply called again, so its writes accumulate replay after replay;
- an op that computes a new tensor is called in its ``out=`` form, writing into the captured
  output: through the public torch function (``torch.mul(a, b, out=y)``, the fastest way in from
  Python) or the aten ``out`` overload, whichever is first found at capture to give exactly the
  captured result; otherwise (and for losses, whose ``out=`` forms resize a temporary and warn on
  every call) it is computed and copied into the output;
- views, ``empty`` allocations and in-place changes of a tensor's view (``unsqueeze_``, ``t_``,
  ``set_``...) do no work on a GPU and are not replayed at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from graphlab.support.torch_internals import (
    op_schema,
    overload_name,
    public_function,
    tree_leaves,
    tree_map_only,
)

__all__ = ["Plan", "plan_step"]

_aten = torch.ops.aten
_ALLOCATIONS = {
    _aten.empty.memory_format,
    _aten.empty_like.default,
    _aten.empty_strided.default,
    _aten.new_empty.default,
    _aten.new_empty_strided.default,
}


@dataclass(frozen=True)
class Plan:
    """How to replay one aten op (see the module docstring)."""

    func: Any  # an aten OpOverload
    written_args: tuple[tuple[int, str], ...]  # (position, name) of arguments the op writes
    out_op: Any = None  # the op's out= overload, when its arguments match
    out_names: tuple[str, ...] = ()
    no_work: bool = False  # an allocation or an in-place view change: nothing for a GPU to run
    random: bool = False  # draws random numbers: its out= form cannot be checked against it

    @property
    def mutates(self) -> bool:
        return bool(self.written_args)

    def written(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[torch.Tensor]:
        """The tensors this call writes."""
        values = [args[i] if i < len(args) else kwargs.get(name) for i, name in self.written_args]
        return [x for x in tree_leaves(values) if isinstance(x, torch.Tensor)]

    def step(
        self, args: Sequence[Any], kwargs: dict[str, Any], out: Any, aliases: bool
    ) -> tuple[Callable[..., Any], Sequence[Any], dict[str, Any]] | None:
        """``(callable, args, kwargs)`` that replays this call, or None if it does no work."""
        if self.mutates:
            return self.func, args, kwargs
        if self.no_work or aliases or not _has_tensor(out):
            return None
        if self.out_op is not None and not self.random:
            outs = out if len(self.out_names) > 1 else (out,)
            out_kwargs = dict(zip(self.out_names, outs, strict=True))
            for call in self._out_callables():
                if _same_result(call, args, kwargs, out_kwargs):
                    return call, args, {**kwargs, **out_kwargs}
        return _copy_into, (self.func, args, kwargs, out), {}

    def _out_callables(self) -> list[Callable[..., Any]]:
        public = public_function(self.func.overloadpacket.__name__)
        return (
            [public, self.out_op]
            if public is not None and self.out_names == ("out",)
            else [self.out_op]
        )


@cache
def plan_step(func: Any) -> Plan:
    """The :class:`Plan` for aten op overload ``func``."""
    if torch.Tag.inplace_view in func.tags:
        return Plan(func, (), no_work=True)
    schema = op_schema(func)
    written = tuple(
        (i, a.name)
        for i, a in enumerate(schema.arguments)
        if a.alias_info is not None and a.alias_info.is_write
    )
    if written:
        return Plan(func, written)
    if func in _ALLOCATIONS:
        return Plan(func, (), no_work=True)
    out_op, out_names = _out_overload(func)
    random = torch.Tag.nondeterministic_seeded in func.tags
    return Plan(func, (), out_op, out_names, random=random)


def _out_overload(func: Any) -> tuple[Any, tuple[str, ...]]:
    """The ``out=`` overload taking the same arguments as ``func`` (e.g. add.Tensor -> add.out)."""
    packet = func.overloadpacket
    name = overload_name(func)
    wanted = [a.name for a in op_schema(func).arguments]
    if "reduction" in wanted:
        return None, ()
    for candidate in ("out",) if name == "default" else (f"{name}_out", "out"):
        if candidate not in packet.overloads():
            continue
        op = getattr(packet, candidate)
        args = op_schema(op).arguments
        outs = tuple(a.name for a in args if a.is_out)
        if [a.name for a in args if not a.is_out] == wanted and len(outs) == len(
            op_schema(func).returns
        ):
            return op, outs
    return None, ()


# (callable, argument signature) -> whether it can be trusted
_checked: dict[tuple[Any, ...], bool] = {}


def _same_result(
    call: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], outs: dict[str, Any]
) -> bool:
    """Whether ``call(*args, **kwargs, **outs)`` writes exactly the captured outputs ``outs``.

    Tried once per callable and signature of its arguments (shapes, strides, dtypes, scalars), on
    scratch outputs; an out= form that resizes them, differs or refuses the arguments is not used.
    """
    key = (call, _signature(args), _signature(sorted(kwargs.items())))
    if key not in _checked:
        if len(_checked) > 10_000:  # a long session of ever-new shapes: start over
            _checked.clear()
        _checked[key] = _writes_expected(call, args, kwargs, outs)
    return _checked[key]


def _writes_expected(
    call: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], outs: dict[str, Any]
) -> bool:
    scratch = tree_map_only(torch.Tensor, torch.empty_like, outs)
    try:
        call(*args, **kwargs, **scratch)
    except Exception:  # an out= form refusing these arguments just means: do not use it
        return False
    pairs = zip(tree_leaves(outs), tree_leaves(scratch), strict=True)
    return all(
        a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b) for a, b in pairs
    )


def _signature(tree: object) -> tuple[Any, ...]:
    return tuple(
        (tuple(x.shape), x.stride(), x.dtype) if isinstance(x, torch.Tensor) else x
        for x in tree_leaves(tree)
    )


def _has_tensor(out: object) -> bool:
    return any(isinstance(x, torch.Tensor) for x in tree_leaves(out))


def _copy_into(
    func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], captured: object
) -> None:
    fresh = tree_leaves(func(*args, **kwargs))
    for dst, src in zip(tree_leaves(captured), fresh, strict=True):
        if isinstance(dst, torch.Tensor):
            dst.copy_(src)
