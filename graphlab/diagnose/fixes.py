"""What to do about each kind of blocker: the failure catalogue's fix where it has the entry.

The catalogue (:mod:`graphlab.failures.catalogue`) explains errors a learner sees; a diagnosis
names the same mistakes before any error happens, so it quotes the same fixes. Three kinds raise
no error at all on a GPU (a graph silently keeps a value, a path, or a generator's state) and
have no catalogue entry: their fixes are written here.
"""

from __future__ import annotations

from graphlab.emulator.host_sync import DYNAMIC
from graphlab.failures.catalogue import CATALOGUE
from graphlab.language import N_

__all__ = ["FIXES", "TITLES"]

# Every fix and title is English, marked for translation: a report shows it with _(...), and
# --json writes it as it is.

_CATALOGUE = {failure.key: failure for failure in CATALOGUE}

FIXES: dict[str, str] = {
    "host-sync": _CATALOGUE["host-sync-in-capture"].fix,
    "host-copy": _CATALOGUE["pageable-copy-in-capture"].fix,
    "host-tensor": _CATALOGUE["pageable-copy-in-capture"].fix,
    "data-dependent-shape": DYNAMIC[1],
    "optimizer": _CATALOGUE["optimizer-not-capturable"].fix,
    "collective": _CATALOGUE["nccl-mismatch"].fix,
    "rng-generator": N_(
        "Draw from torch's default generator, which graphs advance on every replay, or register "
        "your generator with the graph before capturing, g.register_generator_state(generator), "
        "where torch.cuda.CUDAGraph has that method (torch 2.13 has it; check yours with "
        "hasattr)."
    ),
    "changing-scalar": N_(
        "Keep the value in a tensor on the device that the step reads, and update it in place "
        "between replays (value.fill_(x) or value.copy_(new)); a graph reads tensors at replay "
        "but keeps Python numbers as they were at capture."
    ),
    "branch-changes": N_(
        "Decide on the device instead (torch.where(cond, a, b) computes both and keeps one), or "
        "capture one graph per path and choose in Python which one to replay."
    ),
}

TITLES: dict[str, str] = {
    "host-sync": N_("host synchronisation"),
    "host-copy": N_("copy to host memory"),
    "host-tensor": N_("tensor built from host data"),
    "data-dependent-shape": N_("data-dependent shape"),
    "optimizer": N_("non-capturable optimizer"),
    "collective": N_("collective"),
    "rng-generator": N_("random numbers from an unregistered generator"),
    "changing-scalar": N_("value that changes per call"),
    "branch-changes": N_("Python branch that changes per call"),
}
