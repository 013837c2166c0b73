"""The WHILE node's loop on the CPU: NumPy's sweeps, the stopping rule, and the GPU-only refusal.

The GPU side (the node itself against the host loop) is tests/gpu/test_while_node_cuda.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphlab.editing import WhileLoop, jacobi_reference
from graphlab.errors import GraphlabError, NeedsGPUError


def _matrix_jacobi(n: int, tol: float) -> tuple[int, np.ndarray]:
    """The same iteration written independently, in float64 and matrix form: u <- D^-1 (b - R u)
    for A = tridiag(-1, 2, -1) / h², b = 1, stopping after the sweep whose input met ``tol``."""
    h2 = 1.0 / (n + 1) ** 2
    a = (2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)) / h2
    diagonal = np.diag(a)
    rest = a - np.diag(diagonal)
    u = np.zeros(n)
    sweeps = 0
    while True:
        residual = np.abs(np.ones(n) - a @ u).max()
        u = (np.ones(n) - rest @ u) / diagonal
        sweeps += 1
        if residual <= tol:
            return sweeps, u


# Down to 1e-2: below it float32's rounding of the residual (about 1e-7 * |u| / h², over 1e-5
# here) moves the stopping sweep away from float64's.
@pytest.mark.parametrize("tol", [1e-1, 1e-2])
def test_the_reference_stops_where_the_float64_matrix_iteration_stops(tol):
    reference = jacobi_reference(n=32, tol=tol)
    sweeps, u = _matrix_jacobi(32, tol)
    assert abs(reference.sweeps - sweeps) <= 1
    assert reference.residual <= tol
    assert jacobi_reference(n=32, tol=tol, max_sweeps=reference.sweeps - 1).residual > tol
    np.testing.assert_allclose(reference.u, u, atol=1e-5)


def test_the_reference_converges_to_the_exact_solution():
    x = np.arange(1, 33) / 33
    # -u'' = 1, u(0) = u(1) = 0: u = x (1 - x) / 2, exact at the grid points for this scheme.
    np.testing.assert_allclose(jacobi_reference(n=32, tol=1e-4).u, x * (1 - x) / 2, atol=2e-5)


def test_max_sweeps_stops_the_reference():
    assert jacobi_reference(n=32, tol=1e-30, max_sweeps=7).sweeps == 7


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"n": 0}, "n is 0"),
        ({"n": 2000}, "n is 2000"),
        ({"tol": 0.0}, "tol is 0.0"),
        ({"max_sweeps": 0}, "max_sweeps is 0"),
    ],
)
def test_bad_arguments_get_one_clear_error(kwargs, says):
    with pytest.raises(GraphlabError, match=says):
        jacobi_reference(**kwargs)


def test_without_a_gpu_the_node_says_what_it_needs(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(NeedsGPUError, match="jacobi_reference runs the same loop in NumPy"):
        WhileLoop()
