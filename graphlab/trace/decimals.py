"""Microseconds, as a trace writes them in decimal, to exact integer nanoseconds.

Kineto prints times as microseconds with three decimals: ``5368438496578.307``. Read as a float,
such a number keeps only about 16 significant digits, and an absolute timestamp in nanoseconds has
19, so the last nanoseconds would be lost. graphlab therefore never reads a time as a float: it
reads the decimal text itself.

:func:`us_to_ns` converts one already parsed number (an int, a Decimal, or a float the caller got
from their own ``json.load``). :func:`us_texts_to_ns` converts the number texts of many events at
once, with numpy over their bytes, for the fast trace reader; the few texts it does not handle
(an exponent, more than three decimals, a string) are marked for :func:`us_to_ns`.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["MAX_US", "PAD", "us_padded_texts_to_ns", "us_texts_to_ns", "us_to_ns"]

# Largest |time| in µs accepted: 2**62 ns (about 146 years), as a timeline holds.
MAX_US = 2**62 // 1000

_POW10 = np.array([10**k for k in range(20)], dtype=np.uint64)
_SEPARATOR = 0  # a NUL byte: JSON text never holds one outside an escape, so it splits texts
_ZERO, _NINE, _DOT, _MINUS = b"0"[0], b"9"[0], b"."[0], b"-"[0]
# The fixed-width rows of _three_decimals: up to 16 digits, the point, 3 decimals.
_WIDTH = 20
PAD = b"0" * _WIDTH  # goes before each text given to us_padded_texts_to_ns
_DIGIT_COLUMNS = np.delete(np.arange(_WIDTH), _WIDTH - 4)


def us_to_ns(value: Any) -> int | None:
    """Kineto microseconds (int, Decimal, or float from a caller's own json.load) to int ns.

    None for anything that is not a finite number within :data:`MAX_US`.
    """
    if isinstance(value, float):
        # repr gives the shortest decimal that reads back as this float: the text Kineto wrote.
        value = Decimal(repr(value))
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    if isinstance(value, Decimal) and (not value.is_finite() or value.adjusted() > 16):
        return None  # NaN, Infinity, or so large that arithmetic on it would overflow
    if abs(value) > MAX_US:
        return None
    return int((Decimal(value) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def us_texts_to_ns(texts: list) -> tuple[np.ndarray, np.ndarray]:
    """Integer ns of many JSON number texts (bytes-like), and which of them were read here.

    A text is read here when it is a plain decimal, ``-?digits[.digits]`` with at most three
    decimals, within :data:`MAX_US`; its value is then exact. The others (``ok`` False, value 0)
    are left for :func:`us_to_ns`, which gives the same value or None.
    """
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return us_padded_texts_to_ns(PAD + PAD.join(texts), lengths)


def us_padded_texts_to_ns(text: bytes | bytearray, lengths: np.ndarray):
    """:func:`us_texts_to_ns` of texts given as one buffer, each text after :data:`PAD`, and
    their lengths (so that a reader can gather them batch after batch).

    Kineto's own shape, digits, a point and exactly three decimals, is read as rows of a fixed
    width; the texts of any other shape are then read one digit at a time.
    """
    ns, ok = _three_decimals(np.frombuffer(text, dtype=np.uint8), lengths)
    rest = np.flatnonzero(~ok)
    if len(rest):
        ends = np.cumsum(lengths + _WIDTH)[rest].tolist()
        texts = [text[end - n : end] for end, n in zip(ends, lengths[rest].tolist(), strict=True)]
        ns[rest], ok[rest] = _any_decimals(texts)
    return ns, ok


def _three_decimals(text: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The texts of the shape ``digits.ddd`` (at most 16 digits before the point), in ns.

    Each text becomes one row of :data:`_WIDTH` bytes, right-aligned, so its point falls in the
    same column in every row and each digit column has a fixed power of ten: a row's nanoseconds
    are its 19 digits read as one number (below 10**19, inside uint64), a digit column at a time
    (which needs far less memory than a matrix of the digits as uint64). The zeros of
    :data:`PAD` before each text fill its row's left part (a text too long to fit is left to the
    other way).
    """
    rows = sliding_window_view(text, _WIDTH)[np.cumsum(lengths + _WIDTH) - _WIDTH]
    digits = rows[:, _DIGIT_COLUMNS] - np.uint8(_ZERO)
    ok = (
        (digits <= 9).all(axis=1)
        & (rows[:, _WIDTH - 4] == _DOT)
        & (lengths >= 5)
        & (lengths <= _WIDTH)
    )
    value = np.zeros(len(lengths), dtype=np.uint64)
    for column in digits.T:  # the most significant first
        value *= np.uint64(10)
        value += column
    ok &= value <= np.uint64(MAX_US * 1000)
    return np.where(ok, value, 0).astype(np.int64), ok


def _any_decimals(texts: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`us_texts_to_ns` for texts of any shape, one digit at a time."""
    n = len(texts)
    ns = np.zeros(n, dtype=np.int64)
    ok = np.zeros(n, dtype=bool)
    if n == 0:
        return ns, ok
    text = np.frombuffer(b"\0".join(texts) + b"\0", dtype=np.uint8)
    ends = np.flatnonzero(text == _SEPARATOR)
    if len(ends) != n:
        return ns, ok  # a text held a NUL byte: leave them all to the careful route
    starts = np.empty(n, dtype=np.int64)
    starts[0], starts[1:] = 0, ends[:-1] + 1
    field = np.repeat(np.arange(n), ends - starts + 1)  # which text each byte belongs to
    digit = (text >= _ZERO) & (text <= _NINE)
    dot, minus = text == _DOT, text == _MINUS

    def per_text(mask: np.ndarray) -> np.ndarray:
        return np.bincount(field[mask], minlength=n)

    negative = text[starts] == _MINUS
    dots = per_text(dot)
    dot_at = np.zeros(n, dtype=np.int64)
    dot_at[field[dot]] = np.flatnonzero(dot)  # with one dot per text, where it is
    int_end = np.where(dots == 1, dot_at, ends)  # one past the last digit before the point
    decimals = np.where(dots == 1, ends - dot_at - 1, 0)
    int_digits = int_end - starts - negative
    ok = (
        (per_text(~(digit | dot | minus) & (text != _SEPARATOR)) == 0)
        & (per_text(minus) == negative)
        & (dots <= 1)
        & ((dots == 0) | ((decimals >= 1) & (decimals <= 3)))
        & (int_digits >= 1)
        & (int_digits + 3 <= 19)  # up to 19 digits of ns: below 10**19, inside uint64
    )
    # Each digit's power of ten in nanoseconds: 3 for the last integer digit, 2 for the first
    # decimal, and so on. Texts that are not ok may give nonsense powers: they are clipped here and
    # their values dropped below.
    at = np.flatnonzero(digit)
    owner = field[at]
    power = int_end[owner] + 3 - at - (at < int_end[owner])
    value = (text[at] - _ZERO).astype(np.uint64) * _POW10[np.clip(power, 0, 19)]
    first_digit = np.searchsorted(owner, np.arange(n))
    has_digits = first_digit < len(at)
    sums = np.zeros(n, dtype=np.uint64)
    if len(at):
        sums[has_digits] = np.add.reduceat(value, first_digit[has_digits])
    ok &= has_digits & (sums <= np.uint64(MAX_US * 1000))
    magnitude = np.where(ok, sums, 0).astype(np.int64)
    ns = np.where(negative, -magnitude, magnitude)
    return ns, ok
