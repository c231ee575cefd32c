"""SPEC §3.3 aggregation: scenario = mean of its queries; category/overall = mean over the
queries of counted scenarios (outcome pass, not measure-only)."""

from __future__ import annotations

import pytest

from evalkit.harness.aggregation import latency_report, mean_metrics
from tests.factories import a_pass, query, scenario


def test_overall_is_mean_over_queries_not_over_scenarios():
    # scenario a: two queries with recall 1.0 and 0.0; scenario b: one query with recall 1.0.
    # query mean = (1 + 0 + 1) / 3 = 2/3; a scenario mean would be (0.5 + 1) / 2 = 0.75.
    result = a_pass(
        scenario("a", "cat-a", [query(0, recall=1.0), query(1, recall=0.0)]),
        scenario("b", "cat-b", [query(0, recall=1.0)]),
    )
    assert result.overall.metrics["recall"] == pytest.approx(2 / 3)
    assert result.overall.queries == 3
    assert result.scenarios[0].metrics.metrics["recall"] == pytest.approx(0.5)
    assert result.categories["cat-a"].metrics["recall"] == pytest.approx(0.5)


def test_measure_only_and_xfail_scenarios_are_excluded_from_aggregates():
    result = a_pass(
        scenario("a", "cat", [query(0, recall=1.0)]),
        scenario("probe", "probe-cat", [query(0, recall=0.0)], measure_only=True),
        scenario("known-bad", "bad-cat", [query(0, recall=0.0, errors=("forbid: x",))], outcome="xfail"),
    )
    assert result.overall.metrics["recall"] == 1.0
    assert result.overall.queries == 1
    assert set(result.categories) == {"cat"}


def test_categories_are_in_order_of_first_appearance_among_counted_scenarios():
    result = a_pass(
        scenario("probe", "beta", [query(0)], measure_only=True),
        scenario("a", "zeta", [query(0)]),
        scenario("b", "alpha", [query(0)]),
        scenario("c", "zeta", [query(0)]),
        scenario("d", "beta", [query(0)]),
    )
    assert list(result.categories) == ["zeta", "alpha", "beta"]


def test_empty_aggregate_is_zero_not_nan():
    agg = mean_metrics([])
    assert agg.queries == 0
    assert agg.metrics == {"recall": 0.0, "precision": 0.0, "mrr": 0.0, "hit_rate": 0.0}


def test_gate_summary_counts_drops_over_every_query():
    result = a_pass(
        scenario(
            "a", "cat", [query(0, dropped=(("x", False), ("r", True)), candidates=8), query(1, candidates=8)]
        ),
        scenario("probe", "p", [query(0, dropped=(("y", False),), candidates=4)], measure_only=True),
        gate=0.4,
    )
    gate = result.relevance_gate
    assert (
        gate.min_relevance,
        gate.candidates,
        gate.dropped_rows,
        gate.queries_with_drops,
        gate.queries,
    ) == (
        0.4,
        20,
        3,
        2,
        3,
    )


def test_latency_keeps_each_scenarios_first_search_apart_from_the_steady_state():
    report = latency_report({"a": [90.0, 1.0, 2.0], "b": [70.0, 3.0], "idle": []})
    assert report.first is not None and report.steady is not None and report.overall is not None
    assert (report.first.calls, report.first.p50_ms) == (2, 80.0)  # 90 and 70: the cold starts
    assert (report.steady.calls, report.steady.p50_ms) == (3, 2.0)
    assert report.overall.calls == 5 and set(report.scenarios) == {"a", "b"}
    assert latency_report({}).first is None and latency_report({}).steady is None


def test_the_console_and_the_latency_frame_show_the_first_search_and_the_steady_state():
    from evalkit import run_eval
    from evalkit.views.console import render_latency

    run = run_eval(thresholds=None, gated=False, progress=False)
    (overall, cold) = render_latency(run)
    assert overall.startswith("Search latency") and cold.startswith("  first search of a scenario p50 ")
    assert "the others p50 " in cold
    scopes = list(run.latency["scope"])
    assert scopes[-3:] == ["overall", "first search", "steady state"]
    first, steady = (run.latency.set_index("scope").loc[s, "calls"] for s in ("first search", "steady state"))
    assert first == len(run.result.scenarios) and first + steady == run.result.latency.overall.calls
