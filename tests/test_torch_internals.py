"""graphlab.support.torch_internals is the only door to PyTorch's private APIs, and it holds."""

from __future__ import annotations

import ast
import re
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
