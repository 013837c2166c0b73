"""TimelineView's static picture: the same panels, lanes, idle shading and legend as the live
figure, with the summary table beside them, drawn by matplotlib into a PNG.

Each lane is drawn as its *coverage*: one column per device pixel, as opaque as the share of that
pixel's time the lane was busy (:func:`graphlab.widgets.pictures.coverage`). That is exact for a
million events as for three, and it shows what the live view shows at full zoom-out: an eager
GPU lane of short kernels with long gaps comes out pale, a replay's packed kernels solid.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from graphlab.language import gettext as _

from .figures import (
    BAR_PX,
    COLOURS,
    GAP_COLOUR,
    GAP_EDGE,
    LEGEND_LABELS,
    X_TITLE,
    Panel,
    banner_lines,
    full_range,
    legend_entries,
)
from .pictures import FONT, LINE, SCALE, Canvas, Png, coverage, drawing, shade
from .wrapping import wrap

__all__ = ["timeline_picture"]

# Layout in CSS pixels, left to right: lane labels, plot, gutter, summary table.
LABELS_PX = 100
PLOT_PX = 480
GUTTER_PX = 28
TABLE_PX = 360
TABLE_LABEL_PX = 180
RIGHT_PX = 12
WIDTH_PX = LABELS_PX + PLOT_PX + GUTTER_PX + TABLE_PX + RIGHT_PX
PAD_PX = 10
LEGEND_PX = 24
LANE_PX = 26
PANEL_GAP_PX = 10
AXIS_PX = 38  # tick labels and the axis title under the last panel
ROW_PX = 18
# A bar fills the same share of its lane as in the live figure.
BAR_SHARE = BAR_PX / 30


@drawing
def timeline_picture(
    panels: Sequence[Panel],
    cells: list[list[str]],
    table_notes: list[str],
    footnote: str | None = None,
    heading: str | None = None,
) -> Png:
    """The panels with the summary table (``cells``: header row first) and ``table_notes``
    under it, ``footnote`` across the bottom and ``heading`` across the top."""
    heading_lines = wrap(heading, WIDTH_PX - 2 * PAD_PX, FONT) if heading else []
    foot_lines = wrap(footnote, WIDTH_PX - 2 * PAD_PX - 12, FONT) if footnote else []
    banners = [banner_lines(p) for p in panels]
    lanes = [max(1, len(p.lane_labels)) for p in panels]
    top = PAD_PX + len(heading_lines) * LINE
    plot_px = sum(
        len(b) * LINE + 4 + n * LANE_PX + PANEL_GAP_PX for b, n in zip(banners, lanes, strict=True)
    )
    left_px = LEGEND_PX + plot_px + AXIS_PX
    notes = [wrap(note, TABLE_PX, FONT - 1) for note in table_notes]
    table_px = len(cells) * ROW_PX + 8 + sum(len(n) * LINE + 4 for n in notes)
    foot_px = len(foot_lines) * LINE + 16 if foot_lines else 0
    height = top + max(left_px, table_px) + foot_px + PAD_PX

    canvas = Canvas(WIDTH_PX, height)
    canvas.lines(PAD_PX, PAD_PX, heading_lines, fontweight="bold")
    _legend(canvas, legend_entries(panels), LABELS_PX, top + LEGEND_PX / 2)
    y: float = top + LEGEND_PX
    x0, x1 = full_range(panels)
    for i, (panel, lines, n) in enumerate(zip(panels, banners, lanes, strict=True)):
        y = _banner(canvas, panel.title, lines, y) + 4
        axes = canvas.axes(LABELS_PX, y, PLOT_PX, n * LANE_PX)
        _panel(axes, panel, n, x0, x1, last=i == len(panels) - 1)
        y += n * LANE_PX + PANEL_GAP_PX
    _table(canvas, cells, notes, LABELS_PX + PLOT_PX + GUTTER_PX, top)
    if foot_lines:
        _footnote(canvas, foot_lines, height - PAD_PX - foot_px + 8)
    return canvas.png()


def _legend(canvas: Canvas, keys: list[str], x: float, y: float) -> None:
    for key in keys:
        if key == "idle":
            x = canvas.swatch(x, y, GAP_COLOUR_RGBA, _(LEGEND_LABELS[key]), edge=GAP_EDGE_RGBA)
        else:
            x = canvas.swatch(x, y, COLOURS[key], _(LEGEND_LABELS[key]))


def _banner(canvas: Canvas, title: str, lines: list[str], y: float) -> float:
    """The panel's banner lines (title bold); returns the y below them."""
    first, *rest = lines
    bold = canvas.text(LABELS_PX, y, title, fontweight="bold")
    canvas.text(LABELS_PX + canvas.text_width(bold), y, first[len(title) :])
    return canvas.lines(LABELS_PX, y + LINE, rest)


def _panel(axes: Axes, panel: Panel, lanes: int, x0: float, x1: float, last: bool) -> None:
    """One timeline: idle shading under the GPU lanes, then every track's coverage."""
    pixels = PLOT_PX * SCALE
    gpu = panel.gpu_lanes or [0]
    # The shading spans the GPU lanes less a sliver, as in the live figure.
    inset = 2 / LANE_PX
    shade(
        axes,
        coverage(panel.gap_start_us, panel.gap_end_us, x0, x1, pixels),
        x0, x1, gpu[0] - 0.5 + inset, gpu[-1] + 0.5 - inset, GAP_COLOUR_RGBA, zorder=1,
    )  # fmt: skip
    half = BAR_SHARE / 2
    for track in panel.tracks:
        shade(
            axes,
            coverage(track.start_us, track.end_us, x0, x1, pixels),
            x0, x1, track.lane - half, track.lane + half, COLOURS[track.group],
        )  # fmt: skip
    axes.set_xlim(x0, x1)
    axes.set_ylim(lanes - 0.5, -0.5)
    axes.set_yticks(range(len(panel.lane_labels)), panel.lane_labels)
    axes.grid(axis="x", color="#eeeeee", linewidth=0.8, zorder=0)
    axes.set_axisbelow(True)
    for side in ("top", "right", "left"):
        axes.spines[side].set_visible(False)
    axes.tick_params(axis="x", labelbottom=last, length=3 if last else 0)
    if last:
        axes.set_xlabel(_(X_TITLE))


def _table(
    canvas: Canvas, cells: list[list[str]], notes: list[list[str]], x: float, y: float
) -> None:
    """The summary table (header bold), a rule under each row, then the notes."""
    columns = len(cells[0]) - 1
    width = (TABLE_PX - TABLE_LABEL_PX) / max(1, columns)
    for r, (label, *values) in enumerate(cells):
        weight = "bold" if r == 0 else "normal"
        canvas.text(x, y + 2, label, fontweight=weight)
        for c, value in enumerate(values):
            right = x + TABLE_LABEL_PX + (c + 1) * width
            canvas.text(right, y + 2, value, ha="right", fontweight=weight)
        y += ROW_PX
        canvas.overlay.plot([x, x + TABLE_PX], [y - 1, y - 1], color="#e6e6e6", lw=0.8)
    y += 8
    for lines in notes:
        y = canvas.lines(x, y, lines, fontsize=FONT - 1, color="#555555") + 4


def _footnote(canvas: Canvas, lines: list[str], y: float) -> None:
    """A note across the bottom on a pale amber band with an amber rule on its left."""
    height = len(lines) * LINE + 8
    canvas.overlay.fill_between(
        [PAD_PX, WIDTH_PX - PAD_PX], y - 4, y - 4 + height, color="#fff8e1", lw=0
    )
    canvas.overlay.plot([PAD_PX, PAD_PX], [y - 4, y - 4 + height], color="#e0a100", lw=3)
    canvas.lines(PAD_PX + 10, y, lines)


def _rgba(plotly_colour: str) -> tuple[float, float, float, float]:
    """A plotly ``rgba(r, g, b, a)`` string as matplotlib's (0-1) tuple."""
    r, g, b, a = (float(v) for v in plotly_colour.removeprefix("rgba(").rstrip(")").split(","))
    return r / 255, g / 255, b / 255, a


GAP_COLOUR_RGBA = _rgba(GAP_COLOUR)
GAP_EDGE_RGBA = _rgba(GAP_EDGE)
