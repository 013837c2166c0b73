"""``graphlab lab``: open the course in JupyterLab, in a workspace of the learner's own.

The first time, the lessons shipped with graphlab are copied into the workspace (default
``~/graphlab-course``, or ``--workspace DIR``); later runs add the lessons a new version brings
and never overwrite a lesson the learner has changed (:mod:`graphlab.course.workspace`).
JupyterLab then serves that folder and opens lesson 00: in the browser it starts, and at the URL
it prints (JupyterLab's default page is set to the lesson). The server starts that lesson's kernel
with itself and has it import torch and plotly while the page loads
(:mod:`graphlab.server.first_kernel`), so the learner's first cells do not wait for them.

``--lang zh_CN`` also copies the Chinese lessons (into the workspace's ``zh_CN/`` folder), opens
the Chinese lesson 00, and starts this JupyterLab in Chinese: a Jupyter config folder of the
workspace's own (``.graphlab/lab_config/zh_CN/``), put first on this server's config path, sets
JupyterLab's language as a default setting (``default_setting_overrides.json``). The learner's
own JupyterLab settings are not touched: a language they chose themselves in Settings → Language
still wins, and other JupyterLabs start as before. The interface needs JupyterLab's language pack
(``pip install jupyterlab-language-pack-zh-CN``); without it the lessons are in Chinese and
JupyterLab in English, and graphlab says so.

The server listens on 127.0.0.1 unless you say otherwise (``--ip``), and it keeps Jupyter's
login token: JupyterLab generates a random one and prints the URL that carries it. graphlab
never passes a token on the command line (where ``ps`` shows it) and never turns it off, so a
workshop laptop on shared Wi-Fi does not hand out a Python shell.
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from urllib.parse import quote

from graphlab.course.languages import ENGLISH, LANGUAGES, TRANSLATED, check_language
from graphlab.language import gettext as _
from graphlab.server.first_kernel import FIRST_LESSON_ENV

#: Where the learner's copy of the course goes unless ``--workspace`` says otherwise.
DEFAULT_WORKSPACE = "~/graphlab-course"

#: A Jupyter config folder that the course's JupyterLab reads too: its ``labconfig`` switches off
#: jupyterlab-tour's own welcome and notebook tours, which would otherwise start on a first visit
#: together with the course's tour. Only ``graphlab lab`` adds it; other JupyterLabs are left as
#: they are.
LAB_CONFIG = Path(__file__).resolve().parent.parent / "course" / "lab_config"

#: JupyterLab's setting of its interface language (a plugin id and its key).
LANGUAGE_SETTING = ("@jupyterlab/translation-extension:plugin", "locale")


def lab_environment(environ: dict[str, str], *config: Path) -> dict[str, str]:
    """``environ`` with the Jupyter config folders ``config`` (first) and :data:`LAB_CONFIG`
    first on Jupyter's config path."""
    path = [
        *map(str, config),
        str(LAB_CONFIG),
        *filter(None, environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep)),
    ]
    return environ | {"JUPYTER_CONFIG_PATH": os.pathsep.join(path)}


def language_config(workspace: Path, language: str) -> Path:
    """Write the workspace's Jupyter config folder that starts JupyterLab in ``language``, and
    return it (``<workspace>/.graphlab/lab_config/<language>``)."""
    from graphlab.course.workspace import WorkspaceError
    from graphlab.support.atomic import write_text_atomically

    folder = workspace / ".graphlab" / "lab_config" / language
    plugin, key = LANGUAGE_SETTING
    text = json.dumps({plugin: {key: language}}, indent=1) + "\n"
    target = folder / "labconfig" / "default_setting_overrides.json"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(
            _(
                "cannot create {folder} ({reason}): make the course workspace a folder you can "
                "write"
            ).format(folder=target.parent, reason=exc.strerror or exc)
        ) from None
    write_text_atomically(target, text, WorkspaceError)
    return folder


def has_language_pack(language: str) -> bool:
    """Whether JupyterLab's language pack for ``language`` is installed."""
    return any(e.name == language for e in entry_points(group="jupyterlab.languagepack"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=None, help=_("port (default: Jupyter's, 8888)"))
    parser.add_argument(
        "--no-browser", action="store_true", help=_("start the server without opening a browser")
    )
    parser.add_argument(
        "--ip",
        default="127.0.0.1",
        help=_(
            "address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 exposes the "
            "server, protected by its token, to the network)"
        ),
    )
    parser.add_argument(
        "--lang",
        metavar="LANG",
        default=ENGLISH,
        help=_(
            "the course's language, one of {languages} (default {default}): the lessons and "
            "JupyterLab in that language"
        ).format(languages=", ".join(LANGUAGES), default=ENGLISH),
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        default=DEFAULT_WORKSPACE,
        help=_(
            "your copy of the course (default {workspace}): the lessons are copied there the "
            "first time, and your edits are never overwritten"
        ).format(workspace=DEFAULT_WORKSPACE),
    )


def build_command(
    args: argparse.Namespace, folder: Path, first_lesson: Path | None = None
) -> list[str]:
    """The JupyterLab command line serving ``folder`` and opening ``first_lesson`` (no server is
    started here).

    The server is JupyterLab's own command run by :mod:`graphlab.cli.lab_server`, which first
    defers a slow import of jsonschema's. The lesson is JupyterLab's default page
    (``/lab/tree/<lesson>``), so both the browser JupyterLab starts and the URL with the token
    it prints open it; ``ServerApp.file_to_run`` would reach the browser only. It is LabApp's
    option: LabApp sets the server's own.
    """
    command = [
        sys.executable,
        "-m",
        "graphlab.cli.lab_server",
        f"--ServerApp.root_dir={folder}",
        f"--ServerApp.ip={args.ip}",
    ]
    if first_lesson is not None:
        page = quote(first_lesson.relative_to(folder).as_posix())
        command.append(f"--LabApp.default_url=/lab/tree/{page}")
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
    from graphlab.course.syllabus import lesson_paths
    from graphlab.course.workspace import sync
    from graphlab.errors import GraphlabError

    if args.port is not None and not 0 < args.port < 65536:
        raise GraphlabError(
            _("--port {port} is not a TCP port: use 1-65535").format(port=args.port)
        )
    language = check_language(args.lang)
    if importlib.util.find_spec("jupyterlab") is None:
        raise GraphlabError(_("JupyterLab is not installed: pip install jupyterlab"))
    translated = (language,) if language in TRANSLATED else ()
    done = sync(args.workspace, translated)
    folder = done.folder
    if done.added:
        print(
            _("graphlab lab: copied {count} lesson(s) into {folder}").format(
                count=len(done.added), folder=folder
            )
        )
    if done.updated:
        print(
            _(
                "graphlab lab: updated {lessons} to this version of the course (you had not "
                "changed them)"
            ).format(lessons=", ".join(done.updated))
        )
    if done.restored:
        print(
            _(
                "graphlab lab: restored {lessons} as shipped, finishing a reset that was "
                "interrupted (your copy is in the newest .backup- file beside it)"
            ).format(lessons=", ".join(done.restored))
        )
    first = next((folder / path.name for path in lesson_paths()), None)
    if first is not None and translated and (folder / language / first.name).is_file():
        first = folder / language / first.name
    if first is not None and not first.is_file():
        first = None
    command = build_command(args, folder, first)
    config = [language_config(folder, language)] if translated else []
    if translated and not has_language_pack(language):
        package = f"jupyterlab-language-pack-{language.replace('_', '-')}"
        print(
            _(
                "graphlab lab: JupyterLab has no {language} language pack, so its menus stay in "
                "English: pip install {package}"
            ).format(language=language, package=package),
            file=sys.stderr,
        )
    if not _is_loopback(args.ip):
        print(
            _(
                "graphlab lab: listening on {ip}, reachable from other machines; share the token "
                "only with people you trust"
            ).format(ip=args.ip),
            file=sys.stderr,
        )
    print(_("graphlab lab: opening {folder} in JupyterLab (Ctrl-C to stop)").format(folder=folder))
    environ = lab_environment(dict(os.environ), *config)
    if first is not None:
        # The server starts this lesson's kernel with itself (graphlab.server.first_kernel).
        environ[FIRST_LESSON_ENV] = first.relative_to(folder).as_posix()
    return subprocess.call(command, env=environ)


def _is_loopback(ip: str) -> bool:
    if ip == "localhost":
        return True
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False
