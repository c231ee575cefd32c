"""Aggregation of per-query scores (SPEC §3.3): scenario = mean over its queries; category and
overall = mean over the queries of scenarios that gate (outcome "pass" and not measure_only).

Per-query scores always exist (ranx style); these functions only average them. Means are taken
over every metric key the queries share; an empty set of queries gives zeros, never NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.harness.results import (
    Aggregate,
    GateSummary,
    PassResult,
    QueryResult,
    ScenarioResult,
)
from evalkit.metrics import HARNESS_METRICS


def mean_metrics(queries: Sequence[QueryResult]) -> Aggregate:
    """Mean of each metric over `queries` (keys of the first query; zeros when empty)."""
    if not queries:
        return Aggregate(queries=0, metrics=dict.fromkeys(HARNESS_METRICS, 0.0))
    keys = list(queries[0].metrics)
    return Aggregate(
        queries=len(queries),
        metrics={k: sum(q.metrics[k] for q in queries) / len(queries) for k in keys},
    )


def counts_toward_aggregates(scenario: ScenarioResult) -> bool:
    """Only scenarios expected to pass and not measure-only feed category and overall means."""
    return scenario.outcome == "pass" and not scenario.measure_only


def gate_summary(scenarios: Sequence[ScenarioResult], min_relevance: float) -> GateSummary:
    """Totals of the relevance gate over every query of every scenario (measure-only included)."""
    queries = [q for s in scenarios for q in s.queries]
    return GateSummary(
        min_relevance=min_relevance,
        candidates=sum(q.candidates for q in queries),
        dropped_rows=sum(len(q.dropped) for q in queries),
        queries_with_drops=sum(1 for q in queries if q.dropped),
        queries=len(queries),
    )


def pass_result(scenarios: Sequence[ScenarioResult], min_relevance: float) -> PassResult:
    """Assemble a pass: overall and per-category means over gating scenarios' queries. Categories
    are in the order in which they first appear among the gating scenarios (SPEC §5), so the
    console, the report JSON and the frames list them as the suite does."""
    counted = [s for s in scenarios if counts_toward_aggregates(s)]
    by_category: dict[str, list[QueryResult]] = {}
    for s in counted:
        by_category.setdefault(s.category, []).extend(s.queries)
    return PassResult(
        scenarios=list(scenarios),
        overall=mean_metrics([q for s in counted for q in s.queries]),
        categories={c: mean_metrics(qs) for c, qs in by_category.items()},
        relevance_gate=gate_summary(scenarios, min_relevance),
    )
