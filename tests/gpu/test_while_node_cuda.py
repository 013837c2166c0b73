"""On a GPU: a WHILE conditional node runs the sweep loop until the tolerance is met.

The node's loop, the same kernel driven from the host, and NumPy's float32 arithmetic
(graphlab.editing.jacobi_reference, worked out on the CPU) must stop after the same sweep with
the same ``u``: the kernel is compiled without fused multiply-adds so it rounds as NumPy does.

Run on the H200:  python -m pytest tests/gpu/test_while_node_cuda.py -v -rs
"""

from __future__ import annotations

import numpy as np
import pytest

from graphlab.editing import WhileLoop, jacobi_reference

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_the_while_node_stops_where_the_host_loop_and_numpy_stop(tol):
    loop = WhileLoop(n=32, tol=tol)
    try:
        graph, host = loop.run_graph(), loop.run_host()
        again = loop.run_graph()
    finally:
        loop.close()
    reference = jacobi_reference(n=32, tol=tol)
    assert reference.sweeps == {1e-2: 1069, 1e-4: 2142}[tol]
    assert graph.sweeps == host.sweeps == reference.sweeps == again.sweeps
    assert (
        graph.residual
        <= tol
        < jacobi_reference(n=32, tol=tol, max_sweeps=graph.sweeps - 1).residual
    )
    np.testing.assert_array_equal(graph.u, host.u)
    np.testing.assert_array_equal(graph.u, reference.u)


def test_max_sweeps_ends_a_loop_whose_tolerance_is_out_of_reach():
    loop = WhileLoop(n=32, tol=1e-30, max_sweeps=50)
    try:
        result = loop.run_graph()
    finally:
        loop.close()
    assert result.sweeps == 50
    assert result.residual > 1e-30
