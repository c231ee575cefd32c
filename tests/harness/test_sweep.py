"""The gate sweep: the relevance gate re-applied to a run's recorded candidates (evalkit.harness.sweep)
equals running the gated pass at that value; the sweep frame and the per-category recommendation
(evalkit.views.sweep) on hand-computed fixtures."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalkit import EvalRun, UsageError, recommend_gates, run_eval
from evalkit.cli import main
from evalkit.harness.results import CandidateRecord, QueryResult, RunResult
from evalkit.harness.sweep import regate_pass, regate_query
from evalkit.views.charts import sweep_chart
from evalkit.views.styles import FAIL_CSS
from evalkit.views.sweep import gate_sweep
from evalkit.views.tables import gate_recommendation
from tests.factories import a_pass, a_run, scenario
from tests.shared import DATASETS

# Candidates in pipeline order: a (BM25 matched, sim .1), b (vector only, .5), c (vector only, .3),
# d (BM25 missed, no similarity). Relevant: b, c. top_k 2.
#   gate .4 keeps a, b          → top-2 [a, b]: recall 1/2, precision 1/2, RR 1/2; dropped c, d
#   gate .2 keeps a, b, c       → top-2 [a, b]: same metrics; dropped d
#   gate .6 keeps a             → [a]: zeros; dropped b, c, d
#   gate 0  keeps every row     → [a, b]; no gate: 0 candidates counted, nothing dropped
ROWS = [
    CandidateRecord(id="a", bm25=True, similarity=0.1),
    CandidateRecord(id="b", bm25=False, similarity=0.5),
    CandidateRecord(id="c", bm25=False, similarity=0.3),
    CandidateRecord(id="d", bm25=False, similarity=None),
]


def _query(
    retrieved: list[str], candidates: list[CandidateRecord] | None = ROWS, index: int = 0
) -> QueryResult:
    return QueryResult(
        index=index, query="q", top_k=2, relevant=["b", "c"], retrieved=retrieved, hits=[],
        metrics={"recall": 0.0, "precision": 0.0, "mrr": 0.0, "hit_rate": 0.0}, check_errors=[],
        gate_candidates=candidates,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("gate", "retrieved", "metrics", "candidates", "dropped"),
    [
        (0.4, ["a", "b"], (0.5, 0.5, 0.5, 1.0), 4, ["c", "d"]),
        (0.2, ["a", "b"], (0.5, 0.5, 0.5, 1.0), 4, ["d"]),
        (0.6, ["a"], (0.0, 0.0, 0.0, 0.0), 4, ["b", "c", "d"]),
        (0.0, ["a", "b"], (0.5, 0.5, 0.5, 1.0), 0, []),
    ],
)
def test_regate_query_keeps_bm25_rows_and_similar_rows_then_slices_to_top_k(
    gate: float, retrieved: list[str], metrics: tuple[float, ...], candidates: int, dropped: list[str]
) -> None:
    query = regate_query(_query(["a", "b"]), gate)
    assert query.retrieved == retrieved
    assert tuple(query.metrics.values()) == pytest.approx(metrics)
    assert (query.candidates, [d.id for d in query.dropped]) == (candidates, dropped)
    assert [d.relevant for d in query.dropped] == [i in ("b", "c") for i in dropped]


def test_a_query_without_recorded_candidates_keeps_its_result() -> None:
    scores = {"recall": 0.5, "precision": 1.0, "mrr": 1.0, "hit_rate": 1.0}
    pinned = _query(["b"], candidates=None).model_copy(update={"metrics": {**scores, "ndcg@10": 0.7}})
    again = regate_query(pinned, 0.9)
    assert (again.retrieved, again.metrics) == (["b"], scores)  # harness metrics only


def _run(gated_queries: list[QueryResult] | None) -> RunResult:
    perfect = {"recall": 1.0, "precision": 1.0, "mrr": 1.0, "hit_rate": 1.0}
    ungated = a_pass(
        scenario("facts", "explicit-fact", [_query(["b", "c"], None).model_copy(update={"metrics": perfect})])
    )
    gated = (
        None if gated_queries is None else a_pass(scenario("facts", "explicit-fact", gated_queries), gate=0.4)
    )
    return a_run(ungated, gated, top_k=2)


def test_sweep_rows_and_recommendation_by_hand() -> None:
    # ungated top-2 [b, c]: recall 1, precision 1. Gated (candidates above): gate .2 → recall .5,
    # precision .5, c lost from the top-k; gate 0 → the same top-2 [a, b].
    sweep = gate_sweep(_run([_query(["a", "b"])]), [0.0, 0.2, 0.6])
    overall = sweep[sweep["scope"] == "overall"].set_index("min_relevance")
    assert list(overall["recall"]) == [0.5, 0.5, 0.0]
    assert list(overall["recall_loss"]) == [0.5, 0.5, 1.0]
    assert list(overall["precision_gain"]) == [-0.5, -0.5, -1.0]
    assert list(overall["rows_kept"]) == [4, 3, 1]
    assert list(overall["rows_dropped"]) == [0, 1, 3]
    assert list(overall["relevant_lost"]) == [1, 1, 2]
    assert list(sweep["scope"]) == ["overall", "category", "scenario"] * 3
    picked = recommend_gates(sweep, tolerance=0.5).set_index("name")
    assert picked.loc["overall", "recommended_gate"] == 0.2  # the largest gate losing at most 0.5
    assert picked.loc["explicit-fact", "recall_loss"] == 0.5
    assert math.isnan(
        recommend_gates(sweep, tolerance=0.1).loc[0, "recommended_gate"]
    )  # none is cheap enough


def test_sweeping_needs_a_gated_pass_with_recorded_candidates() -> None:
    with pytest.raises(UsageError, match="cannot sweep the gate: the run has no gated pass"):
        regate_pass(_run(None), 0.4)
    with pytest.raises(UsageError, match="recorded no gate candidates"):
        regate_pass(_run([_query(["a"], candidates=None)]), 0.4)
    with pytest.raises(UsageError, match=r"must be in \[0, 1\]"):
        regate_pass(_run([_query(["a"])]), 1.5)


# --- against direct runs of the built-in suite ------------------------------------------------------


@pytest.fixture(scope="module")
def recorded() -> EvalRun:
    return run_eval(datasets=DATASETS, thresholds=None)


@pytest.mark.parametrize("gate", [0.2, 0.4, 0.6, 0.9])
def test_the_sweep_equals_running_the_gated_pass_at_each_value(recorded: EvalRun, gate: float) -> None:
    direct = run_eval(datasets=DATASETS, thresholds=None, min_relevance=gate).result.gated
    assert direct is not None
    regated = regate_pass(recorded.result, gate)
    assert regated.relevance_gate == direct.relevance_gate
    assert regated.overall == direct.overall
    assert regated.categories == direct.categories
    for mine, theirs in zip(regated.scenarios, direct.scenarios, strict=True):
        assert mine.metrics == theirs.metrics, mine.name
        for q, d in zip(mine.queries, theirs.queries, strict=True):
            assert (q.retrieved, q.metrics, q.candidates, q.dropped) == (
                d.retrieved,
                d.metrics,
                d.candidates,
                d.dropped,
            )
    sweep = recorded.gate_sweep([gate])
    overall = sweep[sweep["scope"] == "overall"].iloc[0]
    assert overall["recall"] == pytest.approx(direct.overall.metrics["recall"])


def test_the_sweep_at_zero_is_the_ungated_pass(recorded: EvalRun) -> None:
    regated = regate_pass(recorded.result, 0.0)
    pinned = {"explicit-fact-gated"}  # its queries pin min_relevance 0.4 in both passes
    for mine, theirs in zip(regated.scenarios, recorded.result.scenarios, strict=True):
        assert [q.retrieved for q in mine.queries] == [q.retrieved for q in theirs.queries], mine.name
        if mine.name not in pinned:
            assert mine.metrics == theirs.metrics


# --- views: chart, table, console ------------------------------------------------------------------


def test_sweep_chart_marks_the_current_gate_and_plots_each_value(recorded: EvalRun) -> None:
    fig = sweep_chart(recorded, [0.0, 0.4, 0.8])
    left, right = fig.axes
    recall, precision, current = left.get_lines()
    assert list(recall.get_xdata()) == [0.0, 0.4, 0.8]
    assert list(precision.get_ydata()) == pytest.approx(
        list(recorded.gate_sweep([0.0, 0.4, 0.8]).query("scope == 'overall'")["precision"])
    )
    assert list(current.get_xdata()) == [0.4, 0.4] and current.get_label() == "current gate 0.4"
    assert len(right.get_lines()) == len(recorded.result.categories) + 1
    assert not {"#d62728", "red"} & {line.get_color() for line in right.get_lines()}  # red means failure


def test_sweep_views_say_why_a_run_cannot_be_swept() -> None:
    run = EvalRun(_run(None))
    assert "no gate sweep: the run has no gated pass" in sweep_chart(run).axes[0].texts[0].get_text()
    table = gate_recommendation(run)
    assert (
        table.data.empty
        and table.caption
        == "Gate recommendation: the run has no gated pass (it ran with --gated-pass off); "
        "re-run it without --gated-pass off"
    )


def test_gate_recommendation_marks_categories_where_the_current_gate_costs_too_much(
    recorded: EvalRun,
) -> None:
    styler = gate_recommendation(recorded, values=[0.0, 0.2, 0.4])
    table = styler.data.set_index("name")
    assert table.loc["multi-hop", "recommended_gate"] == 0.2  # 0.25+ takes one relevant row out of its top-5
    assert table.loc["explicit-fact", "recommended_gate"] == 0.4
    column = list(styler.data.columns).index("recommended_gate")
    row = list(styler.data["name"]).index("multi-hop")
    assert FAIL_CSS.split(";")[0] in styler.to_html().split(f"_row{row}_col{column}")[1].split("}")[0]


def test_sweep_command_prints_the_sweep_and_the_recommendation(
    recorded: EvalRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded.save(tmp_path / "report.json")
    assert main(["sweep", str(path), "--values", "0,0.4", "--scope", "category"]) == 0
    out = capsys.readouterr().out
    assert "current gate 0.4" in out
    assert out.count(" multi-hop ") == 3  # two sweep rows and one recommendation
    assert "largest gate losing at most 0.02 recall" in out
    with pytest.raises(SystemExit) as bad_values:  # argparse: exit 2 at parse time
        main(["sweep", str(path), "--values", "0,1.5"])
    assert bad_values.value.code == 2
    assert main(["sweep", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
