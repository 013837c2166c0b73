"""The planner's bundled data: a cost table recorded on an H200 and a slice of a public trace.

- ``data/h200_decoder_costs.json``: ``graphlab plan measure --model decoder --sizes 1-256``, run
  on an NVIDIA H200; its ``meta`` holds the GPU, driver, torch, CUDA, date and command.
- ``data/azure_llm_conv_2023_first10min.csv``: the first ten minutes of the Azure LLM inference
  trace 2023 (conversation), CC BY 4.0; ``data/README.md`` gives its source and attribution.

A lesson shows the cost table on a machine without a GPU, so :func:`recorded_costs` returns it
with a provenance line in the shape of a timing recording's (``.name``, ``.meta``, ``.label``),
which the course's banner prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphlab.language import gettext as _
from graphlab.support.printable import printable

from .inputs import CostTable, load_costs
from .requests import Requests, read_requests

__all__ = ["COSTS_NAME", "TRACE_PATH", "RecordedCosts", "azure_requests", "recorded_costs"]

DATA = Path(__file__).with_name("data")
COSTS_NAME = "h200_decoder_costs"
TRACE_PATH = DATA / "azure_llm_conv_2023_first10min.csv"


@dataclass(frozen=True)
class RecordedCosts:
    """A cost table measured on a GPU, with the name and provenance a banner shows."""

    name: str
    table: CostTable

    @property
    def meta(self) -> dict:
        """The table's provenance: model, shape, GPU, driver, torch, CUDA, date, command."""
        return self.table.meta

    @property
    def label(self) -> str:
        """One provenance line: GPU, driver, torch, date and the measuring command's flags.

        The command's ``--out`` path names a folder of the machine that measured, not the
        table, so it is left out.
        """
        meta = self.meta
        command = str(meta.get("command", "graphlab plan measure")).split(" --out ", 1)[0]
        return printable(
            _("recorded on {gpu} (driver {driver}, torch {torch}, {date}) by `{command}`").format(
                gpu=meta.get("gpu", _("an unnamed GPU")),
                driver=meta.get("driver", "?"),
                torch=meta.get("torch", "?"),
                date=str(meta.get("date", "?"))[:10],
                command=command,
            )
        )


def recorded_costs() -> RecordedCosts:
    """The bundled H200 cost table of the decoder stand-in, sizes 1 to 256."""
    return RecordedCosts(COSTS_NAME, load_costs(DATA / f"{COSTS_NAME}.json"))


def azure_requests() -> Requests:
    """The bundled ten minutes of the Azure LLM conversation trace (2,867 requests)."""
    return read_requests(TRACE_PATH)
