"""graphlab.support.shorten: long error messages cut after a whole sentence, never mid-word."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphlab.support.shorten import shorten


def test_a_short_text_is_kept_whole():
    assert shorten("CUDA error: invalid argument", 28) == "CUDA error: invalid argument"


def test_the_cut_falls_after_the_last_sentence_that_fits():
    text = "First sentence here. Second one is here. Third is longer than the rest."
    # 39 characters may stay before the " …": "First sentence here." ends at 20 (half of 40, so
    # enough), "Second one is here." at 40, one past.
    assert shorten(text, 40) == "First sentence here. …"
    assert shorten(text, 42) == "First sentence here. Second one is here. …"


def test_a_sentence_ending_in_the_first_half_is_not_worth_the_loss_so_whole_words_stay():
    text = "Short. " + "word " * 20
    # The spaces before 39 are at 6, 11, ..., 36: six words after "Short." stay (36 characters).
    assert shorten(text, 40) == "Short. word word word word word word …"


def test_one_long_sentence_is_cut_at_the_limit():
    assert shorten("x" * 50, 10) == "x" * 9 + "…"


def test_a_chinese_full_stop_ends_a_sentence():
    assert shorten("捕获失败。" * 10, 22) == "捕获失败。" * 4 + " …"


@given(st.text(alphabet="ab .。", max_size=80), st.integers(min_value=4, max_value=60))
def test_the_result_fits_and_begins_the_text(text, limit):
    short = shorten(text, limit)
    assert len(short) <= limit
    if short != text:
        assert short.endswith("…")
        assert text.startswith(short.removesuffix("…").rstrip())
