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

from graphlab.language import N_
from graphlab.language import gettext as _

from .fixes import TITLES
from .profile import kernels_text
from .words import shown

# The verdicts as a report names them; the data (and --json) keeps them in English.
_VERDICTS = {
    "full graph": N_("full graph"),
    "piecewise": N_("piecewise"),
    "reduce-overhead": N_("reduce-overhead"),
    "not worth it": N_("not worth it"),
}

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
        bound = (
            _("launch-bound (the GPU waits for the host)")
            if p["launch_bound"]
            else _("not launch-bound")
        )
        profile = [
            _("{kernels} per step; GPU idle {idle:.0%}; {bound}").format(
                kernels=kernels_text(p["kernels_per_step"]).shown(),
                idle=p["idle_fraction"],
                bound=bound,
            ),
            _("source: {source}").format(source=shown(p["source"])),
        ]
        profile += [
            _("gap of {us:.1f} µs after {after} before {before}").format(
                us=g["us"], after=g["after"], before=g["before"]
            )
            for g in p["widest_gaps"]
        ]
        capture = d["capture"]
        if capture["captured"]:
            attempt = [
                (
                    _("captured; replay equals eager on new inputs ({difference})")
                    if capture["replay_equals_eager"]
                    else _("captured; replay DIFFERS from eager on new inputs ({difference})")
                ).format(difference=shown(capture["difference"]))
            ]
            if capture.get("pool_bytes") is not None:
                mib = capture["pool_bytes"] / 2**20
                pool = (
                    _("memory of the graph's private pool: {mib:.2f} MiB")
                    if d["backend"].startswith("live")
                    else _(
                        "memory of the graph's private pool: {mib:.2f} MiB (emulator: the bytes "
                        "of its tensors; a GPU reserves 2 MiB segments)"
                    )
                )
                attempt.append(pool.format(mib=mib))
        else:
            attempt = [
                _("capture failed: {error}").format(error=capture["error"]),
                f"({capture['explanation']})",
            ]
        blockers = [
            _("{where}  {title}: {message}\n      fix: {fix}").format(
                where=_where(b),
                title=_(TITLES[b["kind"]]),
                message=shown(b["message"]),
                fix=_(b["fix"]),
            )
            for b in d["blockers"]
        ] or [_("none found")]
        verdict = d["recommendation"]
        return [
            (
                _("Recommendation: {verdict}").format(verdict=_(_VERDICTS.get(verdict, verdict))),
                [shown(d["advice"]), *map(shown, d["evidence"])],
            ),
            (_("Blockers ({count})").format(count=len(d["blockers"])), blockers),
            (_("Capture attempt"), attempt),
            (_("Eager profile"), profile),
            (_("If captured"), self._timing_lines()),
            (_("torch.compile reduce-overhead"), self._compiled_lines()),
            (_("Shapes"), self._shape_lines()),
        ]

    def _timing_lines(self) -> list[str]:
        t = self._data["timing"]
        if t is None:
            return [_("no timing: the step does not capture cleanly yet")]
        n_star = t["break_even_calls"]
        capture_ms = t["capture_us"] / 1000
        lines = [
            _(
                "per step, end to end with input copies: eager {eager:.1f} µs, "
                "replay {replay:.1f} µs"
            ).format(eager=t["eager_us"], replay=t["replay_us"]),
            _("capture {ms:.2f} ms").format(ms=capture_ms)
            if t["first_replay_us"] is None
            else _("capture {ms:.2f} ms, first replay {first:.1f} µs").format(
                ms=capture_ms, first=t["first_replay_us"]
            ),
            _("break-even: never (a replay is not faster)")
            if n_star is None
            else _("break-even after {calls:,.1f} calls").format(calls=n_star),
            _("source: {source}").format(source=shown(t["source"])),
        ]
        return lines

    def _compiled_lines(self) -> list[str]:
        c = self._data["compiled"]
        if "needs_gpu" in c:
            return [_("not run: {reason}").format(reason=shown(c["needs_gpu"]))]
        if "skipped" in c:
            return [_("not run ({reason})").format(reason=shown(c["skipped"]))]
        if "error" in c:
            return [_("failed: {error}").format(error=c["error"])]
        lines = [
            _(
                "{replays} replays over the steady calls ({partitions:g} per call), {skips} "
                "skips, {us:.1f} µs per step end to end"
            ).format(
                replays=c["replays"],
                partitions=c["partitions"],
                skips=c["skips"],
                us=c["per_step_us"],
            )
        ]
        return lines + [_("skip: {reason}").format(reason=reason) for reason in c["skip_reasons"]]

    def _shape_lines(self) -> list[str]:
        s = self._data["shapes"]
        if s["calls"] < 2:
            return [_("one example shape (give more_inputs= to see buckets and padding)")]
        return [
            _("{calls} example calls, {graphs} distinct shapes: one graph each").format(
                calls=s["calls"], graphs=s["graphs"]
            ),
            _("or one graph of {rows} rows: {padding:.0%} of rows padding").format(
                rows=s["pad_to_rows"], padding=s["padding_fraction"]
            ),
        ]

    def __str__(self) -> str:
        d = self._data
        head = (
            _("graphlab diagnose ({backend}): capturable")
            if d["capturable"]
            else _("graphlab diagnose ({backend}): not capturable as it is")
        ).format(backend=shown(d["backend"]))
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
        verdict = _("captures") if d["capturable"] else _("does not capture as it is")
        colour = "#1a7f37" if d["capturable"] else "#b35900"
        out = [
            "<div class='graphlab-diagnose'>",
            f"<h4 style='margin:0'>graphlab diagnose: <span style='color:{colour}'>"
            f"{html.escape(verdict)}</span> <small>({html.escape(shown(d['backend']))})</small>"
            "</h4>",
        ]
        sections = self.sections()
        # The recommendation first, then the blockers as a table, then the evidence.
        out.append(_html_section(*sections[0]))
        if d["blockers"]:
            rows = "".join(
                f"<tr><td><code>{html.escape(_where(b))}</code></td>"
                f"<td>{html.escape(_(TITLES[b['kind']]))}</td>"
                f"<td>{html.escape(shown(b['message']))}</td>"
                f"<td>{html.escape(_(b['fix']))}</td></tr>"
                for b in d["blockers"]
            )
            heads = (_("line"), _("blocker"), _("what happens"), _("fix"))
            out.append(
                "<table><tr>"
                + "".join(f"<th>{html.escape(head)}</th>" for head in heads)
                + f"</tr>{rows}</table>"
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
        return _("(no source line)")
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
