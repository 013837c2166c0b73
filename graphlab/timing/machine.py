"""What this machine is: the facts ``graphlab doctor`` shows and a recording's ``meta`` stores.

One place asks nvidia-smi for the driver version (torch does not expose it), so the doctor's
report and a recording's provenance can never disagree about it.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from datetime import UTC, datetime

__all__ = ["driver_version", "machine_meta"]


def driver_version() -> str:
    """The NVIDIA driver version from nvidia-smi, or 'unknown (why)' when it cannot be asked."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "unknown (nvidia-smi not found)"
    try:
        result = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader", "--id=0"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown (nvidia-smi failed)"
    return result.stdout.strip() or "unknown (nvidia-smi printed nothing)"


def machine_meta(command: str) -> dict[str, str]:
    """Provenance of a result made now on this machine's first GPU by ``command``."""
    import torch

    import graphlab

    return {
        "gpu": torch.cuda.get_device_name(0),
        "driver": driver_version(),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "python": platform.python_version(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "graphlab": graphlab.__version__,
        "command": command,
    }
