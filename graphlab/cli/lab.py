"""``graphlab lab``: open the course's notebooks in JupyterLab.

The server listens on 127.0.0.1 unless you say otherwise (``--ip``), and it keeps Jupyter's
login token: JupyterLab generates a random one and prints the URL that carries it. graphlab
never passes a token on the command line (where ``ps`` shows it) and never turns it off, so a
workshop laptop on shared Wi-Fi does not hand out a Python shell.
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import os
import subprocess
import sys
from pathlib import Path

HELP = "Open the graphlab course (the notebooks/ folder) in JupyterLab."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=None, help="port (default: Jupyter's, 8888)")
    parser.add_argument(
        "--no-browser", action="store_true", help="start the server without opening a browser"
    )
    parser.add_argument(
        "--ip",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 exposes the "
        "server, protected by its token, to the network)",
    )
    parser.add_argument(
        "--notebooks",
        metavar="DIR",
        default=None,
        help="the course folder to open (default: notebooks/ of the graphlab checkout)",
    )


def notebooks_dir(explicit: str | None = None) -> Path:
    """The course folder: ``explicit`` if given, else ``notebooks/`` next to the package."""
    from graphlab.errors import GraphlabError

    # graphlab/commands/lab.py -> the repository root is three levels up in a checkout.
    checkout = Path(__file__).resolve().parents[2]
    folder = Path(explicit).resolve() if explicit else checkout / "notebooks"
    if not folder.is_dir():
        raise GraphlabError(
            f"the course notebooks were not found at {folder}: graphlab lab opens the notebooks/ "
            "folder of a repository checkout (git clone it, then pip install -e .), or pass "
            "--notebooks DIR"
        )
    return folder


def build_command(args: argparse.Namespace, folder: Path) -> list[str]:
    """The JupyterLab command line for ``args`` (no server is started here)."""
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={folder}",
        f"--ServerApp.ip={args.ip}",
    ]
    if args.port is not None:
        command.append(f"--ServerApp.port={args.port}")
    if args.no_browser:
        command.append("--no-browser")
    if os.geteuid() == 0:
        # GPU cloud containers (RunPod, Brev, many Docker images) run as root, where JupyterLab
        # refuses to start without this flag; the loopback default and the token still guard it.
        command.append("--allow-root")
    return command


def run(args: argparse.Namespace) -> int:
    from graphlab.errors import GraphlabError

    if args.port is not None and not 0 < args.port < 65536:
        raise GraphlabError(f"--port {args.port} is not a TCP port: use 1-65535")
    if importlib.util.find_spec("jupyterlab") is None:
        raise GraphlabError("JupyterLab is not installed: pip install jupyterlab")
    folder = notebooks_dir(args.notebooks)
    command = build_command(args, folder)
    if not _is_loopback(args.ip):
        print(
            f"graphlab lab: listening on {args.ip}, reachable from other machines; "
            "share the token only with people you trust",
            file=sys.stderr,
        )
    print(f"graphlab lab: opening {folder} in JupyterLab (Ctrl-C to stop)")
    return subprocess.call(command)


def _is_loopback(ip: str) -> bool:
    if ip == "localhost":
        return True
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False
