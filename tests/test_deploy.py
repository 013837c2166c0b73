"""The workshop deployment files, checked without starting anything: the hub's device dealing and
spawn hooks, its configuration file, the Zero to JupyterHub values, the GPU image and Binder's
repo2docker files. (tests/test_hub.py starts a real hub with them.)"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from traitlets.config import Config

import graphlab.support.nvidia_smi
from graphlab.cli.lab import LAB_CONFIG
from graphlab.support.memory_cap import cap_from_env
from graphlab.support.nvidia_smi import Gpu, Inventory, MigDevice

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
BINDER = ROOT / "binder"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hub = _load("graphlab_hub", DEPLOY / "graphlab_hub.py")
check_values = _load("check_values", DEPLOY / "z2jh" / "check_values.py")


def test_round_robin_deals_to_the_least_used_device_first():
    dealer = hub.RoundRobin(["0", "1"])
    assert [dealer.take(n) for n in ("ada", "grace", "linus", "ada")] == ["0", "1", "0", "0"]
    dealer.release("grace")
    assert dealer.take("mary") == "1"  # the device grace freed, not the busier "0"
    assert dealer.take("alan") == "1"  # "1" has one learner, "0" two
    assert hub.RoundRobin([]).take("ada") is None


def test_devices_come_from_the_environment_or_nvidia_smi(monkeypatch):
    assert hub.hub_devices({"GRAPHLAB_HUB_DEVICES": " 0, 1,,2 "}) == ["0", "1", "2"]
    assert hub.hub_devices({"GRAPHLAB_HUB_DEVICES": "none"}) == []
    found = Inventory(
        [
            Gpu(0, "GPU-a", "H200", 1, 0, "Enabled", "Default", "580"),
            Gpu(1, "GPU-b", "H200", 1, 0, "Disabled", "Default", "580"),
            Gpu(2, "GPU-c", "H200", 1, 0, "N/A", "Prohibited", "580"),
        ],
        [MigDevice(0, "1g.18gb", "MIG-x", 18), MigDevice(0, "1g.18gb", "MIG-y", 18)],
    )
    monkeypatch.setattr(graphlab.support.nvidia_smi, "inventory", lambda: found)
    assert hub.hub_devices({}) == ["MIG-x", "MIG-y", "GPU-b"]


def test_a_gpu_host_whose_gpus_nvidia_smi_cannot_list_stops_the_hub(monkeypatch, tmp_path):
    broken = Inventory([], [], problem="nvidia-smi not found on PATH")
    monkeypatch.setattr(graphlab.support.nvidia_smi, "inventory", lambda: broken)
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "nvidiactl").touch()
    assert hub.hub_devices({}, dev) == []  # the control device alone: no GPU on this host
    (dev / "nvidia0").touch()
    with pytest.raises(hub.HubSetupError) as stopped:
        hub.hub_devices({}, dev)
    assert str(stopped.value) == (
        f"this host has NVIDIA GPUs ({dev}/nvidia*) but nvidia-smi lists none (nvidia-smi not "
        "found on PATH): fix nvidia-smi, or set GRAPHLAB_HUB_DEVICES to the devices to deal "
        "(GRAPHLAB_HUB_DEVICES=none for a CPU-only hub)"
    )
    assert hub.hub_devices({"GRAPHLAB_HUB_DEVICES": "none"}, dev) == []  # said outright: allowed


def test_the_roster_names_the_learners_and_an_admin(tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("# the workshop\nmaria admin\nada\n\ngrace  # joined late\n")
    assert hub.read_roster(str(roster)) == hub.Roster(("ada", "grace"), ("maria",))
    for text, message in [
        ("ada\n", f"{roster} names no admin: add the instructor's account as 'NAME admin'"),
        ("maria boss\n", f"{roster} line 1: 'maria boss' is not 'NAME' or 'NAME admin'"),
    ]:
        roster.write_text(text)
        with pytest.raises(hub.HubSetupError) as refused:
            hub.read_roster(str(roster))
        assert str(refused.value) == message
    with pytest.raises(hub.HubSetupError) as refused:
        hub.read_roster(None)
    assert str(refused.value) == (
        "no roster: set GRAPHLAB_HUB_ROSTER to a roster file (deploy/roster.example.txt shows one)"
    )
    assert hub.read_roster(str(ROOT / "deploy" / "roster.example.txt")).admins


def _spawner(user: str, environment: dict) -> SimpleNamespace:
    return SimpleNamespace(
        user=SimpleNamespace(name=user),
        name="",
        environment=environment,
        log=logging.getLogger("test"),
    )


def test_spawn_hooks_give_each_learner_a_device_and_the_cap():
    pre, post, dealer = hub.spawn_hooks(["GPU-a", "GPU-b"], 11.9)
    configured = {"GRAPHLAB_RUN_SOLUTIONS": "1"}
    ada, grace = _spawner("ada", configured), _spawner("grace", configured)
    pre(ada)
    pre(grace)
    assert ada.environment == {
        "GRAPHLAB_RUN_SOLUTIONS": "1",
        "GRAPHLAB_WORKSPACE": "~/graphlab-course",
        "CUDA_VISIBLE_DEVICES": "GPU-a",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "GRAPHLAB_GPU_MEMORY_GB": "11.9",
        "JUPYTER_CONFIG_PATH": str(LAB_CONFIG),
    }
    assert grace.environment["CUDA_VISIBLE_DEVICES"] == "GPU-b"
    assert configured == {"GRAPHLAB_RUN_SOLUTIONS": "1"}  # the shared configured dict is untouched
    post(ada)
    assert dealer.holders == {"grace/": "GPU-b"}
    cpu_pre, _, _ = hub.spawn_hooks([], None)
    lone = _spawner("ada", {})
    cpu_pre(lone)
    assert lone.environment == {
        "GRAPHLAB_WORKSPACE": "~/graphlab-course",
        "JUPYTER_CONFIG_PATH": str(LAB_CONFIG),
    }


def test_private_homes_are_closed_to_other_accounts_before_the_server_starts(monkeypatch, tmp_path):
    home = tmp_path / "ada"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    monkeypatch.setattr(hub.pwd, "getpwnam", lambda name: SimpleNamespace(pw_dir=str(home)))
    pre, _, _ = hub.spawn_hooks([], None, private_homes=True)
    pre(_spawner("ada", {}))
    assert home.stat().st_mode & 0o777 == 0o700


def test_local_address_reaches_a_hub_listening_everywhere():
    assert hub.local_address("http://:8000") == "http://127.0.0.1:8000"
    assert hub.local_address("http://0.0.0.0:8000/") == "http://127.0.0.1:8000"
    assert hub.local_address("https://hub.example.org/") == "https://hub.example.org"


def _hub_config(monkeypatch, **env: str) -> Config:
    for name in ("GRAPHLAB_GPU_MEMORY_GB", "GRAPHLAB_HUB_URL", "GRAPHLAB_HUB_VIEW_PORT"):
        monkeypatch.delenv(name, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = Config()
    path = DEPLOY / "jupyterhub_config.py"
    exec(
        compile(path.read_text(), str(path), "exec"),
        {"get_config": lambda: config, "__file__": str(path)},
    )
    return config


ROSTER = str(DEPLOY / "roster.example.txt")


def test_the_hub_configuration(monkeypatch):
    c = _hub_config(
        monkeypatch,
        GRAPHLAB_HUB_DEVICES="0,1",
        GRAPHLAB_GPU_MEMORY_GB="12",
        GRAPHLAB_HUB_ROSTER=ROSTER,
    )
    roster = hub.read_roster(ROSTER)
    # Closed: the roster's accounts with their own passwords, its admins, nobody else.
    assert c.JupyterHub.authenticator_class == "pam"
    assert c.Authenticator.allowed_users == set(roster.learners)
    assert c.Authenticator.admin_users == set(roster.admins)
    assert c.Authenticator.allow_existing_users is False
    assert "allow_all" not in c.Authenticator
    assert c.JupyterHub.bind_url == "http://:8000"
    assert c.JupyterHub.spawner_class == "localprocess"
    assert c.Spawner.cmd == hub.singleuser_command(sys.executable)
    # Kernels culled idle whether a tab is connected or not, and idle servers stop themselves.
    assert c.Spawner.args == hub.SERVER_ARGS
    assert "--MappingKernelManager.cull_connected=True" in c.Spawner.args
    # The instructor's view, served by the hub, with the scopes to read the learners' servers.
    (view,) = c.JupyterHub.services
    assert view["name"] == "progress"
    assert view["url"] == "http://127.0.0.1:10101"
    assert view["command"] == [sys.executable, "-m", "graphlab.workshop.instructor_view"]
    assert view["environment"] == {"GRAPHLAB_HUB_URL": "http://127.0.0.1:8000"}
    (role,) = c.JupyterHub.load_roles
    assert role["services"] == ["progress"]
    assert sorted(role["scopes"]) == ["access:servers", "list:users", "read:servers", "read:users"]
    assert c.Spawner.default_url == "/lab/tree/00_start_here.ipynb"
    spawner = _spawner("ada", {})
    c.Spawner.pre_spawn_hook(spawner)
    assert spawner.environment["CUDA_VISIBLE_DEVICES"] == "0"
    assert spawner.environment["GRAPHLAB_GPU_MEMORY_GB"] == "12"


def test_the_hub_refuses_to_start_without_a_roster_in_one_line(monkeypatch):
    monkeypatch.delenv("GRAPHLAB_HUB_ROSTER", raising=False)
    with pytest.raises(SystemExit) as stopped:
        _hub_config(monkeypatch, GRAPHLAB_HUB_DEVICES="none")
    assert str(stopped.value) == (
        "jupyterhub_config.py: no roster: set GRAPHLAB_HUB_ROSTER to a roster file "
        "(deploy/roster.example.txt shows one)"
    )


def test_the_hub_refuses_a_bad_cap_in_one_line(monkeypatch):
    with pytest.raises(SystemExit) as stopped:
        _hub_config(
            monkeypatch,
            GRAPHLAB_HUB_DEVICES="none",
            GRAPHLAB_GPU_MEMORY_GB="12GB",
            GRAPHLAB_HUB_ROSTER=ROSTER,
        )
    assert str(stopped.value) == (
        "jupyterhub_config.py: GRAPHLAB_GPU_MEMORY_GB='12GB' is not a number of GB: set it to the "
        "GPU memory one learner may use, for example GRAPHLAB_GPU_MEMORY_GB=16, or unset it for "
        "no cap"
    )


def test_the_learner_command_makes_the_workspace_before_the_server(tmp_path):
    # The command's Python, with jupyterhub's server replaced by a stand-in that prints its
    # arguments: the workspace exists and is the root the server is given.
    command = hub.singleuser_command(sys.executable)
    code = command[2].replace(
        "from jupyterhub.singleuser import main", "main = lambda: print(sys.argv[1:]) or 0"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "--port=1234"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **_pythonpath()},
        check=True,
    )
    workspace = tmp_path / "graphlab-course"
    assert out.stdout.strip() == str([f"--ServerApp.root_dir={workspace}", "--port=1234"])
    assert (workspace / "00_start_here.ipynb").is_file()


def test_the_learner_server_starts_without_building_jsonschemas_iri_parsers(tmp_path):
    # The command as shipped up to the server's start: jupyterhub's single-user server imported
    # (with jupyter_server and jsonschema), and main replaced by a report of what was imported.
    command = hub.singleuser_command(sys.executable)
    code = command[2].replace(
        "sys.exit(main())",
        "import jsonschema; print(sorted(m for m in ('jsonschema', 'jupyter_server', 'lark')"
        " if m in sys.modules))",
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **_pythonpath()},
        check=True,
    )
    # rfc3987-syntax builds its parsers with lark as it is imported: lark is not there.
    assert out.stdout.split() == ["['jsonschema',", "'jupyter_server']"]


def _pythonpath() -> dict[str, str]:
    import os

    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


# --- Zero to JupyterHub ---

VALUES = yaml.safe_load((DEPLOY / "z2jh" / "values.yaml").read_text())


def test_z2jh_runs_the_same_learner_command_as_the_local_hub():
    assert VALUES["singleuser"]["cmd"] == hub.singleuser_command("python")
    assert VALUES["singleuser"]["defaultUrl"] == "/lab/tree/00_start_here.ipynb"


def test_z2jh_culls_kernels_like_the_local_hub_and_idle_servers():
    assert VALUES["hub"]["config"]["KubeSpawner"]["args"] == hub.SERVER_ARGS
    assert (VALUES["cull"]["enabled"], VALUES["cull"]["timeout"]) == (True, 3600)


def test_z2jh_login_is_closed_and_the_dummy_one_is_for_testing_only(tmp_path):
    config = VALUES["hub"]["config"]
    assert config["JupyterHub"]["authenticator_class"] == "nativeauthenticator.NativeAuthenticator"
    assert config["Authenticator"]["allowed_users"] and config["Authenticator"]["admin_users"]
    assert config["NativeAuthenticator"]["open_signup"] is False
    values_file, testing_file = (
        DEPLOY / "z2jh" / "values.yaml",
        DEPLOY / "z2jh" / "values-testing.yaml",
    )
    testing = check_values.merged(VALUES, yaml.safe_load(testing_file.read_text()))
    assert testing["hub"]["config"]["JupyterHub"]["authenticator_class"] == "dummy"
    assert check_values.login_problems(VALUES, [values_file]) == []
    assert check_values.login_problems(testing, [values_file, testing_file]) == []
    refused = (
        "hub.config.JupyterHub.authenticator_class: 'dummy' lets anyone in with any password: "
        "choose a real login (values.yaml uses NativeAuthenticator); the dummy one belongs in "
        "values-testing.yaml, for a test cluster only"
    )
    assert check_values.login_problems(testing, [values_file]) == [refused]
    # No authenticator at all is the chart's default, the dummy one.
    assert check_values.login_problems({"hub": {"config": {}}}, [values_file]) == [refused]
    open_list = check_values.merged(VALUES, {"hub": {"config": {"Authenticator": None}}})
    assert check_values.login_problems(open_list, [values_file]) == [
        "hub.config.Authenticator.allowed_users is empty: list the workshop's learners (without "
        "an allow list JupyterHub lets nobody in)"
    ]
    # The command, against a stand-in chart whose schema accepts anything and whose default
    # login is the dummy one, as the chart's is.
    chart = tmp_path / "jupyterhub"
    chart.mkdir()
    (chart / "values.schema.yaml").write_text("{}\n")
    chart_defaults = {"hub": {"config": {"JupyterHub": {"authenticator_class": "dummy"}}}}
    (chart / "values.yaml").write_text(yaml.safe_dump(chart_defaults))
    assert check_values.main([str(chart)]) == 0
    bare = tmp_path / "values.yaml"
    bare.write_text(yaml.safe_dump({"singleuser": VALUES["singleuser"]}))
    assert check_values.main([str(chart), str(bare)]) == 1
    assert check_values.main([str(chart), str(values_file), str(testing_file)]) == 0


def test_z2jh_profiles_whole_gpu_mig_shared_and_cpu():
    profiles = {
        p["display_name"]: p.get("kubespawner_override", {})
        for p in VALUES["singleuser"]["profileList"]
    }
    assert list(profiles) == [
        "Whole GPU",
        "MIG slice (1g.18gb)",
        "Shared GPU (time-sliced)",
        "CPU only (emulator)",
    ]
    assert profiles["Whole GPU"]["extra_resource_limits"] == {"nvidia.com/gpu": "1"}
    assert profiles["MIG slice (1g.18gb)"]["extra_resource_limits"] == {
        "nvidia.com/mig-1g.18gb": "1"
    }
    # The device plugin's time-slicing with renameByDefault offers shares as nvidia.com/gpu.shared,
    # so a whole GPU never lands on a shared slot, nor a share on a whole GPU.
    shared = profiles["Shared GPU (time-sliced)"]
    assert shared["extra_resource_limits"] == {"nvidia.com/gpu.shared": "1"}
    assert cap_from_env(shared["environment"]) > 0
    assert profiles["CPU only (emulator)"] == {}


def _binder_requirements() -> list[Requirement]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith(("#", "-"))]


def test_the_gpu_image_swaps_in_the_same_torch_release_binder_pins():
    dockerfile = (DEPLOY / "z2jh" / "Dockerfile").read_text()
    torch_arg = re.search(r"^ARG TORCH=(\S+)$", dockerfile, re.M)[1]
    (pin,) = [str(r.specifier) for r in _binder_requirements() if r.name == "torch"]
    assert pin == f"=={torch_arg}+cpu"
    assert re.search(r"^FROM \$\{BASE\}$", dockerfile, re.M)


# --- Binder (repo2docker) ---


def test_binder_has_the_files_repo2docker_reads():
    assert sorted(p.name for p in BINDER.iterdir()) == [
        "jupyter_server_config.py",
        "overrides.json",
        "postBuild",
        "requirements.txt",
        "runtime.txt",
    ]
    # repo2docker runs postBuild only if it is executable; a syntax error would fail the build.
    assert (BINDER / "postBuild").stat().st_mode & 0o111
    subprocess.run(["bash", "-n", str(BINDER / "postBuild")], check=True, timeout=30)


def test_binder_pins_versions_the_package_accepts_and_the_cpu_torch():
    requirements = (BINDER / "requirements.txt").read_text().splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in requirements
    pins = {r.name: r.specifier for r in _binder_requirements()}
    assert all(str(spec).startswith("==") for spec in pins.values()), pins
    assert Version(str(pins["torch"])[2:]).local == "cpu"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dependency in map(Requirement, project["dependencies"]):
        if dependency.name in pins:
            pinned = Version(str(pins[dependency.name])[2:])
            assert dependency.specifier.contains(pinned, prereleases=True), dependency


# What repo2docker's own environment installs before requirements.txt (its conda lock file for
# Python 3.11, linux-64): notebook 7.4.7, whose requirement on JupyterLab is this range.
REPO2DOCKER_NOTEBOOK_NEEDS = SpecifierSet(">=4.4.9,<4.5")


def test_binder_jupyterlab_is_one_repo2docker_notebook_accepts():
    pins = {r.name: r.specifier for r in _binder_requirements()}
    assert REPO2DOCKER_NOTEBOOK_NEEDS.contains(str(pins["jupyterlab"])[2:])


def test_binder_opens_with_one_tour_and_no_news_question():
    overrides = json.loads((BINDER / "overrides.json").read_text())
    assert overrides == {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}
    page_config = LAB_CONFIG / "labconfig" / "page_config.json"
    # JupyterLab's own tours are off (the course has one), and so is the announcements plugin,
    # whose first question on a fresh Binder is whether to fetch Jupyter news.
    assert json.loads(page_config.read_text())["disabledExtensions"] == {
        "@jupyterlab/apputils-extension:announcements": True,
        "jupyterlab-tour:default-tours": True,
    }
    post_build = (BINDER / "postBuild").read_text()
    assert (
        'cp graphlab/course/lab_config/labconfig/page_config.json "${HOME}/.jupyter/labconfig/'
        'page_config.json"' in post_build
    )
    assert 'cp binder/overrides.json "${settings}/overrides.json"' in post_build


def test_binder_python_is_one_the_package_supports():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", runtime)
    assert match, runtime
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert SpecifierSet(requires).contains(f"{match[1]}.0")


def test_binder_opens_the_first_lesson_and_installs_graphlab_whole():
    config = Config()
    path = BINDER / "jupyter_server_config.py"
    exec(compile(path.read_text(), str(path), "exec"), {"get_config": lambda: config})
    url = config.ServerApp.default_url
    assert url == "/lab/tree/notebooks/00_start_here.ipynb"
    assert (ROOT / url.removeprefix("/lab/tree/")).is_file()
    post_build = (BINDER / "postBuild").read_text()
    assert "python -m pip install --no-cache-dir .\n" in post_build
    assert "extension_state()" in post_build
