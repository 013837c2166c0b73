"""The translated lessons: one source for code, a catalog per lesson for prose, held to a glossary.

``tools/lesson_catalogs.py`` builds ``notebooks/<lang>/NN_topic.ipynb`` from the English lesson
and its catalog. These tests hold what it ships: a translated lesson's code cells are the English
ones byte for byte (outputs included), it is built from a finished catalog and is up to date, the
catalogs follow the English blocks exactly, and the glossary's terms are used throughout.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("lesson_catalogs", ROOT / "tools/lesson_catalogs.py")
assert _spec is not None and _spec.loader is not None
catalogs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalogs)

LESSONS = catalogs.lessons()
PAIRS = [(lesson, lang) for lang in catalogs.LANGUAGES for lesson in LESSONS]
GLOSSARY = ROOT / "docs" / "glossary.zh_CN.md"


def _read_catalog(lesson: Path, language: str):
    with catalogs.catalog_path(lesson, language).open("rb") as file:
        return read_po(file, locale=language)


def _ids(pair) -> str:
    lesson, language = pair
    return f"{language}/{lesson.stem}"


def test_blocks_cut_at_blank_lines_and_keep_a_fence_whole():
    text = "# Title\n\nOne line\nand its next.\n\n```python\nx = 1\n\ny = 2\n```\n\n- a\n- b"
    assert catalogs.blocks(text) == [
        "# Title",
        "One line\nand its next.",
        "```python\nx = 1\n\ny = 2\n```",
        "- a\n- b",
    ]
    assert catalogs.blocks("a\n\n\n\nb") == ["a", "b"]


def test_what_is_a_message():
    assert catalogs.is_message("**The question.** Why?")
    assert catalogs.is_message("第 00 课")
    assert not catalogs.is_message("[![Open In Colab](https://x/y.svg)](https://x)")
    assert not catalogs.is_message("```python\nprint('hi')\n```")
    assert not catalogs.is_message("---")
    assert not catalogs.is_message("| 1 | 2.5 |")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_english_markdown_cell_is_its_blocks_joined(lesson):
    # The translated cell is its blocks' translations joined by one blank line: the English cell
    # must be exactly that, or a build would move its layout.
    for cell in nbformat.read(lesson, as_version=4).cells:
        if cell.cell_type == "markdown":
            assert "\n\n".join(catalogs.blocks(cell.source)) == cell.source


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_a_catalog_holds_exactly_its_lessons_blocks(pair):
    lesson, language = pair
    catalog = _read_catalog(lesson, language)
    assert {m.id for m in catalog if m.id} == {m.id for m in catalogs.template(lesson) if m.id}, (
        "run python tools/lesson_catalogs.py update"
    )


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_a_translated_lesson_ships_only_from_a_finished_catalog_and_is_up_to_date(pair):
    lesson, language = pair
    built = catalogs.translated_path(lesson, language)
    missing, fuzzy = catalogs.unfinished(_read_catalog(lesson, language))
    if missing or fuzzy:
        assert not built.exists(), f"{built.name} ships from an unfinished catalog"
        return
    expected = nbformat.writes(catalogs.translate(lesson, language)) + "\n"
    assert built.read_text(encoding="utf-8") == expected, "run tools/lesson_catalogs.py build"


def _code_cells(notebook: dict, outputs: bool = True) -> list[str]:
    keep = (lambda c: c) if outputs else (lambda c: {k: c[k] for k in ("id", "metadata", "source")})
    return [
        json.dumps(keep(c), sort_keys=True) for c in notebook["cells"] if c["cell_type"] == "code"
    ]


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_a_translated_lessons_code_cells_are_the_english_ones_byte_for_byte(pair):
    # Outputs too, unless the translation was run in its own language (and says so).
    lesson, language = pair
    built = catalogs.translated_path(lesson, language)
    if not built.exists():
        pytest.skip(f"{built.name} is not translated yet")
    english = json.loads(lesson.read_text(encoding="utf-8"))
    translated = json.loads(built.read_text(encoding="utf-8"))
    own_run = translated["metadata"]["graphlab"].get("language") == language
    assert _code_cells(translated, not own_run) == _code_cells(english, not own_run)
    assert [(c["cell_type"], c["id"]) for c in translated["cells"]] == [
        (c["cell_type"], c["id"]) for c in english["cells"]
    ]
    if own_run:
        for metadata in (english["metadata"], translated["metadata"]):
            metadata.pop("graphlab")
    assert translated["metadata"] == english["metadata"]


def _ran(notebook: nbformat.NotebookNode, language: str, said: str) -> nbformat.NotebookNode:
    """``notebook`` as if run in ``language``, each code cell printing ``said``."""
    ran = copy.deepcopy(notebook)
    ran.metadata["graphlab"] = {**ran.metadata.get("graphlab", {}), "language": language}
    for cell in ran.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=said)]
    return ran


def _printed(notebook: nbformat.NotebookNode) -> set[str]:
    return {
        o.text for c in notebook.cells if c.cell_type == "code" for o in c.outputs if "text" in o
    }


def test_a_translation_run_in_its_language_keeps_its_outputs_while_its_code_is_the_english():
    english = nbformat.read(LESSONS[2], as_version=4)
    built = catalogs.translate_with(LESSONS[2], "zh_CN", lambda block: "译文")
    fresh = catalogs.with_own_run(copy.deepcopy(built), _ran(built, "zh_CN", "通过"), "zh_CN")
    assert _printed(fresh) == {"通过"}
    assert fresh.metadata["graphlab"]["language"] == "zh_CN"
    # Run in another language, or not run at all: the English outputs.
    for previous in (_ran(built, "en", "passed"), None):
        kept = catalogs.with_own_run(copy.deepcopy(built), previous, "zh_CN")
        assert _printed(kept) == _printed(english)
    # The English code changed since that run: the English outputs, until it runs again.
    stale = _ran(built, "zh_CN", "通过")
    next(c for c in stale.cells if c.cell_type == "code").source += "\nprint(1)"
    kept = catalogs.with_own_run(copy.deepcopy(built), stale, "zh_CN")
    assert _printed(kept) == _printed(english)
    assert kept.metadata["graphlab"] == english.metadata["graphlab"]


def test_the_colab_badge_of_a_translated_lesson_opens_it(tmp_path):
    lesson = LESSONS[0]
    notebook = catalogs.translate_with(lesson, "zh_CN", lambda block: "译文")
    first = notebook.cells[0].source
    assert f"/blob/main/notebooks/zh_CN/{lesson.name})" in first
    assert "译文" in first


def glossary() -> list[tuple[str, str]]:
    """The glossary's (English, Chinese) rows."""
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", GLOSSARY.read_text(encoding="utf-8"), re.M)
    return [(en, zh) for en, zh in rows if en not in ("English", "---")]


def term_pattern(term: str) -> re.Pattern[str]:
    """``term`` as a whole word in any inflection: capture, captures, captured, capturing."""
    words = [
        re.escape(w[:-1]) + "(?:e|es|ed|ing)"
        if w.endswith("e")
        else re.escape(w) + "(?:s|es|ed|ing)?"
        for w in re.split(r"[\s-]+", term)
    ]
    return re.compile(r"\b" + r"[\s-]+".join(words) + r"\b", re.I)


def prose(block: str) -> str:
    """``block`` without its code spans and link targets, which are never translated."""
    return re.sub(r"`[^`]*`|\]\([^)]*\)|https?://\S+", " ", block)


def test_term_pattern_matches_inflections_and_not_other_words():
    capture = term_pattern("capture")
    assert [bool(capture.search(w)) for w in ("Capture", "captured", "capturing", "captor")] == [
        True,
        True,
        True,
        False,
    ]
    graph = term_pattern("graph")
    assert [bool(graph.search(w)) for w in ("graphs", "graphlab", "a graph.")] == [
        True,
        False,
        True,
    ]
    assert term_pattern("warm-up").search("a warm up first")
    assert prose("run `g.replay()` see [the replay](02_x.ipynb)") == "run   see [the replay "


def test_the_glossary_is_read_whole():
    rows = dict(glossary())
    assert rows["capture"] == "捕获" and rows["CUDA Graph"] == "CUDA 图"
    assert len(rows) == len(glossary())  # no term listed twice


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_translations_use_the_glossarys_terms(lesson):
    terms = [(term_pattern(en), en, zh) for en, zh in glossary()]
    wrong = []
    for message in _read_catalog(lesson, "zh_CN"):
        if not message.id or not message.string:
            continue
        text = prose(message.id)
        for pattern, en, zh in terms:
            if pattern.search(text) and zh not in message.string:
                wrong.append(f"{en!r} is not {zh!r} in: {message.string[:60]!r}")
    assert not wrong, "\n".join(wrong)


def test_an_unfinished_catalog_is_named_with_what_is_left(tmp_path, monkeypatch):
    lesson = LESSONS[0]
    empty = catalogs.template(lesson)
    path = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES" / f"{lesson.stem}.po"
    monkeypatch.setattr(catalogs, "catalog_path", lambda lesson, language: path)
    catalogs.write_catalog(empty, path)
    with pytest.raises(catalogs.CatalogError) as error:
        catalogs.translate(lesson, "zh_CN")
    count = sum(1 for m in empty if m.id)
    assert f"{count} untranslated and 0 fuzzy entries" in str(error.value)
