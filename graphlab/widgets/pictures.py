"""Static PNG pictures of the widgets, drawn with matplotlib, for where no widget can run.

A stored notebook is read where no kernel runs: JupyterLab opening an untrusted notebook,
nbconvert's HTML, GitHub. There a widget's live view cannot draw, so every widget also hands over
a PNG of the same picture (see :mod:`graphlab.widgets.display`). It is drawn with matplotlib's
Agg canvas: no browser, no network, nothing but the wheel ``pip`` installed, and no pyplot state,
so a learner's own ``%matplotlib`` backend is left alone.

A picture is laid out in CSS pixels, measured from its top-left corner, with fonts sized in the
same pixels; the PNG holds :data:`SCALE` device pixels per CSS pixel so it stays sharp on
high-density screens, and the display metadata gives the CSS size.

In Chinese (``GRAPHLAB_LANG=zh_CN``) a picture's words are Chinese, which DejaVu Sans has no
glyphs for: matplotlib then falls back, character by character, to the first Chinese font of
:data:`CJK_FAMILIES` installed (Noto Sans CJK comes with most Linux desktops). Where none is,
the picture is drawn all the same, its Chinese characters as empty boxes, and graphlab says so
once, in one warning that names the fix, instead of matplotlib's warning for every missing glyph.
A Chinese font installed in one weight only (WenQuanYi Zen Hei, Droid Sans Fallback) draws the
Chinese characters of a bold title in its regular weight; matplotlib (from 3.11) says so in a log
line that a notebook prints under the cell. The picture is right as drawn, so graphlab leaves
that line out while it draws.
"""

from __future__ import annotations

import base64
import io
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from PIL import Image

from graphlab.language import gettext as _
from graphlab.language import language

from .wrapping import wrap

if TYPE_CHECKING:  # matplotlib.typing is new in matplotlib 3.8; graphlab runs on 3.7
    from matplotlib.typing import ColorType, RcKeyType

__all__ = [
    "CJK_FAMILIES",
    "FONT",
    "LINE",
    "MIN_OPACITY",
    "SCALE",
    "Canvas",
    "Png",
    "cjk_family",
    "coverage",
    "drawing",
    "shade",
]

SCALE = 2
FONT = 10  # px, body text
LINE = 14  # px, one line of body text
MIN_OPACITY = 0.15
EMPTY_BELOW = 1e-6
# One CSS px is one point at 72 dpi, so a 10 px font is matplotlib's 10 pt.
_DPI = 72 * SCALE

# Text from trace files (GPU names, labels) must never be read as matplotlib's $math$ markup.
_STYLE: dict[RcKeyType, Any] = {
    "text.parse_math": False,
    "font.family": "DejaVu Sans",
    "font.size": FONT,
    "axes.edgecolor": "#bbbbbb",
    "axes.linewidth": 0.8,
    "xtick.color": "#444444",
    "ytick.color": "#444444",
    "xtick.major.size": 3,
    "ytick.major.size": 0,
}

# Fonts with the Chinese characters, the first one installed serves (see the module's doc).
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "Noto Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Microsoft YaHei",
    "PingFang SC",
    "Hiragino Sans GB",
    "SimHei",
    "Droid Sans Fallback",
)
# Words in the file names of those fonts, to find one installed after matplotlib's font cache
# was written (matplotlib reads the system's fonts only when it writes the cache).
_CJK_FILES = ("cjk", "sourcehan", "notosanssc", "wqy", "msyh", "pingfang", "hiragino", "simhei",
              "droidsansfallback")  # fmt: skip


@cache
def cjk_family() -> str | None:
    """The first of :data:`CJK_FAMILIES` matplotlib can draw with, None where none is installed."""

    def found() -> str | None:
        names = {font.name for font in font_manager.fontManager.ttflist}
        return next((family for family in CJK_FAMILIES if family in names), None)

    if (family := found()) is not None:
        return family
    for path in font_manager.findSystemFonts():
        if any(word in Path(path).name.lower() for word in _CJK_FILES):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # a font file FreeType cannot read
                continue
    return found()


@cache
def _no_chinese_font() -> None:
    """Say once per process that the pictures cannot draw Chinese here, and what to install."""
    warnings.warn(
        _(
            "no Chinese font is installed, so the PNG pictures of the widgets show Chinese "
            "characters as empty boxes (the live figures are not affected): install one, for "
            "example with apt-get install fonts-noto-cjk, then restart the kernel"
        ),
        UserWarning,
        stacklevel=4,
    )


def _style() -> dict[RcKeyType, Any]:
    """The pictures' style in the language now: in Chinese, a Chinese font behind DejaVu Sans."""
    if language() != "zh_CN" or (family := cjk_family()) is None:
        return _STYLE
    return {**_STYLE, "font.family": [_STYLE["font.family"], family]}


@dataclass(frozen=True)
class Png:
    """A PNG file's bytes and the size in CSS pixels to show it at."""

    data: bytes
    width: int
    height: int

    @property
    def base64(self) -> str:
        """The bytes as a notebook stores an ``image/png`` output."""
        return base64.b64encode(self.data).decode("ascii")

    @property
    def metadata(self) -> dict[str, int]:
        """Display metadata: show the image at its CSS size (it holds SCALE times the pixels)."""
        return {"width": self.width, "height": self.height}


def _not_a_weight_fallback(record: logging.LogRecord) -> bool:
    """False for matplotlib's log line about a font without the weight asked for (see the
    module's doc): a one-weight Chinese font drawing a bold title in its regular weight."""
    return not str(record.msg).startswith("findfont: Failed to find font weight")


def drawing(function: Callable[..., Png]) -> Callable[..., Png]:
    """Run a picture-drawing function under the pictures' matplotlib style."""

    @wraps(function)
    def draw(*args: Any, **kwargs: Any) -> Png:
        fonts = logging.getLogger("matplotlib.font_manager")
        fonts.addFilter(_not_a_weight_fallback)
        try:
            with matplotlib.rc_context(_style()), warnings.catch_warnings():
                if language() == "zh_CN" and cjk_family() is None:
                    _no_chinese_font()
                    warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
                return function(*args, **kwargs)
        finally:
            fonts.removeFilter(_not_a_weight_fallback)

    return draw


class Canvas:
    """A ``width`` x ``height`` CSS-pixel figure; axes, text and swatches placed in pixels from
    the top-left corner."""

    def __init__(self, width: int, height: int):
        self.width, self.height = int(width), int(height)
        self.figure = Figure(figsize=(self.width / 72, self.height / 72), dpi=_DPI)
        self.canvas = FigureCanvasAgg(self.figure)
        # A full-figure overlay whose data units are CSS pixels, y pointing down: text and
        # swatches go here.
        self.overlay = self.figure.add_axes((0, 0, 1, 1), zorder=3)
        self.overlay.set_axis_off()
        self.overlay.set_xlim(0, self.width)
        self.overlay.set_ylim(self.height, 0)

    def axes(self, left: float, top: float, width: float, height: float) -> Axes:
        """Plot axes covering the given pixel box."""
        w, h = self.width, self.height
        return self.figure.add_axes((left / w, 1 - (top + height) / h, width / w, height / h))

    def text(self, x: float, y: float, text: str, **style: Any) -> Text:
        """One line of text with its top-left corner (or ``ha``/``va`` anchor) at pixel (x, y)."""
        style = {"fontsize": FONT, "va": "top", "ha": "left", "color": "#222222", **style}
        return self.overlay.text(x, y, text, **style)

    def lines(self, x: float, y: float, lines: list[str], **style: Any) -> float:
        """Lines of text one below the other from (x, y); returns the y below the last one."""
        for line in lines:
            self.text(x, y, line, **style)
            y += LINE
        return y

    def paragraph(self, x: float, y: float, text: str, width: float, **style: Any) -> float:
        """``text`` wrapped to ``width`` pixels from (x, y); returns the y below it."""
        return self.lines(x, y, wrap(text, width, style.get("fontsize", FONT)), **style)

    def titled(self, x: float, y: float, title: str, rest: str, width: float) -> float:
        """A bold ``title`` then `` · rest`` on the same line, ``rest`` wrapped under it to
        ``width``; returns the y below."""
        bold = self.text(x, y, title, fontweight="bold")
        used = self.text_width(bold)
        lines = wrap(f"· {rest}", width, FONT, first_line_used_px=used + 4)
        self.text(x + used + 4, y, lines[0])
        return self.lines(x, y + LINE, lines[1:])

    def text_width(self, text: Text) -> float:
        """Width in CSS pixels of a drawn text."""
        return text.get_window_extent(self.canvas.get_renderer()).width / SCALE

    def swatch(
        self, x: float, y: float, colour: ColorType, label: str, edge: ColorType | None = None
    ) -> float:
        """A 10 px colour square and its label, left edge at x, centred on y; returns the x
        after it."""
        self.overlay.add_patch(
            Rectangle((x, y - 5), 10, 10, facecolor=colour, edgecolor=edge or colour, lw=0.8)
        )
        label_text = self.text(x + 14, y, label, va="center")
        return x + 14 + self.text_width(label_text) + 16

    def png(self) -> Png:
        """The finished picture, on white, in at most 256 colours: a third of the bytes of a
        full-colour PNG, with no visible change to flat-coloured plots and text.

        It is drawn while the learner waits for the widget, so the PNG is written at zlib's
        default level: Pillow's ``optimize`` tries the highest, which takes as long as the
        quantizing (about 80 ms for a timeline) for 5-15% fewer bytes. The quantizer is median
        cut, slow as it is: the octree one, ten times faster, merges the light grey grid lines
        into the white around them."""
        self.canvas.draw()
        rgb = Image.fromarray(np.asarray(self.canvas.buffer_rgba())).convert("RGB")
        palette = rgb.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        buffer = io.BytesIO()
        palette.save(buffer, format="PNG")
        return Png(buffer.getvalue(), self.width, self.height)


def coverage(start: np.ndarray, end: np.ndarray, x0: float, x1: float, pixels: int) -> np.ndarray:
    """The fraction of each of ``pixels`` equal columns of ``[x0, x1]`` covered by intervals.

    Exact for any number of intervals, in O((n + pixels) log n): the busy time up to t is
    ``sum(min(t, e) - s for s < t) - ...``, computed at every column edge from the sorted starts
    and ends and their running sums; a column's coverage is the difference across it. Intervals
    that overlap count twice, so the result is clipped to 1. A kernel far narrower than a pixel
    thus shows as a faint column rather than vanishing or filling the pixel.
    """
    edges = np.linspace(x0, x1, pixels + 1)
    if len(start) == 0 or x1 <= x0:
        return np.zeros(pixels)

    def time_before(points: np.ndarray, t: np.ndarray) -> np.ndarray:
        """sum over points p < t of (t - p)."""
        points = np.sort(points)
        running = np.concatenate(([0.0], np.cumsum(points)))
        count = np.searchsorted(points, t, side="left")
        before: np.ndarray = count * t - running[count]
        return before

    busy = time_before(np.asarray(start, float), edges) - time_before(np.asarray(end, float), edges)
    cover: np.ndarray = np.clip(np.diff(busy) / (edges[1] - edges[0]), 0.0, 1.0)
    # The running sums carry rounding errors of ~1e-16 of the total; a column covered less than
    # a millionth (a kernel of 1 ns in a 1 ms column) is empty.
    cover[cover < EMPTY_BELOW] = 0.0
    return cover


def shade(
    axes: Axes,
    cover: np.ndarray,
    x0: float,
    x1: float,
    y0: float,
    y1: float,
    colour: ColorType,
    zorder: float = 2,
) -> None:
    """Draw ``cover`` (one value per pixel column, 0 to 1) as a band from y0 to y1 of
    ``colour`` whose opacity is the coverage times the colour's own.

    A column with any coverage at all is at least :data:`MIN_OPACITY` of the colour: a 1 µs
    kernel in a 10 ms picture stays visible as a faint line instead of vanishing.
    """
    red, green, blue, alpha = to_rgba(colour)
    row = np.empty((1, len(cover), 4))
    row[..., :3] = (red, green, blue)
    row[..., 3] = alpha * np.where(cover > 0, MIN_OPACITY + (1 - MIN_OPACITY) * cover, 0.0)
    axes.imshow(row, extent=(x0, x1, y1, y0), aspect="auto", interpolation="nearest", zorder=zorder)
