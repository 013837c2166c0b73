"""The diagnosis as a learner reads it: text in a terminal, HTML in a notebook, a PNG picture.

:class:`Report` holds the plain data :func:`graphlab.diagnose` gathered (``.to_dict()`` is the
``graphlab diagnose --json`` object) and only formats it: every figure it prints is one of those
values, and an estimate says it is one wherever it appears.
"""

from __future__ import annotations

import html
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from .fixes import TITLES
from .profile import kernels_text

__all__ = ["Report"]


class Report:
    """A diagnosis: ``capturable``, ``blockers``, ``kernels``, ``eager_us``, ``replay_us``,
    ``break_even_calls``, ``recommendation``, ``backend`` and the sections behind them.

    ``kernels`` counts the step's operations that launch GPU work, as the blocker scan saw them;
    the text's "kernels per step" is the profile's ``kernels_per_step``, the kernels a GPU really
    ran (one operation may run more than one: a cuBLAS matmul, a fused optimizer step), so on a
    GPU the two may differ. On the CPU the profile assumes one kernel per operation.
    """

    def __init__(self, data: dict[str, Any]):
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self) -> dict[str, Any]:
        """The diagnosis as plain JSON-ready data."""
        return dict(self._data)

    # -- text ------------------------------------------------------------------------------
    def sections(self) -> list[tuple[str, list[str]]]:
        """``(title, lines)`` of each section, in the order shown."""
        d = self._data
        p = d["profile"]
        profile = [
            f"{kernels_text(p['kernels_per_step'])} per step; GPU idle {p['idle_fraction']:.0%}; "
            + (
                "launch-bound (the GPU waits for the host)"
                if p["launch_bound"]
                else "not launch-bound"
            ),
            f"source: {p['source']}",
        ]
        profile += [
            f"gap of {g['us']:.1f} µs after {g['after']} before {g['before']}"
            for g in p["widest_gaps"]
        ]
        capture = d["capture"]
        if capture["captured"]:
            attempt = [
                "captured; replay "
                + ("equals" if capture["replay_equals_eager"] else "DIFFERS from")
                + f" eager on new inputs ({capture['difference']})"
            ]
            if capture.get("pool_bytes") is not None:
                mib = capture["pool_bytes"] / 2**20
                where = (
                    ""
                    if d["backend"].startswith("live")
                    else " (emulator: the bytes of its tensors; a GPU reserves 2 MiB segments)"
                )
                attempt.append(f"memory of the graph's private pool: {mib:.2f} MiB{where}")
        else:
            attempt = [f"capture failed: {capture['error']}", f"({capture['explanation']})"]
        blockers = [
            f"{_where(b)}  {TITLES[b['kind']]}: {b['message']}\n      fix: {b['fix']}"
            for b in d["blockers"]
        ] or ["none found"]
        return [
            (f"Recommendation: {d['recommendation']}", [d["advice"], *d["evidence"]]),
            (f"Blockers ({len(d['blockers'])})", blockers),
            ("Capture attempt", attempt),
            ("Eager profile", profile),
            ("If captured", self._timing_lines()),
            ("torch.compile reduce-overhead", self._compiled_lines()),
            ("Shapes", self._shape_lines()),
        ]

    def _timing_lines(self) -> list[str]:
        t = self._data["timing"]
        if t is None:
            return ["no timing: the step does not capture cleanly yet"]
        n_star = t["break_even_calls"]
        lines = [
            f"per step, end to end with input copies: eager {t['eager_us']:.1f} µs, "
            f"replay {t['replay_us']:.1f} µs",
            f"capture {t['capture_us'] / 1000:.2f} ms"
            + (
                ""
                if t["first_replay_us"] is None
                else f", first replay {t['first_replay_us']:.1f} µs"
            ),
            "break-even: never (a replay is not faster)"
            if n_star is None
            else f"break-even after {n_star:,.1f} calls",
            f"source: {t['source']}",
        ]
        return lines

    def _compiled_lines(self) -> list[str]:
        c = self._data["compiled"]
        if "needs_gpu" in c:
            return [f"not run: {c['needs_gpu']}"]
        if "skipped" in c:
            return [f"not run ({c['skipped']})"]
        if "error" in c:
            return [f"failed: {c['error']}"]
        lines = [
            f"{c['replays']} replays over the steady calls ({c['partitions']:g} per call), "
            f"{c['skips']} skips, {c['per_step_us']:.1f} µs per step end to end"
        ]
        return lines + [f"skip: {reason}" for reason in c["skip_reasons"]]

    def _shape_lines(self) -> list[str]:
        s = self._data["shapes"]
        if s["calls"] < 2:
            return ["one example shape (give more_inputs= to see buckets and padding)"]
        return [
            f"{s['calls']} example calls, {s['graphs']} distinct shapes: one graph each",
            f"or one graph of {s['pad_to_rows']} rows: {s['padding_fraction']:.0%} of rows padding",
        ]

    def __str__(self) -> str:
        d = self._data
        head = f"graphlab diagnose ({d['backend']}): " + (
            "capturable" if d["capturable"] else "not capturable as it is"
        )
        parts = [head]
        for title, lines in self.sections():
            parts.append(title)
            parts.extend(f"  {line}" for line in lines)
        return "\n".join(parts)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    # -- HTML ------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        d = self._data
        verdict = "captures" if d["capturable"] else "does not capture as it is"
        colour = "#1a7f37" if d["capturable"] else "#b35900"
        out = [
            "<div class='graphlab-diagnose'>",
            f"<h4 style='margin:0'>graphlab diagnose: <span style='color:{colour}'>"
            f"{verdict}</span> <small>({html.escape(d['backend'])})</small></h4>",
        ]
        sections = self.sections()
        # The recommendation first, then the blockers as a table, then the evidence.
        out.append(_html_section(*sections[0]))
        if d["blockers"]:
            rows = "".join(
                f"<tr><td><code>{html.escape(_where(b))}</code></td>"
                f"<td>{html.escape(TITLES[b['kind']])}</td><td>{html.escape(b['message'])}</td>"
                f"<td>{html.escape(b['fix'])}</td></tr>"
                for b in d["blockers"]
            )
            out.append(
                "<table><tr><th>line</th><th>blocker</th><th>what happens</th><th>fix</th></tr>"
                f"{rows}</table>"
            )
        out.extend(_html_section(*section) for section in sections[2:])
        out.append("</div>")
        return "".join(out)

    # -- picture ---------------------------------------------------------------------------
    def figure(self) -> Figure:
        """A matplotlib figure: time per step (left) and, once captured, totals over calls."""
        # A Figure made without pyplot: it draws with Agg when saved, and leaves the notebook's
        # own plotting backend alone.
        from matplotlib.figure import Figure

        d = self._data
        fig = Figure(figsize=(9, 3.2), layout="constrained")
        left, right = fig.subplots(1, 2)
        t, c = d["timing"], d["compiled"]
        estimate = " (estimate)" if t and t["estimate"] else ""
        if t is None:
            left.text(
                0.02,
                0.5,
                "\n".join(_wrap(self._blocker_lines(), 48)),
                va="center",
                fontsize=10,
                family="monospace",
            )
            left.set_axis_off()
            left.set_title(f"{len(d['blockers'])} blocker(s)")
        else:
            names, values = ["eager", "replay"], [t["eager_us"], t["replay_us"]]
            if c.get("per_step_us") is not None:
                names.append("reduce-overhead")
                values.append(c["per_step_us"])
            left.barh(
                names,
                values,
                color=["#888", "#1f77b4", "#ff7f0e"][: len(names)],
                hatch="//" if estimate else None,
            )
            left.set(xlabel="µs per step, end to end", title=f"time per step{estimate}")
        p = d["profile"]
        if t is not None and t["break_even_calls"] is not None:
            import numpy as np

            calls = np.linspace(0, max(3 * t["break_even_calls"], 10), 50)
            right.plot(calls, calls * t["eager_us"] / 1000, label="eager", color="#888")
            right.plot(
                calls,
                (t["capture_us"] + calls * t["replay_us"]) / 1000,
                label="capture + replays",
                color="#1f77b4",
            )
            right.axvline(t["break_even_calls"], ls=":", color="k")
            title = f"break-even after {t['break_even_calls']:,.0f} calls{estimate}"
            right.set(xlabel="calls", ylabel="total ms", title=title)
            right.legend()
        else:
            right.bar(
                ["busy", "idle"],
                [1 - p["idle_fraction"], p["idle_fraction"]],
                color=["#1f77b4", "#d62728"],
            )
            guess = " (estimate)" if p["source"].startswith("estimate") else ""
            title = f"GPU busy and idle, {kernels_text(p['kernels_per_step'])}{guess}"
            right.set(ylim=(0, 1), ylabel="share of the eager step", title=title)
        return fig

    def _blocker_lines(self) -> list[str]:
        return [f"{_where(b)}: {TITLES[b['kind']]}" for b in self._data["blockers"]]

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.figure().savefig(buffer, format="png", dpi=90)
        return buffer.getvalue()


def _where(blocker: dict[str, Any]) -> str:
    """``file:line`` as a reader wants it: relative to the working folder when the file is under
    it, else to the import path it was found on (``graphlab/diagnose/examples.py``, not where
    Python is installed), else the path as given."""
    file = blocker["file"]
    if file is None:
        return "(no source line)"
    path = Path(file)
    on_path = sorted((Path(p).resolve() for p in sys.path if p), key=lambda r: -len(r.parts))
    roots = [Path.cwd(), *on_path]
    for root in roots:
        if path.is_absolute() and path.is_relative_to(root):
            path = path.relative_to(root)
            break
    return f"{path}:{blocker['line']}"


def _html_section(title: str, lines: list[str]) -> str:
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f"<b>{html.escape(title)}</b><ul style='margin-top:0'>{items}</ul>"


def _wrap(lines: list[str], width: int) -> list[str]:
    import textwrap

    return [part for line in lines for part in textwrap.wrap(line, width) or [""]]
