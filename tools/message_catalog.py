"""graphlab's messages in other languages: the gettext catalog of the package's own strings.

A message is marked where it is written, ``_("not right yet")`` (``_`` being
:func:`graphlab.language.gettext`), or ``ngettext(singular, plural, n)``; text defined at import
and translated where it is shown is marked ``N_("...")``. Its translations live in
``graphlab/locale/<lang>/LC_MESSAGES/graphlab.po``, and Python reads the compiled ``graphlab.mo``
beside it, which is committed so that an installation needs no build step.

    python tools/message_catalog.py update          # the code changed: merge its messages
    python tools/message_catalog.py compile         # write each .mo from its .po
    python tools/message_catalog.py compile --check # exit 1 if a .mo is not its .po's

``update`` merges as ``pybabel update`` does: a message whose English changed keeps its old
translation marked fuzzy, a new one arrives untranslated, one no longer in the code is dropped.
``compile`` leaves fuzzy and untranslated entries out, so that graphlab says them in English;
the tests refuse a catalog that has any.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder's sibling script
from extension_catalog import PYTHON_SOURCES
from lesson_catalogs import merged

from graphlab.language import DOMAIN, LANGUAGES
from graphlab.support.atomic import write_text_atomically

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "graphlab"
# This checkout's catalogs, beside the code it extracts from: not those of whichever graphlab
# Python imports (an editable install may point at another checkout).
LOCALE = PACKAGE / "locale"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
TRANSLATED = tuple(lang for lang in LANGUAGES if lang != "en")


def catalog_path(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def template() -> Catalog:
    """Every message marked in the package's code, none translated (a ``.pot``)."""
    catalog = Catalog(project="graphlab", domain=DOMAIN, fuzzy=False)
    # The trace report's words are the JupyterLab extension's (extension_catalog.py), not these.
    theirs = [(str(path.relative_to(PACKAGE)), "ignore") for path in PYTHON_SOURCES]
    found = extract_from_dir(PACKAGE, method_map=[*theirs, ("**.py", "python")], keywords=KEYWORDS)
    for filename, _line, message, comments, context in found:
        where = (f"graphlab/{filename}", None)
        if catalog.get(message, context) is None:
            catalog.add(message, locations=[where], auto_comments=comments, context=context)
        else:
            catalog[message].locations.append(where)
    return catalog


def read(language: str) -> Catalog:
    with catalog_path(language).open("rb") as file:
        return read_po(file, locale=language, domain=DOMAIN)


def write(catalog: Catalog, path: Path) -> None:
    """Write ``catalog`` to ``path`` as a ``.po`` file, folded at 100 columns, no obsolete entry."""
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, ignore_obsolete=True, sort_by_file=True)
    write_text_atomically(path, buffer.getvalue().decode("utf-8"))


def update(language: str) -> None:
    """Merge the code's messages into ``language``'s catalog (made empty when there is none)."""
    path = catalog_path(language)
    write(merged(path, template(), language, f"# graphlab's messages in {language}.\n#"), path)


def compiled(language: str) -> bytes:
    """The ``.mo`` of ``language``'s catalog: its translated, non-fuzzy entries."""
    buffer = io.BytesIO()
    write_mo(buffer, read(language), use_fuzzy=False)
    return buffer.getvalue()


def compile_all(check: bool) -> list[str]:
    """Write (or, with ``check``, compare) every ``.mo``; the stale ones' paths."""
    stale = []
    for language in TRANSLATED:
        target = catalog_path(language).with_suffix(".mo")
        data = compiled(language)
        if target.exists() and target.read_bytes() == data:
            continue
        stale.append(str(target.relative_to(ROOT)))
        if not check:
            target.write_bytes(data)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("update", "compile"))
    parser.add_argument("--check", action="store_true", help="compile: report, change nothing")
    args = parser.parse_args(argv)
    if args.command == "update":
        for language in TRANSLATED:
            update(language)
            print(f"{catalog_path(language).relative_to(ROOT)} updated")
        return 0
    stale = compile_all(args.check)
    if stale:
        print(f"{'out of date' if args.check else 'written'}: {', '.join(stale)}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
