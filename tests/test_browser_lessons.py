"""The shipped lessons in a real JupyterLab 4 and Notebook 7: the tour, and opening them.

- The course tour, on lessons 00 and 14, in both front ends, as a new learner meets it: first
  from jupyterlab-tour's "Try the CUDA Graphs course tour" notice (lesson 14), then from the
  "Course tour" command (lesson 00). Every step must show, in order, each pointing at a target
  that is on screen, with the text for what it points at; a screenshot of each step goes to
  ``test-output/browser/``. The course's page config is the one in effect (as ``graphlab lab``
  runs it), so the test also sees that no JupyterLab news prompt and no jupyterlab-tour "Notebook
  Tour" notice appear, and that the console logs no error of the tour.
- Opening each lesson from the sidebar, letting its kernel start, and closing it leaves it
  unmodified: no ● on the tab, no "Save changes?" dialog.

The server runs this checkout's build (see ``test_browser_course.jupyter``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_browser import SERVER_START_S, TOKEN
from test_browser_course import (
    APP,
    SEEN_TOASTS_JS,
    UI_S,
    browser_page,
    jupyter,
    save,
    show_sidebar,
)

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
TOUR_LESSONS = ("14_capture_sizes.ipynb", "00_start_here.ipynb")

# The steps each lesson's tour shows: (title, words its text must hold).
STEPS = {
    "00_start_here.ipynb": [
        ("The course", "Every lesson"),
        ("Exercises", "Show solution"),
        ("Widgets", "A timeline"),
    ],
    "14_capture_sizes.ipynb": [
        ("The course", "Every lesson"),
        ("Exercises", "Show solution"),
        ("Widgets", "A capture plan"),
    ],
}
TARGETS = ["#graphlab-course-sidebar", ".graphlab-TourExercise", ".graphlab-TourWidget"]

# How much of a target lies inside the window and, for a cell, inside its notebook's visible
# part (not under the toolbar, not scrolled away): visible height in pixels, 0 when hidden.
VISIBLE_PX_JS = """(selector) => {
    const nodes = document.querySelectorAll(selector);
    if (nodes.length !== 1) return -nodes.length;
    const box = nodes[0].getBoundingClientRect();
    let top = Math.max(box.top, 0), bottom = Math.min(box.bottom, window.innerHeight);
    const scroller = nodes[0].closest('.jp-WindowedPanel-outer');
    if (scroller) {
        const view = scroller.getBoundingClientRect();
        top = Math.max(top, view.top);
        bottom = Math.min(bottom, view.bottom);
    }
    const wide = Math.min(box.right, window.innerWidth) - Math.max(box.left, 0);
    return wide > 0 && bottom > top ? bottom - top : 0;
}"""


def lesson_url(base: str, name: str, app: str) -> str:
    path = f"lab/tree/{name}" if app == "lab" else f"notebooks/{name}"
    return f"{base}/{path}?token={TOKEN}"


def walk_tour(page, lesson: str, app: str) -> None:
    """Follow the open tour to its end, checking and photographing each step."""
    tooltip = page.locator(".react-joyride__tooltip")
    steps = STEPS[lesson]
    for number, ((title, words), target) in enumerate(zip(steps, TARGETS, strict=True), 1):
        tooltip.get_by_text(title, exact=True).wait_for(timeout=UI_S * 1000)
        page.wait_for_timeout(700)  # the tooltip and the spotlight settle
        text = tooltip.inner_text()
        assert words in text, (title, text)
        last = number == len(steps)
        name = "Done" if last else f"Next (Step {number} of {len(steps)})"
        button = tooltip.get_by_role("button", name=name, exact=True)
        assert button.count() == 1, text
        assert page.evaluate(VISIBLE_PX_JS, target) >= 20, (title, target)
        save(page, f"tour_{app}_{lesson[:2]}_step{number}.png")
        button.click()
    tooltip.wait_for(state="detached", timeout=UI_S * 1000)


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_the_tour_shows_every_step_on_lessons_00_and_14(tmp_path, app):
    with jupyter(tmp_path, app=app, tour=True) as (base, root, _), browser_page() as page:
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.add_init_script(SEEN_TOASTS_JS)
        for lesson in TOUR_LESSONS:
            shutil.copy(NOTEBOOKS / lesson, root / lesson)

        # First visit: the notice offers the course tour; the learner starts it there.
        first = TOUR_LESSONS[0]
        page.goto(lesson_url(base, first, app), timeout=SERVER_START_S * 1000)
        offer = page.locator(".Toastify__toast", has_text="CUDA Graphs course tour")
        offer.wait_for(timeout=UI_S * 1000)
        offer.get_by_role("button", name="Start now").click()
        walk_tour(page, first, app)
        seen = page.evaluate("() => window.graphlabSeenToasts")

        # Then from the command, on the other lesson.
        second = TOUR_LESSONS[1]
        page.goto(lesson_url(base, second, app), timeout=SERVER_START_S * 1000)
        page.wait_for_function(
            f"() => {APP}?.shell.currentWidget?.context?.path === '{second}'"
            f" && {APP}.commands.hasCommand('jupyterlab-tour:launch')"
            f" && {APP}.shell.currentWidget.node.querySelector('.graphlab-SolutionBar')",
            timeout=UI_S * 1000,
        )
        page.evaluate(f"() => {{ {APP}.commands.execute('graphlab:tour'); }}")
        walk_tour(page, second, app)

        # Nothing else greeted the learner.
        toasts = " | ".join(seen + page.evaluate("() => window.graphlabSeenToasts"))
        assert "CUDA Graphs course tour" in toasts  # the record works: it saw the offer
        assert "Notebook Tour" not in toasts and "Welcome Tour" not in toasts, toasts
        assert page.get_by_text("official Jupyter news").count() == 0
        assert not [e for e in errors if "tour" in e.lower() or "schema" in e], errors


def test_opening_and_closing_every_lesson_leaves_it_unmodified(tmp_path):
    with jupyter(tmp_path) as (base, root, _), browser_page() as page:
        for lesson in LESSONS:
            shutil.copy(NOTEBOOKS / lesson, root / lesson)
        page.goto(f"{base}/lab?token={TOKEN}", timeout=SERVER_START_S * 1000)
        page.wait_for_function(f"() => {APP} && {APP}.commands.hasCommand('graphlab:tour')")
        show_sidebar(page)
        buttons = page.locator("#graphlab-course-sidebar .graphlab-Sidebar-open")
        buttons.nth(len(LESSONS) + 1).wait_for(timeout=UI_S * 1000)  # plus the two test ones
        for lesson in LESSONS:
            before = (root / lesson).read_bytes()
            show_sidebar(page)
            page.locator(f"#graphlab-course-sidebar button[title='Open {lesson}']").click()
            # The kernel has started and said which language it runs: the moment a lesson
            # used to turn modified.
            page.wait_for_function(
                f"() => {APP}.shell.currentWidget?.context?.path === '{lesson}'"
                f" && {APP}.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'"
                f" && {APP}.shell.currentWidget.model.getMetadata('language_info')?.version",
                timeout=SERVER_START_S * 1000,
            )
            page.wait_for_timeout(500)
            dirty = page.evaluate(f"() => {APP}.shell.currentWidget.context.model.dirty")
            tab = page.locator(".lm-DockPanel-tabBar .lm-mod-current")
            assert (lesson, dirty) == (lesson, False)
            assert "jp-mod-dirty" not in (tab.get_attribute("class") or ""), lesson
            session = page.evaluate(f"() => {APP}.shell.currentWidget.sessionContext.session.id")
            page.evaluate(f"() => {{ {APP}.commands.execute('application:close'); }}")
            page.wait_for_function(
                f"() => {APP}.shell.currentWidget?.context?.path !== '{lesson}'",
                timeout=UI_S * 1000,
            )
            assert page.locator(".jp-Dialog").count() == 0, lesson
            assert (root / lesson).read_bytes() == before, lesson
            page.evaluate(
                f"(id) => {APP}.serviceManager.sessions.shutdown(id)", session
            )  # one kernel at a time on a small machine
        save(page, "lessons_opened_and_closed.png")
