"""The JupyterLab extension's words in other languages: a gettext catalog per language, and the
JSON that JupyterLab's translator reads.

Every word the extension shows goes through JupyterLab's translator, domain ``cuda-graphlab``
(``trans.__('…')``, ``trans._n('…', '…', n)``, placeholders ``%1``, ``%2``; a bundle is always
named ``trans`` or ``_trans``), and so does the trace viewer's gap report, which the server writes
(``words.gettext("…")``, ``words.ngettext("…", "…", n)`` in :data:`PYTHON_SOURCES`, the same
conventions). This script collects those calls from ``widgets/src/*.ts`` and the Python into
a catalog per language, ``graphlab/server/locale/<lang>/LC_MESSAGES/cuda_graphlab.po`` (the
source a translator edits), and writes the JSON beside it that JupyterLab's server hands to the
browser. The server finds it through the ``jupyterlab.locale`` entry point named
``cuda_graphlab`` (pyproject.toml), which points at ``graphlab.server``: it reads
``locale/<lang>/LC_MESSAGES/<entry point name>.json`` under that package's folder. The name is
the domain as the translator normalises it (``-`` becomes ``_``).

    python tools/extension_catalog.py update          # the TypeScript changed: refresh catalogs
    python tools/extension_catalog.py build           # write the JSON from the catalogs
    python tools/extension_catalog.py build --check   # exit 1 if a JSON file is out of date

``update`` merges as ``pybabel update`` does (a changed message keeps its old translation marked
fuzzy, a new one arrives untranslated, one gone from the sources is dropped). ``build`` refuses
an unfinished catalog: the extension would show English words among the translated ones.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder's sibling script
from lesson_catalogs import CatalogError, merged, unfinished, write_catalog

from graphlab.course.languages import TRANSLATED
from graphlab.support.atomic import write_text_atomically

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "widgets" / "src"
PYTHON_SOURCES = (ROOT / "graphlab" / "trace" / "figures.py",)
LOCALE = ROOT / "graphlab" / "server" / "locale"
DOMAIN = "cuda_graphlab"

_CALL = re.compile(r"\b_?trans\.(__|_n)\(")
_LITERAL = re.compile(r"\s*'((?:[^'\\\n]|\\.)*)'\s*")
_ESCAPES = {"\\'": "'", "\\\\": "\\", "\\n": "\n"}


def _literal(text: str, pos: int, where: str) -> tuple[str, int]:
    """The string written at ``pos`` as one or more single-quoted literals joined by ``+``,
    and the position after it."""
    parts = []
    while True:
        found = _LITERAL.match(text, pos)
        if not found:
            raise CatalogError(
                f"{where}: a translated text must be a '…' literal (or several joined by +)"
            )
        parts.append(re.sub(r"\\.", lambda e: _ESCAPES[e[0]], found[1]))
        pos = found.end()
        if not text.startswith("+", pos):
            return "".join(parts), pos
        pos += 1


Messages = dict[str | tuple[str, str], list[str]]


def messages() -> Messages:
    """Each message of the extension (a text, or a singular and plural pair), with the files
    that use it (not their lines, which move with every edit), in the order of the sources."""
    found = typescript_messages(SOURCES)
    for path in PYTHON_SOURCES:
        for key, files in python_messages(path).items():
            found.setdefault(key, []).extend(files)
    return found


def python_messages(path: Path) -> Messages:
    """The messages of the ``words.gettext``/``words.ngettext`` calls in the Python file
    ``path`` (named from the repository's root)."""
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    found: Messages = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        call = node.func if isinstance(node, ast.Call) else None
        if not (
            isinstance(call, ast.Attribute)
            and call.attr in ("gettext", "ngettext")
            and isinstance(call.value, ast.Name)
            and call.value.id == "words"
        ):
            continue
        count = 1 if call.attr == "gettext" else 2
        texts = [a.value for a in node.args[:count] if isinstance(a, ast.Constant)]
        if len(texts) != count or not all(isinstance(t, str) for t in texts):
            raise CatalogError(f"{name}:{node.lineno}: words.{call.attr} takes literal text")
        key: str | tuple[str, str] = texts[0] if count == 1 else (texts[0], texts[1])
        found.setdefault(key, [name])
    return found


def typescript_messages(sources: Path) -> Messages:
    """The messages of the translator calls in the TypeScript files of ``sources``."""
    found: Messages = {}
    for path in sorted(sources.glob("*.ts")):
        text = path.read_text(encoding="utf-8")
        for call in _CALL.finditer(text):
            line = text.count("\n", 0, call.start()) + 1
            where = f"widgets/src/{path.name}:{line}"
            singular, pos = _literal(text, call.end(), where)
            key: str | tuple[str, str] = singular
            if call[1] == "_n":
                if not text.startswith(",", pos):
                    raise CatalogError(f"{where}: trans._n takes a singular and a plural text")
                key = (singular, _literal(text, pos + 1, where)[0])
            files = found.setdefault(key, [])
            if f"widgets/src/{path.name}" not in files:
                files.append(f"widgets/src/{path.name}")
    return found


def catalog_path(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalog(language: str) -> Catalog:
    with catalog_path(language).open("rb") as file:
        return read_po(file, locale=language, domain=DOMAIN)


def template() -> Catalog:
    """The catalog of the extension's messages, none translated (a ``.pot``)."""
    catalog = Catalog(project="cuda-graphlab", domain=DOMAIN, fuzzy=False)
    for key, places in messages().items():
        catalog.add(key, locations=[(name, None) for name in places])
    return catalog


def update(language: str) -> None:
    """Merge the extension's messages into the ``language`` catalog (created if missing)."""
    path = catalog_path(language)
    header = f"# The words of graphlab's JupyterLab extension in {language}.\n#"
    write_catalog(merged(path, template(), language, header), path)


def catalog_json(catalog: Catalog, language: str) -> str:
    """The ``language`` catalog as the JSON JupyterLab's translator loads: metadata under ``""``
    (the language as the browser names it, ``zh-CN``), then each message's forms under its
    (singular) text.

    The browser takes an entry with one form for a singular text and one with more for a plural
    one, so a language with a single plural form (Chinese) pads its plurals with ``""``, as
    JupyterLab's language packs do.
    """
    data: dict[str, object] = {
        "": {
            "domain": DOMAIN,
            "language": language.replace("_", "-"),
            "plural_forms": catalog.plural_forms,
            "version": catalog.version,
        }
    }
    for message in (m for m in catalog if m.id):
        if isinstance(message.id, tuple):
            forms = list(message.string)
            data[message.id[0]] = forms + [""] * (2 - len(forms))
        else:
            data[message.id] = [message.string]
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def build(language: str, check: bool) -> bool:
    """Write (or, with ``check``, compare) the JSON of the ``language`` catalog; whether it was
    out of date. Raises CatalogError for an unfinished catalog."""
    catalog = read_catalog(language)
    missing, fuzzy = unfinished(catalog)
    if missing or fuzzy:
        raise CatalogError(
            f"{catalog_path(language).relative_to(ROOT)}: {missing} untranslated and {fuzzy} "
            "fuzzy entries; translate them (and remove each '#, fuzzy' flag once checked)"
        )
    text = catalog_json(catalog, language)
    target = catalog_path(language).with_suffix(".json")
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return False
    if not check:
        write_text_atomically(target, text)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("update", "build"))
    parser.add_argument("--check", action="store_true", help="build: report, change nothing")
    args = parser.parse_args(argv)
    stale = []
    try:
        for language in TRANSLATED:
            if args.command == "update":
                update(language)
                print(f"{language}: {catalog_path(language).relative_to(ROOT)} updated")
            elif build(language, args.check):
                stale.append(language)
    except CatalogError as error:
        print(error, file=sys.stderr)
        return 1
    if stale:
        verb = "out of date" if args.check else "written"
        print(f"{verb}: the JSON of {', '.join(stale)}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
