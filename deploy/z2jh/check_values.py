"""Check Zero to JupyterHub values without a cluster: the chart's own schema, and a closed login.

The chart validates values with the JSON schema it packages (generated from its
``jupyterhub/values.schema.yaml``), after merging them over its defaults
(``jupyterhub/values.yaml``), each ``--values`` file over the ones before. This does the same with
those two files from a checkout of the chart's repository::

    python deploy/z2jh/check_values.py PATH/TO/zero-to-jupyterhub-k8s/jupyterhub [VALUES ...]

(``VALUES`` defaults to ``values.yaml`` next to this file.) It also refuses values that would let
anyone in: JupyterHub's dummy login (the chart's default, any password) outside a file named for
testing (``values-testing.yaml``), or a login with no allow list.

Prints ``ok`` or each problem with where it is; exit status 1 on any.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jsonschema
import yaml

VALUES = Path(__file__).with_name("values.yaml")
#: The names that select JupyterHub's dummy authenticator.
DUMMY = {"dummy", "jupyterhub.auth.DummyAuthenticator", "dummyauthenticator.DummyAuthenticator"}


def merged(defaults: dict, ours: dict) -> dict:
    """``ours`` over ``defaults``, maps merged key by key, as Helm merges values."""
    result = dict(defaults)
    for key, value in ours.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def login_problems(values: dict, files: list[Path]) -> list[str]:
    """Why the merged ``values`` of ``files`` would let strangers in (empty if they would not)."""
    config = values.get("hub", {}).get("config", {}) or {}
    chosen = (config.get("JupyterHub") or {}).get("authenticator_class") or "dummy"
    if chosen in DUMMY:
        if any("testing" in path.name for path in files):
            return []
        return [
            f"hub.config.JupyterHub.authenticator_class: {chosen!r} lets anyone in with any "
            "password: choose a real login (values.yaml uses NativeAuthenticator); the dummy "
            "one belongs in values-testing.yaml, for a test cluster only"
        ]
    allow = config.get("Authenticator") or {}
    if not allow.get("allowed_users") and not allow.get("allow_all"):
        return [
            "hub.config.Authenticator.allowed_users is empty: list the workshop's learners "
            "(without an allow list JupyterHub lets nobody in)"
        ]
    return []


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    chart = Path(argv[0])
    files = [Path(name) for name in argv[1:]] or [VALUES]
    schema = yaml.safe_load((chart / "values.schema.yaml").read_text())
    values = yaml.safe_load((chart / "values.yaml").read_text())
    for path in files:
        values = merged(values, yaml.safe_load(path.read_text()) or {})
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(values), key=lambda e: list(e.absolute_path))
    problems = [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]
    problems += login_problems(values, files)
    for problem in problems:
        print(problem)
    if not problems:
        names = ", ".join(path.name for path in files)
        login = values["hub"]["config"]["JupyterHub"]["authenticator_class"]
        login = "the dummy login, for a test cluster only" if login in DUMMY else f"login {login}"
        print(f"ok: {names} valid against {chart / 'values.schema.yaml'}; {login}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
