"""``graphlab calibrate``: fit the simulator to chain recordings and print how well it fits.

The recordings are the bundled H200 ones, or a folder of your own made by ``graphlab record`` on
another GPU. It prints the fitted parameters and the check table (measured vs simulated loop
times); ``--write`` stores the fit where ``graphlab simulate`` reads it (by default the bundled
``calibrated_h200.json``; ``--out`` for another file). The method is
:mod:`graphlab.simulator.calibration`'s.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphlab.language import gettext as _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--recordings", metavar="DIR", help=_("folder of recordings (default: the bundled ones)")
    )
    parser.add_argument("--write", action="store_true", help=_("store the fit (see --out)"))
    parser.add_argument(
        "--out", metavar="PATH", help=_("where to store it (default: the bundled calibration)")
    )


def run(args: argparse.Namespace) -> int:
    from graphlab.simulator.calibration import calibrate, write
    from graphlab.simulator.calibration_check import format_table
    from graphlab.simulator.params import CALIBRATED_PATH
    from graphlab.timing.recordings import list_recordings

    result, rows, prov = calibrate(list_recordings(args.recordings))
    path = write(Path(args.out or CALIBRATED_PATH), result, rows, prov) if args.write else None
    print(
        _("fitted to {count} chain recordings of {gpu}, recorded {date}").format(
            count=len(rows), gpu=prov["gpu"], date=", ".join(prov["recorded"])
        )
    )
    for name, value in result.params.to_dict().items():
        print(f"  {name:<22} {value:.4f}")
    print()
    print(format_table(rows))
    if path is not None:
        print("\n" + _("wrote {path}").format(path=path))
    return 0
