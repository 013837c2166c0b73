"""``graphlab.diagnose``: can this step be captured, what blocks it, and what would a graph gain?

One call puts together what the lessons teach one by one:

- the blockers, every one with the user's source line and its fix (:mod:`.blockers`);
- the eager profile: kernels per step, GPU idle fraction, launch-bound or not (:mod:`.profile`);
- a real capture attempt, and a replay compared with eager on new inputs (:mod:`.attempt`);
- if it captures, eager against replay end to end with :func:`graphlab.compare`, the capture and
  first-replay cost and the break-even count;
- torch.compile's reduce-overhead on the same inputs (:mod:`.compiled`);
- with several example shapes, one graph per shape and the padding cost of one graph for all;
- a recommendation with its evidence (:mod:`.recommend`).

On a GPU all of it runs in a child process (:func:`graphlab.isolated`): a failed capture can
leave a CUDA context in an error state, and the learner's kernel must not inherit it. On a machine
without a GPU the emulator finds the same blockers and attempts the capture as CUDA would; the
timings are the simulator's estimate, calibrated on H200 recordings, and say so.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

from graphlab.backend import backend
from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _

from .attempt import state_tensors, try_capture
from .blockers import Scan, find_blockers
from .profile import ASSUMED_KERNEL_US, estimated_profile, kernels_text, measured_profile
from .recommend import recommend
from .report import Report
from .shapes import shape_buckets
from .words import Text

__all__ = ["diagnose"]

DEFAULT_TIMEOUT_S = 600.0


def diagnose(
    fn_or_module: Callable[..., Any],
    *example_inputs: torch.Tensor,
    optimizer: Any = None,
    steps: int = 10,
    more_inputs: Sequence[Sequence[torch.Tensor]] = (),
    expected_calls: int = 1000,
    compile: bool = True,
    timeout: float | None = DEFAULT_TIMEOUT_S,
) -> Report:
    """Diagnose ``fn_or_module(*example_inputs)`` for CUDA graph capture.

    Args:
        fn_or_module: the step, a function or an ``nn.Module``, called with the example inputs.
            It really runs, a few times on the CPU and hundreds of times on a GPU (the timing
            loops of :func:`graphlab.compare`): a training step trains.
        example_inputs: tensors on the step's device (the GPU when there is one).
        optimizer: the optimizer the step uses, checked for ``capturable=True`` even if the
            step does not call it; optimizers whose ``step()`` the step calls are found anyway.
        steps: calls per profiled or timed loop.
        more_inputs: other example input tuples of other shapes: one graph per shape, and the
            padding one graph of the largest shape would cost.
        expected_calls: how many calls the real run makes, for the break-even verdict.
        compile: also try torch.compile(mode="reduce-overhead") (on a GPU only).
        timeout: seconds the GPU's child process may take (None: no limit).

    Returns a :class:`~graphlab.diagnose.report.Report`: HTML in a notebook, text in a
    terminal, ``.to_dict()`` for JSON, ``.figure()`` for a picture.
    """
    _check(fn_or_module, example_inputs, steps, expected_calls)
    options = {"optimizer": optimizer, "steps": steps, "expected_calls": expected_calls}
    if backend().is_cuda:
        from graphlab.failures.isolation import isolated

        data = isolated(
            _live, fn_or_module, example_inputs, compile=compile, timeout=timeout, **options
        )
    else:
        data = _emulated(fn_or_module, example_inputs, **options)
    data["shapes"] = shape_buckets([tuple(example_inputs), *map(tuple, more_inputs)])
    return Report(data)


def _check(fn: object, inputs: Sequence[object], steps: object, expected_calls: object) -> None:
    if not callable(fn):
        raise GraphlabError(
            _("diagnose needs a function or an nn.Module to call, not a {type}").format(
                type=type(fn).__name__
            )
        )
    if not inputs or not all(torch.is_tensor(x) for x in inputs):
        raise GraphlabError(
            _(
                "diagnose needs the step's example inputs as tensors: diagnose(model, x) or "
                "diagnose(step, x, target); close over anything else in the function"
            )
        )
    for name, value in (("steps", steps), ("expected_calls", expected_calls)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GraphlabError(
                _("{name} must be a whole number of at least 1, not {value}").format(
                    name=name, value=repr(value)
                )
            )


def _live(
    fn: Callable[..., Any],
    inputs: Sequence[torch.Tensor],
    *,
    optimizer: Any,
    steps: int,
    expected_calls: int,
    compile: bool,
) -> dict[str, Any]:
    """Everything on the GPU, in the child process; capture comes last, as it may fail."""
    from graphlab.timing.compare import compare

    from .compiled import compiled_run

    # torch's advice that is not about capture, which would print installation paths in the
    # learner's notebook: a capturable optimizer stepping outside a capture (the eager runs),
    # inductor's TF32 advice and dynamo's graph-break notes (the report lists the blockers). The
    # filters end with this child process (graphlab.isolated).
    warnings.filterwarnings("ignore", message="This instance was constructed with capturable=True")
    warnings.filterwarnings("ignore", message="TensorFloat32 tensor cores")
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    scan = find_blockers(fn, inputs, optimizer=optimizer)
    profile = measured_profile(fn, inputs, steps)
    compiled = compiled_run(fn, inputs, steps) if compile else {"skipped": "compile=False"}
    attempt = try_capture(fn, inputs, state_tensors(fn, scan.optimizers))
    timing = None
    if attempt["captured"] and not scan.blockers:
        result = compare(fn, *inputs, iterations=steps)
        timing = {
            "source": Text(N_("measured with graphlab.compare (median of 20 repeats, end to end)")),
            "estimate": False,
            "eager_us": result.eager_end_to_end_us,
            "replay_us": result.replay_end_to_end_us,
            "eager_gpu_us": result.eager_us,
            "replay_gpu_us": result.replay_us,
            "capture_us": result.capture_us,
            "first_replay_us": result.first_replay_us,
            "break_even_calls": result.break_even,
        }
    name = torch.cuda.get_device_name()
    return _assemble(
        scan,
        profile,
        attempt,
        timing,
        compiled,
        Text(N_("live CUDA ({name})"), name=name),
        expected_calls,
    )


def _emulated(
    fn: Callable[..., Any],
    inputs: Sequence[torch.Tensor],
    *,
    optimizer: Any,
    steps: int,
    expected_calls: int,
) -> dict[str, Any]:
    """The emulator for blockers and capture, the calibrated simulator for an estimate."""
    from graphlab.simulator import calibrated, model_step
    from graphlab.simulator.break_even import from_simulation

    scan = find_blockers(fn, inputs, optimizer=optimizer)
    profile = estimated_profile(scan.ops, steps)
    attempt = try_capture(fn, inputs, state_tensors(fn, scan.optimizers))
    timing = None
    if attempt["captured"] and not scan.blockers:
        copies = [ASSUMED_KERNEL_US] * len(inputs)  # the replay copies each new input in
        step = model_step([ASSUMED_KERNEL_US] * max(scan.kernels, 1))
        model = from_simulation(step, calibrated(), copy_in_us=copies)
        timing = {
            "source": Text(
                N_(
                    "estimate: simulator calibrated on an NVIDIA H200, {kernels} of {us} µs "
                    "assumed, {copies}"
                ),
                kernels=kernels_text(scan.kernels),
                us=f"{ASSUMED_KERNEL_US:g}",
                copies=Text(N_("1 input copy"))
                if len(copies) == 1
                else Text(N_("{n} input copies"), n=len(copies)),
            ),
            "estimate": True,
            "eager_us": model.eager_us,
            "replay_us": model.replay_us,
            "capture_us": model.capture_us,
            "first_replay_us": None,
            "break_even_calls": model.n_star,
        }
    compiled = {
        "needs_gpu": Text(N_("torch.compile's CUDA graphs (CUDAGraph Trees) run on a GPU only"))
    }
    return _assemble(
        scan,
        profile,
        attempt,
        timing,
        compiled,
        Text(N_("CPU emulator + simulator")),
        expected_calls,
    )


def _assemble(
    scan: Scan,
    profile: dict[str, Any],
    attempt: dict[str, Any],
    timing: dict[str, Any] | None,
    compiled: dict[str, Any] | None,
    backend_name: str,
    expected_calls: int,
) -> dict[str, Any]:
    blockers = [b.to_dict() for b in scan.blockers]
    verdict, advice, evidence = recommend(blockers, profile, timing, compiled, expected_calls)
    capturable = bool(attempt["captured"] and not blockers and attempt["replay_equals_eager"])
    return {
        "capturable": capturable,
        "blockers": blockers,
        "kernels": scan.kernels,
        "eager_us": None if timing is None else timing["eager_us"],
        "replay_us": None if timing is None else timing["replay_us"],
        "break_even_calls": None if timing is None else timing["break_even_calls"],
        "recommendation": verdict,
        "advice": advice,
        "evidence": evidence,
        "backend": backend_name,
        "profile": profile,
        "capture": attempt,
        "timing": timing,
        "compiled": compiled,
        "expected_calls": expected_calls,
    }
