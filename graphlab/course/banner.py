"""What a notebook prints above a result: where it came from.

- :func:`banner` prints, above a result, which backend produced it: live CUDA, the CPU emulator, a
  bundled recording (with its GPU, versions and date) or the simulator. A notebook never lets a
  reader guess where a number came from.
- :func:`live_or_recorded` runs a timing experiment live on a GPU and otherwise loads the bundled
  recording of the same experiment, printing the banner either way.
- :func:`timelines` and :func:`timings` get the eager and graph results out of either kind.
- :func:`as_recorded` turns the live banners of a notebook's stored outputs into recorded ones
  when the notebook is stored: a reader who opens it later, on another machine, must not take a
  GPU result from then and there for one from this machine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from graphlab.backend import backend
from graphlab.errors import GraphlabError
from graphlab.language import gettext as _

__all__ = ["as_recorded", "banner", "live_or_recorded", "timelines", "timings"]

LIVE = "live CUDA on "  # how a live banner starts, after its "["
# A whole printed banner line of a live run: "[live CUDA on <gpu>]" or "[... - <note>]".
_LIVE_LINE = re.compile(rf"^\[{LIVE}(?P<gpu>.+?)(?: - (?P<note>.*))?\]$", re.MULTILINE)


def _describe_recording(rec: Any) -> str:
    """The recording's own provenance line, with its name."""
    label = getattr(rec, "label", None)
    if not label:
        meta = dict(rec.meta or {})
        label = f"recorded on {meta.get('gpu', 'an unnamed GPU')} ({str(meta.get('date'))[:10]})"
    return f"{label}, recording {getattr(rec, 'name', '?')!r}"


def banner(source: Any = None, note: str = "") -> None:
    """Print one line saying which backend produced the result below it.

    ``source`` is ``None`` (the live backend of this machine), ``"live"``, ``"emulator"``,
    ``"simulated"``/``"simulator"``, or a recording object (anything with ``.meta`` and ``.name``,
    such as :func:`graphlab.recording`'s result). ``note`` is appended after a dash.
    """
    live = backend()
    if source is None or source == "live":
        if live.is_cuda:
            text = f"{LIVE}{live.gpu}"
        else:
            text = "CPU emulator: CUDA graph semantics, no timings"
    elif source == "emulator":
        text = "CPU emulator: CUDA graph semantics, no timings"
    elif source in ("simulated", "simulator"):
        text = "simulated: graphlab's discrete-event model calibrated on H200 recordings"
    elif hasattr(source, "meta"):
        text = _describe_recording(source)
    else:
        raise GraphlabError(
            _(
                "banner() does not know the source {source}: pass None, 'live', "
                "'emulator', 'simulated' or a recording."
            ).format(source=repr(source))
        )
    line = f"[{text}{' - ' + note if note else ''}]"
    print(line)
    if (source is None or source in ("live", "emulator")) and not live.is_cuda:
        _announce_emulator_differences()


_differences_announced = False


def _announce_emulator_differences() -> None:
    """Name the emulator's known differences from a GPU once, here, instead of as warnings.

    The emulator warns the first time a program relies on one of them. In a notebook those
    warnings would land in whichever later cell triggers them, and differ from the GPU's output
    there; the banner names them all up front instead and silences the repeats.
    """
    import warnings

    from graphlab.emulator import DIFFERENCES, EmulatorDifferenceWarning

    global _differences_announced
    if _differences_announced:
        return
    _differences_announced = True
    print(
        "[the emulator differs from a GPU in: "
        + ", ".join(key.replace("_", " ") for key in DIFFERENCES)
        + " (details: graphlab.emulator.DIFFERENCES)]"
    )
    warnings.filterwarnings("ignore", category=EmulatorDifferenceWarning)


def as_recorded(text: str, meta: Mapping[str, Any]) -> str:
    """``text`` (a cell's printed output) with each live banner line said as recorded.

    ``meta`` is the provenance of the run that printed it (``tools/stamp_notebooks.py`` stamps a
    stored notebook with it): its torch and CUDA versions and its date go into the line, with the
    GPU and the note the banner already named, so that
    ``[live CUDA on NVIDIA H200 - 50 steps]`` becomes ``[recorded on NVIDIA H200 (torch 2.11.0,
    CUDA 13.0) on 2026-12-03: a stored output, run the cell for this machine's - 50 steps]``.
    Every other line is left as it was.
    """
    versions = ", ".join(
        f"{name} {meta[key]}"
        for name, key in (("torch", "torch"), ("CUDA", "cuda"))
        if meta.get(key)
    )
    when = str(meta.get("date") or "")[:10]

    def recorded(line: re.Match) -> str:
        said = f"recorded on {line['gpu']}"
        said += f" ({versions})" if versions else ""
        said += f" on {when}" if when else ""
        said += ": a stored output, run the cell for this machine's"
        return f"[{said}{' - ' + line['note'] if line['note'] else ''}]"

    return _LIVE_LINE.sub(recorded, text)


def live_or_recorded(run_live: Callable[[], Any], recording: str, note: str = "") -> Any:
    """Run ``run_live()`` on a GPU, or load the bundled recording named ``recording`` elsewhere.

    Prints the banner of whichever produced the result and returns it: the live result (for
    example a :func:`graphlab.compare` result) or a recording object.
    """
    if backend().is_cuda:
        result = run_live()
        banner("live", note)
        return result
    from graphlab.timing.recordings import recording as load_recording

    rec = load_recording(recording)
    banner(rec, note)
    return rec


def timelines(result: Any) -> dict[str, Any]:
    """``{"eager": Timeline, "graph": Timeline}`` of a recording or a profiled compare() result."""
    if callable(getattr(result, "timeline", None)):
        return {mode: result.timeline(mode) for mode in ("eager", "graph")}
    found = getattr(result, "timelines", None)
    if not found:
        raise GraphlabError(
            _(
                "this result has no timelines: pass a recording, or a "
                "graphlab.compare(..., profile=True) result."
            )
        )
    return dict(found)


def timings(result: Any) -> dict[str, Any]:
    """The timing figures (µs) of a recording or a compare() result, as one dict."""
    if isinstance(getattr(result, "timings", None), dict):
        return dict(result.timings)
    return result.to_dict()
