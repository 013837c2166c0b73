"""The committed JupyterLab extension build matches its sources, and pip installs it.

Checked without node: ``graphlab/labextension/stamp.json`` holds the SHA-256 of the sources in
``widgets/`` that produced the build (tools/build_labextension.py writes it), so an edit of the
TypeScript without a rebuild fails here. CI also rebuilds with ``--check`` where node is present.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "graphlab" / "labextension"


def build_tool():
    path = ROOT / "tools" / "build_labextension.py"
    spec = importlib.util.spec_from_file_location("build_labextension", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_stamp_matches_the_sources():
    tool = build_tool()
    stamp = json.loads((BUILD / "stamp.json").read_text())
    assert stamp["sources_sha256"] == tool.source_digest(), (
        "widgets/ changed since graphlab/labextension/ was built: run "
        "python tools/build_labextension.py and commit the result"
    )
    assert stamp["files"] == len(tool.source_files()) + len(tool.SHARED)


def test_the_sources_the_stamp_covers():
    names = [p.as_posix() for p in build_tool().source_files()]
    assert {"package.json", "package-lock.json", "tsconfig.json", "install.json"} <= set(names)
    assert "src/index.ts" in names and "style/index.css" in names
    assert not any(n.startswith(("node_modules/", "lib/")) for n in names)
    # webpack's extra settings make the build the same wherever it runs.
    assert "webpack.config.js" in names


def test_build_is_a_prebuilt_extension_named_as_pip_installs_it():
    package = json.loads((BUILD / "package.json").read_text())
    entry = BUILD / package["jupyterlab"]["_build"]["load"]
    assert entry.is_file() and entry.name.startswith("remoteEntry.")
    assert package["name"] == json.loads((ROOT / "widgets" / "package.json").read_text())["name"]
    # pyproject's hatch shared-data table (read as text: tomllib needs Python 3.11)
    pyproject = (ROOT / "pyproject.toml").read_text()
    table = pyproject.split("[tool.hatch.build.targets.wheel.shared-data]\n", 1)[1].split("\n\n")[0]
    assert table.splitlines() == [
        f'"graphlab/labextension" = "share/jupyter/labextensions/{package["name"]}"',
        '"graphlab/server/server_extension.json" = '
        '"etc/jupyter/jupyter_server_config.d/graphlab.json"',
    ]
    enabled = json.loads((ROOT / "graphlab" / "server" / "server_extension.json").read_text())
    assert enabled == {"ServerApp": {"jpserver_extensions": {"graphlab.server": True}}}
    install = json.loads((BUILD / "install.json").read_text())
    assert install["packageName"] == "cuda-graphlab"
    assert 'name = "cuda-graphlab"' in pyproject
