"""PlanView, checked through its figure's traces on a hand-worked planning problem.

The cost table has sizes 1, 2, 3, 4, 8, 16, 32, 40 with replay 10/11/12/13/15/18/24/27 µs, eager
20/21/22/23/25/30/40/50 µs, graph memory 1/2/2.5/3/4/6/9/10 MiB and 0.5 s of capture each; the
histogram has 3 steps at batch 1, 2 at batch 3 and 1 at batch 40 (6 steps, 55 rows if each ran
in its own size). The graphs share one memory pool (the planner's default), so a plan's memory is
its largest graph's. Every expected number is worked out in the comment beside it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphlab.errors import GraphlabError
from graphlab.planner import Constraints, CostTable, Histogram
from graphlab.widgets import PlanView
from graphlab.widgets.plan_view import routes

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SIZES = [1, 2, 3, 4, 8, 16, 32, 40]


@pytest.fixture
def view() -> PlanView:
    costs = CostTable.from_dict(
        {
            "sizes": SIZES,
            "replay_us": [10, 11, 12, 13, 15, 18, 24, 27],
            "eager_us": [20, 21, 22, 23, 25, 30, 40, 50],
            "capture_s": [0.5] * len(SIZES),
            "graph_mib": [1, 2, 2.5, 3, 4, 6, 9, 10],
        }
    )
    histogram = Histogram.from_counts({1: 3, 3: 2, 40: 1})
    return PlanView(
        histogram, costs, Constraints(max_graphs=2), presets=("tgi", "pow2"), contrast="tgi"
    )


# Totals over the 6 steps. One graph: [3] serves 1 and 3 (3*12 + 2*12) and 40 runs eagerly (50):
# 110, better than [4] (5*13 + 50 = 115), [40] (6*27 = 162) or any other single size. Two graphs:
# [3, 40], 36 + 24 + 27 = 87, better than [4, 40] (65 + 27 = 92) and [1, 40] (30 + 81 = 111).
# In one shared pool [3] keeps 2.5 MiB and [3, 40] the 10 MiB of size 40.
FRONT = {"graphs": [1, 2], "memory": [2.5, 10.0], "start-up": [0.5, 1.0]}
FRONT_US = [110 / 6, 87 / 6]
# TGI's 1, 2, 4, 8, 16, 32 are all table sizes: 1 -> 1 (3*10), 3 -> 4 (2*13), 40 eager (50):
# 106 in 6 graphs whose largest (32) keeps 9 MiB. Powers of two up to 512 land on 1, 2, 4, 8, 16,
# 32 and 40 (the table's largest): 30 + 26 + 27 = 83 in 7 graphs, the largest keeping 10 MiB.
PRESETS = {"tgi": (6, 9.0, 3.0, 106 / 6), "pow2": (7, 10.0, 3.5, 83 / 6)}


def test_front_plan_and_presets_are_the_planners(view):
    front, plan, tgi, pow2 = view.figure.data[:4]
    assert list(front.x) == FRONT["graphs"]
    assert list(front.y) == pytest.approx(FRONT_US, rel=1e-12)
    assert list(front.text) == ["3", "3, 40"]
    assert (list(plan.x), list(plan.y), list(plan.text)) == ([2], [14.5], ["plan"])
    for trace, name in ((tgi, "tgi"), (pow2, "pow2")):
        graphs, _, _, step_us = PRESETS[name]
        assert list(trace.text) == [name]
        assert list(trace.x) == [graphs]
        assert trace.y[0] == pytest.approx(step_us, rel=1e-12)
    assert view.plan.sizes == (3, 40)


@pytest.mark.parametrize(("axis", "column", "log"), [("memory", 1, "log"), ("start-up", 2, "log")])
def test_the_dropdown_puts_memory_or_start_up_on_the_x_axis(view, axis, column, log):
    view.axis.value = axis
    front, plan, tgi, pow2 = view.figure.data[:4]
    assert list(front.x) == FRONT[axis]
    assert list(plan.x) == [FRONT[axis][1]]
    assert [tgi.x[0], pow2.x[0]] == [PRESETS["tgi"][column], PRESETS["pow2"][column]]
    assert view.figure.layout.xaxis.type == log
    view.axis.value = "graphs"
    assert list(view.figure.data[0].x) == [1, 2]
    assert view.figure.layout.xaxis.type == "linear"


def test_labels_of_close_points_go_to_opposite_sides():
    from graphlab.widgets.plan_view import _label_offsets

    points = {"plan": ([16], [1]), "vllm": ([35], [1]), "sglang": ([36], [1]), "tgi": ([6], [1])}
    # Span 30 graphs: 35 and 36 are 1 apart (< 6% of 30), 16 and 6 are far from everything.
    assert _label_offsets(points, ("plan", "vllm", "sglang", "tgi")) == [
        ((0, 7), "center"),
        ((-5, 7), "right"),
        ((5, -16), "left"),
        ((0, 7), "center"),
    ]


def test_bottom_panel_shows_steps_padding_and_eager_fallback(view):
    bars, plan_pad, plan_eager, tgi_pad, tgi_eager = view.figure.data[4:]
    assert list(bars.x) == [1, 3, 40]
    assert list(bars.y) == pytest.approx([3 / 6, 2 / 6, 1 / 6])
    # The plan [3, 40]: batch 1 pads 2 rows in the graph of 3; 3 and 40 fit exactly.
    assert list(plan_pad.y) == [2, 0, 0] and list(plan_pad.customdata) == [3, 3, 40]
    assert len(plan_eager.x) == 0 and plan_eager.showlegend is False
    # TGI: 1 fits, 3 pads one row in the graph of 4, 40 has no graph (drawn as a cross, no line).
    assert tgi_pad.y[:2].tolist() == [0, 1] and math.isnan(tgi_pad.y[2])
    assert list(tgi_eager.x) == [40] and tgi_eager.showlegend is True


def test_routes_of_a_plan():
    route = routes(
        type("P", (), {"sizes": (4, 16)})(), Histogram.from_counts({1: 1, 4: 1, 5: 2, 20: 1})
    )
    assert route.graph.tolist() == [4, 4, 16, 0]
    assert route.padding.tolist() == [3, 0, 11, 0]
    assert route.eager.tolist() == [False, False, False, True]


def test_headline_and_text_give_the_figures(view):
    # The plan pads 3 steps of batch 1 by 2 rows: 6 of 9 + 6 + 40 = 55 rows (10.9%). TGI pads
    # 2 rows of 3 + 8 + 40 = 51 (3.9%); 5 of 6 steps replay (83.3%).
    assert view.headline() == (
        "plan: 2 graphs, 14.5 µs/step, hit 100.0%, padding 10.9%, 10 MiB, 1.00 s · "
        "tgi: 6 graphs, 17.7 µs/step, hit 83.3%, padding 3.9%, 9 MiB, 3.00 s"
    )
    assert view.static_text().splitlines()[0].endswith("(sizes 3, 40)")


def test_display_bundle_is_the_widget_a_png_and_text(view):
    data, metadata = view._repr_mimebundle_()
    assert set(data) == {WIDGET_VIEW, "image/png", "text/plain"}
    assert metadata["image/png"]["width"] == 640
    assert data["text/plain"] == view.static_text()


def test_bad_input_is_one_clear_error(view):
    with pytest.raises(GraphlabError, match=r"PlanView takes a graphlab\.planner Histogram"):
        PlanView({"1": 3}, view.costs)
    with pytest.raises(GraphlabError, match="contrast 'vllm' is not among the presets shown"):
        PlanView(view.histogram, view.costs, presets=("tgi",), contrast="vllm")


def test_the_lessons_mix_draws_without_a_gpu():
    from graphlab.planner import BatchingModel, azure_requests, decode_histogram, recorded_costs

    recorded = recorded_costs()
    histogram = decode_histogram(azure_requests(), BatchingModel(rate_scale=2))
    view = PlanView(histogram, recorded.table, Constraints(max_graphs=16), source=recorded.label)
    assert view.plan.graphs <= 16 and len(view.front) >= 2
    assert np.all(np.diff([p.expected_step_us for p in view.front]) < 0)
    assert view.picture().width == 640
