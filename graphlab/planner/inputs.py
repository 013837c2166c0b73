"""The planner's two inputs, read and checked: a batch-size histogram and a per-size cost table.

``HIST.json`` maps a decode batch size to how many steps ran at that size::

    {"1": 120, "2": 75, "7": 3}

``COSTS.json`` holds one entry per batch size, in parallel arrays::

    {"sizes": [1, 2, ...], "replay_us": [...], "eager_us": [...],
     "capture_s": [...], "graph_mib": [...], "meta": {...}}

``replay_us[i]`` is one replay of a graph captured at ``sizes[i]``, ``eager_us[i]`` one eager step
at that batch size, ``capture_s[i]`` what capturing it costs at start-up and ``graph_mib[i]`` the
memory the graph keeps. ``meta`` (optional, free-form) says where the numbers came from.

Everything wrong with an input is a :class:`~graphlab.errors.PlannerError` whose one
line names the value and says what to do; nothing is silently dropped or repaired. Batch sizes
are held as 64-bit integers, so a size above :data:`LARGEST_SIZE` is refused; counts and costs
are floats, so a count, a cost or a sum of them beyond a float's range is refused too, instead of
becoming ``inf`` and then ``nan`` in the figures.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphlab.errors import PlannerError
from graphlab.language import N_
from graphlab.language import gettext as _

__all__ = [
    "COST_FIELDS",
    "LARGEST_SIZE",
    "CostTable",
    "Histogram",
    "check_in_range",
    "check_regular_file",
    "load_costs",
    "load_histogram",
    "read_json",
]

# The per-size arrays of a cost table, in the order COSTS.json documents them.
COST_FIELDS = ("replay_us", "eager_us", "capture_s", "graph_mib")

# The largest batch size the planner holds: sizes live in int64 arrays.
LARGEST_SIZE = int(np.iinfo(np.int64).max)
_FLOAT_MAX = f"{np.finfo(float).max:.3g}"
# Only 0-9: str.isdigit() also takes "²" and "٣", which int() refuses.
_DIGITS = re.compile(r"[0-9]+")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys silently; a histogram that names a batch size
    # twice is ambiguous, so it is refused instead.
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise PlannerError(
                _('the key "{key}" appears twice: keep one entry per key').format(key=key)
            )
        seen[key] = value
    return seen


def check_regular_file(path: str | os.PathLike, what: str) -> None:
    """Refuse an empty path (the current folder) and what is not a regular file: a folder, or a
    FIFO or device, which opening would block on or read for ever."""
    if not os.fspath(path).strip():
        raise PlannerError(
            _("the {what} file's path is empty: give the file's name").format(what=_(what))
        )
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise PlannerError(
            _("{what} file {path} does not exist: check the path").format(what=_(what), path=path)
        ) from None
    except OSError as exc:
        raise PlannerError(
            _("cannot read {what} file {path} ({reason}): check it").format(
                what=_(what), path=path, reason=exc.strerror
            )
        ) from None
    if not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            message = _("{what} file {path} is a folder: give a regular file")
        else:
            message = _("{what} file {path} is a FIFO, device or socket: give a regular file")
        raise PlannerError(message.format(what=_(what), path=path))


def read_json(path: str | os.PathLike, what: str) -> Any:
    """The JSON value in ``path``; ``what`` names the file in messages ("histogram", ...)."""
    check_regular_file(path, what)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise PlannerError(
            _("{what} file {path} does not exist: check the path").format(what=_(what), path=path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlannerError(
            _("cannot read {what} file {path} ({reason}): pass a UTF-8 JSON file").format(
                what=_(what), path=path, reason=exc
            )
        ) from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise PlannerError(
            _(
                "{what} file {path} is not JSON ({reason} at line {line}, column {column}): "
                "fix the file or regenerate it"
            ).format(what=_(what), path=path, reason=exc.msg, line=exc.lineno, column=exc.colno)
        ) from None
    except PlannerError as exc:
        raise PlannerError(
            _("{what} file {path}: {problem}").format(what=_(what), path=path, problem=exc)
        ) from None
    except RecursionError:
        raise PlannerError(
            _(
                "{what} file {path} nests arrays or objects too deeply to read: a {what} is one "
                "flat object (see graphlab plan --help)"
            ).format(what=_(what), path=path)
        ) from None
    except ValueError:
        # json reads a number of more than sys.get_int_max_str_digits() digits as a ValueError.
        raise PlannerError(
            _("{what} file {path} holds a number too long to read: write plain numbers").format(
                what=_(what), path=path
            )
        ) from None


def _shown(value: Any) -> str:
    """``value`` as a message shows it: a huge int by its size, a long text cut short."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return _("a {digits}-digit number").format(digits=int(math.log10(abs(value))) + 1)
    text = repr(value)
    if len(text) <= 40:
        return text
    return _("{start}… ({length:,} characters)").format(start=text[:30], length=len(text))


def _number(value: Any, where: str) -> float:
    """``value`` as a finite float; bools, strings, NaN and infinities are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PlannerError(
            _("{where} is {value}, not a number: write a plain JSON number").format(
                where=where, value=_shown(value)
            )
        )
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise PlannerError(
            _("{where} is {value}: every value must be a finite number (at most {largest})").format(
                where=where, value=_shown(value), largest=_FLOAT_MAX
            )
        )
    return number


def _batch_size(text: Any, where: str) -> int:
    """A histogram key such as ``"16"`` as an int from 1 to :data:`LARGEST_SIZE`."""
    digits = text.strip() if isinstance(text, str) else ""
    # Length first: int() refuses more than sys.get_int_max_str_digits() digits with a ValueError.
    if _DIGITS.fullmatch(digits) and len(digits.lstrip("0")) <= len(str(LARGEST_SIZE)):
        size = int(digits)
        if 1 <= size <= LARGEST_SIZE:
            return size
    raise PlannerError(
        _(
            "{where} {value} is not a batch size: use whole numbers from 1 to {largest:,} as keys"
        ).format(where=where, value=_shown(text), largest=LARGEST_SIZE)
    )


def _table_size(value: Any, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LARGEST_SIZE:
        raise PlannerError(
            _(
                "the cost table's sizes[{index}] is {value}: sizes are whole numbers from 1 to "
                "{largest:,}"
            ).format(index=index, value=_shown(value), largest=LARGEST_SIZE)
        )
    return value


def _finite_sum(values: np.ndarray, what: str) -> None:
    """Refuse ``values`` whose sum a float cannot hold (it would print as inf, then nan)."""
    try:
        total = math.fsum(values)
    except OverflowError:  # fsum's way of saying the sum is beyond a float
        total = math.inf
    if not math.isfinite(total):
        raise PlannerError(
            _("{what} add up to more than a float holds ({largest}): scale them down").format(
                what=what, largest=_FLOAT_MAX
            )
        )


@dataclass(frozen=True, eq=False)
class CostTable:
    """Per-size costs, sorted by size: the planner's price list.

    ``sizes`` is a strictly increasing int array; the four cost arrays are float arrays of the
    same length, finite and non-negative. ``meta`` is the table's provenance, kept as given.
    """

    sizes: np.ndarray
    replay_us: np.ndarray
    eager_us: np.ndarray
    capture_s: np.ndarray
    graph_mib: np.ndarray
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> CostTable:
        """Check and sort the decoded COSTS.json object."""
        if not isinstance(data, Mapping):
            raise PlannerError(
                _(
                    "the cost table must be a JSON object with the arrays sizes, {fields}; "
                    "got {kind}"
                ).format(fields=", ".join(COST_FIELDS), kind=type(data).__name__)
            )
        missing = [name for name in ("sizes", *COST_FIELDS) if name not in data]
        if missing:
            raise PlannerError(
                _(
                    "the cost table has no {fields}: add one array per missing field, "
                    "one entry per size (graphlab plan measure writes complete tables)"
                ).format(fields=", ".join(missing))
            )
        columns = {}
        for name in ("sizes", *COST_FIELDS):
            values = data[name]
            if not isinstance(values, list) or not values:
                raise PlannerError(
                    _("the cost table's {name} must be a non-empty JSON array").format(name=name)
                )
            columns[name] = values
        lengths = {name: len(values) for name, values in columns.items()}
        if len(set(lengths.values())) != 1:
            shown = ", ".join(f"{name} {n}" for name, n in lengths.items())
            raise PlannerError(
                _(
                    "the cost table's arrays differ in length ({lengths}): give one entry per "
                    "size in every array"
                ).format(lengths=shown)
            )
        sizes = [_table_size(s, i) for i, s in enumerate(columns["sizes"])]
        if len(set(sizes)) != len(sizes):
            twice = sorted({s for s in sizes if sizes.count(s) > 1})
            raise PlannerError(
                _("the cost table lists size {size} twice: keep one entry per size").format(
                    size=twice[0]
                )
            )
        order = np.argsort(sizes, kind="stable")
        costs = {}
        for name in COST_FIELDS:
            values = [
                _number(v, _("the cost table's {name}[{index}]").format(name=name, index=i))
                for i, v in enumerate(columns[name])
            ]
            bad = next((i for i, v in enumerate(values) if v < 0), None)
            if bad is not None:
                raise PlannerError(
                    _(
                        "the cost table's {name}[{index}] (size {size}) is {value!r}: "
                        "costs cannot be negative"
                    ).format(name=name, index=bad, size=sizes[bad], value=values[bad])
                )
            costs[name] = np.asarray(values, dtype=float)[order]
        for name in ("capture_s", "graph_mib"):
            # A plan adds up the start-up time and memory of its graphs.
            _finite_sum(costs[name], _("the cost table's {name}").format(name=name))
        meta = data.get("meta", {})
        if not isinstance(meta, Mapping):
            raise PlannerError(_("the cost table's meta must be a JSON object (or left out)"))
        return cls(np.asarray(sizes, dtype=np.int64)[order], meta=dict(meta), **costs)

    def to_dict(self) -> dict[str, Any]:
        """The COSTS.json form (what :meth:`from_dict` reads)."""
        out: dict[str, Any] = {"sizes": [int(s) for s in self.sizes]}
        for name in COST_FIELDS:
            out[name] = [float(v) for v in getattr(self, name)]
        if self.meta:
            out["meta"] = self.meta
        return out

    def positions(self, sizes: Any) -> np.ndarray:
        """Index in this table of each of ``sizes``, which must all be listed."""
        sizes = np.asarray(sizes, dtype=np.int64)
        at = np.searchsorted(self.sizes, sizes)
        inside = at < len(self.sizes)
        found = np.zeros(len(sizes), dtype=bool)
        found[inside] = self.sizes[at[inside]] == sizes[inside]
        if not found.all():
            size = int(sizes[~found][0])
            largest = int(self.sizes[-1])
            if size > largest:
                raise PlannerError(
                    _(
                        "batch size {size} is beyond the cost table's largest size {largest}: "
                        "measure costs up to it (graphlab plan measure --sizes 1-{size}) or leave "
                        "it out of the histogram"
                    ).format(size=size, largest=largest)
                )
            raise PlannerError(
                _(
                    "batch size {size} is not in the cost table (its sizes run from {smallest} "
                    "to {largest} with gaps): measure it, so that its eager cost is known"
                ).format(size=size, smallest=int(self.sizes[0]), largest=largest)
            )
        return at


@dataclass(frozen=True, eq=False)
class Histogram:
    """Decode steps per batch size: ``counts[i]`` steps ran at batch size ``sizes[i]``.

    ``sizes`` is strictly increasing; counts are finite, non-negative and add up to more than 0
    (a count may be fractional, for a weighted mix). Sizes with a zero count are dropped.
    """

    sizes: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_dict(cls, data: Any) -> Histogram:
        """Check the decoded HIST.json object ``{"<batch size>": count}``."""
        if not isinstance(data, Mapping):
            raise PlannerError(
                _(
                    'the histogram must be a JSON object such as {{"1": 120, "8": 40}} '
                    "(batch size -> steps); got {kind}"
                ).format(kind=type(data).__name__)
            )
        pairs = []
        for key, value in data.items():
            size = _batch_size(key, _("the histogram key"))
            count = _number(
                value, _("the histogram's count for batch size {size}").format(size=size)
            )
            if count < 0:
                raise PlannerError(
                    _(
                        "the histogram's count for batch size {size} is {value}: counts "
                        "cannot be negative"
                    ).format(size=size, value=_shown(value))
                )
            pairs.append((size, count))
        if len({size for size, _ in pairs}) != len(pairs):
            raise PlannerError(
                _('the histogram names a batch size twice (e.g. "8" and "08"): merge them')
            )
        pairs = sorted((size, count) for size, count in pairs if count > 0)
        if not pairs:
            raise PlannerError(_("the histogram holds no steps: give at least one positive count"))
        sizes, counts = zip(*pairs, strict=True)
        _finite_sum(counts, _("the histogram's counts"))
        return cls(np.asarray(sizes, dtype=np.int64), np.asarray(counts, dtype=float))

    @classmethod
    def from_counts(cls, counts: Mapping[int, float]) -> Histogram:
        """From an in-memory ``{batch size: count}`` (int keys), with the same checks."""
        return cls.from_dict({str(size): count for size, count in counts.items()})

    def to_dict(self) -> dict[str, float]:
        """The HIST.json form; whole counts are written as ints."""
        return {
            str(int(s)): int(c) if float(c).is_integer() else float(c)
            for s, c in zip(self.sizes, self.counts, strict=True)
        }

    @property
    def total(self) -> float:
        """All steps in the histogram."""
        return float(self.counts.sum())


def check_in_range(histogram: Histogram, costs: CostTable) -> None:
    """Refuse a histogram and cost table whose figures a float cannot hold.

    Every total a plan adds up (step time, rows computed, padded rows) is at most the histogram's
    steps times the table's largest cost or size; past a float's range it would print as ``inf``
    and its ratios as ``nan``. Only the counts' proportions matter, so scaling them down helps.
    """
    steps = histogram.total
    for what, largest in (
        (N_("µs per step"), max(float(costs.eager_us.max()), float(costs.replay_us.max()))),
        (N_("rows per step"), float(costs.sizes[-1])),
    ):
        if not math.isfinite(steps * largest):
            raise PlannerError(
                _(
                    "the histogram's {steps:.3g} steps at up to {largest:.3g} {what} add up to "
                    "more than a float holds ({float_max}): scale the counts down (only their "
                    "proportions matter)"
                ).format(steps=steps, largest=largest, what=_(what), float_max=_FLOAT_MAX)
            )


def load_costs(path: str | os.PathLike) -> CostTable:
    """The checked cost table in ``path`` (COSTS.json)."""
    data = read_json(path, N_("cost table"))
    try:
        return CostTable.from_dict(data)
    except PlannerError as exc:
        raise PlannerError(_("{path}: {problem}").format(path=path, problem=exc)) from None


def load_histogram(path: str | os.PathLike) -> Histogram:
    """The checked histogram in ``path`` (HIST.json)."""
    data = read_json(path, N_("histogram"))
    try:
        return Histogram.from_dict(data)
    except PlannerError as exc:
        raise PlannerError(_("{path}: {problem}").format(path=path, problem=exc)) from None
