"""Refresh every link derived from the repository URL: the notebooks' and the README's.

The URL lives in one place: ``[project.urls] Repository`` in pyproject.toml. After changing it,
reinstall (``pip install -e .``, so the package metadata carries the new URL) and run::

    python tools/badges.py           # rewrite the notebooks' badges/install cells and the README
    python tools/badges.py --check   # exit 1 if anything is out of date (changes nothing)

In README.md the block between the ``<!-- lessons:start -->`` and ``<!-- lessons:end -->`` markers
is generated: a Binder badge and one "Open in Colab" badge per lesson, then the same for each
translated lesson (``notebooks/zh_CN/``). A translated lesson's own badge is written when it is
built from its catalog: after changing the URL, run ``python tools/lesson_catalogs.py build`` too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from graphlab import course
from graphlab.support.atomic import atomic_writer, write_text_atomically

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
README = ROOT / "README.md"
START, END = "<!-- lessons:start -->", "<!-- lessons:end -->"


def title(notebook) -> str:
    """The lesson title: the first markdown cell's first line, without the leading '#'."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            return cell.source.split("\n", 1)[0].lstrip("# ").strip()
    return ""


def readme_lines(titles: dict[str, str], chinese: dict[str, str] | None = None) -> list[str]:
    """The README block: Binder badge, then a table of lessons with their Colab badges, then
    (when there are any) the Chinese lessons' table, keyed ``zh_CN/NN_topic.ipynb``."""
    lines = [course.binder_badge(), "", "| lesson | open |", "| --- | --- |"]
    for name, text in titles.items():
        lines.append(f"| [{text}](notebooks/{name}) | {course.colab_badge(name)} |")
    if chinese:
        lines += ["", "简体中文 (Simplified Chinese):", "", "| 课 | 打开 |", "| --- | --- |"]
        for name, text in chinese.items():
            lines.append(f"| [{text}](notebooks/{name}) | {course.colab_badge(name)} |")
    return lines


def readme_with_lessons(readme: str, lines: list[str]) -> str:
    """``readme`` with the generated block between the markers replaced by ``lines``."""
    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"README.md lacks the {START} ... {END} markers around the lessons")
    return "".join([head, start, "\n", "\n".join(lines), "\n", end, tail])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale notebooks, change none")
    args = parser.parse_args(argv)
    stale, titles = [], {}
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        titles[path.name] = title(notebook)
        if course.refresh_links(notebook, path.name):
            stale.append(path.name)
            if not args.check:
                with atomic_writer(path) as out:
                    nbformat.write(notebook, out)
    chinese = {
        f"zh_CN/{path.name}": title(nbformat.read(path, as_version=4))
        for path in sorted((NOTEBOOKS / "zh_CN").glob("[0-9][0-9]_*.ipynb"))
    }
    readme = README.read_text(encoding="utf-8")
    fresh = readme_with_lessons(readme, readme_lines(titles, chinese))
    if fresh != readme:
        stale.append(README.name)
        if not args.check:
            write_text_atomically(README, fresh)
    if stale:
        verb = "out of date" if args.check else "updated"
        print(f"\n{verb}: {', '.join(stale)}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
