"""Answers to lesson 09's exercise, ``capture_fork_join(static_x, side) -> (graph, static_out)``.

The graph must compute ``static_x.sin() * 2 + static_x.cos() * 3`` with the two branches on two
streams, forked from the capturing stream and joined back into it. ``RIGHT`` holds correct
alternatives, ``WRONG`` typical mistakes; the CPU tests run them on the emulator and the GPU tests
on torch.cuda (``cuda`` is whichever is live).
"""

from __future__ import annotations

from graphlab import cuda


def wait_stream(static_x, side):
    """The lesson's solution: fork and join with wait_stream."""
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


def events(static_x, side):
    """Fork and join with events recorded and waited for explicitly."""
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
    return g, out


def swapped_on_own_stream(static_x, side):
    """sin on a stream of the learner's own, cos on the capturing stream, low-level capture."""
    own = cuda.Stream()
    g = cuda.CUDAGraph()
    capture = cuda.Stream()
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


RIGHT = [wait_stream, events, swapped_on_own_stream]


def unjoined(static_x, side):
    """Forks, never joins: the capture fails."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        side.wait_stream(cuda.current_stream())
        with cuda.stream(side):
            b = static_x.cos() * 3
        out = static_x.sin() * 2 + b
    return g, out


def joined_too_early(static_x, side):
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


def one_stream(static_x, side):
    """Right numbers, one stream: the branches can never overlap."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x.sin() * 2 + static_x.cos() * 3
    return g, out


def both_on_side(static_x, side):
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


def cos_before_capture(static_x, side):
    """Computes one branch eagerly before capturing: the graph reuses a stale b."""
    b = static_x.cos() * 3
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = static_x.sin() * 2 + b
    return g, out


def wrong_formula(static_x, side):
    """Two streams, joined, but cos * 2 instead of cos * 3."""
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        main = cuda.current_stream()
        side.wait_stream(main)
        with cuda.stream(side):
            b = static_x.cos() * 2
        a = static_x.sin() * 2
        main.wait_stream(side)
        out = a + b
    return g, out
