"""Correct answers to the lessons' exercises, two ways each, that every checker must accept.

The first of each pair is the lesson's reference solution; the second is another correct way a
learner may write it (a list instead of a tuple, ``cuda.manual_seed`` instead of
``torch.manual_seed``, ``static_x[:] = batch`` instead of ``copy_``, a NumPy or Fraction result).
They run on the live backend: the CPU emulator here, torch.cuda on a GPU (tests/gpu/).

:data:`RIGHT` lists ``(checker, answer)``; :data:`SUCCESS` holds each checker's success line as a
regular expression, its values worked out by hand from the exercise's setup.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import torch
from wrong_answers import (
    adam,
    capture_all,
    capture_only,
    fixed_step,
    make_model_right,
    warm_up,
)

from graphlab import DEVICE, cuda
from graphlab.editing import update_graph
from graphlab.timing.decoder import describe

# --- lesson 00 ----------------------------------------------------------------------------------


def busy_fraction(t):
    gpu = t.select(t.is_gpu)
    return gpu.dur_ns.sum() / (gpu.end_ns.max() - gpu.start_ns.min())


def busy_fraction_of_kernels(t):
    kernels = t.kind == "kernel"
    span = t.end_ns[kernels].max() - t.start_ns[kernels].min()
    return np.float64(t.dur_ns[kernels].sum()) / span


# --- lesson 01 ----------------------------------------------------------------------------------


def capture_chain(static_x, n):
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x
        for _ in range(n):
            out = out + 1
    return g, out


def capture_chain_in_place_on_a_copy(static_x, n):
    """A copy of the input, then n in-place additions on the copy: a list, not a tuple."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x.clone()
        for _ in range(n):
            out.add_(1.0)
    return [g, out]


def kernels_per_replay(t):
    first = t.correlation[(t.kind == "launch") & (t.name == "cudaGraphLaunch")][0]
    return int(((t.kind == "kernel") & (t.correlation == first)).sum())


def kernels_per_replay_earliest(t):
    """The earliest cudaGraphLaunch by start time, counted with NumPy."""
    launches = np.flatnonzero((t.kind == "launch") & (t.name == "cudaGraphLaunch"))
    first = launches[np.argmin(t.start_ns[launches])]
    return np.count_nonzero((t.kind == "kernel") & (t.correlation == t.correlation[first]))


# --- lesson 02 ----------------------------------------------------------------------------------


def step(graph, static_x, static_y, batch):
    static_x.copy_(batch)
    graph.replay()
    return static_y


def step_by_slice_assignment(graph, static_x, static_y, batch):
    static_x[:] = batch
    graph.replay()
    return static_y.clone()


# --- lesson 03 ----------------------------------------------------------------------------------


def collect(graph, static_x, static_y, batches):
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y.clone())
    return kept


def collect_tuple(graph, static_x, static_y, batches):
    def one(batch):
        static_x.copy_(batch)
        graph.replay()
        return static_y.detach().clone()

    return tuple(one(batch) for batch in batches)


def collect_on_the_host(graph, static_x, static_y, batches):
    """Right on a GPU, where .cpu() copies to the host; on the CPU emulator it returns static_y."""
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y.cpu())
    return kept


# --- lesson 04 ----------------------------------------------------------------------------------


def two_replays(graph, static_out, seed):
    kept = []
    for _ in range(2):
        torch.manual_seed(seed)
        graph.replay()
        kept.append(static_out.clone())
    return kept[0], kept[1]


def two_replays_cuda_seed(graph, static_out, seed):
    kept = []
    for _ in range(2):
        cuda.manual_seed(seed)
        graph.replay()
        kept.append(torch.empty_like(static_out).copy_(static_out))
    return kept


# --- lesson 05 ----------------------------------------------------------------------------------


def run_padded(graphs, batch):
    n = batch.shape[0]
    size = min(s for s in graphs if s >= n)
    graph, static_x, static_y = graphs[size]
    static_x.zero_()
    static_x[:n].copy_(batch)
    graph.replay()
    return static_y[:n].clone()


def run_padded_with_pad(graphs, batch):
    """Pads the batch to the bucket with zero rows and copies the whole input."""
    n = batch.shape[0]
    graph, static_x, static_y = next(graphs[s] for s in sorted(graphs) if s >= n)
    static_x.copy_(torch.nn.functional.pad(batch, (0, 0, 0, static_x.shape[0] - n)))
    graph.replay()
    return static_y.narrow(0, 0, n).clone()


def padding_waste(sizes, buckets):
    computed = sum(min(b for b in buckets if b >= n) for n in sizes)
    return (computed - sum(sizes)) / computed


def padding_waste_fraction(sizes, buckets):
    padded = [min(b for b in buckets if b >= n) for n in sizes]
    return 1 - Fraction(sum(sizes), sum(padded))


# --- lesson 06 ----------------------------------------------------------------------------------


def break_even(t):
    saving = t["eager_end_to_end_us"] - t["replay_end_to_end_us"]
    if saving <= 0:
        return None
    return t["capture_us"] / saving


def break_even_numpy(t):
    eager, replay = np.float64(t["eager_end_to_end_us"]), np.float64(t["replay_end_to_end_us"])
    return t["capture_us"] / (eager - replay) if replay < eager else None


# --- lesson 10 ----------------------------------------------------------------------------------


def replayed(calls):
    return calls["replays"] > 0 and calls["captures"] == 0 and calls["cudagraph_skips"] == 0


def replayed_by_the_log(calls):
    skipped = any(line.startswith("skipping cudagraphs") for line in calls["log"])
    return not skipped and not calls["captures"] and calls["replays"] >= 1


# --- lesson 07 ----------------------------------------------------------------------------------


def capture_step(model, optimizer, static_x, static_y):
    warm_up(model, optimizer, static_x, static_y)
    optimizer.zero_grad(set_to_none=True)
    graph, static_loss = capture_only(model, optimizer, static_x, static_y)
    return [graph, static_loss]


def sgd(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


# --- lesson 08 ----------------------------------------------------------------------------------


def capture_all_sharing_the_first_pool(sizes):
    """Later graphs pass the first graph's pool(); entries are lists."""
    graphs, pool = {}, None
    for size in sizes:
        static_x = torch.zeros(size, device=DEVICE)
        graph = cuda.CUDAGraph()
        with cuda.graph(graph, pool=pool):
            static_y = 2 * static_x + 1
        pool = graph.pool() if pool is None else pool
        graphs[size] = [graph, static_x, static_y]
    return graphs


# --- lesson 09 ----------------------------------------------------------------------------------


def capture_fork_join(static_x, side):
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        main = cuda.current_stream()
        side.wait_stream(main)
        with cuda.stream(side):
            b = static_x.cos() * 3
        a = static_x.sin() * 2
        main.wait_stream(side)
        out = a + b
    return g, out


def capture_fork_join_with_events(static_x, side):
    """Events recorded and waited for by hand; the pair returned as a list."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        forked = cuda.Event()
        forked.record()
        side.wait_event(forked)
        with cuda.stream(side):
            b = static_x.cos() * 3
            done = cuda.Event()
            done.record()
        a = static_x.sin() * 2
        done.wait(cuda.current_stream())
        out = a + b
    return [g, out]


def capture_fork_join_on_own_streams(static_x, side):
    """sin on a stream of the learner's own, cos on the capturing stream, with capture_begin."""
    own, capture = cuda.Stream(), cuda.Stream()
    g = cuda.CUDAGraph()
    with cuda.stream(capture):
        g.capture_begin()
        own.wait_stream(capture)
        with cuda.stream(own):
            a = static_x.sin() * 2
        b = static_x.cos() * 3
        capture.wait_stream(own)
        out = a + b
        g.capture_end()
    return g, out


# --- lesson 11 ----------------------------------------------------------------------------------


def dispatch(graphs, layer, x, seq_lens):
    """The lesson's solution: the batch descriptor names the bucket."""
    bucket = describe(seq_lens, graphs).padded
    if bucket is None:
        return layer(x, seq_lens)
    runner = graphs[bucket]
    n = x.shape[0]
    runner.static_x[:n].copy_(x)
    runner.replay(seq_lens)
    return runner.static_out[:n].clone()


def dispatch_by_search(graphs, layer, x, seq_lens):
    """Walks the sizes in order, zeroes the padding, assigns by slice, falls back via forward()."""
    n = sum(seq_lens)
    for size in sorted(graphs):
        if size >= n:
            runner = graphs[size]
            runner.static_x.zero_()
            runner.static_x[:n] = x
            runner.replay(list(seq_lens))
            return runner.static_out.narrow(0, 0, n).detach().clone()
    return layer.forward(x, seq_lens)


def repoint(graph, fn, new_x):
    source = cuda.CUDAGraph(keep_graph=True)
    with cuda.graph(source):
        out = fn(new_x)
    update_graph(graph, source)
    return out, source


def repoint_by_hand(graph, fn, new_x):
    """Warm up and capture on a stream of one's own, with capture_begin/capture_end."""
    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        fn(new_x)
        source = cuda.CUDAGraph(keep_graph=True)
        source.capture_begin()
        out = fn(new_x)
        source.capture_end()
    cuda.current_stream().wait_stream(side)
    update_graph(graph, source)
    return [out, source]


# --- lesson 14 ----------------------------------------------------------------------------------


def expected_step_us(sizes, histogram, costs):
    replay = dict(zip(costs.sizes.tolist(), costs.replay_us.tolist(), strict=True))
    eager = dict(zip(costs.sizes.tolist(), costs.eager_us.tolist(), strict=True))
    total = 0.0
    for b, steps in zip(histogram.sizes.tolist(), histogram.counts.tolist(), strict=True):
        fits = [s for s in sizes if s >= b]
        total += steps * (replay[min(fits)] if fits else eager[b])
    return total / histogram.counts.sum()


def expected_step_us_numpy(sizes, histogram, costs):
    chosen = np.sort(np.asarray(sizes))
    at = np.searchsorted(chosen, histogram.sizes)  # the smallest captured size >= b, if any
    hit = at < len(chosen)
    graph = chosen[np.minimum(at, len(chosen) - 1)]
    replay = costs.replay_us[np.searchsorted(costs.sizes, graph)]
    eager = costs.eager_us[np.searchsorted(costs.sizes, histogram.sizes)]
    return np.average(np.where(hit, replay, eager), weights=histogram.counts)


def choose_sizes(histogram, costs, max_graphs, memory_mib):
    steps = np.repeat(histogram.sizes, histogram.counts.astype(int))
    quartiles = {int(np.quantile(steps, q, method="higher")) for q in (0.25, 0.5, 0.75)}
    return sorted(quartiles | {int(histogram.sizes.max())})


def choose_sizes_by_hand(histogram, costs, max_graphs, memory_mib):
    return np.array([4, 8, 16, 24, 32, 47])  # 2 MiB in one shared pool


# --- lesson 15 ----------------------------------------------------------------------------------


class CountingScaler(torch.nn.Module):
    """Another correct fix: a float counter buffer added to with +=, the peak by max()."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 6, device=DEVICE))
        self.register_buffer("calls", torch.tensor(0.0, device=DEVICE))

    def forward(self, x):
        self.calls += 1  # in place on the buffer: recorded, so every replay counts
        return torch.tanh(x.div(x.abs().max()) * self.weight) * (1 + 0.1 * self.calls).reciprocal()


def make_counting_model():
    return CountingScaler()


def step_by_slice_and_detach(graph, static_x, static_out, batch):
    static_x[:] = batch
    graph.replay()
    return static_out.detach().clone()


# --- lesson 16 ----------------------------------------------------------------------------------


def branchy_fixed(model, x):
    h = model.proj(x)
    h = torch.where(h.mean() > 0, h * 2, h)  # the branch decided on the device
    return torch.where(h > 0, h, 0).sum()  # positive values kept without selecting them


def branchy_fixed_by_masks(model, x):
    h = model.proj(x)
    h = h * (1 + (h.mean() > 0).to(h.dtype))
    return h.clamp(min=0).sum()


def training_fixed():
    from graphlab.diagnose.examples import training_step

    return training_step(capturable=True)


def training_fixed_with_sgd():
    torch.manual_seed(1)
    model = torch.nn.Linear(32, 1).to(DEVICE)
    sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, target):
        sgd.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        sgd.step()
        return loss.detach()

    return step, [torch.randn(16, 32, device=DEVICE), torch.randn(16, 1, device=DEVICE)]


def line(text: str) -> str:
    """The regular expression of exactly this success line."""
    return re.escape(f"PASSED {text}") + r"\n"


def same_values(what: str) -> str:
    """A success line whose values differ between the CPU and a GPU, yours equal to expected."""
    return re.escape(f"PASSED {what}: ") + r"yours (\S+) vs expected \1\n"


CHAIN = "[50, 51, 52, 53, 54, 55, ...]"  # the last input, 0, 1, 2, ..., plus 50


def hangs(replays):
    """Flatten each rank's collectives with their step; the first position they differ at."""
    flat = [[(sig, step) for step, graph in enumerate(r) for sig in graph] for r in replays]
    for k in range(max(map(len, flat))):
        there = {rank: f[k] for rank, f in enumerate(flat) if k < len(f)}
        if len(there) < len(flat) or len({sig for sig, _ in there.values()}) > 1:
            return {rank: step for rank, (_, step) in there.items()}
    return {}


def hangs_walking_the_ranks(replays):
    """Advance every rank one collective at a time, as the communicator does."""
    where = [[0, 0] for _ in replays]  # per rank: step, index in that step's graph

    def next_collective(rank):
        step, i = where[rank]
        graphs = replays[rank]
        while step < len(graphs) and i >= len(graphs[step]):
            step, i = step + 1, 0
        where[rank] = [step, i]
        return None if step == len(graphs) else graphs[step][i]

    while True:
        launched = {rank: next_collective(rank) for rank in range(len(replays))}
        waiting = {rank: where[rank][0] for rank, sig in launched.items() if sig is not None}
        if not waiting:
            return None  # no rank waits: None is accepted as "nobody"
        if len(waiting) < len(replays) or len(set(launched.values())) > 1:
            return waiting
        for position in where:
            position[1] += 1


ROUTES = "[8, 16, 16, 32, 'eager', 8, 32, 'eager']"  # 5, 13, 16, 24, 35, 1, 32, 39 tokens
SUCCESS = {
    "check_busy_fraction": line(
        "busy fraction of the hand-made timeline: yours 0.5 vs expected 0.5"
    ),
    "check_capture_chain": line(
        f"chain of 50 kernels replayed on new data: yours {CHAIN} vs expected {CHAIN}"
    ),
    "check_kernels_per_replay": line("kernels in the first replay: yours 3 vs expected 3"),
    # batch 3 is [30, 31, 32, 33]; times 2 plus 1
    "check_replay_with_new_inputs": line(
        "replay with new inputs (batch 3): yours [61, 63, 65, 67] vs expected [61, 63, 65, 67]"
    ),
    # the first batch, ones, and the last, fours, squared
    "check_keep_outputs": line(
        "kept outputs (first and last): yours [1, 1, 1, 16, 16, 16] vs expected "
        "[1, 1, 1, 16, 16, 16]"
    ),
    "check_reproducible_replays": same_values("same mask twice with seed 1234 (elements kept)"),
    # the last request: rows [0..3] and [4..7]; 2 * row sum + 1 = 13 and 45
    "check_run_padded": line(
        "padded run of a 2-row request (bucket 2): yours [13, 45] vs expected [13, 45]"
    ),
    # 4 + 4 + 4 + 8 = 20 rows computed for 13 real ones
    "check_padding_waste": line(
        "padding waste of sizes [1, 3, 4, 5] in buckets [4, 8]: yours 0.35 vs expected 0.35"
    ),
    # 8000 us of capture over a saving of 60 - 40 us per iteration
    "check_break_even": line("break-even repetitions of the first case: yours 400 vs expected 400"),
    "check_captured_training": same_values("loss after 3 replayed training steps"),
    "check_shared_pool": line("memory pools used by 3 graphs: yours 1 vs expected 1"),
    # sin on one stream, cos on another
    "check_fork_join": line(
        "fork/join captured, replayed on 3 new inputs: streams the sin and cos branches were "
        "captured on: yours 2 vs expected 2"
    ),
    "check_matching_replays": line(
        "waiting ranks of the last case: yours {0: 1, 1: 3, 2: 1} vs expected {0: 1, 1: 3, 2: 1}"
    ),
    # the batches' buckets among 8, 16 and 32 tokens, or eager past 32
    "check_dispatch": line(
        f"where each batch ran (bucket, or eager): yours {ROUTES} vs expected {ROUTES}"
    ),
    # the steady call and the call split into partitions
    "check_compiled_replays": line("calls that really replayed, of 8: yours 2 vs expected 2"),
    # a replay on new_x, then one after new_x changed in place
    "check_repoint": line(
        "replays of the given graph that computed fn(new_x) from new_x's memory: yours 2 vs "
        "expected 2"
    ),
    # (3*11 + 5*11 + 13 + 2*36.5 + 4*38) / 15 = 326 / 15
    "check_expected_step_time": line(
        "expected step time (µs) of sizes [2, 4] on the first mix: yours 21.7333 vs expected "
        "21.7333"
    ),
    # three new batches, each replay equal to the eager Scaler at calls 3, 4 and 5
    "check_fixed_model": line(
        "replays of your fixed model equal to eager calls, on new batches: yours 3 vs expected 3"
    ),
    # the H200 table on the Azure trace: the powers of two up to 64 give 161.9 µs per step, the
    # planner's best 6 graphs within 2 MiB (one shared pool) 156.9 µs, as graphlab plan gives
    "check_choose_sizes": re.escape("PASSED your sizes [")
    + r"[\d, ]+"
    + re.escape("]: yours ")
    + r"1(5[7-9]|6[01])\.\d"
    + re.escape(
        " µs per step vs the powers of two 161.9 µs (the planner's best within the budget: "
        "156.9 µs, sizes [6, 22, 30, 32, 37, 46])"
    )
    + r"\n",
    "check_fixed_branchy": same_values("replays equal to the model on 3 new inputs"),
    "check_fixed_training": same_values("loss of the last of 3 replayed steps"),
}

# (checker, answer or answers): the reference solution, then another correct way
RIGHT = [
    ("check_busy_fraction", busy_fraction),
    ("check_busy_fraction", busy_fraction_of_kernels),
    ("check_capture_chain", capture_chain),
    ("check_capture_chain", capture_chain_in_place_on_a_copy),
    ("check_kernels_per_replay", kernels_per_replay),
    ("check_kernels_per_replay", kernels_per_replay_earliest),
    ("check_replay_with_new_inputs", step),
    ("check_replay_with_new_inputs", step_by_slice_assignment),
    ("check_keep_outputs", collect),
    ("check_keep_outputs", collect_tuple),
    ("check_reproducible_replays", two_replays),
    ("check_reproducible_replays", two_replays_cuda_seed),
    ("check_run_padded", run_padded),
    ("check_run_padded", run_padded_with_pad),
    ("check_padding_waste", padding_waste),
    ("check_padding_waste", padding_waste_fraction),
    ("check_break_even", break_even),
    ("check_break_even", break_even_numpy),
    ("check_captured_training", (capture_step, adam)),
    ("check_captured_training", (capture_step, sgd)),
    ("check_shared_pool", capture_all),
    ("check_shared_pool", capture_all_sharing_the_first_pool),
    ("check_fork_join", capture_fork_join),
    ("check_fork_join", capture_fork_join_with_events),
    ("check_fork_join", capture_fork_join_on_own_streams),
    ("check_matching_replays", hangs),
    ("check_matching_replays", hangs_walking_the_ranks),
    ("check_dispatch", dispatch),
    ("check_dispatch", dispatch_by_search),
    ("check_compiled_replays", replayed),
    ("check_compiled_replays", replayed_by_the_log),
    ("check_repoint", repoint),
    ("check_repoint", repoint_by_hand),
    ("check_expected_step_time", expected_step_us),
    ("check_expected_step_time", expected_step_us_numpy),
    ("check_choose_sizes", choose_sizes),
    ("check_choose_sizes", choose_sizes_by_hand),
    ("check_fixed_model", (make_model_right, fixed_step)),
    ("check_fixed_model", (make_counting_model, step_by_slice_and_detach)),
    ("check_fixed_branchy", branchy_fixed),
    ("check_fixed_branchy", branchy_fixed_by_masks),
    ("check_fixed_training", training_fixed),
    ("check_fixed_training", training_fixed_with_sgd),
]
