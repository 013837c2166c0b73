"""Real-browser tests: graphlab's widgets in JupyterLab, and their stored pictures, in Debian's
chromium.

Live: starts ``jupyter lab`` on 127.0.0.1 (a free port, a token, a temporary root and config),
opens ``tests/browser/widgets_demo.ipynb``, runs every cell, and checks that the plots were drawn
(a plotly WebGL canvas, lane labels and the legend on screen, no text cut off at a figure's
edge), that moving the simulator playground's *kernels* slider with the keyboard redraws the
timeline with more kernels, and that dragging a zoom box over a level-of-detail view makes the
kernel send back the single bars of the zoomed range.

Stored: ``tests/browser/saved_pictures.ipynb`` is executed as the lessons are stored (no widget
state), then read where no widget can run: its nbconvert HTML opened with every network request
refused, and the notebook opened in JupyterLab untrusted, with no kernel. Both must show the
widgets' PNG pictures.

Screenshots go to ``test-output/browser/`` (ignored by git); their paths are printed. Needs
``/usr/bin/chromium`` (``apt-get install chromium``, as CI does) and python playwright. No
network is used: JupyterLab serves every asset itself, plotly's widget code ships in its wheel.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from browser.chromium import need_chromium, new_page
from browser.stored import execute_as_stored
from nbconvert import HTMLExporter
from right_answers import repoint_by_hand

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = Path(__file__).with_name("browser") / "widgets_demo.ipynb"
SCREENSHOTS = ROOT / "test-output" / "browser"
TOKEN = "graphlab-browser-test"
# Generous: the first cell pays for imports (plotly, torch) in a fresh kernel on a busy machine.
SERVER_START_S = 120
CELLS_S = 300
REDRAW_S = 60

# JavaScript: is the open notebook's kernel started and idle? (JupyterLab exposes its app object
# as window.jupyterapp when started with --LabApp.expose_app_in_browser.)
KERNEL_IDLE_JS = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle';
}"""

# JavaScript: have all three plots (TimelineView, playground, level-of-detail view) drawn a WebGL
# canvas and lane labels?
ALL_DRAWN_JS = """() => {
    const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
    const drawn = (p) => p.querySelector('canvas') && p.querySelector('.yaxislayer-above text');
    // As a learner scrolls down to each picture: with JupyterLab's default windowing mode
    // (contentVisibility) the browser may skip rendering cells out of view, so the first picture
    // not drawn yet, or else the last cell while pictures are missing, is brought into view.
    const waiting = plots.find((p) => !drawn(p));
    const cells = document.querySelectorAll('.jp-Notebook .jp-Cell');
    const next = waiting || (plots.length < 3 ? cells[cells.length - 1] : null);
    if (next) next.scrollIntoView({block: 'center'});
    return plots.length >= 3 && !waiting;
}"""

# JavaScript: texts of every plot (titles, banners, legends, tick labels) that reach outside the
# plot's figure, as [text, how far out in px].
CUT_OFF_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(plot => {
    const figure = plot.querySelector('.main-svg').getBoundingClientRect();
    return Array.from(plot.querySelectorAll('.infolayer text, .annotation text, .legend text'))
        .map(t => [t.textContent, t.getBoundingClientRect()])
        .map(([text, r]) => [text, Math.max(figure.left - r.left, r.right - figure.right,
                                            figure.top - r.top, r.bottom - figure.bottom)])
        .filter(([text, out]) => out > 0.5);
})"""

# JavaScript: what each output of the open notebook shows: its MIME type, and for a picture the
# width its PNG decoded to (0 if it did not load).
OUTPUTS_JS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-output')).map(o => {
    const img = o.querySelector('img');
    return [o.dataset.mimeType || null, img ? img.naturalWidth : null, o.innerText.trim()];
})"""

# JavaScript: is each cell of the open notebook trusted, and which kernel does it have?
TRUST_JS = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    return [Array.from(panel.content.model.cells).map(c => c.trusted),
            panel.sessionContext.kernelDisplayName];
}"""

# JavaScript: the trace data plotly drew in the n-th plot on the page.
GPU_BARS_JS = """([plot, name]) => {
    const gd = document.querySelectorAll('.js-plotly-plot')[plot];
    if (!gd || !gd.data) return -1;
    const trace = gd.data.find(t => t.name === name && (t.xaxis || 'x') === 'x');
    return trace ? trace.x.length / 3 : -1;
}"""


def wait_for_server(proc: subprocess.Popen, runtime: Path, log: Path) -> str:
    """The base URL of the Jupyter server ``proc`` once it answers.

    The server is started on port 0 and takes a free port as it binds, which it writes in its
    runtime folder (``jpserver-<pid>.json``): a port chosen beforehand could be taken by another
    test's server before this one bound it, and the page would then talk to that server.
    """
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        found = list(runtime.glob("jpserver-*.json"))
        try:
            base = f"http://127.0.0.1:{json.loads(found[0].read_text())['port']}"
            with urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=5) as r:
                if r.status == 200:
                    return base
        except (IndexError, ValueError, KeyError, OSError):  # not written yet, or no answer
            time.sleep(0.5)
    pytest.fail(f"jupyter lab did not answer within {SERVER_START_S} s:\n{log.read_text()[-3000:]}")


def start_lab(tmp: Path, notebook: Path, *options: str) -> tuple[subprocess.Popen, Path, Path]:
    """JupyterLab (as ``graphlab lab`` starts it) on loopback with a token, its root (holding a
    copy of ``notebook``), config, data and settings all under ``tmp``. A fresh data folder
    holds no notebook signatures, so a notebook counts as trusted only once its cells run in
    this session."""
    root = tmp / "root"
    root.mkdir()
    shutil.copy(notebook, root / notebook.name)
    env = os.environ | {
        "JUPYTER_CONFIG_DIR": str(tmp / "config"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
    }
    # No "get Jupyter news?" or "try the tour" toasts over the plots: switch those off.
    labconfig = tmp / "config" / "labconfig"
    labconfig.mkdir(parents=True)
    (labconfig / "page_config.json").write_text(
        '{"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": true,'
        ' "jupyterlab-tour": true}}'
    )
    log = tmp / "jupyter.log"
    command = [
        sys.executable, "-m", "graphlab.cli.lab_server", "--no-browser",
        "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly", "--ServerApp.allow_root=True", *options,
    ]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    return proc, tmp / "runtime", log


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


def in_lab(tmp: Path, notebook: Path, steps, *options: str) -> None:
    """Start JupyterLab with ``notebook``, open it in chromium and run ``steps(page, base)``;
    a screenshot of the whole page is saved if they fail."""
    need_chromium()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    proc, runtime, log = start_lab(tmp, notebook, *options)
    try:
        base = wait_for_server(proc, runtime, log)
        with new_page(1400, 1100) as page:
            page.goto(
                f"{base}/lab/tree/{notebook.name}?token={TOKEN}", timeout=SERVER_START_S * 1000
            )
            try:
                steps(page)
            except BaseException:
                shot = SCREENSHOTS / f"failure_{steps.__name__}.png"
                page.screenshot(path=str(shot), full_page=True)
                print(f"screenshot at failure: {shot}")
                raise
    finally:
        stop(proc)


def test_widgets_render_in_jupyterlab_and_redraw_on_slider(tmp_path):
    in_lab(tmp_path, NOTEBOOK, drive)


def wait_kernel_idle(page) -> None:
    """Wait until the open notebook's kernel is started and idle, before running a cell.

    A cell run while the notebook has no kernel yet (its start still under way on a loaded
    machine) can make JupyterLab ask which kernel to start, in a "Select Kernel" dialog that
    holds back every later dialog until answered (seen on CI); a learner waits for the kernel
    indicator, and so does the test.
    """
    page.wait_for_function(KERNEL_IDLE_JS, timeout=SERVER_START_S * 1000)


def drive(page) -> None:
    # Wait until the notebook's kernel is up, then run every cell. The command's promise is not
    # awaited here (evaluate has no timeout of its own); the plots appearing is what we wait for.
    wait_kernel_idle(page)
    started = time.monotonic()
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(ALL_DRAWN_JS, polling=250, timeout=CELLS_S * 1000)
    print(f"run all cells to all plots drawn: {time.monotonic() - started:.1f} s")
    page.wait_for_timeout(1000)  # let plotly finish its layout pass before the screenshot

    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert "Traceback" not in " ".join(errors.all_inner_texts())
    assert page.get_by_text("Error displaying widget").count() == 0

    # The TimelineView: WebGL canvas, lane labels and panel banners on screen.
    timeline = page.locator(".js-plotly-plot").nth(0)
    assert timeline.locator("canvas").count() > 0
    labels = timeline.locator(".yaxislayer-above text").all_text_contents()
    assert labels.count("host") == 2 and labels.count("stream 7") == 2, labels
    assert timeline.locator(".yaxislayer-above text", has_text="stream 7").first.is_visible()
    assert timeline.get_by_text("graph replay", exact=True).is_visible()
    assert page.locator(".graphlab-summary").first.is_visible()
    legend = timeline.locator(".legendtext").all_text_contents()
    assert legend == ["host launch call", "host sync (waits for the GPU)", "GPU work", "GPU idle"]
    assert page.evaluate(CUT_OFF_JS) == []
    # The kernel ran these cells, so the notebook is trusted and the live widgets show, not the
    # PNG pictures that travel in the same outputs.
    assert page.locator(".jp-OutputArea-output[data-mime-type='image/png']").count() == 0

    save(page.locator(".jp-CodeCell").nth(0), "timeline_view.png")

    # The playground starts with 4 kernels per timeline: 4 bars in the eager GPU lane.
    bars = ("stream 0: GPU work",)
    assert page.evaluate(GPU_BARS_JS, [1, *bars]) == 4
    slider = page.locator(".widget-slider", has=page.get_by_text("kernels", exact=True))
    slider.locator(".noUi-handle").focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"(args) => ({GPU_BARS_JS})(args) === 7", arg=[1, *bars], timeout=REDRAW_S * 1000
    )
    assert slider.locator(".widget-readout").inner_text().strip() == "7"
    page.wait_for_timeout(500)
    save(page.locator(".jp-CodeCell").nth(1), "playground.png")

    # Level of detail: 10,000 kernels 1 µs apart merge into one bar at the full view. Drag a
    # zoom box over a few pixels; the widget's zoom callback in the kernel sends the detail back.
    lod = ("stream 7: GPU work",)
    assert page.evaluate(GPU_BARS_JS, [2, *lod]) == 1
    plot_area = page.locator(".js-plotly-plot").nth(2).locator(".nsewdrag").first
    plot_area.scroll_into_view_if_needed()
    box = plot_area.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 100, y)
    page.mouse.down()
    page.mouse.move(box["x"] + 106, y, steps=3)
    page.mouse.move(box["x"] + 112, y, steps=3)
    page.mouse.up()
    page.wait_for_function(
        f"(args) => ({GPU_BARS_JS})(args) > 100", arg=[2, *lod], timeout=REDRAW_S * 1000
    )
    print(f"bars after zooming in: {page.evaluate(GPU_BARS_JS, [2, *lod])}")
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] + 150)  # no hover box
    page.wait_for_timeout(1000)
    save(page.locator(".jp-CodeCell").nth(2), "level_of_detail_zoomed.png")


SLOW_LOAD = Path(__file__).with_name("browser") / "slow_load.ipynb"
# JavaScript: anywidget gives a widget's browser code 2 s (AbortSignal.timeout(2000)) to load and
# drops the messages that reach the widget after that. Cut the wait to nothing, as on a machine
# where plotly's 5 MB of widget code loads slower than 2 s; every other timeout keeps its length.
NO_WAIT_JS = """() => {
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    AbortSignal.timeout = (ms) => timeout(ms === 2000 ? 0 : ms);
}"""
# What anywidget logs when that wait runs out.
FAILED_TO_INITIALIZE = "[anywidget] Failed to initialize model."
# JavaScript: each plot's traces, its x values over all traces, and its lane labels, as drawn.
PLOTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((gd) => [
    gd.data.length,
    gd.data.reduce((n, t) => n + (t.x ? t.x.length : 0), 0),
    Array.from(gd.querySelectorAll('.yaxislayer-above text')).map((t) => t.textContent),
])"""

# JavaScript: where the third plot (the break-even explorer) draws its N* marker; null while it
# is not drawn (a figure drawn afresh replaces the old one).
N_STAR_JS = """() => {
    const gd = document.querySelectorAll('.js-plotly-plot')[2];
    return gd && gd.data ? gd.data[2].x[0] : null;
}"""


def test_widgets_draw_when_their_code_loads_slower_than_anywidget_waits(tmp_path):
    in_lab(tmp_path, SLOW_LOAD, drive_slow_load)


def drive_slow_load(page) -> None:
    import graphlab
    from graphlab.widgets import BreakEvenExplorer, GapView, TimelineView

    # What the kernel draws, worked out here from the same recording.
    recording = graphlab.recording("chain_10_k4096")
    figures = [w.figure for w in (TimelineView(recording), GapView(recording))]
    explorer = BreakEvenExplorer(recording)
    expected = [
        (len(f.data), sum(len(t.x) for t in f.data if t.x is not None))
        for f in (*figures, explorer.figure)
    ]
    dropped = []
    page.on("console", lambda m: dropped.append(m.text) if "anywidget" in m.text else None)
    page.on("pageerror", lambda e: dropped.append(str(e)) if "anywidget" in str(e) else None)

    wait_kernel_idle(page)
    page.evaluate(NO_WAIT_JS)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(
        "() => document.querySelectorAll('.js-plotly-plot').length === 3",
        timeout=CELLS_S * 1000,
    )
    page.wait_for_timeout(1000)
    plots = page.evaluate(PLOTS_JS)
    assert [(traces, xs) for traces, xs, _ in plots] == expected
    assert plots[0][2].count("host") == 2, plots[0][2]
    assert page.evaluate(N_STAR_JS) == pytest.approx(explorer.n_star, rel=1e-12)
    save(page.locator(".jp-CodeCell").nth(0), "timeline_view_slow_load.png")

    # A slider's redraw is a message too, dropped as well: the figure hears no answer and is drawn
    # afresh, as the kernel now has it, in a new plot. The old plot is marked to tell them apart.
    page.evaluate("() => { document.querySelectorAll('.js-plotly-plot')[2].dataset.old = '1'; }")
    explorer.capture.value += explorer.capture.step
    slider = page.locator(".widget-slider", has=page.get_by_text("capture C (µs)", exact=True))
    slider.locator(".noUi-handle").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"""(n) => {{
            const gd = document.querySelectorAll('.js-plotly-plot')[2];
            return gd && !gd.dataset.old && Math.abs(({N_STAR_JS})() - n) < 1e-9 * n;
        }}""",
        arg=explorer.n_star,
        timeout=REDRAW_S * 1000,
    )
    save(page.locator(".jp-CodeCell").nth(2), "break_even_slow_load.png")
    # A new plot proves the edit went unanswered. anywidget logs its failure when something waits
    # on a model whose wait ran out, so how many times varies from run to run; nothing else failed.
    assert set(dropped) == {FAILED_TO_INITIALIZE}, dropped


def save(element, name: str) -> None:
    """Screenshot of one notebook cell (scrolled into view), its path printed."""
    shot = SCREENSHOTS / name
    element.screenshot(path=str(shot))
    print(f"screenshot: {shot}")


# ------------------------------------------------------------------ the stored pictures


@pytest.fixture(scope="module")
def saved_notebook(tmp_path_factory) -> Path:
    return execute_as_stored(tmp_path_factory.mktemp("saved"))


# TimelineView's picture is 980 CSS px wide, GapView's 600: PNGs of 2 device pixels each.
PNG_WIDTHS = [2 * 980, 2 * 600]


def test_nbconvert_html_shows_the_pictures_offline(saved_notebook, tmp_path):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page_html, _ = HTMLExporter().from_notebook_node(nbformat.read(saved_notebook, as_version=4))
    path = tmp_path / "saved_pictures.html"
    path.write_text(page_html, encoding="utf-8")
    refused = []

    def offline(route) -> None:
        # Only the file itself may load: every other request (the template's require.js and
        # MathJax from their CDN) is refused, as on a machine with no network.
        if route.request.url == path.as_uri():
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with new_page(1200, 900) as page:
        page.route("**/*", offline)
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        widths = page.evaluate(
            "() => Array.from(document.images).map(i => i.complete ? i.naturalWidth : 0)"
        )
        assert widths == PNG_WIDTHS
        assert page.locator("img").nth(0).is_visible()
        shot = SCREENSHOTS / "nbconvert_offline.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}; refused: {refused}")
    assert not any("plot.ly" in url or "plotly" in url for url in refused)


def test_jupyterlab_shows_the_pictures_of_an_untrusted_notebook_without_a_kernel(
    saved_notebook, tmp_path
):
    def no_kernel(page) -> None:
        # JupyterLab offers no kernel (the server allows none): pick "No Kernel".
        page.locator(".jp-Dialog button", has_text="No Kernel").click(timeout=SERVER_START_S * 1000)
        page.wait_for_function(
            f"() => ({OUTPUTS_JS})().filter(o => o[1] > 0).length === 2",
            timeout=REDRAW_S * 1000,
        )
        trusted, kernel = page.evaluate(TRUST_JS)
        assert kernel == "No Kernel" and not any(trusted)
        outputs = page.evaluate(OUTPUTS_JS)
        assert [(mime, width) for mime, width, _ in outputs] == [
            ("image/png", w) for w in PNG_WIDTHS
        ]
        text = page.locator(".jp-Notebook").inner_text()
        assert "Loading widget" not in text and "model not found" not in text
        page.wait_for_timeout(500)
        save(page.locator(".jp-CodeCell").nth(0), "untrusted_no_kernel_timeline.png")
        save(page.locator(".jp-CodeCell").nth(1), "untrusted_no_kernel_gaps.png")

    in_lab(tmp_path, saved_notebook, no_kernel, "--KernelSpecManager.allowed_kernelspecs=['none']")


# ------------------------------------------------------------------ lesson 14's PlanView

LESSON_14 = ROOT / "notebooks" / "14_capture_sizes.ipynb"
# JavaScript: the plotly figure of the open lesson's PlanView (its front trace's name), or null.
PLAN_VIEW_JS = """Array.from(document.querySelectorAll('.js-plotly-plot')).find(
    p => p.data && p.data.some(t => t.name === 'best plan per graph count')) || null"""


def test_lesson_14_draws_the_plan_view_and_its_dropdown_switches_the_axis(tmp_path):
    in_lab(tmp_path, LESSON_14, drive_lesson_14)


def drive_lesson_14(page) -> None:
    wait_kernel_idle(page)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(f"() => !!({PLAN_VIEW_JS})", timeout=CELLS_S * 1000)
    page.wait_for_timeout(1000)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert "Traceback" not in " ".join(errors.all_inner_texts())
    assert page.get_by_text("Error displaying widget").count() == 0
    drawn = page.evaluate(
        f"""() => {{
        const gd = {PLAN_VIEW_JS};
        return [gd.querySelectorAll('.scatterlayer .point').length,
                gd.querySelectorAll('.barlayer .point').length,
                Array.from(gd.querySelectorAll('.textpoint text')).map(t => t.textContent)];
    }}"""
    )
    points, bars, labels = drawn
    # The lesson's mix at twice the trace's rate has batch sizes 1 to 78, all of them occurring.
    assert bars == 78 and points > 78
    assert labels == ["plan", "vllm", "sglang", "trtllm", "tgi", "pow2"]
    assert page.evaluate(CUT_OFF_JS) == []
    cell = page.locator(".jp-CodeCell", has=page.locator(".js-plotly-plot").last)
    assert cell.get_by_text("recorded on NVIDIA H200").count() == 1
    save(cell, "plan_view.png")
    cell.locator("select").select_option("memory")
    # While the widget redraws, the search can briefly find no figure: null until it is back.
    page.wait_for_function(
        f"() => ({PLAN_VIEW_JS})?.layout.xaxis.type === 'log'", timeout=REDRAW_S * 1000
    )
    save(cell, "plan_view_memory.png")


LESSON_12 = ROOT / "notebooks" / "12_changing_a_graph.ipynb"
# Two answers a learner types into lesson 12's exercise cell in place of the stub: first a graph
# of their own that never updates the given one, then a right one in another style than the
# lesson's solution (capture_begin/capture_end on a stream of their own).
LESSON_12_WRONG = """def repoint(graph, fn, new_x):
    source = cuda.CUDAGraph(keep_graph=True)
    with cuda.graph(source):
        out = fn(new_x)
    source.replay()
    return out, source"""
LESSON_12_RIGHT = inspect.getsource(repoint_by_hand).replace("repoint_by_hand", "repoint")
# JavaScript: give cell ``index`` of the open notebook the source ``text`` and run it.
# The notebook draws only the cells in view (JupyterLab's windowed notebook), so cells are found
# through the notebook's model and scrolled to before they are run or read.
RUN_CELL_JS = """async ([index, text]) => {
    const notebook = window.jupyterapp.shell.currentWidget.content;
    if (text !== null) notebook.widgets[index].model.sharedModel.setSource(text);
    notebook.activeCellIndex = index;
    await notebook.scrollToItem(index, 'start');
    await window.jupyterapp.commands.execute('notebook:run-cell');
}"""
STUB_INDEX_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets.findIndex(
    (cell) => cell.model.sharedModel.getSource().includes('raise NotImplementedError'))"""

# Every cell's outputs, drawn or not, as the notebook's model holds them (JSON, one per cell).
ALL_OUTPUTS_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets
    .map((cell) => (cell.model.outputs ? JSON.stringify(cell.model.outputs.toJSON()) : ''))
    .join('\\n')"""


def drawn_cell(page, index: int):
    """The cell at ``index`` of the notebook, as drawn (it must be in view)."""
    return page.locator(f'.jp-Notebook .jp-Cell[data-windowed-list-index="{index}"]')


def test_lesson_12_as_a_learner_runs_it_and_answers_wrong_then_right(tmp_path):
    in_lab(tmp_path, LESSON_12, drive_lesson_12)


def answer_and_check(page, stub: int, answer: str) -> str:
    """Run ``answer`` in the exercise cell, then the check cell; the check's output text."""
    page.evaluate(RUN_CELL_JS, [stub, answer])
    page.wait_for_function(KERNEL_IDLE_JS, timeout=CELLS_S * 1000)
    page.evaluate(RUN_CELL_JS, [stub + 2, None])  # after the hidden solution cell
    page.wait_for_function(KERNEL_IDLE_JS, timeout=CELLS_S * 1000)
    return drawn_cell(page, stub + 2).locator(".jp-OutputArea").inner_text()


def drive_lesson_12(page) -> None:
    wait_kernel_idle(page)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.get_by_text("not attempted yet").wait_for(timeout=CELLS_S * 1000)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=CELLS_S * 1000)
    outputs = page.evaluate(ALL_OUTPUTS_JS)
    assert '"output_type":"error"' not in outputs
    assert "recorded on NVIDIA H200" in outputs  # the costs table's source, on this CPU machine
    stub = page.evaluate(STUB_INDEX_JS)
    assert stub > 0, "lesson 12 has no exercise cell"
    wrong = answer_and_check(page, stub, LESSON_12_WRONG)
    assert wrong.startswith("repoint: not right yet")
    assert "still wrote its own output" in wrong
    assert "Reread: lesson 12_changing_a_graph, section 2" in wrong
    assert "Traceback" not in wrong
    save(drawn_cell(page, stub + 2), "lesson_12_wrong_answer.png")
    right = answer_and_check(page, stub, LESSON_12_RIGHT)
    assert right.startswith("PASSED replays of the given graph"), right
