"""Typical wrong answers to the lessons' exercises, shared by the checker and explainer tests.

Each is what a learner plausibly writes; the checkers must reject it with a precise message, and
``graphlab.explain`` must recognise the messages about stale inputs and overwritten outputs. They
run on the live backend: the CPU emulator here, torch.cuda on a GPU (tests/gpu/).

:data:`WRONG` lists them by checker, as ``(checker, answer, words the message contains)``; the
kinds the checkers once let through are all there: constant answers, one kernel instead of n,
answers that never replay the graph, outputs that are views of static buffers, rounded answers.
"""

from __future__ import annotations

import numpy as np
import torch

from graphlab import DEVICE, cuda
from graphlab.editing import update_graph
from graphlab.timing.decoder import describe

# --- lesson 00: busy fraction ------------------------------------------------------------------


def busy_fraction_rounded(t):
    gpu = t.select(t.is_gpu)
    return round(float(gpu.dur_ns.sum() / (gpu.end_ns.max() - gpu.start_ns.min())), 2)


def busy_fraction_with_host_calls(t):
    return t.dur_ns.sum() / (t.end_ns.max() - t.start_ns.min())


def busy_fraction_over_whole_span(t):
    gpu = t.is_gpu
    return t.dur_ns[gpu].sum() / (t.end_ns[gpu].max() - t.start_ns.min())


def busy_fraction_percent(t):
    gpu = t.select(t.is_gpu)
    return 100 * gpu.dur_ns.sum() / (gpu.end_ns.max() - gpu.start_ns.min())


# --- lesson 01: a chain of kernels; kernels of a replay -----------------------------------------


def chain_as_one_kernel(static_x, n):
    """The result is right, but one kernel instead of n: that is fusion, not a graph."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x + n
    return g, out


def chain_computed_outside(static_x, n):
    out = static_x + n  # computed once, eagerly, from the zeros
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        static_x * 1
    return g, out


def chain_of_fifty(static_x, n):
    """Hard-wired to the lesson's 50, whatever n is."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x
        for _ in range(50):
            out = out + 1
    return g, out


def chain_in_place_on_input(static_x, n):
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        for _ in range(n):
            static_x.add_(1)
    return g, static_x


def chain_in_place_then_copied(static_x, n):
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        for _ in range(n):
            static_x.add_(1)
        out = static_x.clone()
    return g, out


def chain_rounded(static_x, n):
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x
        for _ in range(n):
            out = out + 1
        out = out.round()
    return g, out


def chain_without_graph(static_x, n):
    return (lambda: None), static_x + n


def kernels_of_every_replay(t):
    replays = t.correlation[(t.kind == "launch") & (t.name == "cudaGraphLaunch")]
    return int(((t.kind == "kernel") & np.isin(t.correlation, replays)).sum())


def graph_launch_calls(t):
    return int(((t.kind == "launch") & (t.name == "cudaGraphLaunch")).sum())


# --- lesson 02: static inputs -------------------------------------------------------------------


def rebinding_step(graph, static_x, static_y, batch):
    """Lesson 02: rebinds the name instead of copying into the captured input buffer."""
    static_x = batch  # noqa: F841  (the mistake: the graph still reads the old tensor)
    graph.replay()
    return static_y


def copy_without_replay(graph, static_x, static_y, batch):
    static_x.copy_(batch)
    return static_y


def step_computed_eagerly(graph, static_x, static_y, batch):
    """Right numbers, but the graph never runs."""
    static_x.copy_(batch)
    return batch * 2 + 1


def step_swapping_storage(graph, static_x, static_y, batch):
    static_x.set_(batch.clone())
    graph.replay()
    return static_y


def step_assigning_data(graph, static_x, static_y, batch):
    static_x.data = batch.clone()
    graph.replay()
    return static_y


def step_rounded(graph, static_x, static_y, batch):
    static_x.copy_(batch)
    graph.replay()
    return static_y.round()


def step_constant(graph, static_x, static_y, batch):
    graph.replay()
    return torch.tensor([61.0, 63.0, 65.0, 67.0], device=DEVICE)


def step_returning_batch(graph, static_x, static_y, batch):
    static_x.copy_(batch)
    graph.replay()
    return batch


# --- lesson 03: outputs -------------------------------------------------------------------------


def collect_references(graph, static_x, static_y, batches):
    """Lesson 03: keeps the output tensor itself, which the next replay overwrites."""
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y)
    return kept


def collect_views(graph, static_x, static_y, batches):
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y[:])
    return kept


def collect_last_by_reference(graph, static_x, static_y, batches):
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y.clone())
    kept[-1] = static_y
    return kept


def collect_without_replay(graph, static_x, static_y, batches):
    return [batch**2 for batch in batches]


def collect_one_replay(graph, static_x, static_y, batches):
    static_x.copy_(batches[0])
    graph.replay()
    return [static_y.clone()] + [batch**2 for batch in batches[1:]]


def collect_rounded(graph, static_x, static_y, batches):
    kept = []
    for batch in batches:
        static_x.copy_(batch)
        graph.replay()
        kept.append(static_y.round())
    return kept


# --- lesson 04: randomness ----------------------------------------------------------------------


def seed_once(graph, static_out, seed):
    torch.manual_seed(seed)
    graph.replay()
    first = static_out.clone()
    graph.replay()
    return first, static_out.clone()


def two_replays_aliased(graph, static_out, seed):
    torch.manual_seed(seed)
    graph.replay()
    return static_out, static_out


def one_replay_kept_twice(graph, static_out, seed):
    torch.manual_seed(seed)
    graph.replay()
    return static_out.clone(), static_out.clone()


def masks_drawn_eagerly(graph, static_out, seed):
    masks = []
    for _ in range(2):
        torch.manual_seed(seed)
        masks.append(torch.nn.functional.dropout(torch.ones(64, device=DEVICE), 0.5, True))
    return masks[0], masks[1]


def seed_written_in(graph, static_out, seed):
    kept = []
    for _ in range(2):
        torch.manual_seed(1234)
        graph.replay()
        kept.append(static_out.clone())
    return kept[0], kept[1]


# --- lesson 05: dynamic shapes ------------------------------------------------------------------


def _bucket(graphs, n, size=None):
    graph, static_x, static_y = graphs[size or min(s for s in graphs if s >= n)]
    return graph, static_x, static_y


def padded_in_largest_bucket(graphs, batch):
    n = batch.shape[0]
    graph, static_x, static_y = _bucket(graphs, n, max(graphs))
    static_x[:n].copy_(batch)
    graph.replay()
    return static_y[:n].clone()


def padded_whole_bucket(graphs, batch):
    n = batch.shape[0]
    graph, static_x, static_y = _bucket(graphs, n)
    static_x[:n].copy_(batch)
    graph.replay()
    return static_y.clone()


def padded_view(graphs, batch):
    n = batch.shape[0]
    graph, static_x, static_y = _bucket(graphs, n)
    static_x[:n].copy_(batch)
    graph.replay()
    return static_y[:n]


def padded_eagerly(graphs, batch):
    return (batch * 2).sum(dim=1) + 1


def padded_without_copy(graphs, batch):
    graph, _, static_y = _bucket(graphs, batch.shape[0])
    graph.replay()
    return static_y[: batch.shape[0]].clone()


def padded_rounded(graphs, batch):
    n = batch.shape[0]
    graph, static_x, static_y = _bucket(graphs, n)
    static_x[:n].copy_(batch)
    graph.replay()
    return static_y[:n].round()


def padded_every_bucket(graphs, batch):
    n = batch.shape[0]
    for graph, static_x, _ in graphs.values():
        if static_x.shape[0] >= n:
            static_x[:n].copy_(batch)
        graph.replay()
    return _bucket(graphs, n)[2][:n].clone()


def waste_over_real_rows(sizes, buckets):
    computed = sum(min(b for b in buckets if b >= n) for n in sizes)
    return (computed - sum(sizes)) / sum(sizes)


def waste_rounded(sizes, buckets):
    computed = sum(min(b for b in buckets if b >= n) for n in sizes)
    return round((computed - sum(sizes)) / computed, 2)


# --- lesson 06: does it pay? --------------------------------------------------------------------


def break_even_gpu_only(t):
    saving = t["eager_us"] - t["replay_us"]
    return t["capture_us"] / saving if saving > 0 else None


def break_even_never_none(t):
    return t["capture_us"] / (t["eager_end_to_end_us"] - t["replay_end_to_end_us"] + 1e-9)


def break_even_rounded_up(t):
    saving = t["eager_end_to_end_us"] - t["replay_end_to_end_us"]
    return -(-t["capture_us"] // saving) if saving > 0 else None


def break_even_truncated(t):
    saving = t["eager_end_to_end_us"] - t["replay_end_to_end_us"]
    return int(t["capture_us"] / saving) if saving > 0 else None


# --- lesson 07: training ------------------------------------------------------------------------


def adam(params):
    return torch.optim.Adam(params, lr=0.01, capturable=True)


def warm_up(model, optimizer, static_x, static_y) -> None:
    """Three ordinary steps on a side stream, as the lesson's recipe does before capture."""
    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.mse_loss(model(static_x), static_y).backward()
            optimizer.step()
    cuda.current_stream().wait_stream(side)


def capture_only(model, optimizer, static_x, static_y, step=True, target=None):
    """Capture forward, backward and (unless ``step`` is False) the optimizer step, as is."""
    graph = cuda.CUDAGraph()
    with cuda.graph(graph):
        y = static_y if target is None else target(static_y)
        static_loss = torch.nn.functional.mse_loss(model(static_x), y)
        static_loss.backward()
        if step:
            optimizer.step()
    return graph, static_loss


def training_keeps_gradients(model, optimizer, static_x, static_y):
    warm_up(model, optimizer, static_x, static_y)
    # No zero_grad(set_to_none=True) before capturing: .grad exists, so backward adds to it.
    return capture_only(model, optimizer, static_x, static_y)


def training_forward_only(model, optimizer, static_x, static_y):
    warm_up(model, optimizer, static_x, static_y)
    optimizer.zero_grad(set_to_none=True)
    return capture_only(model, optimizer, static_x, static_y, step=False)


def training_on_a_fixed_target(model, optimizer, static_x, static_y):
    """Fits a target made inside the capture, which the checker's batches never reach."""
    warm_up(model, optimizer, static_x, static_y)
    optimizer.zero_grad(set_to_none=True)
    return capture_only(model, optimizer, static_x, static_y, target=torch.zeros_like)


# --- lesson 08: memory --------------------------------------------------------------------------


def capture_all(sizes, shared=True):
    pool = cuda.graph_pool_handle() if shared else None
    graphs = {}
    for size in sizes:
        static_x = torch.zeros(size, device=DEVICE)
        graph = cuda.CUDAGraph()
        with cuda.graph(graph, pool=pool):
            static_y = static_x * 2 + 1
        graphs[size] = (graph, static_x, static_y)
    return graphs


def capture_all_private(sizes):
    return capture_all(sizes, shared=False)


def capture_all_in_one_graph(sizes):
    graph = cuda.CUDAGraph()
    inputs = {size: torch.zeros(size, device=DEVICE) for size in sizes}
    with cuda.graph(graph):
        outputs = {size: x * 2 + 1 for size, x in inputs.items()}
    return {size: (graph, inputs[size], outputs[size]) for size in sizes}


def capture_all_in_place(sizes):
    pool = cuda.graph_pool_handle()
    graphs = {}
    for size in sizes:
        static_x = torch.zeros(size, device=DEVICE)
        graph = cuda.CUDAGraph()
        with cuda.graph(graph, pool=pool):
            static_x.mul_(2).add_(1)
        graphs[size] = (graph, static_x, static_x)
    return graphs


def capture_all_outside(sizes):
    pool = cuda.graph_pool_handle()
    graphs = {}
    for size in sizes:
        static_x = torch.zeros(size, device=DEVICE)
        static_y = static_x * 2 + 1
        graph = cuda.CUDAGraph()
        with cuda.graph(graph, pool=pool):
            static_x + 0
        graphs[size] = (graph, static_x, static_y)
    return graphs


def capture_all_rounded(sizes):
    pool = cuda.graph_pool_handle()
    graphs = {}
    for size in sizes:
        static_x = torch.zeros(size, device=DEVICE)
        graph = cuda.CUDAGraph()
        with cuda.graph(graph, pool=pool):
            static_y = (static_x * 2 + 1).round()
        graphs[size] = (graph, static_x, static_y)
    return graphs


# --- lesson 09: multi-stream capture ------------------------------------------------------------


def fork_join_unjoined(static_x, side):
    """Forks, never joins: the capture fails."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        side.wait_stream(cuda.current_stream())
        with cuda.stream(side):
            b = static_x.cos() * 3
        out = static_x.sin() * 2 + b
    return g, out


def fork_join_joined_too_early(static_x, side):
    """Joins before the side stream's work: that work is still unjoined when the capture ends."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        main = cuda.current_stream()
        side.wait_stream(main)
        main.wait_stream(side)
        with cuda.stream(side):
            b = static_x.cos() * 3
        out = static_x.sin() * 2 + b
    return g, out


def fork_join_on_one_stream(static_x, side):
    """Right numbers, one stream: the branches can never overlap."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x.sin() * 2 + static_x.cos() * 3
    return g, out


def fork_join_both_on_side(static_x, side):
    """Forks and joins, but runs both branches on the side stream, one after the other."""
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


def fork_join_cos_before_capture(static_x, side):
    """Computes one branch eagerly before capturing: the graph reuses a stale b."""
    b = static_x.cos() * 3
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x.sin() * 2 + b
    return g, out


def fork_join_wrong_factor(static_x, side):
    """Two streams, forked and joined with events, but cos * 2 instead of cos * 3."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        forked = cuda.current_stream().record_event()
        side.wait_event(forked)
        with cuda.stream(side):
            b = static_x.cos() * 2
        cuda.current_stream().wait_event(side.record_event())
        out = static_x.sin() * 2 + b
    return g, out


def fork_before_capture(static_x, side):
    """Forks before the capture begins: side does not take part, its work is not captured."""
    side.wait_stream(cuda.current_stream())
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        main = cuda.current_stream()
        with cuda.stream(side):
            b = static_x.cos() * 3
        main.wait_stream(side)
        out = static_x.sin() * 2 + b
    return g, out


# --- lesson 11: full vs piecewise graphs ---------------------------------------------------------


def replay_in_bucket(graphs, x, seq_lens):
    """The right replay of a batch; the runner that ran it, or None when no bucket holds it."""
    bucket = describe(seq_lens, graphs).padded
    if bucket is None:
        return None
    graphs[bucket].static_x[: x.shape[0]].copy_(x)
    graphs[bucket].replay(seq_lens)
    return graphs[bucket]


def dispatch_eagerly(graphs, layer, x, seq_lens):
    return layer(x, seq_lens)


def dispatch_to_largest(graphs, layer, x, seq_lens):
    """Every batch that fits goes to the largest bucket."""
    n, largest = x.shape[0], graphs[max(graphs)]
    if n > max(graphs):
        return layer(x, seq_lens)
    largest.static_x[:n].copy_(x)
    largest.replay(seq_lens)
    return largest.static_out[:n].clone()


def dispatch_padded_rows(graphs, layer, x, seq_lens):
    runner = replay_in_bucket(graphs, x, seq_lens)
    return layer(x, seq_lens) if runner is None else runner.static_out.clone()


def dispatch_view(graphs, layer, x, seq_lens):
    runner = replay_in_bucket(graphs, x, seq_lens)
    return layer(x, seq_lens) if runner is None else runner.static_out[: x.shape[0]]


def dispatch_without_copy(graphs, layer, x, seq_lens):
    """Replays without copying the batch in: the graph reads what static_x held before."""
    bucket = describe(seq_lens, graphs).padded
    if bucket is None:
        return layer(x, seq_lens)
    graphs[bucket].replay(seq_lens)
    return graphs[bucket].static_out[: x.shape[0]].clone()


def dispatch_as_one_prompt(graphs, layer, x, seq_lens):
    """Replays as if the batch were one prompt: attention then mixes the prompts."""
    runner = replay_in_bucket(graphs, x, [x.shape[0]])
    return layer(x, seq_lens) if runner is None else runner.static_out[: x.shape[0]].clone()


def dispatch_cut_to_largest(graphs, layer, x, seq_lens):
    """A batch past the largest bucket replays the largest graph on its first prompt, then runs
    eagerly anyway."""
    runner = replay_in_bucket(graphs, x, seq_lens)
    if runner is not None:
        return runner.static_out[: x.shape[0]].clone()
    graphs[max(graphs)].replay(seq_lens[:1])
    return layer(x, seq_lens)


def dispatch_replay_and_eager(graphs, layer, x, seq_lens):
    replay_in_bucket(graphs, x, seq_lens)
    return layer(x, seq_lens)


def dispatch_twice(graphs, layer, x, seq_lens):
    replay_in_bucket(graphs, x, seq_lens)
    runner = replay_in_bucket(graphs, x, seq_lens)
    return layer(x, seq_lens) if runner is None else runner.static_out[: x.shape[0]].clone()


OUTPUT_BUFFER = {}


def dispatch_into_one_buffer(graphs, layer, x, seq_lens):
    """Copies every answer into one buffer of its own, which the next batch overwrites."""
    runner = replay_in_bucket(graphs, x, seq_lens)
    out = layer(x, seq_lens) if runner is None else runner.static_out[: x.shape[0]]
    buffer = OUTPUT_BUFFER.setdefault(out.device, torch.empty(64, out.shape[1], device=out.device))
    return buffer[: out.shape[0]].copy_(out)


def dispatch_as_a_list(graphs, layer, x, seq_lens):
    runner = replay_in_bucket(graphs, x, seq_lens)
    out = layer(x, seq_lens) if runner is None else runner.static_out[: x.shape[0]]
    return out.tolist()


# --- lesson 10: did a compiled call replay? ----------------------------------------------------


def replayed_if_any_replay(calls):
    return calls["replays"] > 0


def replayed_unless_skipped(calls):
    return calls["cudagraph_skips"] == 0


def replayed_ignoring_skips(calls):
    return calls["replays"] > 0 and calls["captures"] == 0


def replayed_without_counting_replays(calls):
    return calls["captures"] == 0 and calls["cudagraph_skips"] == 0


def replayed_exactly_once(calls):
    return calls["replays"] == 1 and calls["captures"] == 0 and calls["cudagraph_skips"] == 0


# --- lesson 14: pricing a plan; choosing sizes --------------------------------------------------


def _step_costs(sizes, histogram, costs, price):
    """(cost, steps) per batch size, ``price(b, fits)`` pricing a step of ``b`` rows."""
    out = []
    for b, steps in zip(histogram.sizes.tolist(), histogram.counts.tolist(), strict=True):
        cost = price(b, [s for s in sizes if s >= b])
        if cost is not None:
            out.append((cost, steps))
    return out


def _table(costs, name):
    return dict(zip(costs.sizes.tolist(), getattr(costs, name).tolist(), strict=True))


def _mean(pairs):
    return sum(c * n for c, n in pairs) / sum(n for _, n in pairs)


def step_time_without_padding(sizes, histogram, costs):
    replay, eager = _table(costs, "replay_us"), _table(costs, "eager_us")
    return _mean(_step_costs(sizes, histogram, costs, lambda b, f: replay[b] if f else eager[b]))


def step_time_in_the_largest_graph(sizes, histogram, costs):
    replay = _table(costs, "replay_us")
    price = lambda b, f: replay[min(f)] if f else replay[max(sizes)]  # noqa: E731
    return _mean(_step_costs(sizes, histogram, costs, price))


def step_time_of_hits_only(sizes, histogram, costs):
    replay = _table(costs, "replay_us")
    price = lambda b, f: replay[min(f)] if f else None  # noqa: E731
    return _mean(_step_costs(sizes, histogram, costs, price))


def _right_price(sizes, costs):
    replay, eager = _table(costs, "replay_us"), _table(costs, "eager_us")
    return lambda b, f: replay[min(f)] if f else eager[b]


def step_time_unweighted(sizes, histogram, costs):
    pairs = _step_costs(sizes, histogram, costs, _right_price(sizes, costs))
    return sum(c for c, _ in pairs) / len(pairs)


def step_time_total(sizes, histogram, costs):
    pairs = _step_costs(sizes, histogram, costs, _right_price(sizes, costs))
    return sum(c * n for c, n in pairs)


def step_time_first_in_list(sizes, histogram, costs):
    replay, eager = _table(costs, "replay_us"), _table(costs, "eager_us")
    price = lambda b, f: replay[f[0]] if f else eager[b]  # noqa: E731
    return _mean(_step_costs(sizes, histogram, costs, price))


def step_time_rounded(sizes, histogram, costs):
    return round(_mean(_step_costs(sizes, histogram, costs, _right_price(sizes, costs))), 2)


def step_time_per_batch_size(sizes, histogram, costs):
    pairs = _step_costs(sizes, histogram, costs, _right_price(sizes, costs))
    return np.array([c for c, _ in pairs])


def choose_vllms_first_six(histogram, costs, max_graphs, memory_mib):
    return [1, 2, 4, 8, 16, 24]


def choose_the_largest_batch_only(histogram, costs, max_graphs, memory_mib):
    return [int(histogram.sizes.max())]


# --- lesson 15: the broken model, half fixed; replay steps that go wrong -------------------------


class SyncedScaler(torch.nn.Module):
    """The lesson's Scaler with its counter moved to the GPU, and still its .item()."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 6, device=DEVICE))
        self.register_buffer("calls", torch.zeros((), device=DEVICE))

    def forward(self, x):
        self.calls.add_(1)
        peak = x.abs().max().item()  # the CPU waits for the GPU: refused inside a capture
        return torch.tanh(x / peak * self.weight) / (1 + 0.1 * self.calls)


class CpuCountingScaler(torch.nn.Module):
    """The lesson's Scaler without its .item(), its call counter still a Python number."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 6, device=DEVICE))
        self.calls = 0

    def forward(self, x):
        self.calls += 1  # runs once, at capture: every replay uses that call's temperature
        return torch.tanh(x / x.abs().amax() * self.weight) / (1 + 0.1 * self.calls)


def make_model_synced():
    return SyncedScaler()


def make_model_cpu_counter():
    return CpuCountingScaler()


class FixedScaler(SyncedScaler):
    """The lesson's reference fix: the counter on the GPU, counted in place; no .item()."""

    def forward(self, x):
        self.calls.add_(1)
        return torch.tanh(x / x.abs().amax() * self.weight) / (1 + 0.1 * self.calls)


def make_model_right():
    """The reference fixed model (right_answers.py uses it too), for the wrong steps below."""
    return FixedScaler()


def step_without_replay(graph, static_x, static_out, batch):
    static_x.copy_(batch)
    return static_out.clone()


def step_returning_static_out(graph, static_x, static_out, batch):
    static_x.copy_(batch)
    graph.replay()
    return static_out


def step_rebinding(graph, static_x, static_out, batch):
    static_x = batch  # only the local name changes  # noqa: F841
    graph.replay()
    return static_out.clone()


def step_replaying_twice(graph, static_x, static_out, batch):
    static_x.copy_(batch)
    graph.replay()
    graph.replay()
    return static_out.clone()


def fixed_step(graph, static_x, static_out, batch):
    static_x.copy_(batch)
    graph.replay()
    return static_out.clone()


def constant(value):
    """An answer that ignores its arguments and returns ``value``."""
    return lambda *args: value


# --- lesson 16 ----------------------------------------------------------------------------------


def branchy_always_doubled(model, x):
    """Drops the branch: right only for inputs on which the model doubles."""
    h = model.proj(x) * 2
    return h.clamp(min=0).sum()


def branchy_still_reading(model, x):
    """Keeps the .item() that decides the branch on the host."""
    h = model.proj(x)
    if h.mean().item() > 0:
        h = h * 2
    return h.clamp(min=0).sum()


def branchy_still_selecting(model, x):
    """Keeps the boolean-mask selection, whose size depends on the data."""
    h = model.proj(x)
    h = torch.where(h.mean() > 0, h * 2, h)
    return h[h > 0].sum()


def branchy_per_row(model, x):
    """Sums each row apart: a tensor of 32 sums, not the one sum."""
    h = model.proj(x)
    h = torch.where(h.mean() > 0, h * 2, h)
    return torch.where(h > 0, h, 0).sum(1)


def training_not_fixed():
    from graphlab.diagnose.examples import training_step

    return training_step(capturable=False)


def training_without_the_optimizer():
    """Forward and backward only: nothing learns."""
    from graphlab.diagnose.examples import training_step

    step, inputs = training_step(capturable=True)
    model = step.model

    def forward_backward(x, target):
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        return loss.detach()

    return forward_backward, inputs


def training_with_a_python_schedule():
    """Decays the learning rate in Python: a graph keeps the first rate at every replay."""
    torch.manual_seed(1)
    model = torch.nn.Linear(32, 1).to(DEVICE)
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    calls = [0]

    def step(x, target):
        calls[0] += 1
        sgd.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(model(x), target)
        (loss / calls[0]).backward()
        sgd.step()
        return loss.detach()

    return step, (torch.randn(16, 32, device=DEVICE), torch.randn(16, 1, device=DEVICE))


# (checker, answer or answers, words the checker's message contains)
def _flat(replays):
    return [[(sig, step) for step, graph in enumerate(r) for sig in graph] for r in replays]


def hangs_comparing_graphs(replays):
    """Compares graph by graph: sees a hang where the ranks merely cut their graphs differently."""
    for step in range(max(map(len, replays))):
        graphs = [r[step] if step < len(r) else None for r in replays]
        if any(g != graphs[0] for g in graphs):
            return {rank: step for rank, g in enumerate(graphs) if g}
    return {}


def hangs_with_finished_ranks(replays):
    """Counts a rank with no collective left as waiting too (at its last step)."""
    flat = _flat(replays)
    for k in range(max(map(len, flat))):
        there = {rank: f[min(k, len(f) - 1)] for rank, f in enumerate(flat)}
        sigs = [f[k][0] if k < len(f) else None for f in flat]
        if len(set(sigs)) > 1:
            return {rank: step for rank, (_, step) in there.items()}
    return {}


def hangs_lowest_rank_only(replays):
    """Names only the first waiting rank."""
    for k in range(max(map(len, _flat(replays)))):
        there = {rank: f[k] for rank, f in enumerate(_flat(replays)) if k < len(f)}
        if len(there) < len(replays) or len({sig for sig, _ in there.values()}) > 1:
            rank = min(there)
            return {rank: there[rank][1]}
    return {}


def hangs_at_positions(replays):
    """Returns the collective's position instead of the step it is in."""
    flat = _flat(replays)
    for k in range(max(map(len, flat))):
        there = {rank: f[k] for rank, f in enumerate(flat) if k < len(f)}
        if len(there) < len(flat) or len({sig for sig, _ in there.values()}) > 1:
            return dict.fromkeys(there, k)
    return {}


# ---------------------------------------------------------------------------- 12


def _kept_capture(fn, new_x, keep_graph=True):
    source = cuda.CUDAGraph(keep_graph=keep_graph)
    with cuda.graph(source):
        out = fn(new_x)
    return source, out


def repoint_without_update(graph, fn, new_x):
    """Captures and replays a graph of its own: the given graph is left as it was."""
    source, out = _kept_capture(fn, new_x)
    source.replay()
    return out, source


def repoint_reads_a_copy(graph, fn, new_x):
    """Captures fn on a copy of new_x, freed when repoint returns: the update reads the copy."""
    source, out = _kept_capture(fn, new_x.clone())
    update_graph(graph, source)
    return out, source


def repoint_not_kept(graph, fn, new_x):
    source, out = _kept_capture(fn, new_x, keep_graph=False)
    update_graph(graph, source)
    return out, source


def repoint_by_recapture(graph, fn, new_x):
    graph.reset()
    with cuda.graph(graph):
        out = fn(new_x)
    return out, graph


def repoint_returns_a_copy(graph, fn, new_x):
    source, out = _kept_capture(fn, new_x)
    update_graph(graph, source)
    return out.clone(), source


def repoint_one_more_op(graph, fn, new_x):
    source, out = _kept_capture(lambda x: fn(x) * 1, new_x)
    update_graph(graph, source)
    return out, source


def repoint_output_only(graph, fn, new_x):
    source, out = _kept_capture(fn, new_x)
    update_graph(graph, source)
    return out


WRONG = [
    # 00
    ("check_busy_fraction", constant(0.5), "the same answer, 0.5, for two different timelines"),
    ("check_busy_fraction", constant(0.575), "returned 0.575, expected 0.5 for this timeline"),
    ("check_busy_fraction", busy_fraction_rounded, "you got 0.58, which is 0.57543 rounded"),
    ("check_busy_fraction", busy_fraction_with_host_calls, "counted the host launch calls"),
    ("check_busy_fraction", busy_fraction_over_whole_span, "divided by the whole timeline's span"),
    ("check_busy_fraction", busy_fraction_percent, "not a time or a percent"),
    ("check_busy_fraction", constant(10**400), "too large for a float (about 10**400)"),
    # 01
    ("check_capture_chain", chain_as_one_kernel, "ran 1 kernel(s), not the chain's 7"),
    ("check_capture_chain", chain_computed_outside, "still holds the result for zeros"),
    ("check_capture_chain", chain_of_fifty, "the chain should add 1, 7 times"),
    ("check_capture_chain", chain_in_place_on_input, "static_out is static_x itself"),
    ("check_capture_chain", chain_in_place_then_copied, "your graph writes into static_x"),
    ("check_capture_chain", chain_rounded, "the chain should add 1, 7 times"),
    ("check_capture_chain", chain_without_graph, "should be the cuda.CUDAGraph you captured"),
    ("check_capture_chain", constant((1, 2, 3)), "should return a pair (graph, static_out)"),
    ("check_kernels_per_replay", constant(3), "the same answer, 3, for two different timelines"),
    ("check_kernels_per_replay", lambda t: int((t.kind == "kernel").sum()), "every kernel (7)"),
    ("check_kernels_per_replay", kernels_of_every_replay, "kernels of every replay (6)"),
    ("check_kernels_per_replay", graph_launch_calls, "that counts launch calls"),
    ("check_kernels_per_replay", constant("3"), "a number of kernels, not the text '3'"),
    # 02
    ("check_replay_with_new_inputs", rebinding_step, "returned the first batch's result: the"),
    ("check_replay_with_new_inputs", copy_without_replay, "call graph.replay() after copying"),
    ("check_replay_with_new_inputs", step_computed_eagerly, "did not replay the graph"),
    ("check_replay_with_new_inputs", step_swapping_storage, "now points at other memory"),
    ("check_replay_with_new_inputs", step_assigning_data, "now points at other memory"),
    ("check_replay_with_new_inputs", step_rounded, "for batch 1 step returned [2, -2, 6, 11]"),
    ("check_replay_with_new_inputs", step_constant, "for batch 1 step returned [61, 63, 65"),
    ("check_replay_with_new_inputs", constant(None), "step returned None"),
    ("check_replay_with_new_inputs", step_returning_batch, "step returned the batch itself"),
    # 03
    ("check_keep_outputs", collect_references, "all 4 outputs you kept equal the last batch's"),
    ("check_keep_outputs", collect_views, "all 4 outputs you kept equal the last batch's"),
    ("check_keep_outputs", collect_last_by_reference, "outputs [3] share memory with static_y"),
    ("check_keep_outputs", collect_without_replay, "replayed the graph 0 time(s) for 4 batches"),
    ("check_keep_outputs", collect_one_replay, "replayed the graph 1 time(s) for 4 batches"),
    ("check_keep_outputs", collect_rounded, "output 1 is [0, 2, 5], expected [0.25, 2.25, 5"),
    ("check_keep_outputs", constant(torch.ones(3)), "should return a list of 4 outputs"),
    # 04
    ("check_reproducible_replays", seed_once, "your two replays drew different masks"),
    ("check_reproducible_replays", two_replays_aliased, "you returned static_out itself"),
    ("check_reproducible_replays", one_replay_kept_twice, "replayed the graph 1 time(s)"),
    ("check_reproducible_replays", masks_drawn_eagerly, "replayed the graph 0 time(s)"),
    ("check_reproducible_replays", seed_written_in, "not the one seed 2026 gives"),
    ("check_reproducible_replays", constant(torch.ones(64)), "should return a pair (first, sec"),
    # 05
    ("check_run_padded", padded_in_largest_bucket, "smallest bucket that holds 3 rows is 4"),
    ("check_run_padded", padded_whole_bucket, "returned 4 outputs for a request of 3 rows"),
    ("check_run_padded", padded_view, "shares memory with the bucket's static_y"),
    ("check_run_padded", padded_eagerly, "for a request of 3 rows no graph was replayed"),
    ("check_run_padded", padded_without_copy, "rows of the bucket's static_x do not hold"),
    ("check_run_padded", padded_rounded, "for a request of 3 rows you returned [-5, 7, 19]"),
    ("check_run_padded", padded_every_bucket, "replayed the graph(s) of size [2, 4, 8]"),
    ("check_padding_waste", waste_over_real_rows, "divide by all rows computed (20)"),
    (
        "check_padding_waste",
        constant(0.35),
        "the same answer, 0.35, for two different request mixes",
    ),
    ("check_padding_waste", waste_rounded, "which is 0.386364 rounded"),
    ("check_padding_waste", lambda sizes, buckets: 7 // 20, "which is 0.35 rounded"),
    # 06
    ("check_break_even", break_even_gpu_only, "that uses eager_us and replay_us"),
    ("check_break_even", break_even_never_none, "so return None"),
    ("check_break_even", break_even_rounded_up, "return N* itself (85.1339), not rounded to 86"),
    ("check_break_even", break_even_truncated, "return N* itself (85.1339), not rounded to 85"),
    ("check_break_even", constant(400), "so return None (you returned 400)"),
    # 07 (the checker takes two answers: capture_step and make_optimizer)
    ("check_captured_training", (capture_only, adam), "for the first time inside the capture"),
    ("check_captured_training", (training_keeps_gradients, adam), "gradients accumulate across"),
    ("check_captured_training", (training_forward_only, adam), "the weights did not change"),
    ("check_captured_training", (training_on_a_fixed_target, adam), "the weights differ"),
    ("check_captured_training", (constant(None), adam), "should return a pair (graph, static"),
    ("check_captured_training", (capture_only, constant(3)), "a torch.optim optimizer, not 3"),
    # 08
    ("check_shared_pool", capture_all_private, "your 3 graphs use 3 different memory pools"),
    ("check_shared_pool", capture_all_in_one_graph, "several sizes share one graph object"),
    ("check_shared_pool", capture_all_in_place, "static_y of size 64 is static_x itself"),
    ("check_shared_pool", capture_all_outside, "the graph of size 64 replayed [1, 1, 1"),
    ("check_shared_pool", capture_all_rounded, "the graph of size 64 replayed [-7, -6, -6"),
    ("check_shared_pool", constant({64: None}), "one entry per size [64, 32, 16]"),
    # 09 (the first new input is 0.37 k - 1.21: for k = 0, 2 sin(-1.21) + 3 cos(-1.21) = -0.812174
    # and, with 2 cos instead of 3 cos, -1.165193, worked out with math.sin and math.cos)
    ("check_fork_join", fork_join_unjoined, "never joined back (CUDA's 'capturing stream has"),
    ("check_fork_join", fork_join_joined_too_early, "After the side stream's last captured"),
    ("check_fork_join", fork_join_on_one_stream, "captured on one stream (the capturing stream)"),
    ("check_fork_join", fork_join_both_on_side, "both branches were captured on one stream (side)"),
    ("check_fork_join", fork_join_cos_before_capture, "the graph computes no cos"),
    ("check_fork_join", fork_join_wrong_factor, "static_out is [-1.16519"),
    ("check_fork_join", constant(None), "should return a pair (graph, static_out)"),
    ("check_fork_join", constant(("graph", None)), "the cuda.CUDAGraph you captured into, not str"),
    # 13
    ("check_matching_replays", hangs_comparing_graphs, "where the graphs are cut does not matter"),
    ("check_matching_replays", hangs_with_finished_ranks, "launches nothing there"),
    ("check_matching_replays", hangs_lowest_rank_only, "not only one of them"),
    ("check_matching_replays", hangs_at_positions, "Those are collective positions"),
    ("check_matching_replays", constant({}), "expected {0: 2}"),
    # 11
    ("check_dispatch", dispatch_eagerly, "batch of 5 tokens, which fits the bucket of 8, no graph"),
    ("check_dispatch", dispatch_to_largest, "graph(s) of [32]; the smallest bucket that holds 5"),
    ("check_dispatch", dispatch_padded_rows, "returned 8 rows for a batch of 5 tokens"),
    ("check_dispatch", dispatch_view, "5 tokens shares memory with the bucket's static_out"),
    ("check_dispatch", dispatch_without_copy, "prompts [3, 2] your output differs from the"),
    ("check_dispatch", dispatch_as_one_prompt, "prompts [3, 2] your output differs from the"),
    ("check_dispatch", dispatch_cut_to_largest, "35 tokens is larger than the largest bucket"),
    ("check_dispatch", dispatch_replay_and_eager, "graph of 8 and also ran the layer eagerly"),
    ("check_dispatch", dispatch_twice, "replayed the graph of 8 2 times"),
    ("check_dispatch", dispatch_into_one_buffer, "batch of 5 tokens changed after later batches"),
    ("check_dispatch", dispatch_as_a_list, "what dispatch returns should be a tensor"),
    # 10
    ("check_compiled_replays", constant(True), "the first call (warm-up)"),
    ("check_compiled_replays", constant(False), "a steady call of the MLP"),
    ("check_compiled_replays", replayed_if_any_replay, "A capture means False"),
    ("check_compiled_replays", replayed_unless_skipped, "it recorded (or warmed up)"),
    ("check_compiled_replays", replayed_ignoring_skips, "A skip means False"),
    ("check_compiled_replays", replayed_without_counting_replays, "No replay means False"),
    ("check_compiled_replays", replayed_exactly_once, "one per partition"),
    ("check_compiled_replays", constant("yes"), "should return True or False, not 'yes'"),
    # 12
    ("check_repoint", repoint_without_update, "still wrote its own output"),
    ("check_repoint", repoint_not_kept, "The source graph's nodes are gone"),
    ("check_repoint", repoint_reads_a_copy, "reads a copy of new_x made inside repoint"),
    ("check_repoint", repoint_by_recapture, "captured into the graph it was given"),
    ("check_repoint", repoint_returns_a_copy, "return that tensor itself, not a copy"),
    ("check_repoint", repoint_one_more_op, "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED"),
    ("check_repoint", repoint_output_only, "should return a pair (out, source)"),
    # 14 (the first mix: sizes [2, 4]; batch sizes 5 and 6 run eagerly; 326 / 15 = 21.7333)
    ("check_expected_step_time", step_time_without_padding, "21.6333, expected 21.7333: you pri"),
    ("check_expected_step_time", step_time_in_the_largest_graph, "batch sizes [5, 6] are above"),
    ("check_expected_step_time", step_time_of_hits_only, "you left out batch sizes [5, 6]"),
    ("check_expected_step_time", step_time_unweighted, "you averaged over the batch sizes"),
    ("check_expected_step_time", step_time_total, "divide it by the number of steps"),
    ("check_expected_step_time", step_time_first_in_list, "the plan [8, 3] is not sorted"),
    ("check_expected_step_time", step_time_rounded, "which is 21.7333 rounded"),
    ("check_expected_step_time", constant(326 / 15), "the same answer, 21.7333, for two"),
    ("check_expected_step_time", step_time_per_batch_size, "should return one number, µs per"),
    ("check_expected_step_time", constant("21.7"), "one number, µs per step, not the text"),
    # the powers of two up to 64: 154.8 µs per step on the bundled trace
    ("check_choose_sizes", choose_vllms_first_six, "give 786.5 µs per step (hit rate 46.9%"),
    # one graph serves every step: replay_us of 47 in the H200 table, 165.4 µs
    ("check_choose_sizes", choose_the_largest_batch_only, "[47] give 171.9 µs per step (hit rat"),
    ("check_choose_sizes", constant([24, 48]), "not less than the powers of two [1, 2, 4,"),
    ("check_choose_sizes", constant(list(range(8, 64, 8))), "you chose 7 sizes"),
    # 2 and 24 MiB of the H200 table: one shared pool keeps the larger
    ("check_choose_sizes", constant([128, 200]), "keep 24 MiB of graphs in one shared pool"),
    ("check_choose_sizes", constant([8.0, 48]), "returned 8.0 among its sizes"),
    ("check_choose_sizes", constant([True, 48]), "returned True among its sizes"),
    ("check_choose_sizes", constant([48, 300]), "size 300 is not in the cost table"),
    ("check_choose_sizes", constant([48, 48]), "size 48 appears twice"),
    ("check_choose_sizes", constant(48), "should return a list of batch sizes, such as [8, 32]"),
    # 15 (the checker takes two answers: make_model and step)
    ("check_fixed_model", (make_model_synced, fixed_step), "still makes the CPU wait for the GPU"),
    ("check_fixed_model", (make_model_cpu_counter, fixed_step), "was cooled as the call during"),
    ("check_fixed_model", (make_model_right, step_without_replay), "step never replayed the"),
    ("check_fixed_model", (make_model_right, step_returning_static_out), "returned static_out it"),
    ("check_fixed_model", (make_model_right, step_rebinding), "static_x does not hold the batch"),
    ("check_fixed_model", (make_model_right, step_replaying_twice), "replayed the graph 2 times"),
    ("check_fixed_model", (constant(None), fixed_step), "should return your fixed model"),
    ("check_fixed_branchy", branchy_always_doubled, "on which the model does not double h"),
    # the learner's line that failed the capture, named on the emulator and on a GPU alike
    ("check_fixed_branchy", branchy_still_reading, "in branchy_still_reading: if h.mean().item()"),
    ("check_fixed_branchy", branchy_still_selecting, "branchy_still_selecting: return h[h > 0]"),
    ("check_fixed_branchy", branchy_per_row, "of shape (32,), but the model returns one of shape"),
    ("check_fixed_branchy", constant(1.0), "forward(model, x)"),
    ("check_fixed_training", training_not_fixed, "captured without capturable=True"),
    ("check_fixed_training", training_without_the_optimizer, "never called an optimizer's step"),
    ("check_fixed_training", training_with_a_python_schedule, "differ from 3 eager steps"),
    ("check_fixed_training", constant(3), "should return (step, (x, target)), not 3"),
]
