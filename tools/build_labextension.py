"""Build graphlab's JupyterLab extension from ``widgets/`` into ``graphlab/labextension/``.

    python tools/build_labextension.py           # rebuild, replacing graphlab/labextension/
    python tools/build_labextension.py --check   # exit 1 if the committed build is not what
                                                 # the sources give (CI runs this)

Installing graphlab needs no node: the production build is committed inside the package and
pip puts it where JupyterLab looks (hatch shared-data in pyproject.toml). This script is for
whoever changes the TypeScript. It needs node 20 and npm, and reaches the npm registry.

The same sources must give the same bytes on every machine, or ``--check`` would fail for no
reason. So the build runs in a copy of the sources at a fixed path (:data:`BUILD_DIR`: webpack
names modules after their paths), installs exactly the versions of ``package-lock.json``
(``npm ci``), and builds against the JupyterLab core metadata pinned there
(``@jupyterlab/core-meta``) with ``@jupyterlab/builder``'s own ``build-labextension``, not against
whichever JupyterLab happens to be installed. Next to the build go ``install.json`` (what
``jupyter labextension list`` says about its origin) and ``stamp.json``: the SHA-256 of the
sources, which a test compares with the sources without needing node.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDGETS = ROOT / "widgets"
OUTPUT = ROOT / "graphlab" / "labextension"
# Everything the build reads from widgets/ (node_modules and lib/ are made by the build).
SOURCE_PATTERNS = (
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "install.json",
    "webpack.config.js",
    "src/*.ts",
    "style/*",
)
STAMP = "stamp.json"
# Files of the repository outside widgets/ that the build reads, and where it puts them: the
# cell metadata schema is defined once, in the Python package, and imported by solutions.ts.
SHARED = {
    ROOT / "graphlab" / "course" / "cell_metadata.schema.json": "src/cell_metadata.schema.json"
}


def source_files(widgets: Path = WIDGETS) -> list[Path]:
    """The files the build reads, sorted, relative to ``widgets``."""
    found = {p.relative_to(widgets) for pattern in SOURCE_PATTERNS for p in widgets.glob(pattern)}
    return sorted(p for p in found if (widgets / p).is_file())


def source_digest(widgets: Path = WIDGETS) -> str:
    """SHA-256 over every source file's relative path and bytes, the shared files included."""
    digest = hashlib.sha256()
    sources = [(r.as_posix(), widgets / r) for r in source_files(widgets)]
    sources += [(target, origin) for origin, target in SHARED.items()]
    for relative, path in sorted(sources):
        digest.update(relative.encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def run(command: list[str], cwd: Path) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=cwd, check=True)


def build(scratch: Path) -> Path:
    """Build a copy of the sources in ``scratch`` and return the folder holding the extension.

    Each run has its own scratch folder, so two builds (a check in CI and one by hand, or two
    checkouts) never share files. npm's own cache makes the repeated ``npm ci`` cheap.
    """
    work = scratch / "widgets"
    for relative in source_files():
        (work / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(WIDGETS / relative, work / relative)
    for origin, target in SHARED.items():
        shutil.copy2(origin, work / target)
    run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], work)
    output = work / json.loads((work / "package.json").read_text())["jupyterlab"]["outputDir"]
    output = output.resolve()
    # build-labextension wants the core metadata as <dir>/package.json.
    core = scratch / "core"
    core.mkdir()
    shutil.copy2(
        work / "node_modules/@jupyterlab/core-meta/core.package.json", core / "package.json"
    )
    run(["npx", "tsc", "--sourceMap", "false"], work)
    builder = work / "node_modules/@jupyterlab/builder/lib/build-labextension.js"
    run(["node", str(builder), "--core-path", str(core), "."], work)
    shutil.copy2(work / "install.json", output / "install.json")
    stamp = {"sources_sha256": source_digest(), "files": len(source_files()) + len(SHARED)}
    (output / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    return output


def differences(built: Path, committed: Path) -> list[str]:
    """Files that differ between two build folders, one line each."""
    lines = []
    names = {p.relative_to(built) for p in built.rglob("*") if p.is_file()}
    names |= {p.relative_to(committed) for p in committed.rglob("*") if p.is_file()}
    for name in sorted(names):
        a, b = built / name, committed / name
        if not a.exists():
            lines.append(f"only committed (not built): {name}")
        elif not b.exists():
            lines.append(f"only built (not committed): {name}")
        elif not filecmp.cmp(a, b, shallow=False):
            lines.append(f"differs: {name}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="fail if graphlab/labextension/ is not up to date"
    )
    args = parser.parse_args(argv)
    if shutil.which("npm") is None or shutil.which("node") is None:
        print("node and npm are needed to build the extension (node 20 or newer)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="graphlab-labextension-") as scratch:
        return finish(build(Path(scratch)), args.check)


def finish(built: Path, check: bool) -> int:
    """Compare the fresh build with the committed one (``check``), or replace the committed one."""
    if check:
        diff = differences(built, OUTPUT)
        for line in diff:
            print(line, file=sys.stderr)
        if diff:
            print(
                "graphlab/labextension/ is not what widgets/ builds to: run "
                "python tools/build_labextension.py and commit the result",
                file=sys.stderr,
            )
            return 1
        print("graphlab/labextension/ matches the sources")
        return 0
    if OUTPUT.exists():
        shutil.rmtree(OUTPUT)
    shutil.copytree(built, OUTPUT)
    print(f"built {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
