"""jsonschema's IRI checker is built on first use, with the same answers, and the processes
``graphlab lab`` starts, and the command line, defer it before they import jsonschema.

Each check that imports jsonschema runs in a fresh Python: this one may have imported it already.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys

import pytest

from graphlab.support import lazy_iri_syntax
from graphlab.support.lazy_iri_syntax import PACKAGE


def fresh_python(code: str) -> list[str]:
    """What ``code`` prints in a new interpreter, a line each."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


# An absolute IRI with a non-ASCII character, a reference without a scheme (an IRI reference but
# not an IRI), and a space inside the host (neither).
CHECKS = """
import sys
import jsonschema
print("lark" in sys.modules)
checker = jsonschema.FormatChecker()
for value in ("http://example.com/größe", "//example.com/a", "http://exa mple.com"):
    print(checker.conforms(value, "iri"), checker.conforms(value, "iri-reference"))
print("lark" in sys.modules, hasattr(sys.modules["rfc3987_syntax"], "syntax_parser"))
"""


def test_jsonschema_builds_the_iri_parsers_only_when_it_checks_an_iri_and_answers_the_same():
    deferred = fresh_python(
        "from graphlab.support.lazy_iri_syntax import defer; print(defer())" + CHECKS
    )
    assert deferred == [
        "True",  # the stand-in went in
        "False",  # jsonschema imported, no parser built
        "True True",
        "False True",
        "False False",
        "True True",  # built by the first check: the real package is in place
    ]
    # Without the stand-in: the same answers, the parsers built as jsonschema is imported.
    assert fresh_python(CHECKS) == ["True", *deferred[2:]]


def test_nothing_changes_where_the_package_is_missing_or_already_imported(monkeypatch):
    monkeypatch.delitem(sys.modules, PACKAGE, raising=False)
    monkeypatch.setattr(lazy_iri_syntax.importlib.util, "find_spec", lambda name: None)
    assert lazy_iri_syntax.defer() is False
    assert PACKAGE not in sys.modules
    already = object()
    monkeypatch.setitem(sys.modules, PACKAGE, already)
    assert lazy_iri_syntax.defer() is False
    assert sys.modules[PACKAGE] is already


def test_a_failed_import_leaves_the_stand_in_to_try_again(monkeypatch):
    monkeypatch.delitem(sys.modules, PACKAGE, raising=False)
    assert lazy_iri_syntax.defer() is True
    stand_in = sys.modules[PACKAGE]
    # Introspection does not load it: inspect.getmodule, which torch's import calls, reads every
    # module's __file__; other probes ask for dunder names it does not have.
    assert stand_in.__file__ == importlib.util.find_spec(PACKAGE).origin
    assert not hasattr(stand_in, "__wrapped__")
    assert sys.modules[PACKAGE] is stand_in

    def broken(name: str):
        raise ImportError(f"no {name} today")

    import_module = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ImportError, match="no rfc3987_syntax today"):
        stand_in.is_valid_syntax("iri", "http://example.com")
    assert sys.modules[PACKAGE] is stand_in
    monkeypatch.setattr(importlib, "import_module", import_module)
    assert stand_in.is_valid_syntax("iri", "http://example.com") is True
    assert stand_in.parse("iri", "http://example.com").data == "iri"  # other names: the real ones
    assert sys.modules[PACKAGE] is not stand_in


def test_graphlab_labs_server_imports_jupyterlab_with_the_checker_deferred():
    assert (
        fresh_python(
            "import sys\n"
            "from graphlab.cli import lab_server\n"
            "sys.argv = ['lab_server', '--version']\n"
            "try:\n"
            "    lab_server.main()\n"
            "except SystemExit:\n"
            "    pass\n"
            "print('jupyter_server.serverapp' in sys.modules, 'jsonschema' in sys.modules, "
            "'lark' in sys.modules)"
        )[-1]
        == "True True False"
    )


def test_the_command_line_runs_a_command_with_the_checker_deferred(tmp_path):
    # graphlab progress reads the lessons with nbformat, which imports jsonschema.
    store = tmp_path / "progress.json"
    last = fresh_python(
        "import os, sys\n"
        f"os.environ['GRAPHLAB_PROGRESS'] = {str(store)!r}\n"
        "from graphlab.cli import main\n"
        "assert main(['progress']) == 0\n"
        "print('jsonschema' in sys.modules, 'lark' in sys.modules)"
    )[-1]
    assert last == "True False"
