"""A WHILE conditional node: a loop that repeats on the GPU until a tolerance is met (lesson 12).

A conditional node holds a body graph and a *conditional handle*, a small value that kernels on
the device set with ``cudaGraphSetConditional``. A WHILE node runs its body, reads the value, and
runs the body again while it is non-zero, all on the GPU: the host launches the graph once and
waits once, however many times the body runs. IF and WHILE nodes are in the CUDA 12.3 headers
(``CU_GRAPH_COND_TYPE_IF`` / ``_WHILE``). torch's own support (``CUDAGraph.cpp``, compiled only
for CUDA 12.4 and later) captures ``torch.cond`` into IF nodes and has no WHILE node, so this
module builds the graph itself with CUDA's driver API, through NVIDIA's ``cuda-bindings``.

The loop is Jacobi's iteration for the discrete problem ``-u'' = 1`` on ``n`` interior points
of (0, 1) with ``u = 0`` at both ends. One *sweep* is one kernel, one block of ``n`` threads:

- it computes the residual of the current ``u``, ``max_i |u[i-1] - 2 u[i] + u[i+1] + h²| / h²``
  (1 for ``u = 0``);
- it replaces ``u`` with one Jacobi step, ``u[i] = (u[i-1] + u[i+1] + h²) / 2``;
- it counts the sweep and, inside the graph, sets the loop's handle to "again" while that
  residual is above the tolerance and fewer than ``max_sweeps`` sweeps have run.

:meth:`WhileLoop.run_graph` launches the graph with the WHILE node once; :meth:`WhileLoop.run_host`
runs the same kernel from a host loop that reads the residual back after every sweep (the loop
a host must run when it decides when to stop). Both stop after the same sweep.
:func:`jacobi_reference` does the same arithmetic in NumPy, so the loop's behaviour (how many
sweeps a tolerance needs) can be seen on any machine; the node itself needs an NVIDIA GPU, a
driver for CUDA 12.3 or later, the CUDA toolkit's ``nvcc`` to compile the kernel, and
``cuda-bindings``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.errors import GraphlabError, NeedsGPUError
from graphlab.language import gettext as _

__all__ = ["KERNEL_SOURCE", "LoopResult", "WhileLoop", "jacobi_reference"]

# Compiled with -fmad=false so that each float operation rounds as NumPy's does and
# jacobi_reference stops after the same sweep as the GPU.
KERNEL_SOURCE = r"""
#include <cuda_runtime.h>

extern "C" __global__ void jacobi_sweep(float *u, float *residual, unsigned int *sweeps,
                                        int n, float tol, unsigned int max_sweeps,
                                        int in_graph, cudaGraphConditionalHandle loop)
{
    __shared__ float old[1024];
    __shared__ unsigned int worst;
    const int i = threadIdx.x;
    const float h2 = 1.0f / ((n + 1.0f) * (n + 1.0f));
    if (i == 0) worst = 0u;
    if (i < n) old[i] = u[i];
    __syncthreads();
    if (i < n) {
        const float left = i > 0 ? old[i - 1] : 0.0f;
        const float right = i + 1 < n ? old[i + 1] : 0.0f;
        const float r = fabsf(left - 2.0f * old[i] + right + h2) / h2;
        /* Non-negative floats order as their bit patterns do. */
        atomicMax(&worst, __float_as_uint(r));
        u[i] = 0.5f * (left + right + h2);
    }
    __syncthreads();
    if (i == 0) {
        const float r = __uint_as_float(worst);
        const unsigned int done = *sweeps + 1u;
        *residual = r;
        *sweeps = done;
        if (in_graph) cudaGraphSetConditional(loop, r > tol && done < max_sweeps);
    }
}
"""
KERNEL_NAME = b"jacobi_sweep"
MAX_POINTS = 1024  # one block, one thread per point


@dataclass(frozen=True)
class LoopResult:
    """Where a loop stopped: how many sweeps ran, the residual of the last sweep's input, and
    the final ``u`` (``n`` values)."""

    sweeps: int
    residual: float
    u: np.ndarray


def _check(n: int, tol: float, max_sweeps: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_POINTS:
        raise GraphlabError(
            _("n is {n}: use a whole number of points from 1 to {max_points}").format(
                n=repr(n), max_points=MAX_POINTS
            )
        )
    if not tol > 0:
        raise GraphlabError(
            _("tol is {tol}: use a positive tolerance, e.g. 1e-4").format(tol=repr(tol))
        )
    if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, int) or max_sweeps < 1:
        raise GraphlabError(
            _("max_sweeps is {max_sweeps}: use a whole number from 1 up").format(
                max_sweeps=repr(max_sweeps)
            )
        )


def jacobi_reference(n: int = 32, tol: float = 1e-4, max_sweeps: int = 100_000) -> LoopResult:
    """The loop in NumPy, float32, operation for operation as the kernel does it."""
    _check(n, tol, max_sweeps)
    f32 = np.float32
    h2 = f32(1.0) / ((f32(n) + f32(1.0)) * (f32(n) + f32(1.0)))
    u = np.zeros(n, dtype=f32)
    tol32 = f32(tol)
    sweeps = 0
    while True:
        left = np.concatenate([[f32(0.0)], u[:-1]]).astype(f32)
        right = np.concatenate([u[1:], [f32(0.0)]]).astype(f32)
        residual = f32((np.abs(left - f32(2.0) * u + right + h2) / h2).max())
        u = (f32(0.5) * (left + right + h2)).astype(f32)
        sweeps += 1
        if not (residual > tol32 and sweeps < max_sweeps):
            return LoopResult(sweeps, float(residual), u)


def _nvcc() -> str:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    found = shutil.which("nvcc") or shutil.which(str(Path(home) / "bin" / "nvcc"))
    if found is None:
        raise NeedsGPUError(
            _(
                "A WHILE node needs its kernel compiled by the CUDA toolkit's nvcc (12.3 "
                "or later), and none is on PATH or in $CUDA_HOME/bin: install the "
                "toolkit or set CUDA_HOME. graphlab.editing.conditional.jacobi_reference "
                "runs the same loop in NumPy."
            )
        )
    return found


def _compile(arch: str) -> bytes:
    """The kernel as a cubin for ``arch`` (e.g. ``sm_90``), built by nvcc in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "jacobi_sweep.cu"
        cubin = Path(folder) / "jacobi_sweep.cubin"
        source.write_text(KERNEL_SOURCE)
        command = [_nvcc(), "-cubin", f"-arch={arch}", "-O3", "-fmad=false"]
        done = subprocess.run(
            [*command, "-o", str(cubin), str(source)], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise GraphlabError(
                _("nvcc could not compile the sweep kernel: {stderr}").format(
                    stderr=done.stderr.strip()
                )
            )
        return cubin.read_bytes()


class _Driver:
    """cuda-bindings' driver module, with every call's status checked."""

    def __init__(self) -> None:
        try:
            from cuda.bindings import driver
        except ImportError:
            raise GraphlabError(
                _(
                    "A WHILE node is built with NVIDIA's cuda-bindings package, which is not "
                    "installed: pip install 'cuda-bindings' (the CUDA major version of this "
                    "torch build), then restart the kernel."
                )
            ) from None
        self.d = driver

    def __call__(self, result: Any, what: str) -> Any:
        status, *values = result
        if status != self.d.CUresult.CUDA_SUCCESS:
            raise GraphlabError(
                _("{what} failed with {status}.").format(what=what, status=status.name)
            )
        return values[0] if len(values) == 1 else values or None


class WhileLoop:
    """The sweep kernel, and a graph that runs it in a WHILE node until ``tol`` is met.

    Built once (compile, load, build the graph, instantiate); each :meth:`run_graph` and
    :meth:`run_host` starts again from ``u = 0``. Needs a CUDA GPU, nvcc and cuda-bindings.
    """

    def __init__(self, n: int = 32, tol: float = 1e-4, max_sweeps: int = 100_000) -> None:
        _check(n, tol, max_sweeps)
        import torch

        if not torch.cuda.is_available():
            raise NeedsGPUError(
                _(
                    "A WHILE node runs on an NVIDIA GPU (driver for CUDA 12.3 or later) and "
                    "torch sees no CUDA device here. "
                    "graphlab.editing.conditional.jacobi_reference runs the same loop in "
                    "NumPy; lesson 12 shows the loop recorded on an NVIDIA H200."
                )
            )
        self.n, self.tol, self.max_sweeps = n, tol, max_sweeps
        self._torch = torch
        self._call = _Driver()
        d = self._call.d
        device = torch.device("cuda", torch.cuda.current_device())
        self.u = torch.zeros(n, device=device, dtype=torch.float32)
        self.residual = torch.zeros(1, device=device, dtype=torch.float32)
        self.sweeps = torch.zeros(1, device=device, dtype=torch.int32)
        torch.cuda.synchronize()  # torch's context is now current on this thread
        self._ctx = self._call(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
        major, minor = torch.cuda.get_device_capability(device)
        # The cubin's bytes, held while the module loads, passed by address.
        image = np.frombuffer(_compile(f"sm_{major}{minor}"), dtype=np.uint8)
        self._module = self._call(d.cuModuleLoadData(image.ctypes.data), "cuModuleLoadData")
        self._kernel = self._call(
            d.cuModuleGetFunction(self._module, KERNEL_NAME), "cuModuleGetFunction"
        )
        self._graph = self._call(d.cuGraphCreate(0), "cuGraphCreate")
        # Default value 1, applied at every launch: the body runs at least once.
        self._handle = self._call(
            d.cuGraphConditionalHandleCreate(
                self._graph, self._ctx, 1, d.CU_GRAPH_COND_ASSIGN_DEFAULT
            ),
            "cuGraphConditionalHandleCreate",
        )
        self._host_args = self._arguments(in_graph=False)
        self._graph_args = self._arguments(in_graph=True)
        self._body = self._add_while_node()
        node = d.CUDA_KERNEL_NODE_PARAMS()
        node.func = self._kernel
        node.gridDimX = node.gridDimY = node.gridDimZ = 1
        node.blockDimX, node.blockDimY, node.blockDimZ = n, 1, 1
        node.sharedMemBytes = 0
        node.kernelParams = ctypes.addressof(self._graph_args[1])
        node.extra = 0
        self._call(d.cuGraphAddKernelNode(self._body, None, 0, node), "cuGraphAddKernelNode")
        self._exec = self._call(d.cuGraphInstantiate(self._graph, 0), "cuGraphInstantiate")

    def _arguments(self, in_graph: bool) -> tuple[list[Any], Any]:
        """The kernel's arguments as ctypes values and the array of their addresses CUDA reads;
        both are kept on ``self`` for as long as a launch may read them."""
        values: list[Any] = [
            ctypes.c_uint64(self.u.data_ptr()),
            ctypes.c_uint64(self.residual.data_ptr()),
            ctypes.c_uint64(self.sweeps.data_ptr()),
            ctypes.c_int(self.n),
            ctypes.c_float(self.tol),
            ctypes.c_uint(self.max_sweeps),
            ctypes.c_int(int(in_graph)),
            ctypes.c_uint64(int(self._handle)),
        ]
        addresses = (ctypes.c_void_p * len(values))(*(ctypes.addressof(v) for v in values))
        return values, addresses

    def _add_while_node(self) -> Any:
        """Add the WHILE node to the graph; returns its (empty) body graph, which CUDA owns."""
        d = self._call.d
        params = d.CUgraphNodeParams()
        params.type = d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = self._handle
        params.conditional.type = d.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE
        params.conditional.size = 1
        params.conditional.ctx = self._ctx
        self._call(d.cuGraphAddNode(self._graph, None, None, 0, params), "cuGraphAddNode")
        return params.conditional.phGraph_out[0]

    def _stream(self) -> Any:
        return self._call.d.CUstream(self._torch.cuda.current_stream().cuda_stream)

    def _reset(self) -> None:
        self.u.zero_()
        self.sweeps.zero_()

    def _result(self) -> LoopResult:
        return LoopResult(
            int(self.sweeps.item()), float(self.residual.item()), self.u.cpu().numpy()
        )

    def run_graph(self) -> LoopResult:
        """One graph launch: the WHILE node sweeps until the tolerance is met; one wait."""
        self._reset()
        self._call(self._call.d.cuGraphLaunch(self._exec, self._stream()), "cuGraphLaunch")
        self._torch.cuda.synchronize()
        return self._result()

    def run_host(self) -> LoopResult:
        """The same sweeps from the host: launch one, read its residual back, decide, repeat."""
        self._reset()
        d = self._call.d
        tol = float(np.float32(self.tol))
        sweeps = 0
        while True:
            self._call(
                d.cuLaunchKernel(
                    self._kernel,
                    1,
                    1,
                    1,
                    self.n,
                    1,
                    1,
                    0,
                    self._stream(),
                    ctypes.addressof(self._host_args[1]),
                    0,
                ),
                "cuLaunchKernel",
            )
            residual = self.residual.item()  # waits for the sweep: the host decides
            sweeps += 1
            if not (residual > tol and sweeps < self.max_sweeps):
                return self._result()

    def close(self) -> None:
        """Free the executable graph, the graph and the module."""
        d = self._call.d
        self._call(d.cuGraphExecDestroy(self._exec), "cuGraphExecDestroy")
        self._call(d.cuGraphDestroy(self._graph), "cuGraphDestroy")
        self._call(d.cuModuleUnload(self._module), "cuModuleUnload")
