"""Run every fidelity scenario on the live backend and write the outcomes as JSON.

On the H200 (from the project root)::

    python tests/fidelity/record_outcomes.py tests/fidelity/h200_outcomes.json

It records every scenario, new ones included. ``01f_input_liveness_check`` needs torch 2.13+ on
the GPU (``check_input_liveness``); under an older torch it records ``supported: false`` and the
script says so.

On a machine without a GPU the same script runs the scenarios on the CPU emulator, which is useful
to see what the emulator does, but it refuses to write ``h200_outcomes.json`` there: the committed
file must come from the GPU. The file is written to a temporary name first and renamed, so an
interrupted run never leaves a partial file.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # graphlab from this checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the scenarios next to this script

from scenarios import run_all

from graphlab.backend import backend, cuda_module
from graphlab.support.atomic import write_text_atomically

COMMITTED = "h200_outcomes.json"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/fidelity/record_outcomes.py OUT.json", file=sys.stderr)
        return 2
    out = Path(argv[0])
    live = backend()
    if not live.is_cuda and out.name == COMMITTED:
        print(
            f"refusing to write {out} from the {live.name} backend: {COMMITTED} holds GPU "
            "outcomes only. Write the emulator's outcomes to another file.",
            file=sys.stderr,
        )
        return 2
    outcomes = run_all(cuda_module(), live.device)
    meta = {
        "backend": live.name,
        "gpu": live.gpu,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": "python tests/fidelity/record_outcomes.py " + argv[0],
    }
    text = json.dumps({"meta": meta, "outcomes": outcomes}, indent=2, sort_keys=True) + "\n"
    write_text_atomically(out, text)
    crashed = [name for name, o in outcomes.items() if "scenario_crashed" in o]
    unsupported = [name for name, o in outcomes.items() if o.get("supported") is False]
    print(f"wrote {out} ({live}); {len(outcomes)} scenarios, crashed: {crashed or 'none'}")
    if unsupported:
        print(f"not supported by torch {torch.__version__}, recorded as such: {unsupported}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
