"""The language graphlab speaks: chosen by GRAPHLAB_LANG or the locale, read from its catalogs.

The catalog tests hold ``graphlab/locale/``: every message marked in the code is in each catalog,
translated, not fuzzy, with the same placeholders, and the committed ``.mo`` is the ``.po``
compiled. The feedback tests show a checker's words in Chinese, exactly.
"""

from __future__ import annotations

import importlib.util
import json
import re
import string
import warnings
from pathlib import Path

import pytest

from graphlab import language as lang
from graphlab.checks import _core
from graphlab.checks._sections import COPY_IN
from graphlab.course import headings
from graphlab.errors import CheckFailed

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("message_catalog", ROOT / "tools/message_catalog.py")
assert _spec is not None and _spec.loader is not None
catalog_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog_tool)

LOCALE_VARIABLES = ("GRAPHLAB_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.fixture
def environment(monkeypatch):
    """A process with no language variable set; the test sets the ones it needs."""
    for name in LOCALE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({}, "en"),
        ({"GRAPHLAB_LANG": "zh_CN"}, "zh_CN"),
        ({"GRAPHLAB_LANG": "zh_CN.UTF-8"}, "zh_CN"),
        ({"GRAPHLAB_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh_CN"),
        ({"LANG": "zh_SG"}, "zh_CN"),
        ({"LANG": "zh-Hans"}, "zh_CN"),
        ({"LANG": "zh"}, "zh_CN"),
        ({"LANG": "zh_TW.UTF-8"}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),  # the first variable set decides
        ({"LANGUAGE": "fr:zh_CN", "LANG": "de_DE"}, "zh_CN"),  # LANGUAGE lists choices
        ({"LANGUAGE": "fr:de", "LANG": "zh_CN"}, "en"),
        ({"LC_MESSAGES": "zh_CN.gb2312", "LANG": "en_US"}, "zh_CN"),
    ],
)
def test_the_language_follows_graphlab_lang_then_the_locale(environment, variables, expected):
    for name, value in variables.items():
        environment.setenv(name, value)
    assert lang.language() == expected


def test_an_unknown_graphlab_lang_is_named_once_and_english_is_spoken(environment):
    environment.setenv("GRAPHLAB_LANG", "klingon")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lang.language() == "en"
        assert lang.language() == "en"
    assert [str(w.message) for w in caught] == [
        "GRAPHLAB_LANG='klingon' is not a language graphlab speaks; set it to one of en, zh_CN "
        "(graphlab speaks English meanwhile)"
    ]


def test_a_message_follows_the_language_from_one_call_to_the_next(environment):
    assert lang.gettext("your answer") == "your answer"
    environment.setenv("GRAPHLAB_LANG", "zh_CN")
    assert lang.gettext("your answer") == "你的答案"
    assert lang.gettext("a message nobody marked") == "a message nobody marked"
    environment.setenv("GRAPHLAB_LANG", "en")
    assert lang.gettext("your answer") == "your answer"


@pytest.mark.parametrize("language", catalog_tool.TRANSLATED)
def test_each_catalog_holds_every_marked_message_translated(language):
    catalog = catalog_tool.read(language)
    assert {m.id for m in catalog if m.id} == {m.id for m in catalog_tool.template() if m.id}, (
        "run python tools/message_catalog.py update, then translate"
    )
    # A plural message's string is a tuple of forms: every form must be there.
    messages = [m for m in catalog if m.id]
    done = [all(m.string) if isinstance(m.string, tuple) else bool(m.string) for m in messages]
    assert [m.id for m, ok in zip(messages, done, strict=True) if not ok or m.fuzzy] == []


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.mark.parametrize("language", catalog_tool.TRANSLATED)
def test_a_translation_keeps_its_messages_placeholders(language):
    wrong = [
        m.id for m in catalog_tool.read(language) if m.id and _fields(m.id) != _fields(m.string)
    ]
    assert wrong == []


def test_the_committed_mo_files_are_their_po_files_compiled():
    assert catalog_tool.compile_all(check=True) == [], "run python tools/message_catalog.py compile"


def test_a_failed_check_in_chinese(environment):
    environment.setenv("GRAPHLAB_LANG", "zh_CN")
    failure = CheckFailed("static_x was rebound")
    assert failure.block() == "你的答案：还不对\n  static_x was rebound"
    failure.exercise, failure.reread = "capture", "第 2 节"
    assert failure.block() == "capture：还不对\n  static_x was rebound\n  请重读：第 2 节"


def _lesson_with_sections(folder: Path, name: str, headings_text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    cells = [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": headings_text}]
    (folder / name).write_text(json.dumps({"cells": cells}), encoding="utf-8")


def test_a_section_is_named_by_the_translated_lessons_heading(environment, tmp_path):
    environment.setattr(headings, "shipped_folder", lambda: tmp_path)
    assert str(COPY_IN) == (
        'lesson 02_static_inputs, section 2 "New inputs, the right way: copy into the captured '
        'tensor"'
    )
    environment.setenv("GRAPHLAB_LANG", "zh_CN")
    # No translated lesson yet: the English title, in a Chinese sentence.
    assert str(COPY_IN) == (
        "课程 02_static_inputs 第 2 节「New inputs, the right way: copy into the captured tensor」"
    )
    _lesson_with_sections(
        tmp_path / "zh_CN", "02_static_inputs.ipynb", "## 1. 重放\n\n## 2. 正确做法：*复制*进去"
    )
    assert str(COPY_IN) == "课程 02_static_inputs 第 2 节「正确做法：复制进去」"


def test_a_stub_is_not_attempted_yet_in_chinese(environment, capsys):
    environment.setenv("GRAPHLAB_LANG", "zh_CN")

    @_core.exercise(COPY_IN)
    def check_something(fn):
        _core.call(fn, name="answer")

    def answer():
        raise NotImplementedError

    check_something(answer, record=False)
    printed = capsys.readouterr().out
    assert re.fullmatch(
        r"尚未作答：answer — 请在上面的单元格中写出你的答案，然后再次运行此检查\n", printed
    )


def test_a_chinese_subject_runs_into_its_verb(environment):
    # "{what}" holds Chinese words here, and Chinese sets no space between words.
    environment.setenv("GRAPHLAB_LANG", "zh_CN")
    with pytest.raises(CheckFailed) as caught:
        _core.tensor([1, 2], "你的输出")
    assert str(caught.value) == "你的输出应该是一个张量，而不是 [1, 2]。"


def test_speaking_overrides_the_language_inside_its_block_only(environment):
    environment.setenv("GRAPHLAB_LANG", "en")
    with lang.speaking("zh_CN"):
        assert lang.language() == "zh_CN"
        assert lang.gettext("host") == "主机"
        with lang.speaking("fr_FR"):  # a language graphlab does not speak: English
            assert lang.gettext("host") == "host"
    assert lang.language() == "en"
