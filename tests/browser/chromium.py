"""Debian's chromium, as the browser tests drive it: one browser per test file, a fresh context
(its own cookies, storage and cache, as a new browser has) for each page.

A test file's tests share one browser, which saves a start of chromium and playwright's driver
per test (about a second of CPU each, over the browser test files on a 2-core machine);
``tests/conftest.py`` closes it when the file's tests are done (at the latest, when the process
exits).
"""

from __future__ import annotations

import atexit
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# The running playwright and its browser, once one is asked for.
_running: dict[str, Any] = {}


def need_chromium() -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium), "
            "as CI's .ci/run does; this test drives a real browser and must not be skipped"
        )


def browser() -> Any:
    """The shared chromium, started on first use."""
    if "browser" not in _running or not _running["browser"].is_connected():
        need_chromium()
        from playwright.sync_api import sync_playwright

        close()
        _running["playwright"] = sync_playwright().start()
        _running["browser"] = _running["playwright"].chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        atexit.unregister(close)
        atexit.register(close)
    return _running["browser"]


@contextmanager
def new_page(width: int, height: int) -> Iterator[Any]:
    """A page of the shared browser in a context of its own, closed with the block."""
    context = browser().new_context(viewport={"width": width, "height": height})
    try:
        yield context.new_page()
    finally:
        context.close()


def close() -> None:
    """Stop the shared browser and its playwright, if they run."""
    if "browser" in _running:
        _running.pop("browser").close()
    if "playwright" in _running:
        _running.pop("playwright").stop()
