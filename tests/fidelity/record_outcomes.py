"""Run every fidelity scenario on the live backend and write the outcomes as JSON.

On the H200 (from the project root)::

    python tests/fidelity/record_outcomes.py tests/fidelity/h200_outcomes.json

On a machine without a GPU the same command runs the scenarios on the CPU emulator (useful to see
what the emulator does; the committed file must come from the GPU). The file is written to a
temporary name first and renamed, so an interrupted run never leaves a partial file.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # graphlab from this checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the scenarios next to this script

from scenarios import run_all

from graphlab.backend import backend, cuda_module
from graphlab.support.atomic import write_text_atomically


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/fidelity/record_outcomes.py OUT.json", file=sys.stderr)
        return 2
    out = Path(argv[0])
    live = backend()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the emulator's one-time difference notes
        outcomes = run_all(cuda_module(), live.device)
    meta = {
        "backend": live.name,
        "gpu": live.gpu,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": "python tests/fidelity/record_outcomes.py " + argv[0],
    }
    text = json.dumps({"meta": meta, "outcomes": outcomes}, indent=2, sort_keys=True) + "\n"
    write_text_atomically(out, text)
    crashed = [name for name, o in outcomes.items() if "scenario_crashed" in o]
    print(f"wrote {out} ({live}); {len(outcomes)} scenarios, crashed: {crashed or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
