"""GRAPHLAB_GPU_MEMORY_GB caps a kernel's GPU memory (needs a GPU: ``pytest -m cuda``).

Each check runs in a fresh Python, as a learner's kernel would start: the cap is decided once per
process, and this test process must keep its own GPU memory uncapped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.cuda

GB = 10**9

# Imports graphlab first, as a lesson does, then reports what the allocator allows on each device
# and whether one tensor below and one above the cap could be allocated on device 0.
PROBE = """
import json, torch, graphlab
graphlab.backend()
count = torch.cuda.device_count()
limits = []
for i in range(count):
    total = torch.cuda.mem_get_info(i)[1]
    limits.append(torch.cuda.get_per_process_memory_fraction(i) * total
                  if hasattr(torch.cuda, "get_per_process_memory_fraction") else None)
def fits(nbytes):
    try:
        x = torch.empty(nbytes, dtype=torch.uint8, device="cuda:0")
    except torch.cuda.OutOfMemoryError:
        return False
    del x
    torch.cuda.empty_cache()
    return True
print(json.dumps({"count": count, "limits": limits,
                  "below": fits(int(1.5e9)), "above": fits(int(2.5e9))}))
"""


def _kernel(cap: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "GRAPHLAB_GPU_MEMORY_GB"}
    if cap is not None:
        env["GRAPHLAB_GPU_MEMORY_GB"] = cap
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_the_cap_binds_every_visible_device():
    capped = _kernel("2")
    assert capped["below"] is True
    assert capped["above"] is False
    for limit in capped["limits"]:
        if limit is not None:  # where this torch can report the fraction back
            assert abs(limit - 2 * GB) < 1e6


def test_without_the_cap_the_same_tensor_fits():
    assert _kernel(None)["above"] is True
