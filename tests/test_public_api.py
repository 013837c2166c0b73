"""The names graphlab promises users (README, "In Python"), reached the way users reach them."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import graphlab


def test_every_public_name_resolves():
    for name in graphlab.__all__:
        assert getattr(graphlab, name) is not None, name


def test_promised_names_on_a_cpu_machine():
    assert graphlab.DEVICE == "cpu"
    assert graphlab.cuda is graphlab.emulator
    assert graphlab.backend().name == "emulator"
    assert callable(graphlab.widgets.TimelineView)
    assert callable(graphlab.Timeline.from_chrome_trace)
    assert graphlab.recording("chain_1000_k4096").meta["gpu"] == "NVIDIA H200"
    # A callable package: the function and the lesson's example models under one name.
    assert graphlab.diagnose.__call__.__doc__ == graphlab.diagnose.diagnose.__doc__
    # Jupyter's help (graphlab.diagnose?) shows the function's own parameters.
    assert inspect.signature(graphlab.diagnose) == inspect.signature(graphlab.diagnose.diagnose)
    assert callable(graphlab.diagnose) and callable(graphlab.diagnose.examples.decoder_step)


def test_import_is_light_and_unknown_names_fail():
    # `import graphlab` must not pull in plotly or the widgets: the CLI and workers stay quick.
    code = "import sys, graphlab; print('plotly' in sys.modules, 'graphlab.widgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    with pytest.raises(AttributeError, match="no_such_name"):
        graphlab.no_such_name  # noqa: B018
