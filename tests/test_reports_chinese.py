"""The planner's, the trace reader's, the simulator's, the workshop's and the emulator's words in
Simplified Chinese (GRAPHLAB_LANG=zh_CN), while their data and JSON stay English."""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime

import pytest

import graphlab.emulator as emulator
from graphlab.course.syllabus import lessons
from graphlab.diagnose.words import Text, shown
from graphlab.errors import NeedsGPUError, PlannerError, SimulatorError, TraceError
from graphlab.planner import Constraints, Histogram, recorded_costs
from graphlab.planner.inputs import load_costs
from graphlab.simulator.calibration_check import format_table
from graphlab.simulator.programs import model_step
from graphlab.support.nvidia_smi import Gpu, Inventory
from graphlab.trace.events import EventTable
from graphlab.trace.kineto import load_trace
from graphlab.workshop.hub_progress import LearnerProgress, table_lines
from graphlab.workshop.instructor_view import page
from graphlab.workshop.peaks import LessonPeak, Peaks, Section
from graphlab.workshop.readiness import Facts, TorchView, assess


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "zh_CN")


# --- the planner ---


def test_an_empty_histogram_is_refused_in_chinese(chinese):
    with pytest.raises(PlannerError) as caught:
        Histogram.from_dict({"8": 0})
    assert str(caught.value) == "直方图中没有任何步数：请至少给出一个正的计数"


def test_a_missing_cost_table_names_the_file_in_chinese(chinese, tmp_path):
    path = tmp_path / "costs.json"
    with pytest.raises(PlannerError) as caught:
        load_costs(path)
    assert str(caught.value) == f"成本表文件 {path} 不存在：请检查路径"


def test_a_negative_cost_says_where_in_chinese(chinese, tmp_path):
    path = tmp_path / "costs.json"
    table = {"sizes": [1], "replay_us": [-1], "eager_us": [1], "capture_s": [1], "graph_mib": [1]}
    path.write_text(json.dumps(table))
    with pytest.raises(PlannerError) as caught:
        load_costs(path)
    assert str(caught.value) == (f"{path}：成本表的 replay_us[0]（大小 1）是 -1.0：成本不能为负")


def test_a_budget_that_is_not_a_number_in_chinese(chinese):
    with pytest.raises(PlannerError) as caught:
        Constraints(max_graphs=0)
    assert str(caught.value) == "图的最大数量是 0：请至少允许 1 个（--max-graphs 1 或更多）"


def test_the_recorded_cost_tables_provenance_in_chinese(chinese):
    label = recorded_costs().label
    assert label.startswith("录制于 NVIDIA H200（驱动 ")
    assert "），命令为 `graphlab plan measure --model decoder --sizes 1-256`" in label


def test_the_recorded_cost_tables_provenance_stays_english_in_english(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "en")
    assert recorded_costs().label.startswith("recorded on NVIDIA H200 (driver ")


# --- the trace reader ---


def test_an_empty_trace_path_in_chinese(chinese):
    with pytest.raises(TraceError) as caught:
        load_trace("")
    assert str(caught.value) == "跟踪的路径为空：请传入跟踪的 .json 文件"


def test_a_missing_trace_file_says_how_to_record_one_in_chinese(chinese, tmp_path):
    path = tmp_path / "trace.json"
    with pytest.raises(TraceError) as caught:
        load_trace(path)
    assert str(caught.value).startswith(f"{path}：没有这个文件；请用 torch.profiler 录制一份：")


def test_a_folder_is_not_a_trace_in_chinese(chinese, tmp_path):
    with pytest.raises(TraceError) as caught:
        load_trace(tmp_path)
    assert str(caught.value) == f"{tmp_path}：是一个文件夹，不是普通文件；请传入跟踪的 .json 文件"


def test_json_without_trace_events_in_chinese(chinese, tmp_path):
    path = tmp_path / "trace.json"
    path.write_text('{"other": 1}')
    with pytest.raises(TraceError) as caught:
        load_trace(path)
    assert str(caught.value).startswith(
        f"{path}: 是 JSON，但不是 Chrome 跟踪（没有 'traceEvents' 列表）；请用 torch.profiler"
    )


def test_a_timeline_of_another_schema_in_chinese(chinese):
    with pytest.raises(TraceError) as caught:
        EventTable.from_dict({"schema": "graphlab.timeline/99"})
    assert "不是这个 graphlab 能读的" in str(caught.value)


# --- the simulator ---


def test_a_negative_kernel_duration_in_chinese(chinese):
    with pytest.raises(SimulatorError) as caught:
        model_step([-1.0])
    assert str(caught.value).startswith("kernel duration 必须在 0 到 ")
    assert str(caught.value).endswith("得到的是 -1.0：请传入非负的有限时长")


def test_the_calibration_check_tables_heading_in_chinese(chinese):
    assert format_table([]).splitlines()[0] == (
        "| 录制 | N | 元素数 | eager 实测 µs | 仿真 | 误差 | 重放实测 µs | 仿真 | 误差 "
        "| 端到端重放实测 µs | 仿真 | 误差 |"
    )


# --- the workshop ---

H200_BYTES = 150_754_820_096
GPU_PEAKS = Section(
    {"gpu": "NVIDIA H200"},
    {"00_start_here": LessonPeak(40.0, 2 * 10**9), "07_training": LessonPeak(90.0, 10 * 10**9)},
    600_000_000,
)
CPU_PEAKS = Section({"cpus": 2}, {"00_start_here": LessonPeak(15.0, 500_000_000)})


def _machine(**changes) -> Facts:
    gpus = [Gpu(i, f"GPU-{i}", "NVIDIA H200", H200_BYTES, 0, "Disabled", "Default", "580.1")
            for i in range(2)]  # fmt: skip
    facts = {
        "torch": TorchView(
            "2.11.0+cu130", "13.0", True, [("NVIDIA H200", H200_BYTES, "9.0")] * 2, ["sm_90"]
        ),
        "smi": Inventory(gpus),
        "cap_gb": None,
        "cap_error": None,
        "peaks": Peaks(GPU_PEAKS, CPU_PEAKS),
        "peaks_error": None,
        "lesson_ids": ["00_start_here", "07_training"],
        "lessons_bytes": 900_000,
        "disk_path": "/home",
        "disk_free_bytes": 50 * 10**9,
        "host_memory_bytes": 8 * 10**9,
        "cpus": 16,
        "ports_in_use": [8000],
        "extension": {"server": True, "lab": True},
    }
    return Facts(**(facts | changes))


def test_the_readiness_report_reads_in_chinese_while_its_json_stays_english(chinese):
    report = assess(_machine(cpus=2), 5)
    reasons = [shown(text) for text in report["reasons"]]
    assert reasons == [
        "5 名学员需要 4 个 CPU 核心（hub 用 1 个，每 2 名学员一个），而这台机器只有 2 个："
        "请减少学员，或者换一台核心更多的机器"
    ]
    warnings = [shown(text) for text in report["warnings"]]
    assert "这里没有设置 GRAPHLAB_GPU_MEMORY_GB：请给每名学员设置 GRAPHLAB_GPU_MEMORY_GB=49.6" in (
        warnings
    )
    assert "端口 8000（JupyterHub 的默认端口）已被占用" in warnings
    data = json.loads(json.dumps(report))
    assert data["reasons"] == [
        "5 learners need 4 CPU cores (1 for the hub, one per 2 learners) and this machine has "
        "2: fewer learners, or a machine with more cores"
    ]


def test_unmeasured_peaks_read_in_chinese(chinese):
    report = assess(_machine(peaks=None, peaks_error=None), 2)
    assert shown(report["unknown"][0]) == "各课的 GPU 内存峰值：尚未测量"
    assert report["needed_by"] == "not measured yet"


def test_the_hub_table_is_in_chinese_and_aligned(chinese):
    course = lessons()[:2]
    zoe = LearnerProgress("zoe", None, "running", {course[0].id: "passed"})
    zoe.server = Text("running")  # as fetch() sets it: English data, shown in Chinese
    lines = table_lines([zoe], course)
    assert lines[0].startswith("学员  00      01      最近活动  ")
    assert lines[0].endswith("服务器")
    assert lines[1].startswith("zoe   通过            从未  ")

    def columns(text: str) -> int:
        return sum(2 if unicodedata.east_asian_width(ch) == "W" else 1 for ch in text)

    # The columns line up on the terminal: a Chinese character takes two columns.
    head, row = lines[0], lines[1]
    assert columns(head[: head.index("最近活动")]) == columns(row[: row.index("从未")])
    assert columns(head[: head.index("服务器")]) == columns(row[: row.index("运行中")])


def test_the_instructor_view_is_in_chinese(chinese):
    course = lessons()[:1]
    zoe = LearnerProgress("zoe", None, "running", {course[0].id: "passed"})
    html = page([zoe], course, datetime(2026, 12, 3, 10, 0, tzinfo=UTC))
    assert "<h1>工作坊进度</h1>" in html
    assert '<td class="passed">通过</td>' in html
    assert "1 名学员，1 个服务器在运行。读取于 UTC 10:00:00" in html


# --- the emulator's usage errors ---


def test_what_the_emulator_lacks_in_chinese(chinese):
    with pytest.raises(AttributeError) as caught:
        emulator.no_such_thing  # noqa: B018
    assert str(caught.value).startswith(
        "graphlab.cuda 在这里是 CPU 模拟器，没有 'no_such_thing'：它只模拟 CUDA 图的语义。"
    )


def test_event_timing_needs_a_gpu_in_chinese(chinese):
    start, end = emulator.Event(enable_timing=True), emulator.Event(enable_timing=True)
    with pytest.raises(NeedsGPUError) as caught:
        start.elapsed_time(end)
    assert str(caught.value).startswith("Event.elapsed_time 需要 GPU：CPU 模拟器重现图做了什么")
