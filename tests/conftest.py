"""Shared pytest configuration: GPU-only tests carry ``@pytest.mark.cuda`` and are skipped, with the
reason, on machines where torch sees no CUDA device."""

from __future__ import annotations

import pytest
import torch


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; this machine has none (runs on the H200)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
