"""The course extension in Chinese: a real JupyterLab 4 with the zh-CN language pack, in Debian's
chromium.

The first test starts JupyterLab in English and switches it the way a learner does, Settings →
Language → 中文, then checks what the learner reads after the reload: the sidebar's words and its
Chinese lessons (the course folder's ``zh_CN/``), the status bar, the solution bar, and the
course tour, step by step. The second starts JupyterLab as ``graphlab lab --lang zh_CN`` does
(its language set by the workspace's config folder, not by the learner's settings) and checks
that it opens in Chinese, the user settings untouched, and the trace viewer's words and report.

JupyterLab's server finds the extension's translations through the ``jupyterlab.locale`` entry
point of the installed package (``pip install -e '.[dev]'`` registers it), and its own through
the language pack. Screenshots go to each test's temporary folder; their paths are printed.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from test_browser import SERVER_START_S, TOKEN
from test_browser_course import (
    APP,
    LESSON,
    SEEN_TOASTS_JS,
    UI_S,
    browser_page,
    jupyter,
    open_notebook,
    show_sidebar,
    wait_restored,
    wait_until,
)

from graphlab.cli.lab import language_config

pytestmark = pytest.mark.browser

# The course's lessons in zh_CN/, titled by their Chinese headings; nothing passed yet.
LESSONS_ZH = ["01 小练习 0/1", "02 第二课 0/1"]
# JavaScript: the title of the first lesson the sidebar lists.
FIRST_TITLE = "document.querySelector('.graphlab-Sidebar-name')?.textContent"


def need_translations() -> None:
    """Fail, saying what to install, unless JupyterLab can find both translations."""
    packs = {e.name for e in entry_points(group="jupyterlab.languagepack")}
    locales = {e.name for e in entry_points(group="jupyterlab.locale")}
    if "zh_CN" not in packs or "cuda_graphlab" not in locales:
        pytest.fail(
            "JupyterLab's zh-CN language pack or graphlab's translations are not installed: "
            "pip install -e '.[dev]' (it installs the one and registers the other)"
        )


def shoot(target, folder: Path, name: str) -> None:
    folder.mkdir(exist_ok=True)
    shot = folder / name
    target.screenshot(path=str(shot))
    print(f"screenshot: {shot}")


def wait_for_command(page, command: str) -> None:
    """Wait until JupyterLab has the extension's ``command`` and has drawn its layout."""
    page.wait_for_function(
        f"() => {APP} && {APP}.commands.hasCommand('{command}')", timeout=SERVER_START_S * 1000
    )
    wait_restored(page)


def lesson_rows(page) -> list[str]:
    """The sidebar's lesson rows as a learner reads them. Read once the rows are on screen: the
    text of a row not laid out yet has no spaces between its parts (number, title, score)."""
    rows = page.locator("#graphlab-course-sidebar .graphlab-Sidebar-lesson")
    rows.last.wait_for(state="visible", timeout=UI_S * 1000)
    return [" ".join(text.split()) for text in rows.all_inner_texts()]


def test_switching_jupyterlab_to_chinese_switches_the_course(tmp_path):
    need_translations()
    shots = tmp_path / "screenshots"
    with jupyter(tmp_path, tour=True, chinese=True) as (base, _, _), browser_page() as page:
        page.add_init_script(SEEN_TOASTS_JS)
        open_notebook(page, base, LESSON.name)
        show_sidebar(page)
        sidebar = page.locator("#graphlab-course-sidebar")
        sidebar.locator(".graphlab-Sidebar-lesson").nth(1).wait_for(timeout=UI_S * 1000)
        assert sidebar.locator(".graphlab-Sidebar-title").inner_text() == "CUDA Graphs course"
        assert lesson_rows(page) == ["01 Tiny exercise 0/1", "02 Second 0/1"]

        # Settings → Language → Chinese, and JupyterLab's "change and reload" dialog.
        page.locator("#jp-MainMenu").get_by_text("Settings", exact=True).click()
        page.locator(".lm-Menu-item", has_text="Language").click()
        page.locator(".lm-Menu-item", has_text="中文").click()
        with page.expect_navigation(timeout=UI_S * 1000):
            page.locator(".jp-Dialog .jp-mod-accept").click()
        wait_for_command(page, "graphlab:tour")
        assert page.locator("#jp-MainMenu").get_by_text("设置", exact=True).is_visible()

        show_sidebar(page)
        title = sidebar.locator(".graphlab-Sidebar-title")
        title.wait_for(timeout=UI_S * 1000)
        assert title.inner_text() == "CUDA 图课程"
        wait_until(page, "document.querySelectorAll('.graphlab-Sidebar-lesson').length === 2")
        wait_until(page, f"{FIRST_TITLE} === '小练习'")
        assert lesson_rows(page) == LESSONS_ZH
        page.wait_for_function(
            "() => !document.querySelector('.graphlab-Sidebar-backend')"
            ".textContent.includes('正在查找')",
            timeout=UI_S * 1000,
        )
        backend = sidebar.locator(".graphlab-Sidebar-backend").inner_text()
        assert backend.startswith(("CPU 模拟器 · torch ", "NVIDIA")), backend
        assert sidebar.locator(".graphlab-Sidebar-overall").inner_text() == "已通过的练习：0/2"
        assert sidebar.locator(".graphlab-Sidebar-scope").inner_text().startswith("进度属于")
        status = page.locator(".graphlab-Status")
        assert status.inner_text().endswith(" · 课程 0/2")
        shoot(sidebar, shots, "sidebar_zh_CN.png")
        shoot(page.locator("#jp-main-statusbar"), shots, "status_bar_zh_CN.png")

        # The sidebar opens the Chinese lesson, whose solution bar speaks Chinese.
        sidebar.locator(".graphlab-Sidebar-open").first.click()
        wait_until(page, f"{APP}.shell.currentWidget.context.path === 'zh_CN/{LESSON.name}'")
        # The English lesson stays open in a hidden tab: look in the one shown.
        cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").filter(
            has=page.locator(".graphlab-SolutionBar")
        )
        bar = cell.locator(".graphlab-SolutionBar")
        bar.wait_for(timeout=UI_S * 1000)
        assert bar.locator("button").inner_text() == "显示参考答案"
        assert bar.locator(".graphlab-SolutionBar-label").inner_text() == (
            "练习 tiny 的参考答案（已隐藏；“运行所有”会跳过它）"
        )
        shoot(cell, shots, "solution_bar_zh_CN.png")

        # The tour: offered under its Chinese name when the reloaded page restored the lesson
        # (jupyterlab-tour's notice closes itself after 10 s, so the page's record of its
        # notices is read), then its steps in Chinese.
        page.wait_for_function(
            "() => window.graphlabSeenToasts.some((t) => t.includes('CUDA 图课程导览'))",
            timeout=UI_S * 1000,
        )
        page.evaluate(f"() => {APP}.commands.execute('graphlab:tour')")
        tooltip = page.locator(".react-joyride__tooltip")
        tooltip.get_by_text("课程", exact=True).wait_for(timeout=UI_S * 1000)
        assert "每一课，以及你已通过的练习。" in tooltip.inner_text()
        page.wait_for_timeout(500)
        shoot(page, shots, "tour_sidebar_zh_CN.png")
        tooltip.locator("button[data-action='primary']").click()
        tooltip.get_by_text("练习", exact=True).wait_for(timeout=UI_S * 1000)
        assert "直到你点击“显示参考答案”" in tooltip.inner_text()
        page.wait_for_timeout(500)
        shoot(page, shots, "tour_exercise_zh_CN.png")


def test_graphlab_lab_lang_starts_jupyterlab_in_chinese_without_the_users_settings(tmp_path):
    need_translations()
    shots = tmp_path / "screenshots"
    config = language_config(tmp_path / "workspace", "zh_CN")
    with (
        jupyter(tmp_path, chinese=True, config_path=(config,)) as (base, _, _),
        browser_page() as page,
    ):
        page.goto(f"{base}/lab?token={TOKEN}", timeout=SERVER_START_S * 1000)
        wait_for_command(page, "graphlab:open-trace")
        assert page.locator("#jp-MainMenu").get_by_text("设置", exact=True).is_visible()
        show_sidebar(page)
        wait_until(page, f"{FIRST_TITLE} === '小练习'")
        assert lesson_rows(page) == LESSONS_ZH

        # The trace viewer: its own words and the server's report in Chinese, the figures and
        # units as they are.
        page.evaluate(
            f"() => {APP}.commands.execute('docmanager:open',"
            " {path: 'traces/graph_replay.json', factory: 'CUDA graph timeline'})"
        )
        view = page.locator(".graphlab-Trace[data-graphlab-loaded='true']")
        view.wait_for(timeout=UI_S * 1000)
        report = view.locator(".graphlab-Trace-report").inner_text().splitlines()
        assert report[0] == "NVIDIA H200 上的 GPU 工作：1 个流上共 40 个内核"
        assert report[3] == "  主机：0 次内核启动，2 次图启动（跟踪中重放了 2 次）"
        status = view.locator(".graphlab-Trace-status").inner_text()
        assert status.startswith("44 个事件，打开用时 ") and status.endswith(" s"), status
        page.wait_for_timeout(500)
        shoot(view, shots, "trace_viewer_zh_CN.png")
    # The language came from the workspace's config folder: no user setting was written.
    assert not (tmp_path / "settings").exists() or not list((tmp_path / "settings").rglob("*"))
