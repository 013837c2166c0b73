"""graphlab.support.torch_internals is the only door to PyTorch's private APIs, and it holds."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

import graphlab
from graphlab.support import torch_internals
from graphlab.support.torch_internals import TorchInternalsError, check

PACKAGE = Path(graphlab.__file__).resolve().parent
# Private torch names graphlab relies on: attributes, and names looked up with getattr("...").
PRIVATE_ATTRIBUTES = {"_C", "_cdata", "_schema", "_overloadname", "_version"}
PRIVATE_NAME = re.compile(
    r"_cuda_\w+|_unsafe_set_version_counter|_get_capturable_supported_devices"
)
PRIVATE_MODULE = re.compile(r"torch(\.\w+)*\._")


def _is_private(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(PRIVATE_MODULE.match(node.module or ""))
    if isinstance(node, ast.Attribute):
        return node.attr in PRIVATE_ATTRIBUTES or bool(PRIVATE_NAME.fullmatch(node.attr))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(PRIVATE_NAME.fullmatch(node.value))
    return False


def _private_uses(tree: ast.AST) -> list[int]:
    """Lines of ``tree`` that use a private torch API (docstrings and comments do not count)."""
    return sorted(node.lineno for node in ast.walk(tree) if _is_private(node))


def test_no_other_module_touches_private_torch_apis():
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "torch_internals.py"
        for line in _private_uses(ast.parse(path.read_text()))
    ]
    assert offenders == []


def test_the_scan_sees_each_kind_of_use():
    code = (
        "from torch.utils._pytree import tree_map\n"
        "x = torch._C._VariableFunctions\n"
        "v = t._version\n"
        "hook = getattr(torch._C, '_cuda_releasePool', None)\n"
    )
    assert _private_uses(ast.parse(code)) == [1, 2, 3, 4, 4]


def test_this_torch_has_everything():
    check()


def test_a_missing_private_api_is_named_with_the_versions_that_work(monkeypatch):
    monkeypatch.delattr(torch._C, "_storage_Use_Count")
    with pytest.raises(TorchInternalsError) as info:
        check()
    message = str(info.value)
    assert "_storage_Use_Count" in message
    assert torch.__version__ in message
    assert torch_internals.TESTED in message


# A fresh Python that captures on the emulator, then says whether torch.compile's front end was
# imported.
CAPTURE_THEN_REPORT = """
import sys, torch
from graphlab import emulator as cuda
x = torch.ones(4)
g = cuda.CUDAGraph()
with cuda.graph(g):
    y = x * 2 + 1
g.replay()
print(y.tolist(), "torch._dynamo" in sys.modules)
"""


def test_an_emulated_capture_does_not_import_torch_compile():
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", CAPTURE_THEN_REPORT],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split("\n")[0] == "[3.0, 3.0, 3.0, 3.0] False"


def test_a_dispatch_mode_runs_under_dynamo_disable_once_torch_compile_is_loaded(monkeypatch):
    disabled: list[tuple[str, bool]] = []

    def disable(fn, recursive):  # the part of torch._dynamo.disable that the mode uses
        disabled.append((fn.__name__, recursive))
        return lambda *args, **kwargs: ("under disable", fn(*args, **kwargs))

    class Names(torch_internals.DispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    # torch.compile not loaded: the method runs as written.
    monkeypatch.delitem(sys.modules, "torch._dynamo", raising=False)
    with Names() as before:
        total = torch.ones(2) + 1
    assert (before.seen, total.tolist(), disabled) == (
        ["ones.default", "add.Tensor"],
        [2.0, 2.0],
        [],
    )

    # Loaded: the method runs under torch._dynamo.disable, asked for once.
    monkeypatch.setitem(sys.modules, "torch._dynamo", types.SimpleNamespace(disable=disable))
    after = Names()
    for _ in range(2):
        answer = after.__torch_dispatch__(torch.ops.aten.neg.default, (), (torch.ones(1),))
        assert answer[0] == "under disable" and answer[1].tolist() == [-1.0]
    assert (after.seen, disabled) == (["neg.default"] * 2, [("__torch_dispatch__", True)])
