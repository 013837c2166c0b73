"""The command line in Simplified Chinese (``GRAPHLAB_LANG=zh_CN``), and in English as before.

Its help, argparse's own words included (``usage:``, ``options``, ``-h``, the usage errors), its
reports and its errors are said in Chinese; ``--json`` prints exactly what it prints in English.
Chinese is laid out by the columns a terminal gives it (two per character). In English every
help and usage error is argparse's own, byte for byte.
"""

from __future__ import annotations

import argparse
import importlib
import json

import pytest

import graphlab.support.memory
from graphlab.cli import COMMANDS, build_parser, doctor, main, plan, simulate
from graphlab.cli.columns import columns, ljust, rjust, wrap
from graphlab.cli.parsing import reworded


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "zh_CN")
    return monkeypatch


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # --help and usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------ help


def test_the_commands_help_is_chinese_with_argparses_words(chinese, capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert out.startswith(
        "用法：graphlab [-h] COMMAND ...\n\nPyTorch 中的 CUDA 图：graphlab 课程。\n"
    )
    assert "\n位置参数:\n  COMMAND\n" in out
    assert "    plan      为一组请求选择要捕获为 CUDA 图的批大小（精确最优解）。\n" in out
    assert out.endswith("\n选项:\n  -h, --help  显示此帮助信息并退出\n")


def test_a_commands_help_is_chinese_its_groups_and_usage_aligned(chinese, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "plan", "--help")
    assert code == 0
    lines = out.splitlines()
    # The usage's later lines start under the first argument: 用法： takes six columns.
    assert lines[0].startswith("用法：graphlab plan [-h] [--hist HIST.json | --requests")
    assert lines[1].startswith(" " * columns("用法：graphlab plan ") + "[--max-graphs K]")
    assert "  -h, --help            显示此帮助信息并退出" in lines
    assert "  --max-graphs K        最多捕获 K 个大小（默认 32）" in lines
    assert "连续批处理模型（配合 --requests）:" in lines
    assert "    measure             在 GPU 上测量开销表" in lines


def test_the_language_is_read_when_the_parser_is_built(chinese, capsys):
    chinese.setenv("GRAPHLAB_LANG", "en")
    assert run(capsys, "simulate", "--help")[1].startswith("usage: graphlab simulate")
    chinese.setenv("GRAPHLAB_LANG", "zh_CN")
    assert run(capsys, "simulate", "--help")[1].startswith("用法：graphlab simulate")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["simulate"], "graphlab simulate: 错误：缺少以下必需参数：--kernels, --kernel-us"),
        (
            ["plan", "--prefill", "maybe"],
            "graphlab plan: 错误：参数 --prefill：无效的取值：'maybe'（可选：'none', 'separate'）",
        ),
        (["plan", "--max-graphs", "x"], "graphlab plan: 错误：参数 --max-graphs：'x' 不是整数"),
        (
            ["plan", "--hist", "a", "--requests", "b"],
            "graphlab plan: 错误：参数 --requests：不能与参数 --hist 同时使用",
        ),
        (
            ["plan", "--s", "1"],
            "graphlab plan: 错误：选项有歧义：--s 可以匹配 --startup-s, --separate-pools, "
            "--step-ms",
        ),
        (
            ["plan", "--json=1"],
            "graphlab plan: 错误：参数 --json：此选项不接受参数值，已忽略显式给出的 '1'",
        ),
        (["record", "--only"], "graphlab record: 错误：参数 --only：至少需要一个参数值"),
        (
            ["diagnose", "--steps", "x", "a:b"],
            "graphlab diagnose: 错误：参数 --steps：无效的 int 值：'x'",
        ),
        (["doctor", "--bogus"], "graphlab: 错误：无法识别的参数：--bogus"),
        (["plan", "measure"], "graphlab plan measure: 错误：缺少以下必需参数：--out"),
    ],
)
def test_usage_errors_are_chinese_after_the_usage_with_exit_status_2(chinese, capsys, argv, said):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith("用法：graphlab")
    assert err.splitlines()[-1] == said


def test_an_unknown_command_is_named_with_the_commands_there_are(chinese, capsys):
    code, _, err = run(capsys, "nope")
    choices = ", ".join(repr(name) for name in COMMANDS)
    assert (code, err) == (
        2,
        "用法：graphlab [-h] COMMAND ...\n"
        f"graphlab: 错误：参数 COMMAND：无效的取值：'nope'（可选：{choices}）\n",
    )


# ------------------------------------------------------------------------ English as before


def english_parser(name: str, parser_class: type[argparse.ArgumentParser]):
    """``name``'s parser built of ``parser_class``: argparse's own, or graphlab's."""
    parser = parser_class(prog=f"graphlab {name}", description=COMMANDS[name].help)
    importlib.import_module(COMMANDS[name].module).add_arguments(parser)
    return parser


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_in_english_each_help_is_argparses_own(name, monkeypatch):
    monkeypatch.setenv("COLUMNS", "90")
    ours = english_parser(name, type(build_parser()))
    theirs = english_parser(name, argparse.ArgumentParser)
    assert ours.format_help() == theirs.format_help()


@pytest.mark.parametrize(
    "argv",
    [[], ["--kernels", "x"], ["--kernels", "1", "--kernel-us", "1", "--bogus"], ["--kernel"]],
)
def test_in_english_a_usage_error_is_argparses_own(argv, capsys):
    ours = english_parser("simulate", type(build_parser()))
    theirs = english_parser("simulate", argparse.ArgumentParser)
    said = []
    for parser in (ours, theirs):
        with pytest.raises(SystemExit) as exit_status:
            parser.parse_args(argv)
        said.append((exit_status.value.code, capsys.readouterr().err))
    assert said[0] == said[1]
    assert said[0][0] == 2


def test_reworded_leaves_english_and_unknown_messages_as_they_are():
    for message in (
        "argument --kernels: invalid int value: 'x'",
        "the following arguments are required: --kernels, --kernel-us",
        "argument COMMAND: invalid choice: 'a: b' (choose from 'lab', 'gaps')",
        "a message argparse never wrote",
    ):
        assert reworded(message) == message


# ---------------------------------------------------------------------------- the reports


def test_doctor_says_its_report_in_chinese_and_its_json_in_english(chinese, capsys, monkeypatch):
    monkeypatch.setattr(doctor, "NOTEBOOK_PACKAGES", (("x", "graphlab-no-such-dist"),))
    code, out, _ = run(capsys, "doctor")
    assert code == 1
    assert "\n后端        " in out and "\n录制        自带 " in out
    assert "\nx           缺失（pip install graphlab-no-such-dist）\n" in out
    chinese_json = run(capsys, "doctor", "--json")[1]
    monkeypatch.setenv("GRAPHLAB_LANG", "en")
    english_json = run(capsys, "doctor", "--json")[1]
    assert chinese_json == english_json
    assert json.loads(english_json)["packages"] == {
        "x": "missing (pip install graphlab-no-such-dist)"
    }


def test_doctors_workshop_section_in_chinese(chinese):
    workshop = {
        "learners": 24,
        "path": "gpu",
        "verdict": "unknown",
        "needed_bytes": None,
        "needed_by": "not measured yet",
        "devices": [
            {"label": "GPU 0 NVIDIA H200", "memory_bytes": 150.8e9, "learners": 12,
             "share_bytes": 12.6e9},
            {"label": "GPU 1 MIG 1g.18gb", "memory_bytes": None, "learners": 2},
        ],
        "memory_cap_gb": 12.5,
        "disk": {"path": "/home", "free_bytes": 50e9, "lessons_bytes_per_learner": 0.9e6},
        "reasons": [],
        "unknown": ["the lessons' GPU memory peaks: not measured yet"],
        "warnings": [],
    }  # fmt: skip
    assert doctor.workshop_lines(workshop) == [
        "工作坊      24 名学员，GPU：未知",
        "  需要      每名学员的课程峰值：not measured yet",
        "  设备      GPU 0 NVIDIA H200（150.8 GB）：12 名学员，每人 12.6 GB",
        "  设备      GPU 1 MIG 1g.18gb（内存未知）：2 名学员",
        "  上限      每名学员 GRAPHLAB_GPU_MEMORY_GB=12.5",
        "  磁盘      /home：剩余 50.0 GB，每名学员的课程占 0.9 MB",
        "  未知      the lessons' GPU memory peaks: not measured yet",
    ]


def test_simulate_reports_in_chinese(chinese):
    result = {
        "workload": {"kernels": 1000, "kernel_us": 2},
        "eager": {"total_us": 9000.0, "per_kernel_us": 9.0, "idle_fraction": 0.75},
        "graph": {"total_us": 3000.0, "per_kernel_us": 3.0, "idle_fraction": 0.125},
        "break_even": 12.5,
        "capture_us": 75.0,
        "calibration": {"gpu": "NVIDIA H200", "overridden": ["host_us"]},
        "params": {"host_us": 8.0, "sync_us": 4.5},
    }
    assert simulate._report(result).splitlines() == [
        "仿真：1,000 个内核，每个 2 µs",
        "  eager  总计    9,000.000 µs   每个内核     9.000 µs   GPU 空闲 75.0%",
        "  图     总计    3,000.000 µs   每个内核     3.000 µs   GPU 空闲 12.5%",
        "  盈亏平衡：N* = 12.50 步（捕获 75.0 µs）",
        "  参数（在 NVIDIA H200 上校准；手动给出：host_us）：host_us=8, sync_us=4.5",
    ]


def test_plan_reports_in_chinese(chinese):
    figures = {"expected_step_us": 12.5, "graphs": 2, "hit_rate": 0.9, "padding_waste": 0.05,
               "capture_s": 1.5, "memory_mib": 100.0}  # fmt: skip
    result = {
        "workload": {"hist": "h.json", "steps": 1000, "batch_sizes": 3, "largest_batch": 4},
        "sizes": [1, 4],
        **figures,
        "pareto": [],
        "compare": {"pow2": {**figures, "fits_budgets": False, "within_max_graphs": True}},
    }
    row = "     12.50 µs/步    2 个图  命中  90.0%  填充   5.0%  捕获    1.50 s  内存     100.0 MiB"
    assert plan.report(result).splitlines() == [
        "工作负载：h.json：1,000 个解码步，3 种批大小，最大为 4",
        "最优           " + row,
        "  大小：1, 4",
        "帕累托（每个图数量下的最佳方案）：",
        "pow2           " + row + "  (超出预算)",
    ]


def test_gaps_reports_in_chinese_and_prints_the_same_json(chinese, capsys, tmp_path):
    # Kernels [1, 2) [5, 6) [6.5, 7.5) µs on stream 7: span 6.5 µs, busy 3 µs, two gaps.
    events = [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts, "dur": 1.0,
         "args": {"stream": 7, "device": 0}}
        for ts in (1.0, 5.0, 6.5)
    ]  # fmt: skip
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    code, out, _ = run(capsys, "gaps", str(trace))
    assert code == 0
    assert out.splitlines()[1:3] == [
        "GPU 工作：1 个流上共 3 个内核",
        "  所有流：时间跨度 6.500 µs，忙碌 3.000 µs，空闲 3.500 µs（空闲 53.8%）；2 个空隙（中位数 "
        "1.750 µs，p90 2.750 µs，最大 3.000 µs）",
    ]
    chinese_json = run(capsys, "gaps", str(trace), "--json")[1]
    chinese.setenv("GRAPHLAB_LANG", "en")
    assert run(capsys, "gaps", str(trace), "--json")[1] == chinese_json


def test_running_out_of_memory_is_said_in_chinese(chinese, capsys, monkeypatch):
    def exhausted(args):
        raise MemoryError

    monkeypatch.setattr(importlib.import_module(COMMANDS["simulate"].module), "run", exhausted)
    monkeypatch.setattr(graphlab.support.memory, "available_bytes", lambda: 3 * 1024**3)
    code, out, err = run(capsys, "simulate", "--kernels", "10", "--kernel-us", "1")
    assert (code, out) == (2, "")
    assert err == "graphlab simulate: 内存不足（当前可用 3.0 GiB）：仿真更少的内核（--kernels）\n"


def test_a_commands_own_error_is_chinese(chinese, capsys):
    code, _, err = run(capsys, "diagnose", "model")
    assert (code, err) == (
        2,
        "graphlab diagnose: 'model' 不是 FILE.py:NAME 的形式：请给出一个 Python 文件及其中一个函数"
        "的名字，例如 graphlab diagnose model.py:make\n",
    )


def test_recordings_table_titles_are_chinese_and_aligned(chinese, capsys):
    code, out, _ = run(capsys, "recordings")
    assert code == 0
    title, first = out.splitlines()[:2]
    assert title.split() == ["名称", "实验", "GPU", "日期"]
    # Each title starts in the column its values start in.
    experiment = first.split()[1]
    assert columns(title[: title.index("实验")]) == first.index(f"  {experiment}") + 2


def test_progress_sums_up_in_chinese(chinese, capsys, tmp_path):
    store = tmp_path / "progress.json"
    chinese.setenv("GRAPHLAB_PROGRESS", str(store))
    code, out, _ = run(capsys, "progress")
    last = out.splitlines()[-1]
    assert code == 0
    assert last.startswith("已通过 0/") and last.endswith(f" 个练习（结果保存在 {store}）")


# ------------------------------------------------------------------------------- the magic


@pytest.fixture
def ipython():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "graphlab")
    return shell


def test_the_line_magic_speaks_chinese(chinese, ipython, capsys):
    from IPython.core.error import UsageError

    assert ipython.run_line_magic("graphlab", "") is None
    assert capsys.readouterr().out.startswith("用法：%graphlab [-h] COMMAND ...\n")
    with pytest.raises(UsageError, match=r"^`graphlab lab` 会启动 JupyterLab：请改在终端中运行$"):
        ipython.run_line_magic("graphlab", "lab")


# ------------------------------------------------------------------------------ the columns


def test_a_chinese_character_takes_two_columns():
    assert (columns("abc"), columns("内存池"), columns("GPU 空闲（%）")) == (3, 6, 13)
    assert (ljust("图", 6), rjust("捕获", 6), ljust("graph", 6)) == ("图    ", "  捕获", "graph ")
    assert ljust("too long", 3) == "too long"


def test_chinese_text_wraps_by_columns_and_keeps_punctuation_on_its_line():
    text = "每个图使用自己的内存池（内存：各池之和）；默认：共用 one shared pool"
    lines = wrap(text, 20)
    # A closing mark never starts a line, an opening one never ends it.
    assert lines == [
        "每个图使用自己的内存",
        "池（内存：各池之",
        "和）；默认：共用 one",
        "shared pool",
    ]
    assert all(columns(line) <= 20 for line in lines)
