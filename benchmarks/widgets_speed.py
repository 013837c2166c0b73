"""How long graphlab's widgets take to build big timelines, in Python (no browser).

Run: ``python benchmarks/widgets_speed.py [--browser]``. Prints, for eager+graph timeline pairs
of 1e3, 1e4, 1e5 and 1e6 kernels, the time to build the Timelines' gap summaries and the
TimelineView (its plotly FigureWidget included), the number of points sent to the browser, and
the time to draw the static PNG picture every display output carries (matplotlib, no browser).
Then, for the bundled H200 recordings, each widget's picture: time to draw it and its size as a
stored notebook holds it (base64), the budget being about 50-120 kB a picture.

With ``--browser`` it also opens each figure in Debian's chromium (python playwright, software
WebGL, no network: plotly.js is inlined) and prints how long ``Plotly.newPlot`` takes to draw
it. That is the draw alone; in a notebook the widget's binary buffers also cross the websocket.

The timelines are synthetic: fixed made-up durations (a 1 µs kernel, a 5 µs launch call), chosen
only to give the shape of an eager run and a replay; they are not GPU measurements.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

import graphlab
from graphlab.trace.timeline import Timeline
from graphlab.widgets import BreakEvenExplorer, GapView, TimelineView
from graphlab.widgets.figures import LOD_EVENTS


def synthetic_pair(n: int) -> tuple[Timeline, Timeline]:
    """An eager timeline (n launch calls, each followed by its kernel) and a replay timeline
    (one cudaGraphLaunch, n kernels back to back), with made-up durations."""
    i = np.arange(n, dtype=np.int64)
    launch_start = i * 6_000
    kernel_start = launch_start + 7_000
    eager = Timeline(
        kind=np.repeat([["launch", "kernel"]], n, axis=0).reshape(-1),
        name=np.repeat([["cudaLaunchKernel", "mul_kernel"]], n, axis=0).reshape(-1),
        start_ns=np.column_stack([launch_start, kernel_start]).reshape(-1),
        dur_ns=np.tile([5_000, 1_000], n),
        device=np.tile([-1, 0], n),
        stream=np.tile([-1, 7], n),
        thread=np.tile([1, -1], n),
        correlation=np.repeat(i, 2),
        meta={"source": "synthetic"},
    )
    graph = Timeline(
        kind=["launch", *["kernel"] * n],
        name=["cudaGraphLaunch", *["mul_kernel"] * n],
        start_ns=np.concatenate([[0], 20_000 + i * 1_300]),
        dur_ns=np.concatenate([[15_000], np.full(n, 1_000)]),
        device=np.concatenate([[-1], np.zeros(n, dtype=np.int64)]),
        stream=np.concatenate([[-1], np.full(n, 7)]),
        thread=np.concatenate([[1], np.full(n, -1)]),
        correlation=np.zeros(n + 1, dtype=np.int64),
        meta={"source": "synthetic"},
    )
    return eager, graph


# Draw the figure embedded in the page and resolve to the milliseconds Plotly.newPlot took.
DRAW_PAGE = """<!doctype html><meta charset="utf-8"><script>{plotly}</script>
<div id="plot" style="width:1400px"></div>
<script>
const figure = {figure};
window.drawMs = (async () => {{
  const t0 = performance.now();
  await Plotly.newPlot("plot", figure.data, figure.layout);
  await new Promise(requestAnimationFrame);
  return performance.now() - t0;
}})();
</script>"""


def browser_draw_ms(figures: list[go.Figure], folder) -> list[float]:
    """Milliseconds chromium takes to draw each figure (page already loaded and parsed)."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from browser.chromium import CHROMIUM, CHROMIUM_ARGS  # the browser as the UI tests start it

    plotly = get_plotlyjs()
    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 900})
        for i, figure in enumerate(figures):
            path = folder / f"draw_{i}.html"
            path.write_text(DRAW_PAGE.format(plotly=plotly, figure=figure.to_json()))
            page.goto(path.as_uri(), timeout=300_000)
            times.append(page.evaluate("window.drawMs"))
        browser.close()
    return times


def recorded_pictures() -> None:
    """Time and stored size of each widget's picture of the bundled chain recordings."""
    print("static pictures of the bundled H200 recordings (as stored: base64 in the notebook):")
    print(f"{'recording':>22} {'widget':>18} {'draw s':>7} {'stored kB':>10} {'CSS px':>9}")
    for name in ("chain_10_k4096", "chain_100_k4096", "chain_1000_k4096"):
        recording = graphlab.recording(name)
        for widget in (TimelineView(recording), GapView(recording), BreakEvenExplorer(recording)):
            t0 = time.perf_counter()
            png = widget.picture()
            drawn = time.perf_counter() - t0
            size = f"{png.width}x{png.height}"
            kind = type(widget).__name__
            print(f"{name:>22} {kind:>18} {drawn:>7.3f} {len(png.base64) / 1000:>10.1f} {size:>9}")
            widget.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--browser", action="store_true", help="also time drawing in chromium")
    args = parser.parse_args()
    # The first figure of a process pays for imports (plotly.io pulls in nbformat and jsonschema,
    # which took seconds here); measured separately so the table shows steady-state build times.
    t0 = time.perf_counter()
    warm_up = TimelineView(*synthetic_pair(10))
    cold = time.perf_counter() - t0
    print(f"first (cold) TimelineView of 10 kernels, imports included: {cold:.2f} s")
    print(
        f"{'kernels':>9} {'events':>9} {'summary s':>10} {'view s':>8} {'points':>10} "
        f"{'picture s':>10}  mode"
    )
    figures = [go.Figure(warm_up.figure)]
    for n in (1_000, 10_000, 100_000, 1_000_000):
        eager, graph = synthetic_pair(n)
        t0 = time.perf_counter()
        eager.summary(), graph.summary()
        t1 = time.perf_counter()
        view = TimelineView(eager=eager, graph=graph)
        t2 = time.perf_counter()
        points = sum(len(trace.x) for trace in view.figure.data)
        mode = "level of detail" if view.events > LOD_EVENTS else "every event"
        t3 = time.perf_counter()
        view.picture()
        drawn = time.perf_counter() - t3
        print(
            f"{n:>9,} {view.events:>9,} {t1 - t0:>10.3f} {t2 - t1:>8.3f} {points:>10,} "
            f"{drawn:>10.3f}  {mode}"
        )
        figures.append(go.Figure(view.figure))
        view.close()
    recorded_pictures()
    if args.browser:
        # One browser for all figures, the tiny one first: the first WebGL plot of a browser
        # also pays for shader compilation, which is not the figure's cost.
        with tempfile.TemporaryDirectory() as folder:
            draws = browser_draw_ms(figures, Path(folder))
        print("chromium draw (Plotly.newPlot to the next frame), after a warm-up figure:")
        for n, ms in zip((1_000, 10_000, 100_000, 1_000_000), draws[1:], strict=True):
            print(f"{n:>9,} kernels: {ms / 1000:.3f} s")


if __name__ == "__main__":
    main()
