"""The course notebooks' structure: the lessons the course lists, each with its question,
exercises whose solutions wait behind the ``%%solution`` magic and whose checkers exist, a warm-up
before every capture, a summary, links derived from the one repository URL in pyproject.toml, and
tracked files that running a lesson does not churn."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from graphlab import checks, course
from graphlab.errors import GraphlabError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSONS = [
    "00_start_here.ipynb",
    "01_kernel_gaps.ipynb",
    "02_static_inputs.ipynb",
    "03_outputs.ipynb",
    "04_randomness.ipynb",
    "05_dynamic_shapes.ipynb",
    "06_does_it_pay.ipynb",
    "07_training.ipynb",
    "08_memory.ipynb",
    "09_multi_stream.ipynb",
    "10_torch_compile.ipynb",
    "11_full_vs_piecewise.ipynb",
    "12_changing_a_graph.ipynb",
    "13_nccl.ipynb",
    "14_capture_sizes.ipynb",
    "15_debugging_capture.ipynb",
    "16_your_own_model.ipynb",
]


def load(name: str):
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.fixture(params=[name for name in LESSONS if (NOTEBOOKS / name).exists()])
def lesson(request):
    return request.param, load(request.param)


def test_every_lesson_of_the_course_exists():
    missing = [name for name in LESSONS if not (NOTEBOOKS / name).exists()]
    assert missing == []


def test_lesson_opens_with_its_number_question_and_what_you_will_see(lesson):
    name, nb = lesson
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.startswith(f"# Lesson {name[:2]} — ")
    assert "**The question.**" in first.source
    assert "**What you will see.**" in first.source


def test_lesson_ends_with_a_summary(lesson):
    _, nb = lesson
    last_markdown = [c for c in nb.cells if c.cell_type == "markdown"][-1]
    assert last_markdown.source.startswith("## Summary")


def test_exercises_hide_their_solution_behind_the_solution_magic(lesson):
    """A visible stub raising NotImplementedError, then the collapsed solution, which starts with
    ``%%solution <checker>`` so that it runs only when revealed (or under the test configuration),
    then a cell calling that checker."""
    name, nb = lesson
    cells = nb.cells
    solutions = [i for i, c in enumerate(cells) if c.metadata.get("graphlab", {}).get("role")]
    assert solutions, f"{name} has no exercise"
    for i in solutions:
        stub, solution, check = cells[i - 1], cells[i], cells[i + 1]
        exercise = solution.metadata["graphlab"]["exercise"]
        assert solution.metadata["graphlab"] == {"role": "solution", "exercise": exercise}
        assert exercise in checks.__all__
        assert solution.metadata["jupyter"] == {"source_hidden": True}
        assert solution.metadata["tags"] == ["solution"]
        assert solution.source.split("\n", 1)[0] == f"%%solution {exercise}"
        assert "NotImplementedError" not in solution.source
        assert stub.cell_type == "code" and "raise NotImplementedError" in stub.source
        assert "graphlab" not in stub.metadata
        assert check.cell_type == "code" and f"{exercise}(" in check.source


def test_no_cell_keeps_the_exercise2_convention(lesson):
    name, nb = lesson
    for cell in nb.cells:
        assert not {"solution2", "solution2_first"} & set(cell.metadata), name
        assert "hide-cell" not in cell.metadata.get("tags", []), name
        assert "exercise2" not in cell.source, name
        is_solution = cell.metadata.get("graphlab", {}).get("role") == "solution"
        assert cell.source.startswith("%%solution") == is_solution, name


def test_lesson_loads_the_extension_in_its_setup_cell(lesson):
    # The cell after the install cell defines %%solution for every exercise below it.
    _, nb = lesson
    assert code_cells(nb)[1].source.startswith("%load_ext graphlab\n")


def test_every_capture_is_warmed_up_on_a_side_stream(lesson):
    name, nb = lesson
    for cell in code_cells(nb):
        if re.search(r"with (torch\.)?cuda\.graph\(", cell.source):
            warmed = re.search(r"warm_up\(|cuda\.stream\(side\)", cell.source)
            assert warmed, f"{name}: a capture without a warm-up:\n{cell.source}"


def test_every_checker_is_used_by_a_lesson_and_exists():
    used = set()
    for name in LESSONS:
        for cell in code_cells(load(name)):
            used |= set(re.findall(r"from graphlab\.checks import (check_\w+)", cell.source))
    assert used == set(checks.__all__)


def test_checked_cells_print_no_addresses_or_stderr(lesson):
    name, nb = lesson
    for cell in code_cells(nb):
        assert "NBVAL_CHECK_OUTPUT" not in cell.source  # the cell tag replaces the comment
        if "nbval-check-output" not in cell.metadata.get("tags", []):
            continue
        for out in cell.get("outputs", []):
            assert out.get("name") != "stderr", f"{name}: a checked cell writes to stderr"
            assert out.output_type != "error", f"{name}: a checked cell stored an error"
            assert not re.search(r"0x[0-9a-f]{6,}", str(out.get("text", "")))


def test_lesson_files_stay_small_and_carry_no_per_run_metadata(lesson):
    # Running a lesson elsewhere must not rewrite the tracked file for nothing: the kernel's Python
    # version lives in metadata.graphlab (tools/stamp_notebooks.py), and cells carry no timestamps.
    name, nb = lesson
    assert (NOTEBOOKS / name).stat().st_size < 1_000_000
    assert "version" not in nb.metadata.get("language_info", {})
    assert all("execution" not in cell.metadata for cell in nb.cells)


def test_stored_outputs_name_no_installation_path(lesson):
    name, nb = lesson
    for cell in code_cells(nb):
        for out in cell.get("outputs", []):
            text = str(out.get("text", "")) + str(out.get("data", {}).get("text/plain", ""))
            assert "site-packages" not in text, f"{name}: a stored output names a machine path"


@pytest.mark.parametrize("name", [LESSONS[i] for i in (2, 3, 4, 7, 8)])
def test_lesson_draws_a_static_picture_with_matplotlib(name):
    sources = [cell.source for cell in code_cells(load(name))]
    assert any("import matplotlib.pyplot as plt" in s and "plt.show()" in s for s in sources)


def test_install_cell_and_colab_badge_come_from_the_repository_url(lesson):
    name, nb = lesson
    assert code_cells(nb)[0].source == course.install_cell_source()
    slug = course.repository_url().removeprefix("https://github.com/")
    badge = f"(https://colab.research.google.com/github/{slug}/blob/main/notebooks/{name})"
    assert badge in nb.cells[0].source


def test_refresh_links_rewrites_badge_and_install_cell_for_a_new_url():
    nb = load(LESSONS[2])
    new_url = "https://github.com/someone-else/fork"
    assert course.refresh_links(nb, LESSONS[2], new_url) is True
    assert code_cells(nb)[0].source.count("git+https://github.com/someone-else/fork") == 1
    assert (
        "https://colab.research.google.com/github/someone-else/fork/blob/main/notebooks/"
        "02_static_inputs.ipynb" in nb.cells[0].source
    )
    assert course.refresh_links(nb, LESSONS[2], new_url) is False  # already up to date


def test_install_cell_never_reinstalls_torch():
    source = course.install_cell_source("https://github.com/a/b")
    assert '"--no-deps", "git+https://github.com/a/b"' in source
    assert "torch" not in source.replace("importlib", "")
    assert 'find_spec("graphlab") is None' in source


def test_readme_lines_list_binder_and_a_colab_badge_per_lesson():
    spec = importlib.util.spec_from_file_location("badges", ROOT / "tools" / "badges.py")
    badges = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(badges)
    titles = {name: badges.title(load(name)) for name in LESSONS[:2]}
    lines = badges.readme_lines(titles)
    slug = course.repository_url().removeprefix("https://github.com/")
    assert lines[0] == (
        "[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/"
        f"{slug}/main?urlpath=lab/tree/notebooks/00_start_here.ipynb)"
    )
    assert lines[4].startswith("| [Lesson 00 — Start here](notebooks/00_start_here.ipynb) | ")
    assert f"colab.research.google.com/github/{slug}/blob/main/notebooks/01_kernel_gaps" in lines[5]
    chinese = badges.readme_lines(titles, {"zh_CN/00_start_here.ipynb": "第 00 课 — 从这里开始"})
    assert chinese[:6] == lines
    assert chinese[6:10] == ["", "简体中文 (Simplified Chinese):", "", "| 课 | 打开 |"]
    assert chinese[11] == (
        "| [第 00 课 — 从这里开始](notebooks/zh_CN/00_start_here.ipynb) | [![Open In Colab]"
        "(https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research."
        f"google.com/github/{slug}/blob/main/notebooks/zh_CN/00_start_here.ipynb) |"
    )


def test_a_non_github_url_is_refused_with_advice():
    with pytest.raises(GraphlabError, match=r"not https://github.com/OWNER/NAME"):
        course.colab_badge("00_start_here.ipynb", "https://gitlab.com/a/b")


def test_readme_and_notebooks_links_match_the_repository_url():
    # One edit of [project.urls] Repository, then tools/badges.py, updates every link; --check
    # fails (exit 1) when the README block or a notebook's badge no longer matches that URL.
    spec = importlib.util.spec_from_file_location("badges", ROOT / "tools" / "badges.py")
    badges = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(badges)
    assert badges.main(["--check"]) == 0
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert course.colab_badge("08_memory.ipynb") in readme
    assert badges.readme_with_lessons(
        "a <!-- lessons:start -->old<!-- lessons:end --> z", ["x"]
    ) == ("a <!-- lessons:start -->\nx\n<!-- lessons:end --> z")
