"""The catalogue of CUDA Graph failures that :func:`graphlab.explain` recognises.

Each :class:`Failure` holds the text a learner actually sees (a PyTorch or CUDA message, a
torch.compile log line, or the message of a graphlab exercise checker for mistakes that raise
nothing on a GPU), what causes it, how to fix it, and the lesson of the course that covers it.

Entries are tried in order and the first that matches wins, so specific entries come before the
generic ones they refine (a host sync before "operation not permitted", everything before "capture
invalidated", which is only ever a consequence of an earlier error).

``patterns`` are regular expressions searched (case-insensitively) in ``"Type: message"`` of the
exception, with ``cuda_error`` appended for the emulator's :class:`~graphlab.errors.CaptureError`.
``only_if`` patterns, when given, must also occur in the message or in the traceback (its file
names and source lines): that is how a host synchronisation, or one made by an optimizer, is told
apart from the other operations CUDA refuses with the same error.

``title``, ``cause`` and ``fix`` are written in English and marked ``N_`` for the message
catalogue: :func:`graphlab.explain` shows them in the learner's language (``graphlab.language``).
The ``example`` stays as PyTorch or CUDA prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphlab.language import N_
from graphlab.support.capture_errors import patterns

__all__ = ["CATALOGUE", "Failure"]


@dataclass(frozen=True)
class Failure:
    """One failure mode: how to recognise it, and what to tell the learner."""

    key: str
    title: str
    example: str  # the text users see, as PyTorch / CUDA / graphlab prints it
    cause: str
    fix: str
    lesson: str
    patterns: tuple[str, ...]
    only_if: tuple[str, ...] = ()


_UNSUPPORTED = patterns("cudaErrorStreamCaptureUnsupported")
_INVALIDATED = patterns("cudaErrorStreamCaptureInvalidated")
# Source-code fragments that make the CPU wait for the GPU, and the emulator's words for them.
_HOST_SYNC = (
    r"\.item\(",
    r"\.cpu\(",
    r"\.tolist\(",
    r"\.numpy\(",
    r"synchroni[sz]",
    r"\bprint\(",
    r"nonzero\(",
    r": (if|elif|while|assert)\b",  # a traceback line testing a tensor's truth
    r"\bif\b.+\belse\b",
    r"\b(bool|float|int)\(",
    r"waits for (it|the GPU)",
    r"shape depends on the data",
)

CATALOGUE: tuple[Failure, ...] = (
    Failure(
        key="optimizer-not-capturable",
        title=N_("optimizer.step() captured without capturable=True"),
        example=(
            "RuntimeError: Attempting CUDA graph capture of step() for an instance of Adam but "
            "param_groups' capturable is False."
        ),
        cause=N_(
            "By default an optimizer keeps its step counter on the CPU. Captured, that CPU "
            "value would be baked into the graph and never advance, so PyTorch refuses to capture "
            "step() unless the optimizer keeps its state on the GPU."
        ),
        fix=N_(
            "Create the optimizer with capturable=True (for example torch.optim.Adam(params, "
            "lr=1e-3, capturable=True)), warm it up for a few steps on a side stream, then "
            "capture forward, backward and step together."
        ),
        lesson="07_training",
        # On a GPU PyTorch names the mistake; on the emulator, the optimizer's read of its
        # step counter (inside torch/optim) is the host sync that fails the capture.
        patterns=(r"graph capture of step\(\).*capturable is False", *_UNSUPPORTED, *_INVALIDATED),
        only_if=(r"capturable is False", r"torch[/\\]optim[/\\]"),
    ),
    Failure(
        key="host-sync-in-capture",
        title=N_("The CPU waited for the GPU inside a capture"),
        example="RuntimeError: CUDA error: operation not permitted when stream is capturing",
        cause=N_(
            "While a stream is capturing, no kernel runs: each one is only recorded. .item(), "
            ".cpu(), .tolist(), printing a CUDA tensor, torch.cuda.synchronize() and ops whose "
            "output size depends on the data (nonzero, boolean-mask indexing) all make the CPU "
            "wait for a GPU result that does not exist yet. CUDA refuses the wait and the capture "
            "is spoiled."
        ),
        fix=N_(
            "Read results after replay, not during capture: g.replay(), then out.item(). Keep "
            "data-dependent choices on the GPU (torch.where instead of `if x.item() > 0`). Run the "
            "code once before capturing so that any one-off setup that synchronises happens "
            "outside the graph."
        ),
        lesson="01_kernel_gaps",
        patterns=_UNSUPPORTED + _INVALIDATED,
        only_if=_HOST_SYNC,
    ),
    Failure(
        key="pageable-copy-in-capture",
        title=N_("A copy between CPU and GPU memory inside a capture"),
        example=(
            "RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA graph capture "
            "unless the CPU tensor is pinned."
        ),
        cause=N_(
            "A graph can only replay GPU work on memory whose address never changes. A copy "
            "between an ordinary CPU tensor and the GPU, in either direction, is one PyTorch will "
            "not record: torch.tensor(..., device='cuda') and cpu_tensor.to('cuda') copy in, "
            ".cpu() and .tolist() copy out."
        ),
        fix=N_(
            "Create the input tensors on the GPU before capture, and between replays copy new "
            "values into them outside the captured region: static_x.copy_(new_x); g.replay(). "
            "Read results after the replay (static_y.cpu()), never inside the capture."
        ),
        lesson="02_static_inputs",
        patterns=(r"Cannot copy between CPU and CUDA tensors during CUDA graph capture",),
    ),
    Failure(
        key="default-stream-capture",
        title=N_("Capture on the default stream"),
        example=(
            "RuntimeError: CUDA graphs must be captured on a non-default stream. (However, after "
            "capture, it's ok to replay them on the default stream.)"
        ),
        cause=N_(
            "The legacy default stream waits for, and is waited on by, every other ordinary "
            "stream. Work issued on it cannot be recorded into one graph without pulling in "
            "unrelated streams, so PyTorch refuses to start a capture there and CUDA refuses "
            "default-stream work that would depend on a capturing stream."
        ),
        fix=N_(
            "Use `with torch.cuda.graph(g):`, which captures on a side stream for you. With the "
            "low-level g.capture_begin(), first enter "
            "`with torch.cuda.stream(torch.cuda.Stream()):`. Replaying on the default stream "
            "afterwards is fine."
        ),
        lesson="01_kernel_gaps",
        patterns=(
            r"must be captured on a non-default stream",
            *patterns("cudaErrorStreamCaptureImplicit"),
        ),
    ),
    Failure(
        key="unjoined-fork",
        title=N_("A stream forked inside the capture was never joined back"),
        example="RuntimeError: CUDA error: capturing stream has unjoined work",
        cause=N_(
            "Inside the capture another stream waited on the capturing stream (a fork), so its "
            "work joined the graph. The capturing stream never waited for that branch to finish, "
            "and a graph must end with every branch joined into the stream that began it."
        ),
        fix=N_(
            "Before the capture block ends, make the capturing stream wait for each side stream: "
            "torch.cuda.current_stream().wait_stream(side)."
        ),
        lesson="09_multi_stream",
        patterns=(*patterns("cudaErrorStreamCaptureUnjoined"),),
    ),
    Failure(
        key="uncaptured-dependency",
        title=N_("The capture depends on work outside the graph"),
        example="RuntimeError: CUDA error: dependency created on uncaptured work in another stream",
        cause=N_(
            "A capturing stream was told to wait for an event recorded outside this capture, for "
            "example by another stream before the capture began. A graph can only depend on work "
            "that is part of the graph."
        ),
        fix=N_(
            "Settle that dependency before capture starts (wait or synchronise before entering "
            "the capture block), or move the other stream's work inside the capture: fork it from "
            "the capturing stream and join it back."
        ),
        lesson="09_multi_stream",
        patterns=patterns("cudaErrorStreamCaptureIsolation"),
    ),
    Failure(
        key="captured-event",
        title=N_("An event recorded during capture was queried or timed"),
        example="AcceleratorError: CUDA error: invalid argument (from event.query())",
        cause=N_(
            "An event recorded inside a capture is only a node of the graph: it never happens "
            "on its own, so it cannot be queried, waited on from the CPU or used in "
            "elapsed_time(), not even after a replay. CUDA says 'invalid argument' (torch 2.11 "
            "on an H200) or that the event was last recorded in a capturing stream."
        ),
        fix=N_(
            "Time a graph from outside: record events around g.replay(), call "
            "torch.cuda.synchronize(), then read start.elapsed_time(end)."
        ),
        lesson="09_multi_stream",
        patterns=(
            *patterns("cudaErrorCapturedEvent"),
            r"CUDA error: invalid argument",
        ),
        # "invalid argument" alone says little: count it only when an event call raised it.
        only_if=(r"capturing stream", r"\.(query|synchronize|elapsed_time|wait)\("),
    ),
    Failure(
        key="rng-state-in-capture",
        title=N_("The random generator was seeded (or its seed read) inside a capture"),
        example=(
            "RuntimeError: CUDAGeneratorImpl::set_current_seed can be called during stream "
            "capture only if new seed is the same as the original seed."
        ),
        cause=N_(
            "A graph replays kernels, not Python calls. Random ops in a graph draw fresh numbers "
            "on every replay because PyTorch advances the generator's offset for each replay; "
            "reseeding (or reading the seed) inside the capture has no place in that scheme."
        ),
        fix=N_(
            "Seed outside the graph: torch.manual_seed(...) before a replay makes that replay's "
            "random numbers repeatable."
        ),
        lesson="04_randomness",
        patterns=(
            r"CUDAGeneratorImpl::\w+ during CUDA graph capture",
            r"set_current_seed can be called during stream capture",
        ),
    ),
    Failure(
        key="generator-left-in-capture",
        title=N_("Random numbers on the GPU fail after an earlier capture failed"),
        example="RuntimeError: Offset increment outside graph capture encountered unexpectedly.",
        cause=N_(
            "Every capture puts the GPU's random generator in capture mode, and PyTorch takes it "
            "out only when a capture ends well. An earlier capture in this process failed, so the "
            "generator still believes it is being captured and refuses every random op "
            "(torch.randn, dropout) outside a graph. The random op is not the mistake."
        ),
        fix=N_(
            "Call graphlab.release_failed_captures() (graphlab's checkers and explained() do it "
            "for you); any capture that succeeds also ends it. Then fix the capture that failed "
            "first. Your random sequence is unchanged: the failed op drew nothing."
        ),
        lesson="04_randomness",
        patterns=(r"Offset increment outside graph capture encountered unexpectedly",),
    ),
    Failure(
        key="empty-graph",
        title=N_("The graph captured no GPU work"),
        example=(
            "UserWarning: The CUDA Graph is empty. This usually means that the graph was "
            "attempted to be captured on wrong device or stream."
        ),
        cause=N_(
            "The capture ended without recording a single kernel: the block ran only CPU code, "
            "or its work went to another GPU or to a stream that never joined the capture. "
            "Replaying it does nothing."
        ),
        fix=N_(
            "Check that the tensors live on the GPU you capture on (graphlab.DEVICE, "
            "torch.cuda.current_device()) and that the work is issued inside the capture block."
        ),
        lesson="01_kernel_gaps",
        patterns=(r"The CUDA Graph is empty",),
    ),
    Failure(
        key="replay-without-capture",
        title=N_("Replay of a graph that was never captured"),
        example="RuntimeError: Called CUDAGraph::replay without a preceding successful capture.",
        cause=N_(
            "g.replay() ran on a CUDAGraph whose capture never finished: it was never captured, "
            "or an error inside the capture block left it unusable."
        ),
        fix=N_(
            "Capture first and make sure the block finished without an error. After a failed "
            "capture, create a new torch.cuda.CUDAGraph() and capture again."
        ),
        lesson="01_kernel_gaps",
        patterns=(r"replay(\(\))? without a preceding successful capture",),
    ),
    Failure(
        key="stale-static-input",
        title=N_("Rebinding an input name does not change what the graph reads"),
        example=(
            "CheckFailed: your replay returned the first batch's result: the graph still reads "
            "the old tensor. Rebinding a name (static_x = batch) does not change the address "
            "the graph reads; copy the data in place: static_x.copy_(batch)."
        ),
        cause=N_(
            "A graph reads the addresses recorded at capture. `x = new_batch` points the Python "
            "name at a new tensor; the graph keeps reading the old one and silently recomputes "
            "the old input. CUDA raises no error, so only the wrong numbers give it away."
        ),
        fix=N_(
            "Copy new data into the captured tensor, then replay: "
            "static_x.copy_(new_batch); g.replay()."
        ),
        lesson="02_static_inputs",
        patterns=(
            r"CheckFailed:.*\brebind",
            r"CheckFailed:.*\brebound",
            r"CheckFailed:.*\bstale\b",
            r"CheckFailed:.*\bold (input|tensor)",
        ),
    ),
    Failure(
        key="output-overwritten",
        title=N_("A later replay overwrote an output you kept"),
        example=(
            "RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten "
            "by a subsequent run."
        ),
        cause=N_(
            "Every replay writes into the same output tensors. A reference kept from an earlier "
            "replay, or from an earlier call of a torch.compile(mode='reduce-overhead') function, "
            "now shows the newest values. A plain CUDAGraph never raises. torch.compile raises "
            "only for the outputs of a call that warmed up or recorded a graph; once its calls "
            "replay, a kept output is overwritten silently (_inductor/cudagraph_trees.py, torch "
            "2.5 to 2.13; seen on an NVIDIA H200 with torch 2.11), so a missing "
            "error proves nothing."
        ),
        fix=N_(
            "Clone what you keep: results.append(static_out.clone()). With torch.compile, clone "
            "the result outside the compiled function. Only a copy keeps an output: "
            "torch.compiler.cudagraph_mark_step_begin() merely tells torch a new iteration began, "
            "and the next replay still overwrites the old result."
        ),
        lesson="03_outputs",
        patterns=(
            r"output of CUDAGraphs that has been overwritten by a subsequent run",
            r"CheckFailed:.*\boverwrit(e|es|ten)\b",
        ),
    ),
    Failure(
        key="static-input-shape",
        title=N_("A batch of another shape does not fit the captured input"),
        example=(
            "RuntimeError: The size of tensor a (4) must match the size of tensor b (6) at "
            "non-singleton dimension 0"
        ),
        cause=N_(
            "A graph replays with the sizes it was captured with, and its input tensor keeps "
            "that shape. Copying a batch of a different size into it with copy_() fails: the "
            "graph cannot grow to fit it."
        ),
        fix=N_(
            "Pad the batch up to the captured size (and ignore the padded rows of the output), "
            "or capture one graph per size bucket and pick the smallest bucket that fits."
        ),
        lesson="05_dynamic_shapes",
        patterns=(r"The size of tensor a \(\d+\) must match the size of tensor b",),
        only_if=(r"copy_\(",),
    ),
    Failure(
        key="shape-rerecord",
        title=N_("A new graph is recorded for every input shape"),
        example=(
            "CUDAGraph supports dynamic shapes by recording a new graph for each distinct input "
            "size. Recording too many CUDAGraphs may lead to extra overhead."
        ),
        cause=N_(
            "A graph is fixed to the sizes it was captured with. torch.compile's CUDAGraph Trees "
            "therefore record one graph per distinct shape, each costing capture time and memory "
            "in the tree's pool; past cudagraph_dynamic_shape_warn_limit distinct sizes (8 by "
            "default from torch 2.10, 50 in 2.5 to 2.9) torch.compile warns and goes on "
            "recording. The other limit, cudagraph_unexpected_rerecord_limit (128), is not about "
            "shapes: a function that has to be re-recorded that often for one shape (its static "
            "inputs or graph-owned inputs moved) then runs without a graph "
            "(_inductor/cudagraph_trees.py and config.py, torch 2.5 to 2.13)."
        ),
        fix=N_(
            "Pad inputs up to a few fixed sizes (buckets) and slice the results, so a handful of "
            "graphs cover every request; or set "
            "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs = True to run dynamic "
            "shapes without graphs."
        ),
        lesson="05_dynamic_shapes",
        patterns=(
            r"new graph for each\s+distinct input size",
            r"exceeding max re-recording limit",
            r"shapes? (are|is) frozen",
        ),
    ),
    Failure(
        key="compile-skipped-cudagraphs",
        title=N_("torch.compile ran without CUDA graphs"),
        example="skipping cudagraphs due to mutated inputs (1 instances)",
        cause=N_(
            "torch.compile(mode='reduce-overhead') wraps a compiled region in a CUDA graph only "
            "when that is safe: no writes into its inputs other than parameters and buffers, no "
            "CPU tensors, no ops that cannot be captured. Otherwise it logs this line and runs the "
            "compiled kernels one launch at a time. Compilation succeeded, but nothing was "
            "captured."
        ),
        fix=N_(
            "Read the reason after 'due to'. Mutated inputs: return a new tensor instead of "
            "writing into an argument. CPU device: move those tensors to the GPU. Then confirm "
            "with TORCH_LOGS=cudagraphs, or look for cudaGraphLaunch in a timeline."
        ),
        lesson="10_torch_compile",
        patterns=(r"skipping cudagraphs? due to",),
    ),
    Failure(
        key="out-of-memory",
        title=N_("Out of GPU memory (graph memory pools hold on to memory)"),
        example=(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of ..."
        ),
        cause=N_(
            "Each captured graph keeps a private memory pool so that every replay finds its "
            "tensors at the same addresses. That memory stays reserved while the graph exists, "
            "even when no replay is running; a graph per shape, or large intermediates inside "
            "graphs, add up until an allocation, in or out of capture, fails."
        ),
        fix=N_(
            "Delete graphs you no longer replay (del g; torch.cuda.empty_cache()); let graphs "
            "captured one after another share a pool (pool=g1.pool()); capture fewer sizes or a "
            "smaller batch. torch.cuda.memory_summary() shows what is reserved."
        ),
        lesson="08_memory",
        patterns=(r"OutOfMemoryError", r"CUDA out of memory"),
    ),
    Failure(
        key="nccl-mismatch",
        title=N_("A collective that not every rank ran (or captured)"),
        example=(
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
            "OpType=ALLREDUCE, ...) ran for 600000 milliseconds before timing out."
        ),
        cause=N_(
            "A collective finishes only when every rank launches it. If one rank captured an "
            "all_reduce into a graph and another did not, or the ranks replay different graphs, "
            "or one skips a replay, the others wait for ever. An eager collective is watched: "
            "NCCL's watchdog times it out and ends the job. A collective replayed from a graph is "
            "not: ProcessGroupNCCL hands work to the watchdog only when the stream is not "
            "capturing, so a mismatched replay hangs the host at its next synchronize, "
            "indefinitely, with no timeout. Each GPU on its own captured fine."
        ),
        fix=N_(
            "Make every capture decision the same on all ranks (same shapes, same branches), "
            "capture and replay the same graphs in the same order everywhere, and run one eager "
            "collective before capturing so NCCL is set up outside the graph."
        ),
        lesson="13_nccl",
        patterns=(r"collective operation timeout", r"\bNCCL\b.*\btim(ed|e) ?out"),
    ),
    Failure(
        key="illegal-address",
        title=N_("A kernel read or wrote memory it does not own (an illegal address)"),
        example=("torch.AcceleratorError: CUDA error: an illegal memory access was encountered"),
        cause=N_(
            "A kernel touched an address that holds no live allocation. With graphs the usual "
            "cause is a replay that reads a captured input whose storage was freed: rebinding the "
            "Python name (static_x = new_batch) drops the last reference, the caching allocator "
            "gives the block back to CUDA or to another tensor, and the graph still points at it. "
            "The error is sticky: every later CUDA call in the process fails the same way."
        ),
        fix=N_(
            "Restart the kernel (the CUDA context cannot recover). Then keep every captured input "
            "alive and copy new data into it (static_x.copy_(batch)). To find the kernel and the "
            "address, run the script under compute-sanitizer with "
            "PYTORCH_NO_CUDA_MEMORY_CACHING=1, so that freed blocks really are freed."
        ),
        lesson="15_debugging_capture",
        patterns=(r"illegal memory access", r"cudaErrorIllegalAddress"),
    ),
    Failure(
        key="capture-unsupported",
        title=N_("An operation CUDA does not allow during capture"),
        example="RuntimeError: CUDA error: operation not permitted when stream is capturing",
        cause=N_(
            "While a stream captures, CUDA only records work. Calls that cannot be recorded, "
            "such as synchronising a stream or the device, querying an event, or allocating "
            "pinned host memory, are refused, and the whole capture is marked as failed."
        ),
        fix=N_(
            "Find the last line of your own code in the traceback: that call must happen before "
            "capture (as part of a warm-up run) or after replay. If a library makes the call, run "
            "it once on a side stream before capturing, or keep that part out of the graph."
        ),
        lesson="01_kernel_gaps",
        patterns=_UNSUPPORTED,
    ),
    Failure(
        key="capture-invalidated",
        title=N_("The capture was spoiled by an earlier error"),
        example="RuntimeError: CUDA error: operation failed due to a previous error during capture",
        cause=N_(
            "Once any call inside a capture fails, CUDA marks the capture invalid and every later "
            "call on it fails with this message, including ending the capture when the "
            "`with torch.cuda.graph(g):` block exits. It is a consequence, not the mistake."
        ),
        fix=N_(
            "Scroll up to the first error (after 'During handling of the above exception') and "
            "fix that. The half-captured graph cannot be used: create a new CUDAGraph and capture "
            "again."
        ),
        lesson="01_kernel_gaps",
        patterns=_INVALIDATED,
    ),
)
