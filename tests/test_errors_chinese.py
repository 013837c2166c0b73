"""graphlab's errors, isolated runs' explanations and the diagnosis report in Simplified Chinese.

Each test sets ``GRAPHLAB_LANG=zh_CN`` and checks a phrase of the Chinese catalog, written out
here; the English of the same messages is what the other test files check.
"""

from __future__ import annotations

import json
import signal

import pytest
import torch

from graphlab.course.languages import check_language
from graphlab.diagnose.blockers import find_blockers
from graphlab.diagnose.diagnosis import _check as check_diagnose_arguments
from graphlab.diagnose.recommend import recommend
from graphlab.diagnose.report import Report
from graphlab.diagnose.words import Text
from graphlab.editing.conditional import _check as check_loop
from graphlab.errors import GraphlabError, RecordingError, TimingError
from graphlab.failures.isolation import (
    IsolatedFailure,
    _check_timeout,
    _describe_exit,
    _result,
    _timeout_explanation,
)
from graphlab.timing.break_even import cumulative_totals
from graphlab.timing.recordings import recording


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "zh_CN")


def test_an_isolated_run_that_hangs_is_explained_in_chinese(chinese):
    with pytest.raises(IsolatedFailure) as caught:
        _result(None, "", True, None, 3.0)
    failure = caught.value
    assert str(failure).startswith("隔离运行没有在 3 s 内完成，已被停止\n演示卡住了，已被停止")
    assert failure.explanation.seen == "3 s 后仍没有结果"
    assert "你自己的 Python 会话没有受到影响。" in failure.explanation.fix
    assert _timeout_explanation(5).title == "演示卡住了，已被停止"


def test_a_crashed_isolated_run_is_explained_in_chinese(chinese):
    assert _describe_exit(-signal.SIGKILL) == "被信号 SIGKILL 终止"
    assert _describe_exit(3) == "退出状态 3"
    with pytest.raises(IsolatedFailure) as caught:
        _result(None, "", False, -signal.SIGKILL, 3.0)
    assert str(caught.value).startswith("隔离进程没有返回就结束了：被信号 SIGKILL 终止\n")
    assert caught.value.explanation.title == "演示所在的进程崩溃了"


def test_an_outcome_that_cannot_come_back_is_explained_in_chinese(chinese):
    with pytest.raises(IsolatedFailure) as caught:
        _result(("unpicklable", "TypeError: no"), "", False, 0, 3.0)
    assert str(caught.value).startswith("函数已运行完毕，但它的结果无法发回（TypeError: no）")
    explanation = caught.value.explanation
    assert explanation.title == "无法从子进程发回结果"
    assert explanation.fix == "请改为返回普通数据（数字、列表、字典、CPU 张量）。"


def test_a_bad_time_limit_is_refused_in_chinese(chinese):
    with pytest.raises(GraphlabError, match="timeout=-1 不是时间限制：请以大于零的数字给出"):
        _check_timeout(-1)


def _diagnosis(blockers, timing, recommendation, advice, evidence):
    profile = {
        "source": "torch.profiler, eager calls back to back",
        "kernels_per_step": 4.0,
        "idle_fraction": 0.5,
        "launch_bound": True,
        "widest_gaps": [],
    }
    return {
        "capturable": not blockers,
        "blockers": blockers,
        "kernels": 4,
        "eager_us": None,
        "replay_us": None,
        "break_even_calls": None,
        "recommendation": recommendation,
        "advice": advice,
        "evidence": evidence,
        "backend": Text("CPU emulator + simulator"),
        "profile": profile,
        "capture": {"captured": False, "error": "CaptureError: no", "explanation": "x"},
        "timing": timing,
        "compiled": {"skipped": "compile=False"},
        "expected_calls": 1000,
        "shapes": {"calls": 1},
    }


def test_the_diagnosis_report_speaks_chinese_and_its_data_stays_english(chinese):
    scan = find_blockers(lambda x: x.sum().item(), [torch.ones(3)])
    blockers = [b.to_dict() for b in scan.blockers]
    assert [b["kind"] for b in blockers] == ["host-sync"]
    profile = {"kernels_per_step": 4.0, "idle_fraction": 0.5, "source": "s"}
    verdict, advice, evidence = recommend(blockers, profile, None, None, 1000)
    report = Report(_diagnosis(blockers, None, verdict, advice, evidence))
    text = str(report)
    assert text.startswith("graphlab diagnose（CPU 模拟器 + 仿真器）：按现状无法捕获\n建议：分段\n")
    assert "  修复下面的阻碍即可得到整图；在此之前，先捕获它们之间的部分" in text
    assert "  每步 4 个内核，GPU 空闲时间占这一步的 50%（s）" in text
    assert "阻碍（1）\n" in text
    assert "主机同步：.item()：把一个值从 GPU 复制到主机内存并等待它" in text
    assert "\n      修复：在重放之后读取结果，而不是在捕获期间" in text
    assert "如果捕获\n  没有计时：这一步还不能干净地捕获" in text
    assert "只有一种示例形状（传入 more_inputs= 可查看桶和填充）" in text
    assert "<th>会发生什么</th>" in report._repr_html_()
    # --json writes the same English whatever the language.
    data = json.loads(json.dumps(report.to_dict()))
    assert data["advice"].startswith("Fix the blockers below for a full graph;")
    assert data["blockers"][0]["message"].startswith(".item() copies a value from the GPU")
    assert data["backend"] == "CPU emulator + simulator"


def test_the_diagnosis_of_a_capturable_step_speaks_chinese(chinese):
    profile = {"kernels_per_step": 1.0, "idle_fraction": 0.5, "source": "s"}
    timing = {
        "source": Text("measured with graphlab.compare (median of 20 repeats, end to end)"),
        "eager_us": 30.0,
        "replay_us": 10.0,
        "capture_us": 2000.0,
        "first_replay_us": None,
        "break_even_calls": 100.0,
    }
    verdict, advice, evidence = recommend([], profile, timing, None, 1000)
    assert advice.shown() == "捕获整个步骤：每次调用节省 20.0 µs，在 100 次调用后收回成本。"
    assert evidence[-1].shown() == "捕获的开销在 100 次调用后收回"
    report = Report(_diagnosis([], timing, verdict, advice, evidence))
    lines = report._timing_lines()
    assert lines[0] == "每步端到端（含输入复制）：eager 30.0 µs，重放 10.0 µs"
    assert lines[2] == "盈亏平衡点在 100.0 次调用之后"
    assert lines[3] == "来源：用 graphlab.compare 测得（重复 20 次取中位数，端到端）"


def test_diagnose_refuses_bad_arguments_in_chinese(chinese):
    with pytest.raises(
        GraphlabError, match=r"diagnose 需要一个可调用的函数或 nn\.Module，而不是 int"
    ):
        check_diagnose_arguments(3, [torch.ones(1)], 10, 1000)
    with pytest.raises(GraphlabError, match="steps 必须是至少为 1 的整数，而不是 0"):
        check_diagnose_arguments(abs, [torch.ones(1)], 0, 1000)


def test_timing_and_recording_errors_speak_chinese(chinese, tmp_path):
    with pytest.raises(TimingError, match="步数必须是有限的非负数"):
        cumulative_totals(1.0, 2.0, 1.0, -1)
    with pytest.raises(
        RecordingError, match="中没有名为 'nope' 的录制；可用的有：还没有（请在 GPU 上"
    ):
        recording("nope", tmp_path)


def test_course_and_editing_errors_speak_chinese(chinese):
    with pytest.raises(GraphlabError, match="课程没有语言 'fr'：请使用 en, zh_CN 之一"):
        check_language("fr")
    with pytest.raises(GraphlabError, match=r"tol 是 0：请使用正的容差，例如 1e-4"):
        check_loop(8, 0, 10)
