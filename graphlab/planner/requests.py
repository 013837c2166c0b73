"""From a request trace to a decode batch-size histogram, by a simple continuous-batching model.

A trace is a CSV file with a header row and three columns, in this order: arrival time (seconds
as a number, or a date-time such as ``2023-11-16 18:15:46.6805900``), prompt tokens and output
tokens. The Azure LLM inference traces (``TIMESTAMP,ContextTokens,GeneratedTokens``) have
exactly this shape.

The model, deliberately small so that its histogram can be worked out by hand:

- Time runs in steps of ``step_ms``; step ``n`` starts at ``n * step_ms``. Arrival times are
  counted from the first request and divided by ``rate_scale`` (2 replays the trace at twice
  its request rate: a higher load on the same mix).
- A request joins the queue at the first step that starts at or after its arrival. At the start
  of each step, queued requests are admitted in arrival order while fewer than ``max_batch``
  are running. Nothing else limits admission (no KV-cache budget, no preemption).
- ``prefill="none"``: a prompt costs no step; an admitted request decodes in the step it was
  admitted in. ``prefill="separate"``: a step that admits requests runs their prefill instead
  of a decode step, taking ``ceil(prompt tokens admitted / prefill_tokens)`` steps (at least
  one) during which nothing decodes; the step after it admits again or decodes. This is a
  scheduler that gives prefill priority and never mixes prefill and decode in one step.
- A decode step gives every running request one token; a request leaves after the step that
  produced its last output token. A request with 0 output tokens never decodes.
- Every decode step adds one to the histogram at its batch size (the number of running
  requests). Idle time adds nothing.
- A step lasts ``step_ms`` whatever its batch size, so the model says which batch sizes occur
  and how often, not how fast a server runs.
"""

from __future__ import annotations

import csv
import heapq
import math
import os
import re
from collections import Counter, deque
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from graphlab.errors import PlannerError
from graphlab.language import N_
from graphlab.language import gettext as _

from .inputs import Histogram, check_regular_file

__all__ = ["BatchingModel", "Requests", "decode_histogram", "read_requests"]

_TOKENS = re.compile(r"[0-9]{1,18}")


@dataclass(frozen=True, eq=False)
class Requests:
    """A request trace: arrival in seconds from the first request, prompt and output tokens."""

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray

    def __len__(self) -> int:
        return len(self.arrival_s)


@dataclass(frozen=True)
class BatchingModel:
    """The continuous-batching model's settings (see the module docstring)."""

    max_batch: int = 256
    step_ms: float = 20.0
    rate_scale: float = 1.0
    prefill: str = "none"
    prefill_tokens: int = 8192

    def __post_init__(self):
        for name in ("max_batch", "prefill_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise PlannerError(
                    _("{name} is {value!r}: use a whole number from 1 up").format(
                        name=name, value=value
                    )
                )
        for name in ("step_ms", "rate_scale"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise PlannerError(
                    _("{name} is {value!r}, not a number").format(name=name, value=value)
                )
            if not math.isfinite(value) or value <= 0:
                raise PlannerError(
                    _("{name} is {value!r}: use a finite number above 0").format(
                        name=name, value=value
                    )
                )
        if self.prefill not in ("none", "separate"):
            raise PlannerError(
                _("prefill is {value!r}: choose 'none' or 'separate'").format(value=self.prefill)
            )


def _seconds(text: str, row: int) -> float | datetime:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.strip())  # digits below a microsecond are cut
    except ValueError:
        raise PlannerError(
            _(
                "row {row}: arrival time {text!r} is neither seconds nor a date-time: write e.g. "
                "12.5 or 2023-11-16 18:15:46.680590"
            ).format(row=row, text=text)
        ) from None


def _tokens(text: str, row: int, what: str) -> int:
    digits = text.strip()
    # 0-9 only (isdigit() takes "²" too), and few enough that the count fits an int64.
    if not _TOKENS.fullmatch(digits):
        raise PlannerError(
            _("row {row}: {what} {text!r} is not a whole number of tokens (0 to 18 digits)").format(
                row=row, what=_(what), text=text[:40]
            )
        )
    return int(digits)


def read_requests(path: str | os.PathLike) -> Requests:
    """The requests in the CSV trace ``path``, sorted by arrival."""
    check_regular_file(path, N_("requests"))
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except FileNotFoundError:
        raise PlannerError(
            _("requests file {path} does not exist: check the path").format(path=path)
        ) from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PlannerError(
            _("cannot read requests file {path} ({reason}): pass a UTF-8 CSV file").format(
                path=path, reason=exc
            )
        ) from None
    body = [(n, row) for n, row in enumerate(rows[1:], start=2) if "".join(row).strip()]
    if not body:
        raise PlannerError(
            _(
                "requests file {path} has no requests: give a header row, then one row per "
                "request (arrival time, prompt tokens, output tokens)"
            ).format(path=path)
        )
    arrivals, prompts, outputs = [], [], []
    for n, row in body:
        if len(row) != 3:
            raise PlannerError(
                _(
                    "{path} row {row} has {columns} columns: give arrival time, prompt tokens "
                    "and output tokens"
                ).format(path=path, row=n, columns=len(row))
            )
        try:
            arrivals.append(_seconds(row[0], n))
            prompts.append(_tokens(row[1], n, N_("prompt tokens")))
            outputs.append(_tokens(row[2], n, N_("output tokens")))
        except PlannerError as exc:
            raise PlannerError(_("{path} {problem}").format(path=path, problem=exc)) from None
    kinds = {type(a) for a in arrivals}
    if len(kinds) != 1:
        raise PlannerError(
            _("{path} mixes seconds and date-times as arrival times: use one kind").format(
                path=path
            )
        )
    first = min(arrivals)
    if isinstance(first, datetime):
        seconds = [(a - first).total_seconds() for a in arrivals]
    else:
        if not all(math.isfinite(a) for a in arrivals):
            raise PlannerError(
                _("{path} has an arrival time that is not finite: fix that row").format(path=path)
            )
        seconds = [a - first for a in arrivals]
    order = np.argsort(seconds, kind="stable")
    return Requests(
        arrival_s=np.asarray(seconds, dtype=float)[order],
        prompt_tokens=np.asarray(prompts, dtype=np.int64)[order],
        output_tokens=np.asarray(outputs, dtype=np.int64)[order],
    )


def decode_histogram(requests: Requests, model: BatchingModel | None = None) -> Histogram:
    """Decode steps per batch size when ``requests`` are served under ``model``."""
    model = model or BatchingModel()
    live = requests.output_tokens > 0
    if not live.any():
        raise PlannerError(_("no request in the file generates a token: nothing ever decodes"))
    step_s = model.step_ms / 1e3
    # First step starting at or after each arrival; the small slack keeps an arrival that falls
    # on a step boundary (up to float rounding) in that step.
    ready = np.ceil(requests.arrival_s[live] / model.rate_scale / step_s - 1e-9).astype(np.int64)
    outputs = requests.output_tokens[live].tolist()
    prompts = requests.prompt_tokens[live].tolist()
    ready = ready.tolist()

    steps: Counter[int] = Counter()
    waiting: deque[int] = deque()
    running: list[int] = []  # decode count at which each running request is done
    decoded = 0  # decode steps so far
    now = 0  # current step
    nxt = 0  # next request to arrive
    while nxt < len(ready) or waiting or running:
        while nxt < len(ready) and ready[nxt] <= now:
            waiting.append(nxt)
            nxt += 1
        if not waiting and not running:
            now = ready[nxt]
            continue
        admitted = []
        while waiting and len(running) < model.max_batch:
            request = waiting.popleft()
            admitted.append(request)
            heapq.heappush(running, decoded + outputs[request])
        if admitted and model.prefill == "separate":
            tokens = sum(prompts[r] for r in admitted)
            now += max(1, -(-tokens // model.prefill_tokens))
            continue
        steps[len(running)] += 1
        decoded += 1
        now += 1
        while running and running[0] <= decoded:
            heapq.heappop(running)
    return Histogram.from_counts(steps)
