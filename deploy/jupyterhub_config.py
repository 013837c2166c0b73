"""JupyterHub for a graphlab workshop on one machine with one or more GPUs.

Every learner logs in with their own account on this machine and its password (JupyterHub's PAM
login and local process spawner), gets their own copy of the lessons in ``~/graphlab-course``, a
home only they can read, their own progress, one GPU or MIG slice dealt round-robin, and the
per-learner memory cap. Only the accounts of the roster get in; its admins (the instructors) also
see every learner's progress at ``/services/progress/``. Start it as root, from a Python
environment where graphlab and jupyterhub are installed and that every learner account can read
(docs/instructor.md, "The day before", creates the accounts and the roster)::

    graphlab doctor --workshop 24                     # the verdict and the cap to use
    GRAPHLAB_HUB_ROSTER=roster.txt GRAPHLAB_GPU_MEMORY_GB=11.9 \\
        jupyterhub -f deploy/jupyterhub_config.py

Settings, from the environment:

- ``GRAPHLAB_HUB_ROSTER`` (required): the roster file, one account a line, the instructor's
  followed by ``admin`` (``deploy/roster.example.txt``). The hub refuses to start without it.
- ``GRAPHLAB_GPU_MEMORY_GB``: each learner's cap (``graphlab doctor --workshop N`` says which);
  unset, learners are not capped.
- ``GRAPHLAB_HUB_DEVICES``: the devices to deal, as ``CUDA_VISIBLE_DEVICES`` values
  (``0,1,2,3`` or MIG UUIDs), or ``none`` for a CPU-only hub; default: every GPU, or every MIG
  slice of a GPU in MIG mode, that nvidia-smi lists. On a machine with NVIDIA devices where
  nvidia-smi is missing or fails, the hub refuses to start instead of dealing none.
- ``GRAPHLAB_HUB_URL``: where the hub listens (default ``http://:8000``, every interface).
- ``GRAPHLAB_HUB_VIEW_PORT``: the local port of the instructor's view (default 10101).
- ``GRAPHLAB_HUB_PYTHON``: the Python the learners' servers run (default: the hub's).

Before a real workshop, serve it over HTTPS (``c.JupyterHub.ssl_key``/``ssl_cert``, or a
reverse proxy in front of port 8000).
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
    roster = graphlab_hub.read_roster(os.environ.get("GRAPHLAB_HUB_ROSTER"))
    cap_gb = cap_from_env()
    devices = graphlab_hub.hub_devices(dict(os.environ))
except (graphlab_hub.HubSetupError, GraphlabError) as exc:
    sys.exit(f"jupyterhub_config.py: {exc}")
pre_spawn, post_stop, _ = graphlab_hub.spawn_hooks(devices, cap_gb, private_homes=True)
python = graphlab_hub.python_for_learners()

# Closed by default: the roster's accounts, with their passwords on this machine, and nobody
# else; an account taken off the roster is out at the next start, even if it logged in before.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = set(roster.learners)
c.Authenticator.admin_users = set(roster.admins)
c.Authenticator.allow_existing_users = False

hub_url = os.environ.get("GRAPHLAB_HUB_URL", "http://:8000")
c.JupyterHub.bind_url = hub_url
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = graphlab_hub.singleuser_command(python)
c.Spawner.args = graphlab_hub.SERVER_ARGS
c.Spawner.pre_spawn_hook = pre_spawn
c.Spawner.post_stop_hook = post_stop
c.Spawner.default_url = "/lab/tree/00_start_here.ipynb"
# A lesson's first cell imports torch; the server itself does not, but give slow disks time.
c.Spawner.http_timeout = 120

# The instructor's view: every learner's progress, read from their servers with the service's
# own token; only admins may open it (JupyterHub gives access:services to the admin role alone).
view_port = os.environ.get("GRAPHLAB_HUB_VIEW_PORT", "10101")
c.JupyterHub.services = [
    {
        "name": "progress",
        "url": f"http://127.0.0.1:{view_port}",
        "command": [python, "-m", "graphlab.workshop.instructor_view"],
        "environment": {"GRAPHLAB_HUB_URL": graphlab_hub.local_address(hub_url)},
        "oauth_no_confirm": True,
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "workshop-progress",
        "description": "Read the learners' progress from their servers",
        "scopes": ["list:users", "read:users", "read:servers", "access:servers"],
        "services": ["progress"],
    }
]
