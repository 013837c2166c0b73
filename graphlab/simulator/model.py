"""The simulator's engine: one host thread issues operations, GPU streams execute the work.

The host works through a :class:`Program` in order. Each operation costs the host some time:

- an eager **launch** submits one kernel to a stream;
- a **graph launch** submits every node of a captured graph at once;
- an **event** op (record + wait, for a fork or join) costs host time and submits nothing;
- a **sync** makes the host wait until every stream has finished, then costs ``sync`` time.

The host never waits for the GPU except at a sync: it runs ahead, and launched work queues up
(optionally the queue is bounded, and a launch then waits for room in it). A kernel starts at
the latest of three moments: its launch call's end plus the launch latency, the end of the
previous kernel on its stream plus that kernel's gap, and the end of any kernel on another
stream it waits for (an event, or a captured fork/join edge) plus the edge's gap.

Why it is fast: on one stream, ``start[i] = max(release[i], end[i-1] + gap[i])`` unrolls to
``start[i] = P[i] + max(release[j] - P[j] for j <= i)``, where ``P`` is a running sum of
durations and gaps; that running maximum is one ``np.maximum.accumulate``. A sync drains the GPU,
so the stretch between two syncs ("segment") does not depend on what came before except through
its start time: every segment is scheduled at once from time zero, and the segments are then laid
end to end with a cumulative sum. Waits between streams are met by repeating the vectorised pass
until no start time moves (one extra pass per hop between streams inside a segment); so is a
bounded launch queue, alternating between host times and GPU times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphlab.errors import SimulatorError
from graphlab.language import gettext as _

__all__ = [
    "HOST_THREAD",
    "MAX_KERNELS",
    "OP_EVENT",
    "OP_GRAPH_LAUNCH",
    "OP_LAUNCH",
    "OP_SYNC",
    "Program",
    "Schedule",
    "schedule",
    "simulate",
]

OP_LAUNCH, OP_GRAPH_LAUNCH, OP_EVENT, OP_SYNC = 0, 1, 2, 3

# The runtime call each op kind shows up as in the timeline (event ops are not shown).
_OP_EVENT_KIND = {OP_LAUNCH: "launch", OP_GRAPH_LAUNCH: "launch", OP_SYNC: "sync"}
_OP_CALL_NAME = {
    OP_LAUNCH: "cudaLaunchKernel",
    OP_GRAPH_LAUNCH: "cudaGraphLaunch",
    OP_SYNC: "cudaDeviceSynchronize",
}

HOST_THREAD = 1  # thread id of the simulated host thread
DEVICE = 0  # the simulated GPU's index

# A simulated kernel costs about 100 bytes of arrays; ten million is already ~1 GB of memory.
MAX_KERNELS = 10_000_000


@dataclass(frozen=True)
class Program:
    """What the host does, in order, and the GPU work each host operation submits.

    Everything is an array so that a million kernels are built and simulated without a Python
    loop; :mod:`graphlab.simulator.programs` builds programs from readable descriptions.

    Host operations (one entry per op, in issue order):
        op_kind: ``OP_LAUNCH``, ``OP_GRAPH_LAUNCH``, ``OP_EVENT`` or ``OP_SYNC``.
        op_host_ns: host time the op costs; for a sync, the time it takes once the GPU is done.

    GPU work items (kernels and graph nodes, in the order they were submitted):
        item_op: index of the host op that submitted the item (non-decreasing).
        item_stream: stream the item runs on; items of one stream run in submission order.
        item_dur_ns: how long the item runs.
        item_gap_ns: least device time between the previous item on its stream ending and this
            one starting (0 for eager kernels, the per-node gap for graph nodes).
        item_name: index into ``names``.

    Waits between streams (one entry per edge): item ``edge_item`` starts no earlier than
    ``edge_gap_ns`` after item ``edge_after`` (submitted earlier) ends.

    launch_latency_ns: from the end of a launch op to the earliest start of what it submitted.
    meta: facts copied into the timeline's meta (parameters, workload, calibration provenance).
    queue_depth: launches the GPU's queue holds (None: no limit). The m-th launch after a sync
        cannot return before all the work of launch m - queue_depth has finished.
    """

    op_kind: np.ndarray
    op_host_ns: np.ndarray
    item_op: np.ndarray
    item_stream: np.ndarray
    item_dur_ns: np.ndarray
    item_gap_ns: np.ndarray
    item_name: np.ndarray
    names: tuple[str, ...]
    edge_item: np.ndarray
    edge_after: np.ndarray
    edge_gap_ns: np.ndarray
    launch_latency_ns: int
    meta: dict[str, Any] = field(default_factory=dict)
    queue_depth: int | None = None

    def __post_init__(self):
        n_items = len(self.item_op)
        if n_items > MAX_KERNELS:
            raise SimulatorError(
                _(
                    "{kernels:,} kernels is too many to simulate (at most {largest:,}, about "
                    "1 GB of memory): simulate fewer kernels or fewer iterations"
                ).format(kernels=n_items, largest=MAX_KERNELS)
            )
        if not (len(self.item_stream) == len(self.item_dur_ns) == n_items):
            raise SimulatorError(_("program arrays disagree in length: build it with workloads"))
        if n_items and (np.any(np.diff(self.item_op) < 0) or self.item_op[-1] >= len(self)):
            raise SimulatorError(_("items must be submitted by existing ops, in issue order"))
        submitters = self.op_kind[self.item_op]
        if np.any((submitters != OP_LAUNCH) & (submitters != OP_GRAPH_LAUNCH)):
            raise SimulatorError(_("only launch and graph-launch ops submit GPU work"))
        if self.queue_depth is not None and not (
            isinstance(self.queue_depth, (int, np.integer)) and self.queue_depth >= 1
        ):
            raise SimulatorError(
                _("queue_depth must be a whole number >= 1, got {value!r}").format(
                    value=self.queue_depth
                )
            )
        if len(self.edge_item) and np.any(self.edge_after >= self.edge_item):
            raise SimulatorError(
                _("a wait must be on work submitted earlier (edge_after < edge_item)")
            )

    def __len__(self) -> int:
        return len(self.op_kind)

    @property
    def n_kernels(self) -> int:
        return len(self.item_op)


@dataclass(frozen=True)
class Schedule:
    """When everything in a :class:`Program` happens, in nanoseconds from the first op's start.

    ``op_start_ns``/``op_end_ns`` per host op (a sync ends when the host may go on);
    ``item_start_ns``/``item_end_ns`` per GPU item.
    """

    op_start_ns: np.ndarray
    op_end_ns: np.ndarray
    item_start_ns: np.ndarray
    item_end_ns: np.ndarray

    @property
    def end_ns(self) -> int:
        """When the program is over: the host is done and so is the GPU."""
        ends = [a.max() for a in (self.op_end_ns, self.item_end_ns) if len(a)]
        return int(max(ends)) if ends else 0


def _segment_starts(keys: np.ndarray) -> np.ndarray:
    """Indices where a run of equal values begins in a sorted key array."""
    return np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])


def _segmented_running_max(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` restarting at each new ``group`` (sorted, contiguous groups).

    Each group's values are shifted into a band of integers above every earlier group's band, so
    one ``np.maximum.accumulate`` over the whole array never carries a maximum across groups.
    """
    starts = _segment_starts(group)
    low = np.minimum.reduceat(values, starts)
    high = np.maximum.reduceat(values, starts)
    band = np.cumsum(high - low + 1) - (high - low + 1)  # first integer of each group's band
    sizes = np.diff(np.r_[starts, len(values)])
    offset = np.repeat(band - low, sizes)
    return np.maximum.accumulate(values + offset) - offset


def _device_starts(release, group, dur, gap, edges) -> np.ndarray:
    """Start of each item: stream order within each (segment, stream) group, plus edge waits.

    ``group`` must be sorted. Stream order unrolls into a running maximum (module docstring);
    edges are met by raising ``release`` to ``end[after] + gap`` and repeating until stable.
    """
    edge_item, edge_after, edge_gap = edges
    # P[i] - P[j] = gaps of items j+1..i + durations of items j..i-1: the least time from the start
    # of item j to the start of item i on one stream.
    cumulative = np.cumsum(gap + dur) - dur
    lower = release
    while True:
        start = cumulative + _segmented_running_max(lower - cumulative, group)
        if not len(edge_item):
            return start
        raised = release.copy()
        np.maximum.at(raised, edge_item, start[edge_after] + dur[edge_after] + edge_gap)
        if np.array_equal(raised, lower):
            return start
        lower = raised


def _queue_waits(p: Program, op_seg: np.ndarray) -> np.ndarray:
    """Per op: the launch op whose work must finish before this launch can return (-1: none).

    With a launch queue of depth Q, the m-th launch after a sync waits for launch m - Q.
    """
    waits_for = np.full(len(p), -1, dtype=np.int64)
    if p.queue_depth is None:
        return waits_for
    launches = np.flatnonzero((p.op_kind == OP_LAUNCH) | (p.op_kind == OP_GRAPH_LAUNCH))
    seg = op_seg[launches]
    position = np.arange(len(launches))
    first_in_segment = np.maximum.accumulate(
        np.where(np.r_[True, seg[1:] != seg[:-1]], position, 0)
    )
    rank = position - first_in_segment  # launches before this one since the last sync
    blocked = rank >= p.queue_depth
    waits_for[launches[blocked]] = launches[np.flatnonzero(blocked) - p.queue_depth]
    return waits_for


def schedule(program: Program) -> Schedule:
    """Work out when every host op and GPU item of ``program`` starts and ends."""
    p = program
    n_ops = len(p)
    if n_ops == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Schedule(empty, empty, empty, empty)
    is_sync = p.op_kind == OP_SYNC
    # Segment j holds the ops after the (j-1)-th sync up to and including the j-th sync.
    op_seg = np.cumsum(is_sync) - is_sync
    n_seg = int(op_seg[-1]) + 1
    first_op = _segment_starts(op_seg)
    # Host time inside a segment, from its start, if the host never had to wait (the wait at
    # the sync that closes it comes later).
    work = np.where(is_sync, 0, p.op_host_ns)
    done = np.cumsum(work)
    unblocked_end = done - (done - work)[first_op][op_seg]

    item_seg = op_seg[p.item_op]
    # Items sorted by (segment, stream); submission order is kept within each group.
    streams, stream_index = np.unique(p.item_stream, return_inverse=True)
    group = item_seg * len(streams) + stream_index.reshape(-1)
    order = np.argsort(group, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    # A sync drains the GPU, so a wait across a sync is already met: keep waits within a segment.
    same = item_seg[p.edge_item] == item_seg[p.edge_after]
    edges = (rank[p.edge_item[same]], rank[p.edge_after[same]], p.edge_gap_ns[same])

    # A full launch queue makes a launch wait for the GPU: host and GPU times then depend on
    # each other, so alternate between them until nothing moves (once without a queue).
    waits_for = _queue_waits(p, op_seg)
    blocked = waits_for >= 0
    free_at = np.zeros(n_ops, dtype=np.int64)  # when each blocked launch may begin
    while True:
        # op_end = work so far + the longest wait so far: a running maximum per segment.
        waited = np.where(blocked, free_at - (unblocked_end - work), 0)
        op_end_rel = unblocked_end + _segmented_running_max(waited, op_seg)
        release = op_end_rel[p.item_op] + p.launch_latency_ns
        start_sorted = _device_starts(
            release[order], group[order], p.item_dur_ns[order], p.item_gap_ns[order], edges
        )
        item_start_rel = np.empty_like(start_sorted)
        item_start_rel[order] = start_sorted
        item_end_rel = item_start_rel + p.item_dur_ns
        if not blocked.any():
            break
        launch_done = np.zeros(n_ops, dtype=np.int64)
        np.maximum.at(launch_done, p.item_op, item_end_rel)
        now_free_at = np.where(blocked, launch_done[waits_for], 0)
        if np.array_equal(now_free_at, free_at):
            break
        free_at = now_free_at
    # Each op starts when the previous one ended: a launch that waited for the queue shows the
    # wait inside its call, as a real trace does.
    op_start_rel = np.r_[0, op_end_rel[:-1]]
    op_start_rel[first_op] = 0

    # Each segment lasts until its sync returns: once the host has reached the sync and the GPU
    # has finished, plus the sync's own cost. The last segment may end without a sync.
    gpu_done = np.zeros(n_seg, dtype=np.int64)
    np.maximum.at(gpu_done, item_seg, item_end_rel)
    sync_ops = np.flatnonzero(is_sync)
    sync_return = np.maximum(op_start_rel[sync_ops], gpu_done[op_seg[sync_ops]])
    sync_return = sync_return + p.op_host_ns[sync_ops]
    seg_length = np.zeros(n_seg, dtype=np.int64)
    seg_length[op_seg[sync_ops]] = sync_return
    seg_start = np.cumsum(seg_length) - seg_length

    op_end_rel[sync_ops] = sync_return
    return Schedule(
        op_start_ns=op_start_rel + seg_start[op_seg],
        op_end_ns=op_end_rel + seg_start[op_seg],
        item_start_ns=item_start_rel + seg_start[item_seg],
        item_end_ns=item_end_rel + seg_start[item_seg],
    )


def simulate(program: Program):
    """Simulate ``program`` and return its :class:`graphlab.Timeline`.

    Host launch and sync calls are events on thread :data:`HOST_THREAD`; kernels are events on
    their streams of GPU 0. A launch and its kernels share a correlation id (the op's index + 1),
    so every kernel of one replay carries its ``cudaGraphLaunch``'s id, as in a real trace.
    Event ops (record/wait) cost host time but are not shown: the timeline has no kind for them.
    meta is ``{"source": "simulator", **program.meta}``.
    """
    from graphlab.trace.timeline import Timeline

    s = schedule(program)
    p = program
    shown = np.flatnonzero(p.op_kind != OP_EVENT)
    n_host, n_gpu = len(shown), p.n_kernels
    # Names are codes into one table (the runtime calls, then the kernel names) until the rows
    # are in start order: reordering small integers is far cheaper than reordering strings.
    calls = [_OP_CALL_NAME.get(k, "") for k in range(4)]
    table = np.array(calls + list(p.names), dtype=object)
    code = np.concatenate([p.op_kind[shown].astype(np.int64), p.item_name + len(calls)])
    start = np.concatenate([s.op_start_ns[shown], s.item_start_ns])
    end = np.concatenate([s.op_end_ns[shown], s.item_end_ns])
    host_corr = np.where(p.op_kind[shown] == OP_SYNC, -1, shown + 1)
    columns = {
        "device": np.r_[np.full(n_host, -1), np.full(n_gpu, DEVICE)],
        "stream": np.r_[np.full(n_host, -1), p.item_stream],
        "thread": np.r_[np.full(n_host, HOST_THREAD), np.full(n_gpu, -1)],
        "correlation": np.r_[host_corr, p.item_op + 1],
    }
    order = np.argsort(start, kind="stable")
    kinds = np.array([_OP_EVENT_KIND.get(k, "") for k in range(4)] + ["kernel"] * len(p.names))
    return Timeline(
        kind=kinds[code[order]],
        name=table[code[order]],
        start_ns=start[order],
        dur_ns=(end - start)[order],
        **{col: values[order] for col, values in columns.items()},
        meta={"source": "simulator", **p.meta},
    )
