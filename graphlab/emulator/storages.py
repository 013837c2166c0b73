"""A replay binds to memory, as a GPU graph binds to addresses, and notices memory let go of.

A CUDA graph stores device addresses, not tensor objects. After the capture, nothing done to a
Python tensor *object* changes what a replay reads or writes:

- ``static_x.set_(other)`` or ``static_x.data = other`` points the object at other memory, but the
  graph keeps the old addresses, and writes through another tensor on the old memory (a view taken
  earlier) still reach the replay;
- rebinding a name (``x = torch.tensor(...)``) or ``del x`` changes nothing in the graph either;
  and once no tensor uses the old memory the caching allocator frees it, so the next replay reads
  (or writes) memory that may already belong to a new tensor: a use-after-free.

The emulator mirrors the first by giving every tensor a recorded operation uses a *graph-owned
alias*: a new tensor object over the same storage, offset, sizes and strides, held by the graph
only. Replays run on the aliases, so nothing done to the program's tensor objects redirects them;
and an alias has its own version counter, so a replay leaves the program's tensors' ``_version``
alone, as a GPU replay does.

The second it cannot mirror, because it must keep the memory to replay at all. It notices instead.
A storage's use count counts every tensor, view and autograd-saved tensor on it; the emulator
knows which of those are its own aliases, so when nothing else is left the program has let go of
that memory, and on a GPU it would be free. A replay then warns with :class:`FreedInputWarning`,
or refuses to run when the graph was captured with ``check_input_liveness=True``, as torch 2.13's
check does (``torch/utils/_cuda_debug.py``).

Tensors that are not plain strided ones (sparse, nested, quantized, or lazily conjugated or
negated views) are replayed through the program's own tensor object. A storage the program
holds only as an ``UntypedStorage`` object, with no tensor on it, counts as let go of: the
emulator cannot tell that reference from its own.
"""

from __future__ import annotations

import linecache
import sys
import warnings
import weakref
from typing import Any

import torch

from graphlab.errors import CaptureError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.support.torch_internals import storage_id, storage_use_count

from .pools import in_a_pool

__all__ = ["Binder", "CapturedInputs", "FreedInputWarning", "warn_at_caller"]

_alias_refs: dict[int, int] = {}  # storage id -> live aliases the emulator made of it


def _object_refs() -> int:
    """References a held ``UntypedStorage`` Python object adds to its storage's use count.

    Measured with the object held, as graphs hold theirs: torch 2.13 counts 1 for it even when
    nothing holds it, torch 2.5 only while something does.
    """
    tensor = torch.empty(1)
    storage = tensor.untyped_storage()
    return storage_use_count(storage_id(storage)) - 1


_OBJECT_REFS = _object_refs()


class FreedInputWarning(UserWarning):
    """A replay reads memory the program has let go of: on a GPU, freed memory (a use-after-free).

    Not an :class:`~graphlab.emulator.EmulatorDifferenceWarning`: it reports a bug in the program,
    which the course never silences.
    """


def warn_at_caller(message: str, category: type[Warning], depth: int) -> None:
    """``warnings.warn(message, category, stacklevel=depth + 1)``, with a notebook cell named as
    IPython names it in tracebacks (``Cell In[5]:3``) instead of by the temporary file that holds
    its code (``/tmp/ipykernel_1234/567.py:3``), and the cell's line shown under the warning.

    ``depth`` counts frames from this function's caller: 1 is the caller's caller.
    """
    frame = sys._getframe(depth + 1)
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    cell = getattr(getattr(shell, "compile", None), "format_code_name", lambda _: None)(filename)
    if cell:
        label = f"{cell[0]} {cell[1]}"
        lines = linecache.getlines(filename)
        if lines:  # under the label too, so that the warning can show the learner's line
            linecache.cache[label] = (sum(map(len, lines)), None, lines, label)
        filename = label
    warnings.warn_explicit(
        message,
        category,
        filename,
        lineno,
        module=frame.f_globals.get("__name__", "<string>"),
        registry=frame.f_globals.setdefault("__warningregistry__", {}),
    )


def _forget(key: int) -> None:
    left = _alias_refs[key] - 1
    if left:
        _alias_refs[key] = left
    else:
        del _alias_refs[key]


def _plain(t: torch.Tensor) -> bool:
    """Whether an alias made with ``set_`` (storage, offset, sizes, strides) stands for ``t``."""
    exotic = t.is_nested or t.is_quantized or t.is_conj() or t.is_neg()
    return t.layout is torch.strided and not exotic


class _Storage:
    """One storage a capture used: its Python object, and how it was first used (for messages)."""

    __slots__ = ("data_ptrs", "first_use", "storage")

    def __init__(self, storage: torch.UntypedStorage, tensor: torch.Tensor, func: object):
        self.storage = storage  # held, so that its id keeps naming this storage
        self.first_use = f"{tensor.dtype} tensor of shape {tuple(tensor.shape)}, used by {func}"
        self.data_ptrs: set[int] = set()  # torch counts dead tensors by their data_ptr


class Binder:
    """Makes the graph-owned aliases of one capture: one per distinct view of a storage."""

    def __init__(self) -> None:
        self._aliases: dict[tuple[Any, ...], torch.Tensor] = {}
        self.storages: dict[int, _Storage] = {}  # storage id -> what the capture used of it

    def bind(self, tree: Any, func: object) -> Any:
        """``tree`` (an op's arguments: tensors in tuples, lists, dicts) with tensors aliased.

        Written out rather than with torch's pytree, which costs more than the aliasing itself.
        """
        if isinstance(tree, torch.Tensor):
            return self._alias(tree, func)
        if isinstance(tree, (tuple, list)):
            items = [self.bind(x, func) for x in tree]
            if all(a is b for a, b in zip(items, tree, strict=True)):
                return tree  # no tensor inside: keep it as it is (a torch.Size stays one)
            return items if isinstance(tree, list) else tuple(items)
        if isinstance(tree, dict):
            return {key: self.bind(value, func) for key, value in tree.items()}
        return tree

    def _alias(self, t: torch.Tensor, func: object) -> torch.Tensor:
        if not _plain(t):
            return t
        storage = t.untyped_storage()
        offset = t.storage_offset()
        key = (storage_id(storage), t.dtype, offset, t.shape, t.stride())
        alias = self._aliases.get(key)
        if alias is not None:
            return alias
        alias = torch.empty(0, dtype=t.dtype, device=t.device)
        alias.set_(storage, offset, t.shape, t.stride())
        self._aliases[key] = alias
        sid = key[0]
        _alias_refs[sid] = _alias_refs.get(sid, 0) + 1
        weakref.finalize(alias, _forget, sid).atexit = False
        if sid not in self.storages:
            self.storages[sid] = _Storage(storage, t, func)
        self.storages[sid].data_ptrs.add(t.data_ptr())
        return alias


class CapturedInputs:
    """The program's memory a graph uses, and whether the program still owns it.

    Memory allocated by a capture (this graph's, or an earlier graph's in a pool) is the graphs'
    own: on a GPU it stays reserved in its pool when the program drops its last tensor, so it is
    not checked. (make_graphed_callables relies on that: its backward graph reads activations only
    the forward graph writes.) Nor are ``constants``, tensors made in the block from Python values
    (``torch.tensor(0.5)``), which on a GPU are host values or pool memory.
    """

    def __init__(self, binder: Binder, constants: set[int]):
        self._external = tuple(
            (sid, used)
            for sid, used in binder.storages.items()
            if sid not in constants and used.storage.nbytes() > 0 and not in_a_pool(used.storage)
        )

    def freed(self) -> list[_Storage]:
        """What only the emulator still holds: memory a GPU would have freed."""
        return [
            used
            for sid, used in self._external
            if storage_use_count(sid) <= _OBJECT_REFS + _alias_refs.get(sid, 0)
        ]


# Said in English inside the error that stands in for torch's, in the learner's language in the
# warning that is graphlab's own.
_FIX = N_(
    "Keep the tensor the graph captured and copy new values into it (static_x.copy_(new)) instead "
    "of rebinding its name, deleting it, or moving it with set_() or .data ="
)


def freed_input_error(freed: list[_Storage]) -> CaptureError:
    """What ``check_input_liveness=True`` raises at replay (torch's first line, then the why)."""
    count = sum(len(used.data_ptrs) for used in freed)
    first = freed[0]
    return CaptureError(
        f"CUDA graph replay detected {count} dead tensor(s). Dead tensor #1 "
        f"(data_ptr={min(first.data_ptrs):#x}): a {first.first_use} during capture; nothing "
        "outside the graph uses its memory any more, so on a GPU it was freed and this replay "
        f"would read freed memory. The replay did not run. Fix: {_FIX}. [CPU emulator; torch 2.13+ "
        "raises this RuntimeError, with the tensor's creation and deletion tracebacks.]"
    )


def warn_freed(freed: list[_Storage]) -> None:
    """Warn that this replay reads memory that a GPU would have freed."""
    what = "; ".join(used.first_use for used in freed)
    warn_at_caller(
        _(
            "This replay reads an input the program has let go of ({what} during capture): on a "
            "GPU its memory was freed, and the replay reads or writes whatever was allocated there "
            "since (a use-after-free: garbage results, or another tensor overwritten). The CPU "
            "emulator kept the memory and replays with its last values. Fix: {fix}. torch 2.13+ "
            "catches this with torch.cuda.graph(g, check_input_liveness=True)."
        ).format(what=what, fix=_(_FIX)),
        FreedInputWarning,
        depth=2,  # the code that called replay()
    )
