"""Where the CPU emulator cannot behave like a real GPU, and the one-time warnings that say so.

The emulator reproduces the *semantics* of CUDA graph capture and replay. A few things it cannot
reproduce on a CPU; each one is listed here and announced once per process, the first time a
program does something that depends on it, with an :class:`EmulatorDifferenceWarning`.
"""

from __future__ import annotations

import warnings

__all__ = ["DIFFERENCES", "EmulatorDifferenceWarning", "warn_once"]


class EmulatorDifferenceWarning(UserWarning):
    """The emulator is about to behave differently from a real GPU in the way the message says."""


DIFFERENCES: dict[str, str] = {
    "random_numbers": (
        "random ops in a graph draw from torch's CPU generator (Mersenne Twister), not CUDA's "
        "Philox generator: the *behaviour* matches the GPU (a fresh draw on every replay, "
        "reproducible after torch.manual_seed) but the numbers themselves differ from a GPU's."
    ),
    "streams_serial": (
        "streams do not run concurrently: every operation runs at once, in program order, on the "
        "CPU. A missing wait_stream/Event.wait that would be a race on a GPU goes unnoticed "
        "(except inside a capture, where unjoined work is reported as on the GPU)."
    ),
    "memory_sizes": (
        "a pool's size is the bytes of the tensors allocated during capture; the CUDA caching "
        "allocator reserves whole segments (2 MiB or more), so a real pool is larger, and it may "
        "reuse freed blocks, which the emulator never does."
    ),
    "shared_pool_reuse": (
        "graphs sharing a pool never reuse each other's freed memory here; on a GPU a graph "
        "captured into a shared pool may be given memory that an earlier graph's freed outputs "
        "used, and its replays then overwrite those addresses."
    ),
    "capture_mode": (
        "capture_error_mode other than 'global' is accepted but has no effect: the emulator "
        "has one thread of work and applies the same checks in every mode."
    ),
    "freed_inputs": (
        "memory a graph uses stays allocated after the program lets go of it (rebinds or deletes "
        "the captured input's last tensor, or moves it with set_ or .data =), because the "
        "emulator must keep it to replay. On a GPU it is freed and the next allocation may take "
        "it: a replay then reads that tensor's values (x*10 captured, x rebound, z = 100s "
        "allocated: the replay gives 1000s), where the emulator replays the kept values and "
        "warns with FreedInputWarning. With check_input_liveness=True (torch 2.13+) both "
        "refuse the replay; torch's message adds the tensor's creation and deletion tracebacks."
    ),
    "host_tensors": (
        "every tensor counts as a GPU tensor: reading one on the host inside a capture fails "
        "even if, on a GPU machine, that tensor would have lived in CPU memory."
    ),
}

_warned: set[str] = set()


def warn_once(key: str) -> None:
    """Warn about difference ``key`` (a key of :data:`DIFFERENCES`) the first time only."""
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(
        f"graphlab CPU emulator differs from a GPU here: {DIFFERENCES[key]}",
        EmulatorDifferenceWarning,
        stacklevel=3,
    )
