"""JupyterHub for a graphlab workshop on one machine with one or more GPUs.

Every learner logs in with their own account on this machine (JupyterHub's default PAM login and
local process spawner), gets their own copy of the lessons in ``~/graphlab-course`` and their own
progress, one GPU or MIG slice dealt round-robin, and the per-learner memory cap. Start it as
root, from a Python environment where graphlab and jupyterhub are installed and that every
learner account can read::

    graphlab doctor --workshop 24                     # the verdict and the cap to use
    GRAPHLAB_GPU_MEMORY_GB=11.9 jupyterhub -f deploy/jupyterhub_config.py

Settings, from the environment:

- ``GRAPHLAB_GPU_MEMORY_GB``: each learner's cap (``graphlab doctor --workshop N`` says which);
  unset, learners are not capped.
- ``GRAPHLAB_HUB_DEVICES``: the devices to deal, as ``CUDA_VISIBLE_DEVICES`` values
  (``0,1,2,3`` or MIG UUIDs), or ``none`` for a CPU-only hub; default: every GPU, or every MIG
  slice of a GPU in MIG mode, that nvidia-smi lists.
- ``GRAPHLAB_HUB_PYTHON``: the Python the learners' servers run (default: the hub's).

Before a real workshop, serve it over HTTPS (``c.JupyterHub.ssl_key``/``ssl_cert``, or a
reverse proxy in front of port 8000), and pick the authenticator that fits your learners' accounts.
Learners under one Unix account would share files: give each their own account.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphlab_hub  # next to this file

from graphlab.errors import GraphlabError
from graphlab.support.memory_cap import cap_from_env

c = get_config()  # noqa: F821  (provided by JupyterHub when it loads this file)

try:
    cap_gb = cap_from_env()
except GraphlabError as exc:
    sys.exit(f"jupyterhub_config.py: {exc}")
devices = graphlab_hub.hub_devices(dict(os.environ))
pre_spawn, post_stop, _ = graphlab_hub.spawn_hooks(devices, cap_gb)

c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = graphlab_hub.singleuser_command(graphlab_hub.python_for_learners())
c.Spawner.pre_spawn_hook = pre_spawn
c.Spawner.post_stop_hook = post_stop
c.Spawner.default_url = "/lab/tree/00_start_here.ipynb"
# A lesson's first cell imports torch; the server itself does not, but give slow disks time.
c.Spawner.http_timeout = 120
c.Spawner.args = [
    # Each open kernel holds its own GPU memory (up to the cap): shut down the ones left idle
    # for 20 minutes, so a learner's earlier lessons do not keep the GPU from the next.
    "--MappingKernelManager.cull_idle_timeout=1200",
    "--MappingKernelManager.cull_interval=120",
]
