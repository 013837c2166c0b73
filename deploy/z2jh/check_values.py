"""Check values.yaml against the Zero to JupyterHub chart's own schema, without a cluster.

The chart validates values with the JSON schema it packages (generated from its
``jupyterhub/values.schema.yaml``), after merging them over its defaults
(``jupyterhub/values.yaml``). This does the same with those two files from a checkout of the
chart's repository::

    python deploy/z2jh/check_values.py PATH/TO/zero-to-jupyterhub-k8s/jupyterhub

Prints ``ok`` or each violation with where it is; exit status 1 on any.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jsonschema
import yaml

VALUES = Path(__file__).with_name("values.yaml")


def merged(defaults: dict, ours: dict) -> dict:
    """``ours`` over ``defaults``, maps merged key by key, as Helm merges values."""
    result = dict(defaults)
    for key, value in ours.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    chart = Path(argv[0])
    schema = yaml.safe_load((chart / "values.schema.yaml").read_text())
    values = merged(
        yaml.safe_load((chart / "values.yaml").read_text()),
        yaml.safe_load(VALUES.read_text()),
    )
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(values), key=lambda e: list(e.absolute_path))
    for error in errors:
        print(f"{'.'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}")
    if not errors:
        print(f"ok: {VALUES.name} is valid against {chart / 'values.schema.yaml'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
