"""What the widgets accept, and the one line that says where the numbers came from.

A widget takes a Timeline, a bundled recording (anything with ``.timeline("eager"|"graph")``) or a
``graphlab.compare`` result (anything with a ``.timelines`` mapping). The course never shows a
timing without saying whether it is a live GPU run, a recording, or the simulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _
from graphlab.trace.timeline import Timeline

__all__ = ["TITLES", "banner", "describe_source", "pick_timelines"]

# Translated where they are shown (pick_timelines): the language is read again for each view.
TITLES = {"eager": N_("eager"), "graph": N_("graph replay")}


def describe_source(meta: Mapping[str, Any]) -> str:
    """A short provenance line for a banner, from a timeline's meta.

    A recording's timelines carry the recording's own ``label`` (GPU, driver, torch, date); else
    the line says which kind of source it was.
    """
    if meta.get("label"):
        return str(meta["label"])
    source = meta.get("source")
    gpu = meta.get("gpu")
    if source == "recording":
        if gpu:
            return _("recording from {gpu}").format(gpu=gpu)
        return _("recording from an unnamed GPU")
    if source == "kineto":
        if gpu:
            return _("profiled on {gpu}").format(gpu=gpu)
        return _("profiled (torch.profiler trace)")
    if source == "simulator":
        if meta.get("calibration"):
            return _("simulator (calibrated to recordings): a model of the GPU, not a measurement")
        return _("simulator (hand-set parameters): a model of the GPU, not a measurement")
    if source == "emulator":
        return _("CPU emulator: the order of work only, never GPU timings")
    return _("source not recorded")


def banner(meta: Mapping[str, Any]) -> str:
    """The provenance line cut to fit above a plot panel: a recording's full label (driver,
    torch, command) is long, so its banner names the recording and GPU; the full line is in the
    summary table."""
    if meta.get("recording") and meta.get("label"):
        if meta.get("gpu"):
            return _("recording {name} on {gpu}").format(name=meta["recording"], gpu=meta["gpu"])
        return _("recording {name} on a GPU").format(name=meta["recording"])
    return describe_source(meta)


def _one(value: Any, which: str, owner: str) -> Timeline | None:
    """The ``which`` timeline out of a Timeline, a recording or a compare() result."""
    if value is None or isinstance(value, Timeline):
        return value
    if callable(getattr(value, "timeline", None)):
        timeline: Timeline | None = value.timeline(which)
        return timeline
    timelines = getattr(value, "timelines", None)
    if isinstance(timelines, Mapping):
        found: Timeline | None = timelines.get(which)
        return found
    raise GraphlabError(
        _(
            "{owner}({which}=...) takes a graphlab Timeline, a recording "
            "(graphlab.recording(name)) or a graphlab.compare() result, not {kind}"
        ).format(owner=owner, which=which, kind=type(value).__name__)
    )


def pick_timelines(
    eager: Any = None, graph: Any = None, owner: str = "TimelineView"
) -> list[tuple[str, Timeline, str]]:
    """``[(title, timeline, source line), ...]`` for the given inputs, eager first.

    A recording or compare() result passed as ``eager`` alone supplies both timelines.
    """
    if graph is None and eager is not None and not isinstance(eager, Timeline):
        graph = eager
    picked: list[tuple[str, Timeline, str]] = []
    for which, value in (("eager", eager), ("graph", graph)):
        timeline = _one(value, which, owner)
        if timeline is not None:
            source = describe_source(timeline.meta)
            picked.append((_(TITLES[which]), timeline, source))
    if not picked:
        raise GraphlabError(
            _(
                "{owner} needs something to show: pass eager=<Timeline> and/or "
                "graph=<Timeline>, or eager=graphlab.recording(name)"
            ).format(owner=owner)
        )
    return picked
