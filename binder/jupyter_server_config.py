"""Jupyter server settings for Binder: open JupyterLab on the course's first lesson.

A Binder link's ``urlpath=`` parameter, when given, takes precedence over this default.
"""

c = get_config()  # noqa: F821  (provided by Jupyter when it loads this file)
c.ServerApp.default_url = "/lab/tree/notebooks/00_start_here.ipynb"
