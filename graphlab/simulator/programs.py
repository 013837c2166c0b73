"""Workloads for the simulator: a step of GPU work, run eagerly or as CUDA Graph replays.

A :class:`Step` is the GPU work of one iteration of a loop: kernels with durations, the stream
each is issued on, and waits between streams. Build one with :func:`chain` (N kernels in a row),
:func:`model_step` (a list of kernel durations, e.g. the layers of a small model) or
:func:`fork_join` (two branches on two streams between a fork and a join). Then turn it into a
:class:`~graphlab.simulator.model.Program` with :func:`eager` (the host launches every kernel,
every iteration) or :func:`graph` (the step is captured once; the host launches one replay per
iteration), and hand that to :func:`~graphlab.simulator.model.simulate`.

``sync_every=k`` puts a host sync after every k-th kernel of a step (``.item()`` or
``torch.cuda.synchronize()`` in the loop). A graph cannot contain a host sync, so with
``sync_every`` the step is captured as several graphs, one per stretch between syncs, and each
replay launches them in turn with a sync after each: the best a graph can do for such a loop.
Every program ends with a sync, as a timed loop must.

:func:`graph` can also launch eager copy kernels around each replay (``copy_in_us``,
``copy_out_us``): the end-to-end loop that copies new inputs in and clones the outputs. Both
builders take ``queue_depth`` to bound how many launches the GPU's queue holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from graphlab.errors import SimulatorError
from graphlab.language import gettext as _

from .model import (
    MAX_KERNELS,
    OP_EVENT,
    OP_GRAPH_LAUNCH,
    OP_LAUNCH,
    OP_SYNC,
    Program,
)
from .params import MAX_DURATION_US, SimParams

__all__ = ["Step", "chain", "eager", "fork_join", "graph", "model_step"]

MAIN_STREAM, SIDE_STREAM = 0, 1


def _ns(us) -> np.ndarray:
    """Microseconds (float) to integer nanoseconds, rounded to the nearest ns."""
    return np.rint(np.asarray(us, dtype=np.float64) * 1000.0).astype(np.int64)


def _count(name: str, value, at_most: int = MAX_KERNELS) -> int:
    """``value`` as an int in [1, at_most], else SimulatorError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SimulatorError(
            _("{name} must be a whole number, got {value!r:.40}").format(name=name, value=value)
        )
    if not 1 <= value <= at_most:
        raise SimulatorError(
            _("{name} must be between 1 and {largest:,}, got {value:,}").format(
                name=name, largest=at_most, value=value
            )
        )
    return int(value)


def _durations(name: str, values) -> np.ndarray:
    """Kernel durations in µs as a float array, each finite and in [0, MAX_DURATION_US]."""
    try:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        raise SimulatorError(
            _("{name} must be numbers of microseconds, got {value!r:.40}").format(
                name=name, value=values
            )
        ) from None
    bad = ~((array >= 0) & (array <= MAX_DURATION_US))  # also catches NaN
    if np.any(bad):
        raise SimulatorError(
            _(
                "{name} must be between 0 and {largest:g} µs, got {value!r}: "
                "pass non-negative, finite durations"
            ).format(name=name, largest=MAX_DURATION_US, value=float(array[bad][0]))
        )
    return array


@dataclass(frozen=True)
class Step:
    """The GPU work of one iteration, in the order the host issues it.

    kernel_us: duration of each kernel (µs). stream: the stream each kernel is issued on.
    names, name_index: the distinct kernel names, and which one each kernel has.
    waits: pairs ``(i, j)``: kernel ``i`` waits for kernel ``j < i``, on another stream, to
    finish (an event wait in eager code, a fork or join edge in a captured graph).
    label: what the step is, for the timeline's meta.
    """

    kernel_us: np.ndarray
    stream: np.ndarray
    names: tuple[str, ...]
    name_index: np.ndarray
    waits: np.ndarray
    label: str

    def __len__(self) -> int:
        return len(self.kernel_us)


def _one_stream(durations: np.ndarray, names: Sequence[str], label: str) -> Step:
    """A step of ``durations`` on the main stream, kernel i named ``names[i % len(names)]``."""
    n = len(durations)
    distinct, index = np.unique(np.asarray(names, dtype=object).astype(str), return_inverse=True)
    return Step(
        kernel_us=durations,
        stream=np.full(n, MAIN_STREAM, dtype=np.int64),
        names=tuple(distinct.tolist()),
        name_index=np.resize(index.reshape(-1), n),
        waits=np.zeros((0, 2), dtype=np.int64),
        label=label,
    )


def chain(n_kernels: int, kernel_us, name: str = "kernel") -> Step:
    """``n_kernels`` kernels in a row on one stream, each ``kernel_us`` long (number or list)."""
    n = _count("kernels", n_kernels)
    durations = _durations("kernel duration", kernel_us)
    if durations.size == 1:
        durations = np.full(n, durations[0])
    elif durations.size != n:
        raise SimulatorError(
            _("got {durations} kernel durations for {kernels} kernels").format(
                durations=durations.size, kernels=n
            )
        )
    return _one_stream(durations, [name], f"chain of {n} kernels")


def model_step(kernel_us: Sequence[float], names: Sequence[str] | None = None) -> Step:
    """A small model's step: its kernels' durations in order (and optionally their names)."""
    durations = _durations("kernel duration", kernel_us)
    n = _count("kernels", durations.size)
    if names is not None and len(names) != n:
        raise SimulatorError(
            _("got {names} names for {durations} kernel durations").format(
                names=len(names), durations=n
            )
        )
    names = names if names is not None else ["kernel"]
    return _one_stream(durations, names, f"model step of {n} kernels")


def fork_join(
    main_us: Sequence[float],
    side_us: Sequence[float],
    before_us: Sequence[float] = (),
    after_us: Sequence[float] = (),
) -> Step:
    """Two branches on two streams between a fork and a join.

    Issue order: ``before_us`` kernels on the main stream; the fork (the side stream waits for
    the main stream); the ``side_us`` kernels on the side stream; the ``main_us`` kernels on the
    main stream; the join (the main stream waits for the side stream); ``after_us`` on the main
    stream. The branches overlap unless something else (the host, a gap) keeps them apart.
    """
    parts = {
        "before": _durations("before_us", before_us),
        "side": _durations("side_us", side_us),
        "main": _durations("main_us", main_us),
        "after": _durations("after_us", after_us),
    }
    if not parts["side"].size or not parts["main"].size:
        raise SimulatorError(_("fork_join needs at least one kernel on each branch"))
    sizes = [parts[k].size for k in ("before", "side", "main", "after")]
    _count("kernels", sum(sizes))
    first = dict(zip(parts, np.cumsum([0, *sizes[:-1]]).tolist(), strict=True))
    waits = []
    if sizes[0]:  # fork: the first side kernel waits for the last kernel before the fork
        waits.append((first["side"], first["side"] - 1))
    if sizes[3]:  # join: the first kernel after the join waits for the last side kernel
        waits.append((first["after"], first["main"] - 1))
    stream = np.concatenate(
        [
            np.full(size, SIDE_STREAM if part == "side" else MAIN_STREAM)
            for part, size in zip(parts, sizes, strict=True)
        ]
    ).astype(np.int64)
    return Step(
        kernel_us=np.concatenate(list(parts.values())),
        stream=stream,
        names=tuple(parts),
        name_index=np.repeat(np.arange(4), sizes),
        waits=np.array(waits, dtype=np.int64).reshape(-1, 2),
        label=f"fork/join: {sizes[1]} side and {sizes[2]} main kernels",
    )


def _sync_points(step: Step, sync_every: int | None) -> np.ndarray:
    """Boolean per kernel of a step: is there a host sync right after it?"""
    after = np.zeros(len(step), dtype=bool)
    if sync_every is not None:
        k = _count("sync_every", sync_every)
        after[k - 1 :: k] = True
    return after


def _check_repeats(per_repeat: int, repeats: int, what: str) -> int:
    """``repeats`` as an int, if ``per_repeat`` kernels that many times stay under MAX_KERNELS."""
    repeats = _count(what, repeats)
    total = per_repeat * repeats
    if total > MAX_KERNELS:
        raise SimulatorError(
            _(
                "{per_repeat:,} kernels x {repeats:,} {what} = {total:,} kernels is too many to "
                "simulate (at most {largest:,}): use fewer {what} or fewer kernels"
            ).format(
                per_repeat=per_repeat, repeats=repeats, what=what, total=total, largest=MAX_KERNELS
            )
        )
    return repeats


def _tile_indices(indices: np.ndarray, period: int, repeats: int) -> np.ndarray:
    """``indices`` into one repeat (a vector, or rows of pairs), for ``repeats`` repeats in a row:
    the copy for repeat r is shifted by ``r * period``."""
    offsets = np.arange(repeats, dtype=np.int64) * period
    shifted = indices[np.newaxis] + offsets.reshape(-1, *[1] * indices.ndim)
    return shifted.reshape(-1, *indices.shape[1:])


def _tile(step: Step, repeats: int, what: str):
    """The step's kernels repeated ``repeats`` times: durations (ns), streams, names, waits."""
    repeats = _check_repeats(len(step), repeats, what)
    return (
        np.tile(_ns(step.kernel_us), repeats),
        np.tile(step.stream, repeats),
        np.tile(step.name_index, repeats),
        _tile_indices(step.waits, len(step), repeats),
    )


def _depth(queue_depth: int | None) -> int | None:
    return None if queue_depth is None else _count("queue_depth", queue_depth)


def _meta(step: Step, params: SimParams, mode: str, repeats: int, sync_every) -> dict:
    return {
        "mode": mode,
        "workload": {
            "label": step.label,
            "kernels": len(step),
            "repeats": repeats,
            "sync_every": sync_every,
        },
        "params": params.to_dict(),
        "calibration": params.calibration,
    }


def eager(
    step: Step,
    params: SimParams,
    *,
    iterations: int = 1,
    sync_every: int | None = None,
    queue_depth: int | None = None,
) -> Program:
    """The step run eagerly ``iterations`` times: one host launch per kernel, every iteration.

    Each kernel costs the host ``params.host_us``; so does each wait between streams (an event
    record and a stream wait, one Python call). A kernel already queued starts
    ``params.kernel_gap_us`` after the previous kernel on its stream ends. ``queue_depth``
    bounds the launches the GPU holds: the host then waits for room (None: no bound).
    """
    dur, stream, name, waits = _tile(step, iterations, "iterations")
    total = len(dur)
    sync_after = np.tile(_sync_points(step, sync_every), iterations)
    sync_after[-1] = True
    waits_before = np.bincount(waits[:, 0], minlength=total)
    block = waits_before + 1 + sync_after  # ops per kernel: its waits, its launch, maybe a sync
    launch_op = np.cumsum(block) - block + waits_before
    op_kind = np.full(int(block.sum()), OP_EVENT, dtype=np.int8)
    op_kind[launch_op] = OP_LAUNCH
    op_kind[launch_op[sync_after] + 1] = OP_SYNC
    op_host = np.where(op_kind == OP_SYNC, _ns(params.sync_us), _ns(params.host_us))
    return Program(
        op_kind=op_kind,
        op_host_ns=op_host,
        item_op=launch_op,
        item_stream=stream,
        item_dur_ns=dur,
        item_gap_ns=np.full(total, _ns(params.kernel_gap_us), dtype=np.int64),
        item_name=name,
        names=step.names,
        edge_item=waits[:, 0],
        edge_after=waits[:, 1],
        edge_gap_ns=np.zeros(len(waits), dtype=np.int64),
        launch_latency_ns=int(_ns(params.launch_latency_us)),
        meta=_meta(step, params, "eager", iterations, sync_every),
        queue_depth=_depth(queue_depth),
    )


def graph(
    step: Step,
    params: SimParams,
    *,
    replays: int = 1,
    sync_every: int | None = None,
    copy_in_us: Sequence[float] = (),
    copy_out_us: Sequence[float] = (),
    queue_depth: int | None = None,
) -> Program:
    """The step captured once and replayed ``replays`` times (capture itself is not simulated).

    Each replay costs the host ``params.graph_launch_us`` per graph; its nodes are released
    together and run in captured order, ``params.node_gap_us`` after the node they depend on.
    A graph's first node on each stream waits ``params.replay_gap_us`` longer after earlier work
    on that stream. With ``sync_every`` the step is captured as one graph per stretch between
    syncs.

    ``copy_in_us`` and ``copy_out_us`` are eager copy kernels launched before and after each
    replay (an end-to-end loop copies new inputs into the static buffers and clones the outputs):
    each costs the host ``params.host_us``, like any eager launch. ``queue_depth`` bounds the
    launches (graph launches and copies) the GPU holds, as for :func:`eager`.
    """
    copy_in = _ns(_durations("copy_in_us", copy_in_us))
    copy_out = _ns(_durations("copy_out_us", copy_out_us))
    n_in, n_out, n_step = len(copy_in), len(copy_out), len(step)
    n_items = n_in + n_step + n_out  # per replay: copies in, the step's nodes, copies out
    replays = _check_repeats(n_items, replays, "replays")
    sync_after = _sync_points(step, sync_every)
    # Piece = one captured graph: a new one starts after every sync point of the step.
    piece = np.cumsum(np.r_[False, sync_after[:-1]])
    kinds, item_op = _replay_ops(piece, sync_after, n_in, n_out)
    op_kind = _repeat_ops(kinds, replays)

    def per_item(copies, nodes) -> np.ndarray:
        """One replay's value per item (copies in, nodes, copies out), for every replay."""
        ins, outs = np.full(n_in, copies, dtype=np.int64), np.full(n_out, copies, dtype=np.int64)
        return np.tile(np.concatenate([ins, np.asarray(nodes, dtype=np.int64), outs]), replays)

    waits = _tile_indices(step.waits + n_in, n_items, replays)
    return Program(
        op_kind=op_kind,
        op_host_ns=_op_host_ns(op_kind, params),
        item_op=_tile_indices(item_op, len(kinds), replays),
        item_stream=per_item(MAIN_STREAM, step.stream),
        item_dur_ns=np.tile(np.concatenate([copy_in, _ns(step.kernel_us), copy_out]), replays),
        item_gap_ns=per_item(_ns(params.kernel_gap_us), _node_gaps(step, piece, params)),
        item_name=per_item(len(step.names), step.name_index),
        names=(*step.names, "copy"),
        edge_item=waits[:, 0],
        edge_after=waits[:, 1],
        edge_gap_ns=np.full(len(waits), _ns(params.node_gap_us), dtype=np.int64),
        launch_latency_ns=int(_ns(params.launch_latency_us)),
        meta=_meta(step, params, "graph", replays, sync_every),
        queue_depth=_depth(queue_depth),
    )


def _replay_ops(
    piece: np.ndarray, sync_after: np.ndarray, n_in: int, n_out: int
) -> tuple[list[int], np.ndarray]:
    """One replay's host ops (copies in, each graph and its sync, copies out), and for each
    item (copy or node) the op that launches it. ``piece[i]`` is the graph of node ``i``."""
    kinds = [OP_LAUNCH] * n_in
    piece_op = []
    for p in range(int(piece[-1]) + 1):
        piece_op.append(len(kinds))
        kinds.append(OP_GRAPH_LAUNCH)
        if sync_after[piece == p][-1]:
            kinds.append(OP_SYNC)
    first_out = len(kinds)
    kinds += [OP_LAUNCH] * n_out
    item_op = np.concatenate(
        [np.arange(n_in), np.array(piece_op, dtype=np.int64)[piece], first_out + np.arange(n_out)]
    )
    return kinds, item_op


def _repeat_ops(kinds: list[int], replays: int) -> np.ndarray:
    """One replay's op kinds for every replay; the program ends with a sync."""
    op_kind = np.tile(np.array(kinds, dtype=np.int8), replays)
    if op_kind[-1] != OP_SYNC:
        op_kind = np.r_[op_kind, np.int8(OP_SYNC)]
    return op_kind


def _op_host_ns(op_kind: np.ndarray, params: SimParams) -> np.ndarray:
    """What each host op of a replay program costs the host (ns)."""
    op_host = np.full(len(op_kind), _ns(params.sync_us), dtype=np.int64)
    for kind, cost in {OP_LAUNCH: params.host_us, OP_GRAPH_LAUNCH: params.graph_launch_us}.items():
        op_host[op_kind == kind] = _ns(cost)
    return op_host


def _node_gaps(step: Step, piece: np.ndarray, params: SimParams) -> np.ndarray:
    """Each node's gap after the node it depends on (ns); a graph's first node on each stream
    also pays the replay gap."""
    _, first_in_graph = np.unique(np.c_[piece, step.stream], axis=0, return_index=True)
    node_gaps = np.full(len(step), _ns(params.node_gap_us), dtype=np.int64)
    node_gaps[first_in_graph] += _ns(params.replay_gap_us)
    return node_gaps
