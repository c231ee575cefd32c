"""The report's charts as drawn: no title, legend, axis label or tick label overlaps another (the
text bounding boxes of the rendered matplotlib figure), and the trend keeps systems and suites
apart with dates and commits on its ticks."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from evalkit import run_eval
from evalkit.harness.history import HISTORY_COLUMNS
from evalkit.metrics import HARNESS_METRICS
from evalkit.views import charts
from evalkit.views.frames import EvalRun
from tests.shared import DATASETS


@pytest.fixture(scope="module")
def run() -> EvalRun:
    return run_eval(datasets=DATASETS, thresholds=DATASETS / "thresholds.json")


def _history() -> pd.DataFrame:
    """Two systems on one suite and one system on another suite, three runs each."""
    rows = []
    for n, (system, digest) in enumerate(
        [("reference", "aaaa1111"), ("chroma", "aaaa1111"), ("reference", "bbbb2222")] * 3
    ):
        for metric in HARNESS_METRICS:
            rows.append(
                {
                    "run_id": f"r{n}", "recorded_at": "",
                    "generated_at": f"2026-11-{n + 10:02d}T08:00:00+00:00",
                    "system": system, "mode": "deterministic", "top_k": 5, "git_commit": f"{n:x}abcdef0123",
                    "git_dirty": False, "dataset_digest": digest * 8, "regressions": int(n == 4),
                    "min_relevance": 0.4, "candidates": 1, "dropped_rows": 0, "queries_with_drops": 0,
                    "pass": "ungated", "scope": "overall", "name": "overall", "metric": metric,
                    "value": 0.5 + n / 40, "queries": 41,
                }
            )  # fmt: skip
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def _boxes(fig: Figure) -> list[tuple[str, Bbox]]:
    """(what, display-space box) of every visible text the reader must be able to read."""
    canvas = FigureCanvasAgg(fig)  # what savefig draws with; draw() runs the constrained layout
    canvas.draw()
    renderer = canvas.get_renderer()
    found: list[tuple[str, Bbox]] = []
    if fig.get_suptitle():
        found.append(("suptitle", fig._suptitle.get_window_extent(renderer)))  # type: ignore[union-attr]
    for n, legend in enumerate(fig.legends):
        found.append((f"figure legend {n}", legend.get_window_extent(renderer)))
    for i, ax in enumerate(fig.axes):
        if not ax.axison:
            continue
        if ax.get_title():
            found.append((f"axes {i} title", ax.title.get_window_extent(renderer)))
        if ax.get_legend() is not None:
            found.append((f"axes {i} legend", ax.get_legend().get_window_extent(renderer)))
        for label, name in ((ax.xaxis.label, "xlabel"), (ax.yaxis.label, "ylabel")):
            if label.get_text():
                found.append((f"axes {i} {name}", label.get_window_extent(renderer)))
        for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                label = tick.label1
                inside = low - 1e-9 <= tick.get_loc() <= high + 1e-9  # matplotlib draws no other
                if inside and label.get_visible() and label.get_text():
                    found.append(
                        (f"axes {i} {name}tick {label.get_text()!r}", label.get_window_extent(renderer))
                    )
    return found


def _overlaps(fig: Figure) -> list[str]:
    boxes = _boxes(fig)
    return [
        f"{a} overlaps {b}"
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
        if box_a.overlaps(box_b)
    ]


CHARTS = {
    "gate_chart": lambda run: charts.gate_chart(run),
    "dropped_chart": lambda run: charts.dropped_chart(run),
    "sweep_chart": lambda run: charts.sweep_chart(run),
    "candidates_chart": lambda run: charts.candidates_chart(run),
    "category_chart": lambda run: charts.category_chart(run),
    "rank_chart": lambda run: charts.rank_chart(run, "multi-hop"),
    "trend_chart": lambda run: charts.trend_chart(_history()),
    "perturbation_chart": lambda run: charts.perturbation_chart(_curve()),
}


def _curve() -> pd.DataFrame:
    """A perturbation curve of two systems, shaped as `evalkit.perturbation_curve` returns it."""
    systems = ["reference", "keywords"]
    index = pd.MultiIndex.from_product([systems, HARNESS_METRICS], names=["system", "metric"])
    frame = pd.DataFrame([[0.95, 0.9, 0.8]] * len(index), index=index, columns=[0, 10, 50])
    frame.columns = frame.columns.set_names("distractors")
    return frame


@pytest.mark.parametrize("name", list(CHARTS))
def test_no_text_of_a_chart_overlaps_another(name: str, run: EvalRun) -> None:
    fig = CHARTS[name](run)
    assert len(_boxes(fig)) > 5
    assert _overlaps(fig) == []


def test_the_overlap_check_fails_on_a_legend_drawn_over_the_title() -> None:
    fig = charts.ReportFigure(figsize=(6, 3), layout="constrained")
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="a long legend entry that sits on the title")
    ax.set_title("a title")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 1.12))
    assert any("title" in clash and "legend" in clash for clash in _overlaps(fig))


def test_the_trend_keeps_systems_and_suites_apart_with_dates_and_commits() -> None:
    fig = charts.trend_chart(_history())
    recall = fig.axes[0]
    labels = [line.get_label() for line in recall.get_lines()]
    assert labels == [
        "reference · deterministic · top_k 5 · suite aaaa1111",
        "chroma · deterministic · top_k 5 · suite aaaa1111",
        "reference · deterministic · top_k 5 · suite bbbb2222",
    ]
    assert [len(line.get_xdata()) for line in recall.get_lines()] == [3, 3, 3]
    ticks = [t.get_text() for t in recall.get_xticklabels()]
    assert ticks[0] == "2026-11-10\n0abcdef"
    assert fig.legends and fig.get_suptitle().startswith("Trend over 9 runs")


def test_the_candidates_chart_marks_what_the_gate_dropped_from_the_run_record(run: EvalRun) -> None:
    fig = charts.candidates_chart(run)
    (ax,) = fig.axes
    gated = run.result.gated
    assert gated is not None
    candidates = [c for s in gated.scenarios for q in s.queries for c in q.gate_candidates or []]
    relevant_dropped = sum(d.relevant for s in gated.scenarios for q in s.queries for d in q.dropped)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert f"relevant, dropped ({relevant_dropped})" in labels
    assert f"gate {gated.relevance_gate.min_relevance:g}" in labels
    assert sum(len(c.get_offsets()) for c in ax.collections) == len(candidates)
    assert len(ax.texts) == min(relevant_dropped, charts.CANDIDATE_LABELS)  # each dropped relevant row named
