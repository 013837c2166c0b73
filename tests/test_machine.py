"""graphlab.timing.machine: the driver version doctor and recordings report, whatever nvidia-smi
does."""

from __future__ import annotations

import subprocess

import graphlab.timing.machine
from graphlab.cli import doctor
from graphlab.timing.machine import driver_version


def fake_smi(monkeypatch, run):
    monkeypatch.setattr(graphlab.timing.machine.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(graphlab.timing.machine.subprocess, "run", run)


def test_without_nvidia_smi_says_so(monkeypatch):
    monkeypatch.setattr(graphlab.timing.machine.shutil, "which", lambda name: None)
    assert driver_version() == "unknown (nvidia-smi not found)"


def test_reads_the_first_gpus_driver(monkeypatch):
    asked = []

    def run(argv, **kwargs):
        asked.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout="580.159.04\n", stderr="")

    fake_smi(monkeypatch, run)
    assert driver_version() == "580.159.04"
    assert asked == [
        ["/usr/bin/nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "--id=0"]
    ]


def test_a_failing_or_silent_nvidia_smi_says_so(monkeypatch):
    def fails(argv, **kwargs):
        raise subprocess.CalledProcessError(9, argv)

    fake_smi(monkeypatch, fails)
    assert driver_version() == "unknown (nvidia-smi failed)"
    fake_smi(monkeypatch, lambda argv, **kw: subprocess.CompletedProcess(argv, 0, stdout=" \n"))
    assert driver_version() == "unknown (nvidia-smi printed nothing)"


def test_doctor_shows_the_same_driver_version(monkeypatch):
    fake_smi(monkeypatch, lambda argv, **kw: subprocess.CompletedProcess(argv, 0, stdout="1.2\n"))

    class Props:
        name = "Some GPU"
        total_memory = 4 * 1024**3

    class FakeCuda:
        is_available = staticmethod(lambda: True)
        device_count = staticmethod(lambda: 1)
        get_device_properties = staticmethod(lambda i: Props)

    class FakeTorch:
        cuda = FakeCuda

    assert doctor.gpu_lines(FakeTorch) == ["gpu 0       Some GPU, 4 GiB, driver 1.2"]
