"""The simulator against hand-computed schedules and an independent event-by-event reference.

All times below were worked out by hand from the model's rules (module docstring of
graphlab.simulator.model): a kernel starts at max(its launch's end + latency, the previous kernel
on its stream's end + gap, the end of what it waits for + gap); the host only waits at syncs
(and, with a bounded launch queue, for room in it).
Parameters are chosen by hand for easy arithmetic; they are not GPU measurements.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlab.errors import SimulatorError, TimingError
from graphlab.simulator import (
    SimParams,
    chain,
    eager,
    fork_join,
    graph,
    model_step,
    schedule,
    simulate,
)
from graphlab.simulator.break_even import (
    from_simulation,
    from_timings,
    model_vs_measured,
    step_from_timeline,
)
from graphlab.simulator.model import OP_SYNC
from graphlab.timing.break_even import break_even, cumulative_totals


def params(
    host=5.0, latency=0.0, graph_launch=3.0, gap=0.5, sync=0.0, kernel_gap=0.0, replay_gap=0.0,
    **capture,
):  # fmt: skip
    return SimParams(
        host_us=host,
        launch_latency_us=latency,
        graph_launch_us=graph_launch,
        node_gap_us=gap,
        sync_us=sync,
        kernel_gap_us=kernel_gap,
        replay_gap_us=replay_gap,
        **capture,
    )


def us(ns_array) -> list[float]:
    return (np.asarray(ns_array) / 1000).tolist()


def kernels(timeline):
    k = timeline.kind == "kernel"
    return us(timeline.start_ns[k]), us(timeline.end_ns[k])


def host(timeline, kind):
    k = timeline.kind == kind
    return us(timeline.start_ns[k]), us(timeline.end_ns[k])


# ----------------------------------------------------------------------------- eager chains


def test_host_bound_chain_leaves_the_gpu_waiting_for_each_launch():
    # host 5 µs per launch, 1 µs kernels: launch i ends at 5(i+1), its kernel runs right then.
    t = simulate(eager(chain(4, 1.0), params(host=5)))
    assert host(t, "launch") == ([0, 5, 10, 15], [5, 10, 15, 20])
    assert kernels(t) == ([5, 10, 15, 20], [6, 11, 16, 21])
    # The sync is called when the host is done (20) and returns when the GPU is (21).
    assert host(t, "sync") == ([20], [21])


def test_launch_latency_and_sync_cost_shift_the_chain():
    t = simulate(eager(chain(4, 1.0), params(host=5, latency=2, sync=3)))
    assert kernels(t) == ([7, 12, 17, 22], [8, 13, 18, 23])
    assert host(t, "sync") == ([20], [26])  # GPU done at 23, then 3 µs of sync


def test_gpu_bound_chain_queues_kernels_back_to_back():
    # host 1 µs, kernels 10 µs: the host is done at 4 µs, the GPU runs kernels end to end.
    t = simulate(eager(chain(4, 10.0), params(host=1)))
    assert kernels(t) == ([1, 11, 21, 31], [11, 21, 31, 41])
    assert host(t, "launch") == ([0, 1, 2, 3], [1, 2, 3, 4])
    assert host(t, "sync") == ([4], [41])


def test_queued_eager_kernels_keep_the_kernel_gap():
    # GPU-bound (host 1 µs, kernels 10 µs): each queued kernel starts 0.5 µs after the last ends.
    t = simulate(eager(chain(4, 10.0), params(host=1, kernel_gap=0.5)))
    assert kernels(t) == ([1, 11.5, 22, 32.5], [11, 21.5, 32, 42.5])
    # Host-bound: every kernel finds the GPU idle, so the gap never shows.
    t = simulate(eager(chain(4, 1.0), params(host=5, kernel_gap=0.5)))
    assert kernels(t)[0] == [5, 10, 15, 20]


def test_a_full_launch_queue_makes_the_host_wait_inside_the_launch_call():
    # Queue of 2: the 3rd launch cannot return before kernel 1 ends (11), the 4th before
    # kernel 2 ends (21); each call starts when the previous returned, so it spans the wait.
    t = simulate(eager(chain(4, 10.0), params(host=1), queue_depth=2))
    assert host(t, "launch") == ([0, 1, 2, 12], [1, 2, 12, 22])
    assert kernels(t) == ([1, 11, 21, 31], [11, 21, 31, 41])  # the GPU was never starved
    assert host(t, "sync") == ([22], [41])


def test_model_step_uses_each_kernels_duration_and_name():
    t = simulate(eager(model_step([2.0, 8.0, 1.0], names=["mm", "relu", "mm"]), params(host=4)))
    # launches end at 4, 8, 12; kernel 1 ends at 6 < 8; kernel 2 runs 8..16; kernel 3 16..17.
    assert kernels(t) == ([4, 8, 16], [6, 16, 17])
    assert t.name[t.kind == "kernel"].tolist() == ["mm", "relu", "mm"]


def test_sync_every_k_makes_the_host_wait_and_restart_the_queue():
    # host 1, kernels 10, sync 0.5 µs after every 2nd kernel.
    t = simulate(eager(chain(4, 10.0), params(host=1, sync=0.5), sync_every=2))
    assert host(t, "launch") == ([0, 1, 21.5, 22.5], [1, 2, 22.5, 23.5])
    assert kernels(t) == ([1, 11, 22.5, 32.5], [11, 21, 32.5, 42.5])
    assert host(t, "sync") == ([2, 23.5], [21.5, 43])


def test_iterations_repeat_the_step_without_a_sync_in_between():
    t = simulate(eager(chain(2, 1.0), params(host=5), iterations=2))
    assert kernels(t) == ([5, 10, 15, 20], [6, 11, 16, 21])
    assert host(t, "sync") == ([20], [21])


# --------------------------------------------------------------------------- graph replays


def test_graph_replay_runs_nodes_with_the_per_node_gap():
    # one cudaGraphLaunch of 3 µs; nodes of 1 µs start 0.5 µs after the previous one ends.
    t = simulate(graph(chain(4, 1.0), params(graph_launch=3, gap=0.5)))
    assert host(t, "launch") == ([0], [3])
    assert kernels(t) == ([3, 4.5, 6, 7.5], [4, 5.5, 7, 8.5])
    assert host(t, "sync") == ([3], [8.5])


def test_back_to_back_replays_queue_on_the_stream():
    t = simulate(graph(chain(4, 1.0), params(graph_launch=3, gap=0.5), replays=2))
    assert host(t, "launch") == ([0, 3], [3, 6])
    # replay 2 is released at 6 but its first node waits for replay 1's last (8.5) + 0.5.
    assert kernels(t)[0] == [3, 4.5, 6, 7.5, 9, 10.5, 12, 13.5]
    assert host(t, "sync") == ([6], [14.5])


def test_a_replay_queued_behind_another_pays_the_replay_gap():
    # replay 2 is released at 6; its first node waits for 8.5 + node gap 0.5 + replay gap 1.
    t = simulate(graph(chain(4, 1.0), params(graph_launch=3, gap=0.5, replay_gap=1), replays=2))
    assert kernels(t)[0] == [3, 4.5, 6, 7.5, 10, 11.5, 13, 14.5]
    assert host(t, "sync") == ([6], [15.5])


def test_host_bound_replays_when_the_graph_is_shorter_than_its_launch():
    t = simulate(graph(chain(2, 1.0), params(graph_launch=10, gap=0.5), replays=2))
    assert kernels(t) == ([10, 11.5, 20, 21.5], [11, 12.5, 21, 22.5])
    assert host(t, "sync") == ([20], [22.5])


def test_end_to_end_replays_copy_inputs_in_and_outputs_out_eagerly():
    # Per replay: copy in (1 µs kernel, 5 µs launch), graph launch 3 µs (2 nodes of 1 µs, gap
    # 0.5), copy out (2 µs kernel, 5 µs launch); queued eager kernels keep a 0.25 µs gap.
    p = params(host=5, graph_launch=3, gap=0.5, kernel_gap=0.25)
    t = simulate(graph(chain(2, 1.0), p, replays=2, copy_in_us=[1.0], copy_out_us=[2.0]))
    assert host(t, "launch")[0] == [0, 5, 8, 13, 18, 21]
    assert kernels(t) == ([5, 8, 9.5, 13, 18, 21, 22.5, 26], [6, 9, 10.5, 15, 19, 22, 23.5, 28])
    assert t.name[t.kind == "kernel"].tolist() == ["copy", *["kernel"] * 2, "copy"] * 2
    assert host(t, "sync") == ([26], [28])


def test_graph_with_sync_every_is_one_graph_per_stretch():
    # sync 0.5 µs: the second graph is launched once the first has run and the sync returned.
    p = params(graph_launch=3, gap=0.5, sync=0.5)
    t = simulate(graph(chain(4, 10.0), p, sync_every=2))
    assert host(t, "launch") == ([0, 24], [3, 27])
    assert kernels(t) == ([3, 13.5, 27, 37.5], [13, 23.5, 37, 47.5])
    assert host(t, "sync") == ([3, 27], [24, 48])


def test_every_kernel_of_a_replay_shares_its_graph_launch_correlation():
    t = simulate(graph(chain(3, 1.0), params(), replays=2))
    launches = t.correlation[t.kind == "launch"].tolist()
    assert len(set(launches)) == 2
    assert t.correlation[t.kind == "kernel"].tolist() == [launches[0]] * 3 + [launches[1]] * 3
    assert set(t.name[t.kind == "launch"]) == {"cudaGraphLaunch"}


def test_each_eager_kernel_shares_its_own_launch_correlation():
    t = simulate(eager(chain(3, 1.0), params()))
    launch = t.correlation[t.kind == "launch"]
    assert sorted(t.correlation[t.kind == "kernel"].tolist()) == sorted(launch.tolist())
    assert len(set(launch.tolist())) == 3
    assert set(t.name[t.kind == "launch"]) == {"cudaLaunchKernel"}
    assert t.name[t.kind == "sync"].tolist() == ["cudaDeviceSynchronize"]


def test_timeline_meta_says_simulator_and_parameters():
    p = params(host=5)
    t = simulate(eager(chain(4, 1.0), p))
    assert t.meta["source"] == "simulator"
    assert t.meta["mode"] == "eager"
    assert t.meta["params"]["host_us"] == 5.0
    assert t.meta["calibration"] is None
    assert (t.device[t.kind == "kernel"] == 0).all() and (t.thread[t.kind == "kernel"] == -1).all()


def test_timeline_survives_a_chrome_trace_round_trip(tmp_path):
    from graphlab import Timeline

    t = simulate(graph(fork_join([10], [10], [1], [1]), params()))
    back = Timeline.from_chrome_trace(t.to_chrome_trace(tmp_path / "sim.json"))
    assert back.start_ns.tolist() == t.start_ns.tolist()
    assert back.dur_ns.tolist() == t.dur_ns.tolist()


# ------------------------------------------------------------------------------- fork/join


def test_fork_join_branches_overlap_in_a_replay_and_finish_together():
    # before 1 µs, then 10 µs on each branch, then after 1 µs; node gap 0.5, launch 3.
    t = simulate(graph(fork_join([10], [10], before_us=[1], after_us=[1]), params(gap=0.5)))
    k = t.kind == "kernel"
    spans = zip(us(t.start_ns[k]), us(t.end_ns[k]), strict=True)
    by_name = dict(zip(t.name[k], spans, strict=True))
    assert by_name["before"] == (3, 4)
    assert by_name["side"] == (4.5, 14.5)
    assert by_name["main"] == (4.5, 14.5)
    assert by_name["after"] == (15, 16)  # serialized branches would end it at 26
    assert sorted(set(t.stream[k].tolist())) == [0, 1]
    assert host(t, "sync") == ([3], [16])


def test_fork_join_eager_overlaps_branches_launched_one_after_the_other():
    # host 1 µs per launch and per event wait: before@0, fork wait@1, side@2, main@3,
    # join wait@4, after@5, sync@6.
    t = simulate(eager(fork_join([10], [10], before_us=[1], after_us=[1]), params(host=1)))
    assert kernels(t) == ([1, 3, 4, 14], [2, 13, 14, 15])
    assert host(t, "launch")[0] == [0, 2, 3, 5]
    assert host(t, "sync") == ([6], [15])


def test_join_waits_for_a_longer_side_branch():
    t = simulate(graph(fork_join([2], [20], before_us=[1], after_us=[1]), params(gap=0)))
    # side runs 4..24, main 4..6; after must wait for side: 24..25.
    assert kernels(t)[1][-1] == 25


# --------------------------------------------------------------- the vectorised engine vs a loop


def reference_schedule(program):
    """Event-by-event simulation, one op at a time: an independent check of the vectorised one.

    A sync drains the GPU, so after it neither stream order nor waits on earlier work can delay
    anything: the loop forgets them (``stream_free`` is cleared, ``epoch`` moves on).
    """
    waits = {}
    for i, j, gap in zip(program.edge_item, program.edge_after, program.edge_gap_ns, strict=True):
        waits.setdefault(int(i), []).append((int(j), int(gap)))
    items_of = {}
    for item, op in enumerate(program.item_op.tolist()):
        items_of.setdefault(op, []).append(item)
    host, gpu_done, epoch = 0, 0, 0
    op_start, op_end = [], []
    start, end, item_epoch = {}, {}, {}
    stream_free = {}  # stream -> end of its last item since the last sync
    launches_done = []  # when the work of each launch since the last sync finished
    depth = program.queue_depth
    for op, (kind, cost) in enumerate(zip(program.op_kind, program.op_host_ns, strict=True)):
        op_start.append(host)
        if kind == OP_SYNC:
            host = max(host, gpu_done) + int(cost)
            op_end.append(host)
            stream_free.clear()
            launches_done.clear()
            epoch += 1
            continue
        if op in items_of and depth is not None and len(launches_done) >= depth:
            host = max(host, launches_done[len(launches_done) - depth])
        host += int(cost)
        op_end.append(host)
        for item in items_of.get(op, []):
            s = host + program.launch_latency_ns
            stream = int(program.item_stream[item])
            if stream in stream_free:
                s = max(s, stream_free[stream] + int(program.item_gap_ns[item]))
            for j, gap in waits.get(item, []):
                if item_epoch[j] == epoch:
                    s = max(s, end[j] + gap)
            start[item], end[item], item_epoch[item] = s, s + int(program.item_dur_ns[item]), epoch
            stream_free[stream] = end[item]
            gpu_done = max(gpu_done, end[item])
        if op in items_of:
            launches_done.append(max(end[item] for item in items_of[op]))
    n = program.n_kernels
    return op_start, op_end, [start[i] for i in range(n)], [end[i] for i in range(n)]


durations = st.lists(st.integers(0, 20).map(lambda x: x / 2), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["chain", "fork_join"]),
    ks=durations,
    side=durations,
    host_us=st.integers(0, 12).map(lambda x: x / 2),
    latency=st.integers(0, 4).map(lambda x: x / 2),
    graph_launch=st.integers(0, 20).map(lambda x: x / 2),
    gap=st.integers(0, 3).map(lambda x: x / 4),
    sync=st.integers(0, 4).map(lambda x: x / 2),
    kernel_gap=st.integers(0, 3).map(lambda x: x / 4),
    replay_gap=st.integers(0, 3).map(lambda x: x / 2),
    mode=st.sampled_from(["eager", "graph", "graph with copies"]),
    repeats=st.integers(1, 3),
    sync_every=st.one_of(st.none(), st.integers(1, 4)),
    queue_depth=st.one_of(st.none(), st.integers(1, 4)),
)
def test_vectorised_schedule_matches_the_event_by_event_reference(
    kind, ks, side, host_us, latency, graph_launch, gap, sync, kernel_gap, replay_gap, mode,
    repeats, sync_every, queue_depth,
):  # fmt: skip
    p = params(host_us, latency, graph_launch, gap, sync, kernel_gap, replay_gap)
    step = chain(len(ks), ks) if kind == "chain" else fork_join(ks, side, [1.0], [0.5])
    options = {"sync_every": sync_every, "queue_depth": queue_depth}
    if mode == "eager":
        program = eager(step, p, iterations=repeats, **options)
    elif mode == "graph":
        program = graph(step, p, replays=repeats, **options)
    else:
        copies = {"copy_in_us": side[:2], "copy_out_us": ks[:1]}
        program = graph(step, p, replays=repeats, **options, **copies)
    s = schedule(program)
    op_start, op_end, start, end = reference_schedule(program)
    assert s.item_start_ns.tolist() == start
    assert s.item_end_ns.tolist() == end
    assert s.op_start_ns.tolist() == op_start
    assert s.op_end_ns.tolist() == op_end


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: chain(0, 1.0), "kernels must be between 1"),
        (lambda: chain(10**10, 1.0), "kernels must be between 1"),
        (lambda: chain(4, -1.0), "between 0 and"),
        (lambda: chain(4, float("nan")), "between 0 and"),
        (lambda: chain(4, float("inf")), "between 0 and"),
        (lambda: chain(2.5, 1.0), "whole number"),
        (lambda: chain(3, [1.0, 2.0]), "2 kernel durations for 3 kernels"),
        (lambda: model_step([]), "kernels must be between 1"),
        (lambda: model_step([1.0, 2.0], names=["a"]), "1 names for 2"),
        (lambda: fork_join([], [1.0]), "at least one kernel on each branch"),
        (lambda: eager(chain(4, 1.0), params(), sync_every=0), "sync_every must be between 1"),
        (lambda: graph(chain(4, 1.0), params(), sync_every=-2), "sync_every must be between 1"),
        (lambda: eager(chain(4, 1.0), params(), iterations=0), "iterations must be between 1"),
        (lambda: eager(chain(4, 1.0), params(), queue_depth=0), "queue_depth must be between 1"),
        (lambda: graph(chain(1000, 1.0), params(), replays=10**5), "too many to simulate"),
        (lambda: params(host=-1.0), "host_us must be between 0"),
        (lambda: params(gap=float("nan")), "node_gap_us must be between 0"),
        (lambda: params(sync="fast"), "sync_us must be a number"),
        (lambda: params(host=10**400), "host_us must be a number"),  # too big for a float
        (lambda: chain(3, 10**400), "must be numbers of microseconds"),
    ],
)
def test_bad_input_is_one_clear_simulator_error(build, message):
    with pytest.raises(SimulatorError, match=message):
        build()


def test_too_many_iterations_are_refused_with_the_sizes():
    # 10,000 x 1,001 = 10,010,000 kernels, just over the 10,000,000 limit.
    with pytest.raises(SimulatorError, match="10,010,000 kernels is too many"):
        eager(chain(10_000, 1.0), params(), iterations=1_001)


# ------------------------------------------------------------------------------ break-even


def test_break_even_is_capture_over_the_saving_per_step():
    assert break_even(100.0, 10.0, 5.0) == 20.0
    assert break_even(0.0, 10.0, 5.0) == 0.0
    assert break_even(100.0, 5.0, 5.0) is None  # replay not faster: never pays
    assert break_even(100.0, 4.0, 5.0) is None


def test_cumulative_totals_cross_at_the_break_even_count():
    eager_total, graph_total = cumulative_totals(100.0, 10.0, 5.0, [0, 10, 20, 30])
    assert eager_total.tolist() == [0, 100, 200, 300]
    assert graph_total.tolist() == [100, 150, 200, 250]


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "x"])
def test_break_even_refuses_bad_times(bad):
    # A timing error, not a simulator one: graphlab.compare on a real GPU uses this model too.
    with pytest.raises(TimingError, match="capture_us must be"):
        break_even(bad, 10.0, 5.0)
    with pytest.raises(TimingError, match="eager_us must be"):
        cumulative_totals(100.0, bad, 5.0, 3)
    with pytest.raises(TimingError, match="step counts must be"):
        cumulative_totals(100.0, 10.0, 5.0, bad)


def test_break_even_numbers_too_big_for_a_float_are_one_timing_error():
    with pytest.raises(TimingError, match="capture_us must be a number"):
        break_even(10**400, 2.0, 1.0)
    with pytest.raises(TimingError, match="step counts must be finite"):
        cumulative_totals(1.0, 2.0, 1.0, [10**400])


def test_break_even_from_measured_timings_uses_end_to_end_times():
    timings = {
        "capture_us": 6000.0,
        "eager_us": 7000.0,
        "replay_us": 1000.0,
        "eager_end_to_end_us": 7100.0,
        "replay_end_to_end_us": 1100.0,
    }
    b = from_timings(timings)
    assert (b.capture_us, b.eager_us, b.replay_us) == (6000.0, 7100.0, 1100.0)
    assert b.n_star == 1.0
    assert b.to_dict()["source"] == "measured"
    with pytest.raises(SimulatorError, match="replay_end_to_end_us"):
        from_timings({"capture_us": 1.0, "eager_end_to_end_us": 2.0})


def test_break_even_from_the_simulator():
    # eager: 4 launches of 5 µs, last kernel ends at 21; graph: 3 + 4x1 + 3x0.5 = 8.5.
    p = params(host=5, graph_launch=3, gap=0.5, capture_base_us=10.0, capture_per_kernel_us=2.5)
    b = from_simulation(chain(4, 1.0), p)
    assert (b.capture_us, b.eager_us, b.replay_us) == (20.0, 21.0, 8.5)
    assert b.n_star == 20.0 / 12.5
    with pytest.raises(SimulatorError, match="no capture cost"):
        from_simulation(chain(4, 1.0), params())
    # End to end: a 1 µs input copy before and a 1 µs clone after the replay, 5 µs launches
    # each. Copy kernel 5-6; graph launch 5-8, nodes 8, 9.5, 11, 12.5 (end 13.5); clone launch
    # 8-13, kernel 13.5-14.5 (waits for the last node): the replay step ends at 14.5.
    b = from_simulation(chain(4, 1.0), p, copy_in_us=[1.0], copy_out_us=[1.0])
    assert (b.eager_us, b.replay_us) == (21.0, 14.5)


def test_model_vs_measured_cumulative_totals():
    # Made-up numbers in the shape of a break_even recording's timings (not GPU data).
    timings = {
        "capture_us": 300.0,
        "eager_end_to_end_us": 70.0,
        "replay_end_to_end_us": 10.0,
        "cumulative": {
            "counts": [1, 5, 10],
            "eager_total_us": [72.0, 352.0, 705.0],
            "graph_total_us": [315.0, 352.0, 401.0],
            "repeats": 3,
            "crossing": 5,
        },
    }
    got = model_vs_measured(timings)
    assert got["model_eager_total_us"] == [70.0, 350.0, 700.0]
    assert got["model_graph_total_us"] == [310.0, 350.0, 400.0]
    assert got["n_star"] == 5.0
    assert got["measured_crossing"] == 5
    assert got["measured_graph_total_us"] == [315.0, 352.0, 401.0]
    with pytest.raises(SimulatorError, match="break_even recording"):
        model_vs_measured({"capture_us": 1.0})


def test_step_from_a_timeline_takes_the_first_steps_kernels():
    from graphlab import Timeline

    # Two steps of a "recorded" timeline (hand-made): mm 3 µs, relu 1 µs, then again.
    t = Timeline(
        kind=["launch", "kernel", "launch", "kernel", "kernel", "kernel"],
        name=["cudaLaunchKernel", "mm", "cudaLaunchKernel", "relu", "mm", "relu"],
        start_ns=[0, 5000, 5000, 10000, 20000, 30000],
        dur_ns=[5000, 3000, 5000, 1000, 3500, 1000],
    )
    step = step_from_timeline(t, iterations=2)
    assert step.kernel_us.tolist() == [3.0, 1.0]
    assert [step.names[i] for i in step.name_index] == ["mm", "relu"]
    with pytest.raises(SimulatorError, match="3 identical steps"):
        step_from_timeline(t, iterations=3)


def test_gap_analysis_reads_simulated_timelines_like_real_ones():
    # eager: kernels at 7, 12, 17, 22 (launch end + 2 µs latency): three 4 µs gaps, each the
    # GPU waiting for the host. graph: nodes 0.5 µs apart inside one replay: not host-bound.
    e = simulate(eager(chain(4, 1.0), params(host=5, latency=2))).summary()
    assert (e.kernels, e.kernel_launches, e.graph_launches) == (4, 4, 0)
    assert (e.gaps.count, e.gaps.median_ns, e.host_bound_gaps) == (3, 4000, 3)
    assert e.launch_latency.median_ns == 2000
    g = simulate(graph(chain(4, 1.0), params(latency=2, gap=0.5))).summary()
    assert (g.kernels, g.kernel_launches, g.graph_launches) == (4, 0, 1)
    assert (g.gaps.count, g.gaps.median_ns, g.host_bound_gaps) == (3, 500, 0)
    assert (g.span_ns, g.busy_ns) == (5500, 4000)
