"""graphlab doctor --workshop: nvidia-smi read through fakes, the lessons' peaks file, and the
verdict and per-learner cap for made-up machines (GPUs, MIG slices, compute modes, old drivers,
no GPU at all)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import graphlab.support.nvidia_smi
from graphlab.cli import doctor, main
from graphlab.support.nvidia_smi import Gpu, Inventory, MigDevice, inventory
from graphlab.workshop import peaks, readiness
from graphlab.workshop.peaks import LessonPeak, Peaks, PeaksError, Section
from graphlab.workshop.readiness import Facts, TorchView, assess

H200_MIB = 143771
H200_BYTES = 150_754_820_096  # 143771 MiB
LESSONS = ["00_start_here", "07_training"]
QUERY = [
    "/usr/bin/nvidia-smi",
    "--query-gpu=index,uuid,name,memory.total,memory.used,mig.mode.current,compute_mode,"
    "driver_version",
    "--format=csv,noheader,nounits",
]


@pytest.fixture
def smi(monkeypatch, tmp_path):
    """Make nvidia-smi answer each argument list with the text given; return the calls."""
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", str(tmp_path / "no-mps"))
    answers, calls = {}, []
    monkeypatch.setattr(graphlab.support.nvidia_smi.shutil, "which", lambda name: QUERY[0])

    def run(argv, **kwargs):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout=answers[argv[1]], stderr="")

    monkeypatch.setattr(graphlab.support.nvidia_smi.subprocess, "run", run)
    answers["calls"] = calls
    return answers


def test_nvidia_smi_lists_gpus_without_asking_for_mig_when_none_is_on(smi):
    smi[QUERY[1]] = (
        f"0, GPU-aaaa, NVIDIA H200, {H200_MIB}, 1, Disabled, Default, 580.159.04\n"
        "1, GPU-bbbb, NVIDIA T4, 15360, [N/A], [N/A], Exclusive_Process, 580.159.04\n"
    )
    assert inventory() == Inventory(
        gpus=[
            Gpu(
                0,
                "GPU-aaaa",
                "NVIDIA H200",
                H200_BYTES,
                1048576,
                "Disabled",
                "Default",
                "580.159.04",
            ),
            Gpu(
                1,
                "GPU-bbbb",
                "NVIDIA T4",
                16_106_127_360,
                None,
                "N/A",
                "Exclusive_Process",
                "580.159.04",
            ),
        ]
    )
    assert smi["calls"] == [QUERY]


def test_nvidia_smi_mig_slices_come_from_its_device_list(smi):
    smi[QUERY[1]] = (
        f"0, GPU-aaaa, NVIDIA H200, {H200_MIB}, 0, Enabled, Default, 580.159.04\n"
        f"1, GPU-bbbb, NVIDIA H200, {H200_MIB}, 0, Disabled, Default, 580.159.04\n"
    )
    smi["-L"] = (
        "GPU 0: NVIDIA H200 (UUID: GPU-aaaa)\n"
        "  MIG 3g.71gb     Device  0: (UUID: MIG-1111)\n"
        "  MIG 1g.18gb     Device  1: (UUID: MIG-2222)\n"
        "  MIG 1g.18gb+me  Device  2: (UUID: MIG-3333)\n"
        "GPU 1: NVIDIA H200 (UUID: GPU-bbbb)\n"
    )
    assert inventory().mig_devices == [
        MigDevice(0, "3g.71gb", "MIG-1111", 71),
        MigDevice(0, "1g.18gb", "MIG-2222", 18),
        MigDevice(0, "1g.18gb+me", "MIG-3333", None),
    ]
    assert smi["calls"][1] == [QUERY[0], "-L"]


def test_nvidia_smi_absent_failing_or_unreadable_is_an_answer(smi, monkeypatch):
    smi[QUERY[1]] = "0, GPU-aaaa, NVIDIA H200\n"
    assert inventory().problem == "nvidia-smi printed a GPU list graphlab cannot read"

    def fails(argv, **kwargs):
        raise subprocess.CalledProcessError(9, argv, stderr="NVIDIA-SMI has failed\nmore\n")

    monkeypatch.setattr(graphlab.support.nvidia_smi.subprocess, "run", fails)
    assert inventory() == Inventory(problem="nvidia-smi failed (NVIDIA-SMI has failed)")
    monkeypatch.setattr(graphlab.support.nvidia_smi.shutil, "which", lambda name: None)
    assert inventory() == Inventory(problem="nvidia-smi not found (no NVIDIA driver)")


def test_an_mps_daemon_is_seen_by_its_control_pipe(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", str(tmp_path))
    assert graphlab.support.nvidia_smi.mps_pipe() is None
    (tmp_path / "control").write_text("not a pipe")
    assert graphlab.support.nvidia_smi.mps_pipe() is None
    (tmp_path / "control").unlink()
    os.mkfifo(tmp_path / "control")
    assert graphlab.support.nvidia_smi.mps_pipe() == str(tmp_path)


# --- the peaks file ---


def test_the_bundled_measurements_are_of_this_course_and_say_where_they_come_from():
    from graphlab.course.syllabus import lessons

    bundled = peaks.load()
    shipped = {lesson.id for lesson in lessons()}
    for kind in peaks.KINDS:
        section = bundled.section(kind)
        if section is None:  # not measured yet: doctor says so (tested below)
            continue
        assert set(section.lessons) <= shipped, kind  # a lesson left out: doctor says so too
        assert section.measured_on["command"].startswith("tools/measure_lessons.py"), kind
        assert section.measured_on["backend"] == ("cuda" if kind == "gpu" else "emulator")


def test_a_peaks_file_round_trips_and_names_its_largest_lesson(tmp_path):
    made = Peaks(
        gpu=Section(
            {"gpu": "a GPU"},
            {"00_start_here": LessonPeak(4.0, 3, 11), "07_training": LessonPeak(9.5, 7)},
            2,
        ),
        cpu=None,
    )
    path = tmp_path / "peaks.json"
    path.write_text(json.dumps(made.to_dict()))
    again = peaks.read(path)
    assert again == made
    assert again.gpu.peak() == ("07_training", 7)
    assert again.gpu.host_peak() == ("00_start_here", 11)
    assert again.gpu.missing(["00_start_here", "08_memory"]) == ["08_memory"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "cannot read the lesson measurements"),
        ('{"schema": "other"}', "is not a graphlab.peaks/1 file"),
        (
            '{"schema": "graphlab.peaks/1", "gpu": {"measured_on": {}, "lessons": '
            '{"00_start_here": {"seconds": 1, "peak_bytes": -1}}}}',
            ": gpu is damaged: measure again with tools/measure_lessons.py",
        ),
        (
            '{"schema": "graphlab.peaks/1", "cpu": {"measured_on": {}, "lessons": {}}}',
            ": cpu is damaged",
        ),
    ],
)
def test_a_damaged_peaks_file_is_one_clear_error(tmp_path, content, message):
    path = tmp_path / "peaks.json"
    path.write_text(content)
    with pytest.raises(PeaksError, match=message):
        peaks.read(path)


# --- the verdict ---

GPU_PEAKS = Section(
    {"gpu": "NVIDIA H200"},
    {"00_start_here": LessonPeak(40.0, 2 * 10**9), "07_training": LessonPeak(90.0, 10 * 10**9)},
    600_000_000,
)
HOST_NOTE = (
    "host memory counts each learner's kernel at its measured peak; the Jupyter server each "
    "learner also runs is not counted"
)
CPU_PEAKS = Section(
    {"cpus": 2},
    {"00_start_here": LessonPeak(15.0, 500_000_000), "07_training": LessonPeak(20.0, 400_000_000)},
)


def h200(index: int, mig: str = "Disabled", compute: str = "Default", driver: str = "580.1"):
    return Gpu(index, f"GPU-{index}", "NVIDIA H200", H200_BYTES, 0, mig, compute, driver)


def machine(**changes) -> Facts:
    """Two H200s, a CUDA 13 torch, every lesson measured, nothing else in the way."""
    facts = {
        "torch": TorchView(
            "2.11.0+cu130",
            "13.0",
            True,
            [("NVIDIA H200", H200_BYTES, "9.0")] * 2,
            ["sm_80", "sm_90", "sm_100"],
        ),
        "smi": Inventory([h200(0), h200(1)]),
        "cap_gb": None,
        "cap_error": None,
        "peaks": Peaks(GPU_PEAKS, CPU_PEAKS),
        "peaks_error": None,
        "lesson_ids": LESSONS,
        "lessons_bytes": 900_000,
        "disk_path": "/home",
        "disk_free_bytes": 50 * 10**9,
        "host_memory_bytes": 8 * 10**9,
        "cpus": 16,
        "ports_in_use": [],
        "extension": {"server": True, "lab": True},
    }
    return Facts(**(facts | changes))


def test_learners_dealt_over_two_gpus_get_a_cap_below_their_share():
    report = assess(machine(cap_gb=11.9), 24)
    assert report["verdict"] == "ready"
    assert report["path"] == "gpu"
    assert [d["learners"] for d in report["devices"]] == [12, 12]
    assert report["devices"][0]["share_bytes"] == 12_562_901_674
    # 12.56 GB each, less the 0.6 GB context: 11.96, rounded down to a tenth.
    assert report["memory_cap_gb"] == 11.9
    assert (report["needed_bytes"], report["needed_by"]) == (10 * 10**9, "07_training")
    assert report["reasons"] == report["warnings"] == report["unknown"] == []


def test_an_odd_number_of_learners_and_no_cap_set_yet():
    report = assess(machine(), 5)
    assert [d["learners"] for d in report["devices"]] == [3, 2]
    # 150.75 GB / 3 = 50.25 GB, less 0.6 GB
    assert report["memory_cap_gb"] == 49.6
    assert report["warnings"] == [
        "GRAPHLAB_GPU_MEMORY_GB is not set here: give each learner GRAPHLAB_GPU_MEMORY_GB=49.6"
    ]


def test_too_many_learners_for_the_course_peak():
    report = assess(machine(cap_gb=20, cpus=32), 40)
    assert report["verdict"] == "not ready"
    assert report["memory_cap_gb"] == 6.9  # 150.75 / 20 = 7.54 GB, less 0.6
    assert report["reasons"] == [
        "each learner's share is 6.9 GB but lesson 07_training needs 10.0 GB: fewer learners "
        "per GPU, or more GPUs",
        "GRAPHLAB_GPU_MEMORY_GB=20 is more than each learner's share (6.9 GB), so learners could "
        "run each other out of memory: set GRAPHLAB_GPU_MEMORY_GB=6.9",
    ]
    assert report["warnings"] == []


def test_a_cap_above_each_learners_share_is_not_ready_with_the_cap_to_set():
    report = assess(machine(cap_gb=12), 24)  # the share less the context is 11.9 GB
    assert report["verdict"] == "not ready"
    assert report["reasons"] == [
        "GRAPHLAB_GPU_MEMORY_GB=12 is more than each learner's share (11.9 GB), so learners "
        "could run each other out of memory: set GRAPHLAB_GPU_MEMORY_GB=11.9"
    ]
    assert assess(machine(cap_gb=11.9), 24)["verdict"] == "ready"


def test_a_cap_below_the_largest_lesson_peak_is_not_ready():
    report = assess(machine(cap_gb=9.9), 24)  # lesson 07 of these peaks needs 10 GB
    assert report["verdict"] == "not ready"
    assert report["reasons"] == [
        "GRAPHLAB_GPU_MEMORY_GB=9.9 is below the 10.00 GB that lesson 07_training needs: set "
        "GRAPHLAB_GPU_MEMORY_GB=11.9"
    ]
    # The course's own measurements: lesson 11 reserved 497,025,024 bytes on an H200.
    bundled = peaks.load()
    lesson_ids, host = sorted(bundled.gpu.lessons), 200 * 10**9
    real = machine(peaks=bundled, lesson_ids=lesson_ids, host_memory_bytes=host, cap_gb=0.1)
    assert assess(real, 24)["reasons"] == [
        "GRAPHLAB_GPU_MEMORY_GB=0.1 is below the 0.50 GB that lesson 11_full_vs_piecewise "
        "needs: set GRAPHLAB_GPU_MEMORY_GB=11.7"
    ]
    assert assess(dataclasses.replace(real, cap_gb=0.5), 24)["reasons"] == []


def test_too_few_cpu_cores_is_not_ready_with_the_number_needed():
    # One core for the hub, one per two learners: 20 learners need 1 + 10 = 11, 21 need 12.
    assert [readiness.cores_needed(n) for n in (1, 2, 3, 20, 21)] == [2, 2, 3, 11, 12]
    report = assess(machine(cap_gb=11.9, cpus=2), 20)
    assert report["verdict"] == "not ready"
    assert report["cpus"] == {"have": 2, "needed": 11}
    assert report["reasons"] == [
        "20 learners need 11 CPU cores (1 for the hub, one per 2 learners) and this machine "
        "has 2: fewer learners, or a machine with more cores"
    ]
    assert assess(machine(cpus=11), 20)["reasons"] == []


def test_an_environment_other_accounts_cannot_read_is_not_ready(tmp_path):
    report = assess(machine(cap_gb=11.9, unreadable=["/root (mode 700)"]), 24)
    assert report["reasons"] == [
        "every learner's server runs as that learner, and other accounts cannot read this "
        "Python environment (/root (mode 700)): install it where every account can read (for "
        "example under /opt), or open those folders (chmod o+rx)"
    ]
    # The folders are read from the disk: the first one closed on the way to each path, once.
    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o755)
        (base / "open").mkdir(mode=0o755)
        (base / "closed").mkdir(mode=0o700)
        for name in ("open/python", "open/private.py", "closed/python"):
            (base / name).write_text("")
        (base / "open" / "python").chmod(0o755)
        (base / "open" / "private.py").chmod(0o600)
        paths = [base / "open" / "python", base / "closed" / "python", base / "closed"]
        paths.append(base / "open" / "private.py")
        assert readiness.closed_to_others(paths) == [
            (base / "closed", 0o700),
            (base / "open" / "private.py", 0o600),
        ]
        assert readiness.closed_to_others([base / "open" / "python"]) == []
    finally:
        shutil.rmtree(base)


def test_without_gpu_measurements_the_verdict_is_unknown_and_the_share_is_still_given():
    report = assess(machine(peaks=Peaks(None, CPU_PEAKS), cap_gb=12.5), 24)
    assert report["verdict"] == "unknown"
    assert report["unknown"] == ["the lessons' GPU memory peaks: not measured yet"]
    assert report["needed_by"] == "not measured yet"
    assert report["memory_cap_gb"] == 12.5  # the share alone: no context size to take off


def test_a_lesson_missing_from_the_measurements_leaves_the_verdict_unknown():
    report = assess(machine(lesson_ids=[*LESSONS, "08_memory"], cap_gb=11.9), 24)
    assert report["verdict"] == "unknown"
    assert report["unknown"] == ["the GPU memory peaks of 08_memory: not measured yet"]


def test_mig_slices_are_places_of_their_own():
    slices = [
        MigDevice(0, "3g.71gb", "MIG-1111", 71),
        MigDevice(0, "1g.18gb", "MIG-2222", 18),
        MigDevice(0, "1g.18gb", "MIG-3333", 18),
    ]
    report = assess(machine(smi=Inventory([h200(0, mig="Enabled"), h200(1)], slices)), 4)
    assert [(d["id"], d["learners"]) for d in report["devices"]] == [
        ("MIG-1111", 1),
        ("MIG-2222", 1),
        ("MIG-3333", 1),
        ("1", 1),
    ]
    assert report["memory_cap_gb"] == 17.4  # the 18 GB slices, less 0.6 GB
    assert report["verdict"] == "ready"
    empty = assess(machine(smi=Inventory([h200(0, mig="Enabled")])), 2)
    assert empty["reasons"][0].startswith("GPU 0 NVIDIA H200 is in MIG mode with no MIG devices")
    assert empty["reasons"][-1] == "no GPU or MIG slice is usable by the learners"


def test_compute_modes_that_keep_learners_out():
    exclusive = machine(smi=Inventory([h200(0, compute="Exclusive_Process"), h200(1)]))
    assert assess(exclusive, 2)["reasons"] == []  # one learner each
    assert assess(exclusive, 3)["reasons"] == [
        "GPU 0 NVIDIA H200 is in Exclusive_Process compute mode (one process at a time) but 2 "
        "learners would share it: nvidia-smi -i 0 -c DEFAULT"
    ]
    with_mps = machine(smi=Inventory([h200(0, compute="Exclusive_Process")], mps="/tmp/nvidia-mps"))
    report = assess(with_mps, 3)
    assert report["reasons"] == []
    assert report["warnings"][0].startswith("an MPS control daemon is listening (/tmp/nvidia-mps)")
    prohibited = assess(machine(smi=Inventory([h200(0, compute="Prohibited"), h200(1)])), 2)
    assert prohibited["reasons"] == [
        "GPU 0 NVIDIA H200 is in Prohibited compute mode: no process may use it "
        "(nvidia-smi -i 0 -c DEFAULT)"
    ]
    assert [d["learners"] for d in prohibited["devices"]] == [2]


def test_driver_torch_and_architecture_mismatches():
    old = assess(machine(smi=Inventory([h200(0, driver="575.57.08")])), 1)
    assert old["reasons"] == [
        "NVIDIA driver 575.57.08 is older than CUDA 13.0 (this torch's build) needs (580 or "
        "newer): update the driver, or install a torch built for an older CUDA"
    ]
    cpu_torch = TorchView("2.13.0+cpu", None, False)
    assert assess(machine(torch=cpu_torch), 1)["reasons"] == [
        "torch 2.13.0+cpu is a CPU-only build: install a CUDA build of torch to use the GPUs "
        "(pip install torch)"
    ]
    volta = TorchView("2.11.0", "13.0", True, [("Tesla V100", 16 * 10**9, "7.0")], ["sm_80"])
    assert assess(machine(torch=volta), 1)["reasons"] == [
        "torch 2.11.0 has no kernels for Tesla V100 (compute capability 7.0): install a torch "
        "built for it"
    ]
    ptx = TorchView("2.11.0", "12.8", True, [("NVIDIA H200", H200_BYTES, "9.0")], ["compute_80"])
    assert assess(machine(torch=ptx), 1)["reasons"] == []
    stale = TorchView("2.11.0", "12.8", False)
    assert assess(machine(torch=stale), 1)["reasons"] == [
        "torch 2.11.0 (CUDA 12.8) cannot use the GPUs (torch.cuda.is_available() is False)"
    ]
    floor = assess(machine(torch=TorchView("2.4.1", "12.4", True)), 1)
    assert floor["reasons"] == [
        "torch 2.4.1 is older than the course supports: pip install 'torch>=2.5'"
    ]


def test_a_bad_cap_in_the_environment_is_a_reason():
    report = assess(machine(cap_error="GRAPHLAB_GPU_MEMORY_GB='x' is not a number"), 2)
    assert report["verdict"] == "not ready"
    assert report["reasons"] == ["GRAPHLAB_GPU_MEMORY_GB='x' is not a number"]


def no_gpu(**changes) -> Facts:
    return machine(
        torch=TorchView("2.13.0+cpu", None, False),
        smi=Inventory(problem="nvidia-smi not found (no NVIDIA driver)"),
        **changes,
    )


def test_without_a_gpu_the_emulator_shares_the_host_memory():
    report = assess(no_gpu(cpus=16), 10)
    assert (report["path"], report["verdict"]) == ("emulator", "ready")
    assert (report["needed_bytes"], report["needed_by"]) == (500_000_000, "00_start_here")
    assert report["memory_cap_gb"] is None
    crowded = assess(no_gpu(cpus=2), 20)
    assert crowded["reasons"] == [
        "20 learners' kernels need 10.0 GB of host memory (lesson 00_start_here: 0.50 GB each) "
        "and 8.0 GB is available",
        "20 learners need 11 CPU cores (1 for the hub, one per 2 learners) and this machine "
        "has 2: fewer learners, or a machine with more cores",
    ]
    assert crowded["warnings"] == [HOST_NOTE]


def test_the_doctor_names_the_cores_the_emulators_learners_need():
    lines = doctor.workshop_lines(assess(no_gpu(cpus=2), 20))
    assert "  host      2 CPU cores (11 needed), memory 8.0 GB available" in lines


def test_the_doctor_says_the_readiness_problems_in_chinese(monkeypatch):
    monkeypatch.setenv("GRAPHLAB_LANG", "zh_CN")
    lines = doctor.workshop_lines(assess(no_gpu(cpus=2), 20))
    assert (
        "  问题      20 名学员需要 11 个 CPU 核心（hub 用 1 个，每 2 名学员一个），而这台机器只有 "
        "2 个：请减少学员，或者换一台核心更多的机器"
    ) in lines


def test_on_a_gpu_the_kernels_host_memory_is_checked_too():
    measured = Section(
        {"gpu": "NVIDIA H200"},
        {
            "00_start_here": LessonPeak(40.0, 2 * 10**9, 1_500_000_000),
            "07_training": LessonPeak(90.0, 10 * 10**9, 3_000_000_000),
        },
        600_000_000,
    )
    report = assess(machine(peaks=Peaks(measured, None), cap_gb=11.9), 3)
    assert report["reasons"] == [
        "3 learners' kernels need 9.0 GB of host memory (lesson 07_training: 3.00 GB each) and "
        "8.0 GB is available"
    ]
    assert report["warnings"] == [HOST_NOTE]
    assert assess(machine(peaks=Peaks(measured, None), cap_gb=11.9), 2)["reasons"] == []


def test_disk_ports_and_extension():
    report = assess(
        no_gpu(
            disk_free_bytes=1_000_000, ports_in_use=[8000], extension={"server": False, "lab": True}
        ),
        2,
    )
    assert report["reasons"] == ["/home has 0.00 GB free and 2 copies of the lessons take 0.00 GB"]
    assert report["ports_in_use"] == {"8000": "JupyterHub"}
    assert report["warnings"] == [
        HOST_NOTE,
        "port 8000 (JupyterHub's default) is in use",
        "the course's JupyterLab extension (server part, graphlab.server) is not enabled: the "
        "lessons run, without the course sidebar (install graphlab into the Python environment "
        "of the learners' Jupyter servers; the extension comes with it)",
    ]


# --- the command ---


def test_doctor_workshop_json_has_a_workshop_section(monkeypatch, capsys):
    monkeypatch.setattr(readiness, "gather", lambda: no_gpu())
    assert main(["doctor", "--workshop", "10", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["backend"]["name"] == "emulator"
    assert report["workshop"]["verdict"] == "ready"
    assert report["workshop"]["learners"] == 10
    monkeypatch.setattr(readiness, "gather", lambda: machine(peaks=Peaks(None, None)))
    assert main(["doctor", "--workshop", "10", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["workshop"]["verdict"] == "unknown"


def test_doctor_workshop_text(monkeypatch, capsys):
    monkeypatch.setattr(readiness, "gather", lambda: machine(peaks=Peaks(None, None)))
    assert main(["doctor", "--workshop", "24"]) == 1
    out = capsys.readouterr().out
    assert out[out.index("workshop    ") :].splitlines() == [
        "workshop    24 learners, GPU: UNKNOWN",
        "  needs     course peak per learner not measured yet",
        "  device    GPU 0 NVIDIA H200 (150.8 GB): 12 learners, 12.6 GB each",
        "  device    GPU 1 NVIDIA H200 (150.8 GB): 12 learners, 12.6 GB each",
        "  cap       GRAPHLAB_GPU_MEMORY_GB=12.5 per learner",
        "  disk      /home: 50.0 GB free, 0.9 MB of lessons per learner",
        "  unknown   the lessons' GPU memory peaks: not measured yet",
        "  warning   GRAPHLAB_GPU_MEMORY_GB is not set here: give each learner "
        "GRAPHLAB_GPU_MEMORY_GB=12.5",
    ]


def test_doctor_refuses_a_workshop_of_nobody(capsys):
    assert main(["doctor", "--workshop", "0"]) == 2
    assert capsys.readouterr().err == (
        "graphlab doctor: --workshop needs a number of learners from 1 up, not 0\n"
    )


def test_doctor_json_without_a_workshop_has_none():
    report, ok = doctor.machine_report(__import__("torch"))
    assert "workshop" not in report and ok is True
