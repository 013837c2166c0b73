"""The languages of the course: English, which it is written in, and its translations.

A translated lesson has the English one's file name in a folder named for its language, beside
the English lessons: ``zh_CN/00_start_here.ipynb`` in a workspace, ``notebooks/zh_CN/`` in a
checkout, ``graphlab/lessons/zh_CN/`` in the wheel. It has the same exercises under the same ids,
so a learner's progress is the same whichever language they read (see
``tools/lesson_catalogs.py``, which builds the translations).
"""

from __future__ import annotations

from pathlib import Path

from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

from .syllabus import LESSON_NAME

__all__ = ["ENGLISH", "LANGUAGES", "TRANSLATED", "check_language", "lessons_folder"]

ENGLISH = "en"
#: The languages the course is translated into, as JupyterLab names them (``zh_CN``).
TRANSLATED = ("zh_CN",)
LANGUAGES = (ENGLISH, *TRANSLATED)


def check_language(language: str) -> str:
    """``language`` if the course knows it; else a GraphlabError listing those it knows."""
    if language not in LANGUAGES:
        raise GraphlabError(
            _("the course has no language {language}: use one of {languages}").format(
                language=repr(language), languages=", ".join(LANGUAGES)
            )
        )
    return language


def lessons_folder(folder: Path, language: str) -> Path:
    """Where the ``language`` lessons of the course folder ``folder`` are: its ``<language>/``
    folder when that holds lessons, ``folder`` itself (the English ones) otherwise."""
    if language in TRANSLATED:
        translated = folder / language
        if translated.is_dir() and any(LESSON_NAME.match(p.name) for p in translated.iterdir()):
            return translated
    return folder
