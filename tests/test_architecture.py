"""The package's layers, as pyproject.toml's import-linter contracts state them, hold.

A module may import only from the layers below its own (``graphlab.cli`` at the top,
``graphlab.errors`` at the bottom), and a Timeline sits above the trace reader, writer and
analysis. Every part of the package must have a place in the layers, so a new folder cannot
slip past the contract.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import importlinter.cli

import graphlab

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(graphlab.__file__).resolve().parent
# The package's face: they import the layers, no layer imports them.
FACE = {"__init__", "__main__"}


def _contracts() -> list[dict]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["importlinter"]["contracts"]


def test_import_contracts_are_kept(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert importlinter.cli.lint_imports(config_filename="pyproject.toml", no_cache=True) == 0


def test_every_part_of_the_package_is_in_a_layer():
    layered = set()
    for layer in _contracts()[0]["layers"]:
        layered |= set(re.findall(r"graphlab\.(\w+)", layer))
    parts = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()
    }
    assert parts - FACE <= layered, f"not in any layer: {sorted(parts - FACE - layered)}"
