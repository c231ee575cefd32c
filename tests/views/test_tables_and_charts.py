"""evalkit.views (tables, charts, styles): the tables and charts of the report notebooks, on a
hand-built report (values computed by hand) and on a real small run of the reference store."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from evalkit import EvalkitError, EvalRun, RegressionError, RunConfig, UsageError, run_and_load, run_eval
from evalkit.api import assert_thresholds
from evalkit.harness.regressions import assertion_regressions
from evalkit.harness.results import (
    DetectionPower,
    DroppedRecord,
    HitRecord,
    MutationOutcome,
    QueryResult,
    Regression,
    RunResult,
)
from evalkit.harness.sweep import lost_from_top_k
from evalkit.systems.declaration import declaration_of
from evalkit.systems.reference import ReferenceSystem
from evalkit.views.charts import category_chart, dropped_chart, gate_chart, rank_chart
from evalkit.views.styles import (
    FAIL_CSS,
    GAIN_CSS,
    GOOD_CSS,
    LOSS_CSS,
    QUIET_CSS,
    RELEVANT_CSS,
    WARN_CSS,
    delta_css,
    format_delta,
    status_css,
)
from evalkit.views.tables import (
    assertion_failures,
    assertion_results,
    category_table,
    detection_table,
    hits_table,
    missed_relevant,
    regressions_table,
    run_summary,
    scenario_table,
)
from tests.factories import a_pass, a_run, scenario

# --- a hand-built report ------------------------------------------------------------------------
#
# facts (explicit-fact, pass), two queries:
#   q0 relevant f1: hits f1 (rank 1, relevant), d1 (rank 2)        → recall 1,   precision .5, mrr 1
#   q1 relevant f2, f3: hits f3 (rank 1, relevant), f4 (rank 2)    → recall .5,  precision .5, mrr 1
#   gated: q0 drops d1 (irrelevant) → [f1]: recall 1, precision 1, mrr 1
#          q1 drops f3 (relevant)   → [f4]: recall 0, precision 0, mrr 0
#   scenario means: ungated recall .75 precision .5 mrr 1 hit 1; gated recall .5 precision .5 mrr .5 hit .5
# chain (multi-hop, pass, fails a forbid): one query, hits x (rank 1, superseded), c1 (rank 2, relevant)
#   → recall 1, precision .5, mrr .5; the gate drops nothing.
# clash (contradiction, xfail): one failing query, recall 1, precision .5, mrr 1.
# probe (no-match, measure-only): one query with no relevant ids and no hits: zeros.


def _hit(
    hid: str, rank: int, relevant: bool, similarity: float | None, standing: str = "current"
) -> HitRecord:
    return HitRecord(
        id=hid,
        rank=rank,
        relevant=relevant,
        similarity=similarity,
        relevance=1.0 / rank,
        low_confidence=similarity is not None and similarity < 0.9,
        match_source=["vector", "bm25"] if relevant else ["vector"],
        standing=standing,
    )


def _query(
    index: int,
    relevant: list[str],
    hits: list[HitRecord],
    metrics: tuple[float, float, float, float],
    errors: tuple[str, ...] = (),
    dropped: tuple[tuple[str, bool], ...] = (),
) -> QueryResult:
    recall, precision, mrr, hit_rate = metrics
    return QueryResult(
        index=index,
        query=f"question {index}",
        top_k=5,
        relevant=relevant,
        retrieved=[h.id for h in hits],
        hits=hits,
        metrics={"recall": recall, "precision": precision, "mrr": mrr, "hit_rate": hit_rate},
        check_errors=list(errors),
        candidates=len(hits) + len(dropped),
        dropped=[DroppedRecord(id=i, relevant=r) for i, r in dropped],
    )


F1, D1 = _hit("f1", 1, True, 0.95), _hit("d1", 2, False, 0.2)
F3, F4 = _hit("f3", 1, True, 0.6), _hit("f4", 2, False, 0.3)
X, C1 = _hit("x", 1, False, 0.7, standing="superseded"), _hit("c1", 2, True, None)
FORBID = "forbid: 'x' was retrieved at rank 1"
CLASH = "forbid: 'x' was retrieved at rank 2"


def _ungated_scenarios() -> list:
    return [
        scenario(
            "facts",
            "explicit-fact",
            [
                _query(0, ["f1"], [F1, D1], (1.0, 0.5, 1.0, 1.0)),
                _query(1, ["f2", "f3"], [F3, F4], (0.5, 0.5, 1.0, 1.0)),
            ],
        ),
        scenario("chain", "multi-hop", [_query(0, ["c1"], [X, C1], (1.0, 0.5, 0.5, 1.0), errors=(FORBID,))]),
        scenario(
            "clash",
            "contradiction",
            [_query(0, ["c1"], [C1, X], (1.0, 0.5, 1.0, 1.0), errors=(CLASH,))],
            outcome="xfail",
        ),
        scenario("probe", "no-match", [_query(0, [], [], (0.0, 0.0, 0.0, 0.0))], measure_only=True),
    ]


def _gated_scenarios() -> list:
    f1 = F1
    f4 = F4.model_copy(update={"rank": 1})
    return [
        scenario(
            "facts",
            "explicit-fact",
            [
                _query(0, ["f1"], [f1], (1.0, 1.0, 1.0, 1.0), dropped=(("d1", False),)),
                _query(1, ["f2", "f3"], [f4], (0.0, 0.0, 0.0, 0.0), dropped=(("f3", True),)),
            ],
        ),
        scenario("chain", "multi-hop", [_query(0, ["c1"], [X, C1], (1.0, 0.5, 0.5, 1.0), errors=(FORBID,))]),
        scenario(
            "clash",
            "contradiction",
            [_query(0, ["c1"], [C1, X], (1.0, 0.5, 1.0, 1.0), errors=(CLASH,))],
            outcome="xfail",
        ),
        scenario("probe", "no-match", [_query(0, [], [], (0.0, 0.0, 0.0, 0.0))], measure_only=True),
    ]


METRIC_REGRESSION = Regression(
    kind="metric",
    category="explicit-fact",
    metric="recall",
    actual=0.75,
    threshold=0.9,
    message="category 'explicit-fact': recall 0.7500 is below its threshold 0.9000",
)


def _report(gated: bool = True, regressions: bool = True) -> RunResult:
    ungated = a_pass(*_ungated_scenarios())
    gated_pass = a_pass(*_gated_scenarios(), gate=0.4) if gated else None
    return a_run(
        ungated,
        gated_pass,
        regressions=[*assertion_regressions(ungated), METRIC_REGRESSION] if regressions else [],
        provenance={
            "config": RunConfig(),
            "evalkit_version": "0.1.0",
            "git": {"commit": "0123456789abcdef0123", "dirty": True},
            "python": "3.11.7",
            "platform": "Linux",
            "packages": {},
            "dataset_digest": "f" * 64,
            "system": {"system": "reference"},
            "embedder": {"mode": "deterministic", "identity": "hashing-fnv1a-384", "dim": 384},
            "declaration": declaration_of(ReferenceSystem()),
        },
    )


@pytest.fixture
def built() -> EvalRun:
    return EvalRun(_report())


def cell_css(html: str) -> dict[tuple[int, int], str]:
    """CSS declarations per (row, col) body cell from a Styler's rendered <style> block."""
    found: dict[tuple[int, int], str] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", html.split("</style>")[0]):
        for row, col in re.findall(r"_row(\d+)_col(\d+)\b", selectors):
            found[(int(row), int(col))] = found.get((int(row), int(col)), "") + body
    return found


def has_css(declarations: str, css: str) -> bool:
    return all(part.strip() in declarations for part in css.split(";"))


# --- tables -------------------------------------------------------------------------------------


def test_scenario_table_puts_ungated_gated_and_delta_side_by_side(built: EvalRun) -> None:
    table = scenario_table(built).data
    assert list(table.index) == ["facts", "chain", "clash", "probe"]
    metric_groups = [
        (m, p) for m in ("recall", "precision", "MRR", "hit rate") for p in ("ungated", "gated", "Δ")
    ]
    assert list(table.columns) == [
        ("", "category"),
        ("", "status"),
        ("", "counted"),
        ("", "queries"),
        *metric_groups,
        ("gate", "status"),
        ("gate", "dropped rows"),
        ("gate", "relevant dropped"),
        ("gate", "relevant lost from top-k"),
    ]
    facts = table.loc["facts"]
    assert facts[("recall", "ungated")] == pytest.approx(0.75)
    assert facts[("recall", "gated")] == pytest.approx(0.5)
    assert facts[("recall", "Δ")] == pytest.approx(-0.25)
    assert facts[("precision", "Δ")] == pytest.approx(0.0)
    assert facts[("MRR", "Δ")] == pytest.approx(-0.5)
    assert facts[("hit rate", "gated")] == pytest.approx(0.5)
    assert facts[("gate", "dropped rows")] == 2
    assert facts[("gate", "relevant dropped")] == 1
    assert facts[("gate", "relevant lost from top-k")] == 1  # f3 left q1's top-k
    assert list(table[("", "status")]) == ["pass", "fail", "xfail", "pass"]
    assert list(table[("", "counted")]) == ["yes", "yes", "no", "no"]


def test_scenario_table_marks_failures_losses_and_relevant_drops(built: EvalRun) -> None:
    styler = scenario_table(built)
    columns = list(styler.data.columns)
    css = cell_css(styler.to_html())
    status, recall_delta, precision_delta = (
        columns.index(("", "status")),
        columns.index(("recall", "Δ")),
        columns.index(("precision", "Δ")),
    )
    relevant_dropped = columns.index(("gate", "relevant dropped"))
    relevant_lost = columns.index(("gate", "relevant lost from top-k"))
    assert has_css(css[(1, status)], FAIL_CSS)  # chain: fail
    assert has_css(css[(2, status)], WARN_CSS)  # clash: xfail
    assert not has_css(css.get((0, status), ""), FAIL_CSS)  # facts: pass
    assert has_css(css[(0, recall_delta)], LOSS_CSS)
    assert has_css(css[(0, precision_delta)], QUIET_CSS)
    # red means lost from the top-k; a drop from the over-fetched pool is amber
    assert has_css(css[(0, relevant_lost)], FAIL_CSS)
    assert has_css(css[(0, relevant_dropped)], WARN_CSS)
    assert not has_css(css.get((0, relevant_dropped), ""), FAIL_CSS)
    assert not has_css(css.get((1, relevant_dropped), ""), FAIL_CSS)
    assert not has_css(css.get((1, relevant_lost), ""), FAIL_CSS)


def test_scenario_table_without_gated_pass_has_ungated_columns_only() -> None:
    table = scenario_table(EvalRun(_report(gated=False))).data
    assert [c for c in table.columns if c[0] == "recall"] == [("recall", "ungated")]
    assert not any(c[0] == "gate" for c in table.columns)


def test_scenario_table_selects_one_scenario_and_rejects_unknown_names(built: EvalRun) -> None:
    assert list(scenario_table(built, "chain").data.index) == ["chain"]
    with pytest.raises(UsageError, match=r"'nope' is not in this run.*facts, chain, clash, probe"):
        scenario_table(built, "nope")


def test_category_table_counts_only_counted_scenarios_and_ends_with_overall(built: EvalRun) -> None:
    table = category_table(built).data
    assert list(table.index) == ["explicit-fact", "multi-hop", "overall"]
    overall = table.loc["overall"]
    assert overall[("", "queries")] == 3  # facts ×2 + chain; xfail and measure-only excluded
    assert overall[("recall", "ungated")] == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert overall[("recall", "gated")] == pytest.approx((1.0 + 0.0 + 1.0) / 3)
    assert overall[("recall", "Δ")] == pytest.approx(-0.5 / 3)
    assert table.loc["multi-hop", ("MRR", "ungated")] == pytest.approx(0.5)


def test_run_summary_shows_mode_gate_version_commit_digest_and_date(built: EvalRun) -> None:
    styler = run_summary(built)
    values = styler.data["value"]
    assert values["mode"] == "deterministic"
    assert values["relevance gate"] == "min_relevance 0.4 (gated pass, report-only)"
    assert values["evalkit version"] == "0.1.0"
    assert values["git commit"] == "0123456789ab (dirty)"
    assert values["dataset digest"] == "f" * 16
    assert values["generated at"] == "2026-01-02T03:04:05+00:00"
    assert values["regressions"] == "2"
    assert values["scenarios"] == "4 scenarios, 5 queries"
    row = list(values.index).index("regressions")
    assert has_css(cell_css(styler.to_html())[(row, 0)], FAIL_CSS)


def test_run_summary_says_when_the_gated_pass_was_skipped() -> None:
    assert run_summary(EvalRun(_report(gated=False))).data["value"]["relevance gate"] == "gated pass skipped"


def test_assertion_failures_lists_every_error_with_its_scenario_status(built: EvalRun) -> None:
    styler = assertion_failures(built)
    frame = styler.data
    assert list(frame.columns) == ["scenario", "status", "query #", "query", "error"]
    assert frame.to_dict("records") == [
        {"scenario": "chain", "status": "fail", "query #": 1, "query": "question 0", "error": FORBID},
        {
            "scenario": "clash",
            "status": "xfail",
            "query #": 1,
            "query": "question 0",
            "error": CLASH,
        },
    ]
    assert "2 in 2 queries" in styler.caption
    css = cell_css(styler.to_html())
    assert has_css(css[(0, 1)], FAIL_CSS)
    assert has_css(css[(1, 1)], WARN_CSS)


def test_empty_failure_and_regression_tables_say_none() -> None:
    report = _report(regressions=False)
    one_scenario = report.measurement.model_copy(update={"scenarios": _ungated_scenarios()[:1]})
    run = EvalRun(report.with_pass(one_scenario))
    assert assertion_failures(run).data.empty
    assert "none" in assertion_failures(run).caption
    assert regressions_table(run).data.empty
    assert "none" in regressions_table(run).caption


def test_regressions_table_lists_each_regression(built: EvalRun) -> None:
    styler = regressions_table(built)
    frame = styler.data
    assert list(frame["kind"]) == ["assertion", "metric"]
    assert frame.loc[1, "threshold"] == pytest.approx(0.9)
    assert "2 —" in styler.caption


def test_assert_thresholds_raises_listing_every_regression(built: EvalRun) -> None:
    with pytest.raises(RegressionError) as caught:
        assert_thresholds(built)
    message = str(caught.value)
    assert message.startswith("2 regressions against the thresholds:")
    assert f"[assertion] chain query 1 ('question 0'): {FORBID}" in message
    assert f"[metric] {METRIC_REGRESSION.message}" in message
    assert isinstance(caught.value, EvalkitError)


def test_assert_thresholds_reports_without_raising_when_disabled_or_green(built: EvalRun) -> None:
    assert "not raised" in assert_thresholds(built, fail=False)
    assert assert_thresholds(EvalRun(_report(regressions=False))) == "No gating regressions."


def test_hits_table_groups_hits_by_query_in_rank_order_with_gate_flags(built: EvalRun) -> None:
    styler = hits_table(built, "facts")
    frame = styler.data
    assert list(frame.index) == [
        (1, "question 0", 1),
        (1, "question 0", 2),
        (2, "question 1", 1),
        (2, "question 1", 2),
    ]
    assert list(frame["id"]) == ["f1", "d1", "f3", "f4"]
    assert list(frame["relevant"]) == [True, False, True, False]
    assert list(frame["dropped by gate"]) == [False, True, True, False]
    assert list(frame.columns) == [
        *("id", "relevant", "similarity", "relevance", "match source"),
        *("low confidence", "standing", "dropped by gate"),
    ]
    css = cell_css(styler.to_html())
    dropped = list(frame.columns).index("dropped by gate")
    assert has_css(css[(0, 0)], RELEVANT_CSS)
    assert not has_css(css.get((1, 0), ""), RELEVANT_CSS)
    assert has_css(css[(1, dropped)], FAIL_CSS)
    chain = hits_table(built, "chain")
    assert has_css(cell_css(chain.to_html())[(0, list(chain.data.columns).index("standing"))], WARN_CSS)


def test_missed_relevant_lists_relevant_ids_never_retrieved(built: EvalRun) -> None:
    styler = missed_relevant(built, "facts")
    assert styler.data.to_dict("records") == [{"query #": 2, "query": "question 1", "id": "f2"}]
    assert "none" in missed_relevant(built, "chain").caption


def test_assertion_results_show_pass_fail_and_expected_failures(built: EvalRun) -> None:
    facts = assertion_results(built, "facts").data
    assert list(facts["result"]) == ["pass", "pass"]
    assert list(facts["recall"]) == [1.0, 0.5]
    assert list(facts["relevant"]) == ["f1", "f2, f3"]
    chain = assertion_results(built, "chain")
    assert chain.data.loc[0, "result"] == "fail"
    assert chain.data.loc[0, "errors"] == FORBID
    assert has_css(cell_css(chain.to_html())[(0, list(chain.data.columns).index("result"))], FAIL_CSS)
    assert assertion_results(built, "clash").data.loc[0, "result"] == "xfail"
    assert assertion_results(built, "probe").data.loc[0, "relevant"] == "(none)"


# --- style and format helpers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "css"),
    [("fail", FAIL_CSS), ("xfail", WARN_CSS), ("xpass", WARN_CSS), ("pass", ""), ("", "")],
)
def test_status_css(value: str, css: str) -> None:
    assert status_css(value) == css


@pytest.mark.parametrize(
    ("value", "text", "css"),
    [
        (-0.0667, "-0.067", LOSS_CSS),
        (0.2, "+0.200", GAIN_CSS),
        (0.0, "0", QUIET_CSS),
        (1e-12, "0", QUIET_CSS),
    ],
)
def test_delta_format_and_colour(value: float, text: str, css: str) -> None:
    assert format_delta(value) == text
    assert delta_css(value) == css


# --- charts -------------------------------------------------------------------------------------


def _bars(ax: plt.Axes) -> list:
    return [patch for container in ax.containers for patch in container]


def test_gate_chart_has_a_panel_per_metric_and_a_bar_pair_per_scenario(built: EvalRun) -> None:
    fig = gate_chart(built)
    assert [ax.get_title() for ax in fig.axes] == ["recall", "precision", "MRR"]
    recall_bars = _bars(fig.axes[0])
    assert len(recall_bars) == 2 * 4
    assert [b.get_width() for b in recall_bars] == pytest.approx([0.75, 1.0, 1.0, 0.0, 0.5, 1.0, 1.0, 0.0])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["facts", "chain", "clash", "probe"]
    assert fig._repr_png_().startswith(b"\x89PNG")


def test_gate_chart_without_gated_pass_has_one_bar_per_scenario() -> None:
    fig = gate_chart(EvalRun(_report(gated=False)))
    assert all(len(_bars(ax)) == 4 for ax in fig.axes)


def test_dropped_chart_stacks_relevant_and_irrelevant_drops(built: EvalRun) -> None:
    fig = dropped_chart(built)
    (ax,) = fig.axes
    bars = _bars(ax)
    assert len(bars) == 2 * 4
    relevant, irrelevant = bars[:4], bars[4:]
    assert [b.get_width() for b in relevant] == [1, 0, 0, 0]
    assert [b.get_width() for b in irrelevant] == [1, 0, 0, 0]
    assert irrelevant[0].get_x() == 1  # stacked after the relevant drop
    assert [t.get_text() for t in ax.texts] == [" 1 relevant lost from top-k"]  # facts only
    assert "2 of" in ax.get_title()


def test_dropped_chart_without_gated_pass_says_so() -> None:
    fig = dropped_chart(EvalRun(_report(gated=False)))
    (ax,) = fig.axes
    assert _bars(ax) == []
    assert "gated pass skipped" in ax.texts[0].get_text()


def test_category_chart_has_four_metric_bars_per_category_and_overall(built: EvalRun) -> None:
    fig = category_chart(built)
    (ax,) = fig.axes
    assert len(ax.containers) == 4
    assert all(len(c) == 3 for c in ax.containers)  # explicit-fact, multi-hop, overall
    recall = [b.get_height() for b in ax.containers[0]]
    assert recall == pytest.approx([0.75, 1.0, 2.5 / 3])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["explicit-fact", "multi-hop", "overall"]


def test_rank_chart_plots_every_hit_coloured_by_relevance(built: EvalRun) -> None:
    fig = rank_chart(built, "facts")
    similarity, relevance = fig.axes
    relevant, irrelevant, dropped = similarity.collections[:3]
    assert len(relevant.get_offsets()) == 2  # f1, f3
    assert len(irrelevant.get_offsets()) == 2  # d1, f4
    assert len(dropped.get_offsets()) == 2  # d1, f3
    assert sum(len(c.get_offsets()) for c in relevance.collections[:2]) == 4
    floors = sorted(line.get_ydata()[0] for line in similarity.lines if line.get_linestyle() in ("--", ":"))
    assert floors == [0.4, 0.9]


def test_charts_do_not_touch_pyplot_state(built: EvalRun) -> None:
    before = plt.get_fignums()
    for fig in (gate_chart(built), dropped_chart(built), category_chart(built), rank_chart(built, "facts")):
        fig._repr_png_()
    assert plt.get_fignums() == before


# --- on a real small run ------------------------------------------------------------------------

TINY_SCENARIO = """\
name: tiny-facts
category: explicit-fact
distractors: false
thoughts:
  - {id: port, content: "The API server listens on port 8443"}
  - {id: path, content: "Logs are written to /var/log/evalkit"}
  - {id: team, content: "Team Falcon owns the billing service"}
  - {id: db, content: "The billing service stores invoices in Postgres"}
  - {id: lunch, content: "Lunch is served at noon on Fridays"}
  - {id: plants, content: "The office plants are watered weekly"}
queries:
  - {query: "which port does the API server listen on", relevant: [port]}
  - {query: "where are logs written", relevant: [path], forbid: [port]}
  - {query: "who owns billing and where are invoices stored", relevant: [team, db]}
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalRun, Path]:
    root = tmp_path_factory.mktemp("tiny-dataset")
    (root / "scenarios").mkdir()
    (root / "scenarios" / "tiny-facts.yaml").write_text(TINY_SCENARIO, encoding="utf-8")
    return run_eval(datasets=root, thresholds=None), root


def test_tables_of_a_real_run_agree_with_its_frames(small: tuple[EvalRun, Path]) -> None:
    run, _ = small
    frames = run.scenarios.set_index(["pass", "scenario"])
    table = scenario_table(run).data
    for metric, label in (("recall", "recall"), ("precision", "precision"), ("mrr", "MRR")):
        assert table.loc["tiny-facts", (label, "ungated")] == frames.loc[("ungated", "tiny-facts"), metric]
        assert table.loc["tiny-facts", (label, "gated")] == frames.loc[("gated", "tiny-facts"), metric]
    assert table.loc["tiny-facts", ("gate", "dropped rows")] == run.result.gated.relevance_gate.dropped_rows
    ungated_hits = run.hits[run.hits["pass"] == "ungated"]
    hits = hits_table(run, "tiny-facts").data
    assert len(hits) == len(ungated_hits)
    assert list(hits["dropped by gate"]) == list(ungated_hits["dropped_by_gate"])
    # the gated pass over-fetches, so it may drop rows beyond the ungated top-k as well
    gated_queries = run.result.gated.scenarios[0].queries
    expected = sum(
        h.id in {d.id for d in g.dropped}
        for q, g in zip(run.result.scenarios[0].queries, gated_queries, strict=True)
        for h in q.hits
    )
    assert hits["dropped by gate"].sum() == expected > 0
    assert len(assertion_results(run, "tiny-facts").data) == 3
    for styler in (run_summary(run), category_table(run), assertion_failures(run), regressions_table(run)):
        assert "<table" in styler.to_html()
    fig = rank_chart(run, "tiny-facts")
    assert sum(len(c.get_offsets()) for c in fig.axes[0].collections[:2]) == len(ungated_hits)


def test_run_and_load_loads_a_saved_report_instead_of_running(
    small: tuple[EvalRun, Path], tmp_path: Path
) -> None:
    run, root = small
    path = run.save(tmp_path / "report.json")
    loaded = run_and_load(tmp_path / "unused.json", report_json=path, datasets="does-not-exist")
    pd.testing.assert_frame_equal(scenario_table(loaded).data, scenario_table(run).data)
    fresh = run_and_load(tmp_path / "fresh.json", datasets=root, thresholds=None, gated_pass="off")
    assert fresh.result.gated is None
    assert not (tmp_path / "unused.json").exists() and (tmp_path / "fresh.json").is_file()


def test_detection_table_marks_escapes_and_false_alarms_red():
    alarm = [Regression(kind="metric", message="overall: recall 0.5 is below its threshold 0.9")]
    common = {"description": "a bug", "hint": ""}
    caught = MutationOutcome(mutation="caught", control=False, regressions=alarm, **common)
    escaped = MutationOutcome(mutation="escaped", control=False, regressions=[], **common)
    control = MutationOutcome(
        mutation="noop", control=True, regressions=alarm, **{**common, "description": "no change"}
    )
    detection = DetectionPower(outcomes=[caught, escaped, control], checked_against=None)
    run = EvalRun(_report().model_copy(update={"detection": detection}))
    styler = detection_table(run)
    html = styler.to_html()
    assert "1 of 2 injected search bugs caught — GATE MISSED SOMETHING" in html
    styles = styler._compute().ctx  # (row, col) -> [(prop, value)]
    caught_col = list(styler.data.columns).index("caught")
    css = ["; ".join(f"{k}: {v}" for k, v in styles[(row, caught_col)]) for row in range(3)]
    assert css == [GOOD_CSS, FAIL_CSS, FAIL_CSS]


def test_detection_table_says_when_none_was_saved_with_the_run():
    styler = detection_table(EvalRun(_report()))
    assert styler.data.empty
    assert "not measured with this run" in styler.to_html()


def test_charts_describe_themselves_as_alt_text_and_plain_text(built: EvalRun) -> None:
    fig = gate_chart(built)
    assert fig.alt_text == "Chart: Ungated vs gated, per scenario; recall; precision; MRR"
    data, metadata = fig._repr_mimebundle_()
    assert data["image/png"].startswith(b"\x89PNG") and metadata == {"image/png": {"alt": fig.alt_text}}
    assert repr(fig) == fig.alt_text


def test_tables_print_their_caption_and_frame_as_plain_text(built: EvalRun) -> None:
    text = repr(regressions_table(built))
    assert text.splitlines()[0] == "Regressions: 2 — this run fails the thresholds"
    assert "category 'explicit-fact': recall 0.7500 is below its threshold 0.9000" in text


def test_lost_from_top_k_counts_relevant_rows_that_left_the_top_k_not_pool_drops() -> None:
    # ungated top-k [a, b, c, d] with relevant a, c, e (e only in the pool beyond the top-k);
    # the gate drops c (top-k, relevant), d (top-k, irrelevant) and e (pool, relevant): gated [a, b, f]
    def q(retrieved: list[str], dropped: tuple[tuple[str, bool], ...] = ()) -> QueryResult:
        return QueryResult(
            index=0, query="q", top_k=4, relevant=["a", "c", "e"], retrieved=retrieved, hits=[],
            metrics={}, check_errors=[], dropped=[DroppedRecord(id=i, relevant=r) for i, r in dropped],
        )  # fmt: skip

    ungated = q(["a", "b", "c", "d"])
    gated = q(["a", "b", "f"], dropped=(("c", True), ("d", False), ("e", True)))
    assert lost_from_top_k(ungated, gated) == ["c"]
    assert lost_from_top_k(ungated, ungated) == []


def test_queries_and_gate_comparison_separate_pool_drops_from_top_k_losses(built: EvalRun) -> None:
    queries = built.queries.set_index(["pass", "scenario", "query_number"])
    assert queries.loc[("gated", "facts", 2), "lost_from_top_k"] == ["f3"]
    assert queries.loc[("gated", "facts", 1), "lost_from_top_k"] == []  # d1 dropped, but irrelevant
    assert queries.loc[("ungated", "facts", 2), "relevant_lost"] == 0
    comparison = built.gate_comparison().set_index("scenario")
    assert comparison["relevant_dropped"].to_dict() == {"facts": 1, "chain": 0, "clash": 0, "probe": 0}
    assert comparison["relevant_lost"].to_dict() == {"facts": 1, "chain": 0, "clash": 0, "probe": 0}
