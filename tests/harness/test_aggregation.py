"""SPEC §3.3 aggregation: scenario = mean of its queries; category/overall = mean over the
queries of counted scenarios (outcome pass, not measure-only)."""

from __future__ import annotations

import pytest

from evalkit.harness.aggregation import mean_metrics
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
