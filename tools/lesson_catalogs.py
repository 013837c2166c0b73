"""The course in other languages: one gettext catalog per lesson, and the lessons built from them.

A lesson's prose lives once in English, in ``notebooks/NN_topic.ipynb``, and once per language in
a catalog, ``notebooks/locale/<lang>/LC_MESSAGES/NN_topic.po``. Code cells exist once: a
translated lesson, ``notebooks/<lang>/NN_topic.ipynb``, is the English notebook with the text of
its Markdown cells replaced, and nothing else changed (code cells, their outputs and metadata are
copied as they are, so a stored GPU output stays the one that was recorded).

Outputs are the one exception: a translated lesson that was run in its own language
(``tools/execute_notebooks.py notebooks/zh_CN/*.ipynb`` on the GPU, which stamps the language into
``metadata.graphlab``) keeps that run's outputs and provenance, so that its stored checker feedback
speaks the lesson's language, for as long as its code cells are the English ones. Once the English
code changes, the build takes the English outputs again until the translation is run again.

The unit of translation is a Markdown *block*: the text between blank lines, a fenced code block
kept whole. A block with nothing to translate (a Colab badge, a fenced code block, a line of
punctuation) is not a message: it is copied, and the badge is pointed at the translated lesson.

    python tools/lesson_catalogs.py update          # English changed: refresh every catalog
    python tools/lesson_catalogs.py build           # write notebooks/<lang>/ from the catalogs
    python tools/lesson_catalogs.py build --check   # exit 1 if a built lesson is out of date

``update`` merges each lesson's blocks into its catalog with Babel, as ``pybabel update`` does: a
block whose English changed keeps its old translation marked *fuzzy* (to be checked), a new one
arrives untranslated, and one no longer in the lesson is dropped. ``build`` refuses a catalog with
an unfinished catalog (an untranslated or fuzzy entry): that lesson is not built, and the
command names it and says how many entries are left, so that a half-translated lesson never ships.
"""

from __future__ import annotations

import argparse
import copy
import io
import re
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, write_po

from graphlab.course.languages import TRANSLATED
from graphlab.course.links import refresh_links
from graphlab.course.syllabus import LESSON_NAME
from graphlab.support.atomic import write_text_atomically

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LANGUAGES = TRANSLATED

_FENCE = re.compile(r"^\s*(```|~~~)")
_BADGE = "[![Open In Colab]"
_WORDS = re.compile(r"[^\W\d_]", re.UNICODE)  # a letter, in any script


class CatalogError(Exception):
    """A catalog that cannot be built into a lesson: the message says which and what to do."""


def blocks(markdown: str) -> list[str]:
    """``markdown`` cut at its blank lines, a fenced code block kept whole (its blank lines too).

    Joining the blocks with a blank line gives ``markdown`` back whenever it has no run of two
    blank lines and no blank line at either end (the lessons are written that way; a test holds
    them to it).
    """
    found: list[str] = []
    current: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if line.strip() == "" and not fenced:
            if current:
                found.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        found.append("\n".join(current))
    return found


def is_message(block: str) -> bool:
    """Whether ``block`` is prose to translate: not a badge, not a fenced code block, and with
    at least one letter."""
    if block.startswith(_BADGE) or _FENCE.match(block):
        return False
    return bool(_WORDS.search(block))


def lessons() -> list[Path]:
    """The English lessons, by number."""
    return sorted(p for p in NOTEBOOKS.iterdir() if LESSON_NAME.match(p.name))


def catalog_path(lesson: Path, language: str) -> Path:
    return NOTEBOOKS / "locale" / language / "LC_MESSAGES" / f"{lesson.stem}.po"


def translated_path(lesson: Path, language: str) -> Path:
    return NOTEBOOKS / language / lesson.name


def _messages(notebook: nbformat.NotebookNode) -> Iterator[str]:
    """Each block to translate in ``notebook``, in order."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            yield from filter(is_message, blocks(cell.source))


def template(lesson: Path) -> Catalog:
    """The catalog of ``lesson``'s English blocks, none translated (a ``.pot``)."""
    notebook = nbformat.read(lesson, as_version=4)
    catalog = Catalog(project="graphlab", domain=lesson.stem, fuzzy=False)
    for block in _messages(notebook):
        catalog.add(block, locations=[(lesson.name, None)])
    return catalog


def _read(path: Path, language: str) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=language, domain=path.stem)


def write_catalog(catalog: Catalog, path: Path) -> None:
    """Write ``catalog`` to ``path`` as a ``.po`` file, folded at 100 columns, no obsolete entry."""
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, ignore_obsolete=True)
    write_text_atomically(path, buffer.getvalue().decode("utf-8"))


def merged(path: Path, fresh: Catalog, language: str, header: str) -> Catalog:
    """The catalog at ``path`` (a new, empty one headed ``header`` when there is none) with
    ``fresh``'s messages merged in as ``pybabel update`` merges them; its creation date kept."""
    if path.exists():
        catalog = _read(path, language)
    else:
        catalog = Catalog(
            locale=language,
            domain=fresh.domain,
            header_comment=header,
            project=fresh.project,
            version=version("cuda-graphlab"),
            last_translator="graphlab",
            language_team=f"graphlab {language}",
            fuzzy=False,
        )
    catalog.update(fresh, update_creation_date=False)
    return catalog


def update(language: str) -> list[str]:
    """Merge every lesson's blocks into its ``language`` catalog; the catalogs' names."""
    written = []
    for lesson in lessons():
        path = catalog_path(lesson, language)
        header = f"# {lesson.name}: its Markdown, block by block, in {language}.\n#"
        write_catalog(merged(path, template(lesson), language, header), path)
        written.append(path.name)
    return written


def translated(message: Message) -> bool:
    """Whether ``message`` has its translation: every form of it, for a plural message."""
    if isinstance(message.string, tuple):
        return all(message.string)
    return bool(message.string)


def unfinished(catalog: Catalog) -> tuple[int, int]:
    """How many of ``catalog``'s entries are untranslated, and how many fuzzy."""
    entries = [m for m in catalog if m.id]
    return sum(not translated(m) for m in entries), sum(m.fuzzy for m in entries)


def _shown(path: Path) -> str:
    """``path`` as a message shows it: from the repository root when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def translate(lesson: Path, language: str) -> nbformat.NotebookNode:
    """``lesson`` with its Markdown in ``language``; raises CatalogError if the catalog is missing,
    unfinished or lacks one of the lesson's blocks."""
    path = catalog_path(lesson, language)
    if not path.exists():
        raise CatalogError(
            f"{lesson.name} has no {language} catalog ({_shown(path)}): run "
            "python tools/lesson_catalogs.py update, then translate its entries"
        )
    catalog = _read(path, language)
    missing, fuzzy = unfinished(catalog)
    if missing or fuzzy:
        raise CatalogError(
            f"{_shown(path)}: {missing} untranslated and {fuzzy} fuzzy entries; translate them "
            "(and remove each '#, fuzzy' flag once checked), then build again"
        )

    def lookup(block: str) -> str:
        entry = catalog.get(block)
        if entry is None:
            raise CatalogError(
                f"{_shown(path)} lacks a block of {lesson.name}: run "
                "python tools/lesson_catalogs.py update"
            )
        return str(entry.string)

    built = translate_with(lesson, language, lookup)
    target = translated_path(lesson, language)
    previous = nbformat.read(target, as_version=4) if target.exists() else None
    return with_own_run(built, previous, language)


def _code(notebook: nbformat.NotebookNode) -> list[tuple[str, str]]:
    return [(c.id, c.source) for c in notebook.cells if c.cell_type == "code"]


def ran_in(notebook: nbformat.NotebookNode) -> str | None:
    """The language ``notebook``'s stored outputs were produced in, if its provenance says."""
    return notebook.metadata.get("graphlab", {}).get("language")


def with_own_run(
    built: nbformat.NotebookNode, previous: nbformat.NotebookNode | None, language: str
) -> nbformat.NotebookNode:
    """``built`` with the outputs and provenance of ``previous`` (the translated lesson as it
    stands) when ``previous`` was run in ``language`` and its code cells are ``built``'s."""
    if previous is None or ran_in(previous) != language or _code(previous) != _code(built):
        return built
    runs = {c.id: c for c in previous.cells if c.cell_type == "code"}
    for cell in built.cells:
        if cell.cell_type == "code":
            cell.outputs = runs[cell.id].outputs
            cell.execution_count = runs[cell.id].execution_count
    built.metadata["graphlab"] = previous.metadata["graphlab"]
    return built


def translate_with(
    lesson: Path, language: str, lookup: Callable[[str], str]
) -> nbformat.NotebookNode:
    """``lesson`` with each Markdown block to translate replaced by ``lookup(block)``, the other
    blocks and every other cell as they are, and its Colab badge opening the translation."""
    notebook = copy.deepcopy(nbformat.read(lesson, as_version=4))
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts = blocks(cell.source)
            cell.source = "\n\n".join(lookup(b) if is_message(b) else b for b in parts)
    refresh_links(notebook, f"{language}/{lesson.name}")
    return notebook


def build(language: str, check: bool) -> tuple[list[str], list[str]]:
    """Write (or, with ``check``, compare) the translated lessons whose catalogs are finished.

    Returns the stale lessons' names (written, or to be written) and one line per lesson not
    built. A lesson whose catalog is unfinished is not built, and its translation, if one was
    built before, is removed (counted as stale): it would no longer say what the English says.
    """
    stale, unbuilt = [], []
    for lesson in lessons():
        target = translated_path(lesson, language)
        name = f"{language}/{lesson.name}"
        try:
            text = nbformat.writes(translate(lesson, language))
        except CatalogError as error:
            unbuilt.append(str(error))
            if target.exists():
                stale.append(name)
                if not check:
                    target.unlink()
            continue
        text += "" if text.endswith("\n") else "\n"  # as nbformat.write ends a file
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not check:
            write_text_atomically(target, text)
    return stale, unbuilt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("update", "build"))
    parser.add_argument("--check", action="store_true", help="build: report, change nothing")
    parser.add_argument("--language", choices=LANGUAGES, action="append")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for language in args.language or LANGUAGES:
        if args.command == "update":
            print(f"{language}: {len(update(language))} catalogs updated")
            continue
        changed, unbuilt = build(language, args.check)
        stale += changed
        for line in unbuilt:
            print(f"not built: {line}")
    if stale:
        verb = "out of date" if args.check else "written"
        print(f"{verb}: {', '.join(stale)}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
