"""The JupyterLab extension's translations: every word of ``widgets/src`` in each catalog, the
JSON that JupyterLab reads made from it, and JupyterLab's server finding that JSON.

``tools/extension_catalog.py`` collects the ``trans.__``/``trans._n`` calls of the TypeScript
into ``graphlab/server/locale/<lang>/LC_MESSAGES/cuda_graphlab.po`` and writes the JSON beside
it. These tests hold the shipped files to the sources: no message missing, untranslated or left
over, placeholders kept, the glossary's terms used, the JSON up to date, and no user-visible
text written in the TypeScript without the translator.
"""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from test_lesson_catalogs import glossary, term_pattern

from graphlab.course.languages import TRANSLATED

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "extension_catalog", ROOT / "tools" / "extension_catalog.py"
)
assert _spec is not None and _spec.loader is not None
catalogs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalogs)


def test_messages_are_read_from_the_translator_calls(tmp_path):
    (tmp_path / "a.ts").write_text(
        "const x = trans.__('Open %1', path);\n"
        "this._status.textContent = this._trans.__(\n"
        "  'It\\'s a ' +\n    'long one'\n);\n"
        "n = trans._n('%1 kernel', '%1 kernels', count);\n"
        "again = trans.__('Open %1', other);\n"
        "notTranslated = label('Open');\n"
    )
    (tmp_path / "b.ts").write_text("trans.__('Open %1', path);\n")
    assert catalogs.typescript_messages(tmp_path) == {
        "Open %1": ["widgets/src/a.ts", "widgets/src/b.ts"],
        "It's a long one": ["widgets/src/a.ts"],
        ("%1 kernel", "%1 kernels"): ["widgets/src/a.ts"],
    }


@pytest.mark.parametrize(
    "call", ["trans.__(`Open ${path}`)", "trans.__(label)", "trans._n('%1 kernel', n)"]
)
def test_a_call_that_is_not_literal_text_is_refused_with_its_place(tmp_path, call):
    (tmp_path / "c.ts").write_text(f"\n\nconst x = {call};\n")
    with pytest.raises(catalogs.CatalogError, match=r"^widgets/src/c\.ts:3: "):
        catalogs.typescript_messages(tmp_path)


def test_the_reports_messages_are_read_from_its_words_calls(tmp_path):
    path = tmp_path / "report.py"
    path.write_text(
        "def report(words, n):\n"
        "    head = words.gettext('GPU work: %1', words.ngettext('%1 kernel', '%1 kernels', n))\n"
        "    return head + words.gettext('all ' 'streams') + other.gettext('not this')\n"
    )
    assert catalogs.python_messages(path) == {
        "GPU work: %1": ["report.py"],
        ("%1 kernel", "%1 kernels"): ["report.py"],
        "all streams": ["report.py"],
    }
    path.write_text("def report(words, label):\n    return words.gettext(f'{label} idle')\n")
    with pytest.raises(catalogs.CatalogError, match=r"^report\.py:2: words.gettext takes"):
        catalogs.python_messages(path)


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_of_the_extension_is_translated_and_nothing_else(language):
    catalog = catalogs.read_catalog(language)
    entries = {m.id: m for m in catalog if m.id}
    assert set(entries) == set(catalogs.messages()), (
        "run python tools/extension_catalog.py update, then translate"
    )
    assert catalogs.unfinished(catalog) == (0, 0)
    assert all(all(m.string) if isinstance(m.id, tuple) else m.string for m in entries.values())


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_translation_keeps_every_placeholder(language):
    placeholder = re.compile(r"%\d|\{\w+\}")
    for message in catalogs.read_catalog(language):
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        wanted = set(placeholder.findall(ids[-1]))
        for text in strings:
            assert set(placeholder.findall(text)) == wanted, (message.id, text)


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_json_jupyterlab_reads_is_the_catalog(language):
    path = catalogs.catalog_path(language).with_suffix(".json")
    assert path.read_text(encoding="utf-8") == catalogs.catalog_json(
        catalogs.read_catalog(language), language
    ), "run python tools/extension_catalog.py build"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data[""]["language"] == language.replace("_", "-")
    assert data[""]["domain"] == "cuda_graphlab"


def test_the_json_of_a_plural_has_more_than_one_form():
    data = json.loads(catalogs.catalog_path("zh_CN").with_suffix(".json").read_text("utf-8"))
    assert data["%2 event, opened in %3 s"] == ["%2 个事件，打开用时 %3 s", ""]
    assert data["Show solution"] == ["显示参考答案"]


def test_translations_use_the_glossarys_terms():
    terms = [(term_pattern(en), en, zh) for en, zh in glossary()]
    wrong = []
    for message in catalogs.read_catalog("zh_CN"):
        if not message.id:
            continue
        english = message.id[0] if isinstance(message.id, tuple) else message.id
        chinese = "".join(message.string) if isinstance(message.string, tuple) else message.string
        for pattern, en, zh in terms:
            if pattern.search(english) and zh not in chinese:
                wrong.append(f"{en!r} is not {zh!r} in: {chinese!r}")
    assert not wrong, "\n".join(wrong)


# What a learner reads, written as a bare literal: a label, caption, title, body, dialog text,
# step content, file type name or placeholder text, text put in the page, or a notification.
UNTRANSLATED = re.compile(
    r"\b(?:label|caption|title|body|content|displayName|textContent)\s*[:=]\s*['`]"
    r"|Notification\.\w+\(\s*['`]"
    r"|element\(\s*'\w+',\s*'[\w-]+',\s*['`][^'`]*[A-Za-z]"
)


def test_no_text_of_the_extension_bypasses_the_translator():
    found = []
    for path in sorted((ROOT / "widgets" / "src").glob("*.ts")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if UNTRANSLATED.search(line):
                found.append(f"{path.name}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_untranslated_pattern_finds_bare_text():
    for line in (
        "label: 'Open course',",
        "this.title.caption = 'CUDA Graphs course';",
        "Notification.info('No hidden solution.');",
        "node.textContent = `Reading ${path}`;",
        "element('div', 'graphlab-Sidebar-backend', 'finding the backend…')",
    ):
        assert UNTRANSLATED.search(line), line
    for line in (
        "label: trans.__('Open course'),",
        "element('span', 'graphlab-Sidebar-number', lesson.number)",
        "placement: 'right',",
    ):
        assert not UNTRANSLATED.search(line), line


def test_jupyterlabs_server_finds_the_translations_through_the_entry_point():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["entry-points"]["jupyterlab.locale"] == {
        "cuda_graphlab": "graphlab.server"
    }
    if "cuda_graphlab" not in {e.name for e in entry_points(group="jupyterlab.locale")}:
        pytest.fail("the jupyterlab.locale entry point is not installed: pip install -e '.[dev]'")
    from jupyterlab_server.translation_utils import get_installed_packages_locale

    found, message = get_installed_packages_locale("zh_CN")
    assert message == ""
    shipped = catalogs.catalog_path("zh_CN").with_suffix(".json").read_text(encoding="utf-8")
    assert found["cuda_graphlab"] == json.loads(shipped)


def test_the_server_words_the_report_from_the_catalog():
    from graphlab.server.translations import Catalog, words
    from graphlab.support.words import ENGLISH

    german = Catalog(
        {
            "": {"plural_forms": "nplurals=2; plural=(n != 1);"},
            "%1 kernel": ["%1 Kernel", "%1 Kernels"],
            "device %1": ["Gerät %1"],
        }
    )
    assert [german.ngettext("%1 kernel", "%1 kernels", n) for n in (1, 3)] == [
        "1 Kernel",
        "3 Kernels",
    ]
    assert german.gettext("device %1", 0) == "Gerät 0"
    assert german.gettext("no gaps") == "no gaps"  # not in the catalog: English
    assert german.ngettext("%1 gap", "%1 gaps", 2) == "2 gaps"
    chinese = words("zh_CN")
    assert chinese.ngettext("%1 kernel", "%1 kernels", 40) == "40 个内核"
    assert chinese.gettext("device %1 stream %2", 0, 7) == "设备 0 流 7"
    assert words("en") is ENGLISH and words("fr_FR") is ENGLISH
