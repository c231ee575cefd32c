"""Aggregation of per-query scores (SPEC §3.3): scenario = mean over its queries; category and
overall = mean over the queries of scenarios that gate (outcome "pass" and not measure_only).

Per-query scores always exist (ranx style); these functions only average them. Means are taken
over every metric key the queries share; an empty set of queries gives zeros, never NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from evalkit.harness.results import (
    Aggregate,
    GateSummary,
    Latency,
    LatencyReport,
    PassResult,
    PassRole,
    QueryResult,
    ScenarioResult,
)
from evalkit.metrics import HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR_METRICS


def mean_metrics(queries: Sequence[QueryResult]) -> Aggregate:
    """Mean of each metric over `queries` (keys of the first query; zeros when empty)."""
    if not queries:
        return Aggregate(queries=0, metrics=dict.fromkeys(HARNESS_METRICS, 0.0))
    keys = list(queries[0].metrics)
    return Aggregate(
        queries=len(queries),
        metrics={k: sum(q.metrics[k] for q in queries) / len(queries) for k in keys},
        **behaviour_means(queries),
    )


def behaviour_means(queries: Sequence[QueryResult]) -> dict[str, dict[str, Any]]:
    """`behaviour` (the mean of each behaviour metric over the queries it applies to) and
    `behaviour_queries` (how many those are), as `Aggregate` fields; empty without any."""
    measured = [name for name in BEHAVIOUR_METRICS if any(name in q.behaviour for q in queries)]
    values = {name: [q.behaviour[name] for q in queries if name in q.behaviour] for name in measured}
    return {
        "behaviour": {name: sum(v) / len(v) for name, v in values.items()},
        "behaviour_queries": {name: len(v) for name, v in values.items()},
    }


def counts_toward_behaviour(scenario: ScenarioResult) -> bool:
    """Scenarios whose queries feed the category and overall behaviour means: those expected to
    pass and applicable — measure-only ones included, unlike the harness means (a no-match probe
    is measure-only so that its zero recall stays out of them, but its abstention is the point)."""
    return scenario.outcome == "pass" and scenario.status != "not_applicable"


def feeds_means_when_applicable(scenario: ScenarioResult) -> bool:
    """Scenarios expected to pass and not measure-only: those whose queries the category and
    overall means average whenever the system can run them (SPEC §3.3)."""
    return scenario.outcome == "pass" and not scenario.measure_only


def counts_toward_aggregates(scenario: ScenarioResult) -> bool:
    """Only scenarios expected to pass, not measure-only and applicable to the system feed
    category and overall means."""
    return feeds_means_when_applicable(scenario) and scenario.status != "not_applicable"


def scope_scenarios(
    scenarios: Sequence[ScenarioResult], counts: Callable[[ScenarioResult], bool] = counts_toward_aggregates
) -> dict[str | None, list[str]]:
    """The names of the scenarios each scope averages: the overall (key None) first, then each
    category in the order in which it first appears, each list in suite order, over the
    `scenarios` that `counts` (default: those that fed the means of the pass). A category none
    of whose scenarios counts is absent. What a baseline records per scope and a later run is
    compared over (`evalkit.harness.regressions.scope_check`)."""
    scopes: dict[str | None, list[str]] = {None: []}
    for s in scenarios:
        if counts(s):
            scopes[None].append(s.name)
            scopes.setdefault(s.category, []).append(s.name)
    return scopes


def latency_summary(latencies_ms: Sequence[float]) -> Latency | None:
    """p50/p95 of search call times (ms, numpy's linear interpolation); None for no calls."""
    if not latencies_ms:
        return None
    p50, p95 = np.percentile(latencies_ms, [50, 95])
    return Latency(calls=len(latencies_ms), p50_ms=float(p50), p95_ms=float(p95))


def latency_report(by_scenario: dict[str, list[float]], searchable: Sequence[float] = ()) -> LatencyReport:
    """Per-scenario and overall latency from each scenario's search call times, in call order
    (scenarios without calls are left out), the first call of each scenario apart from the
    others (`LatencyReport.first`, `steady`), and the waits until searchable (`searchable`, ms:
    None without any)."""
    scenarios = {name: latency_summary(times) for name, times in by_scenario.items()}
    return LatencyReport(
        overall=latency_summary([t for times in by_scenario.values() for t in times]),
        scenarios={name: summary for name, summary in scenarios.items() if summary is not None},
        first=latency_summary([times[0] for times in by_scenario.values() if times]),
        steady=latency_summary([t for times in by_scenario.values() for t in times[1:]]),
        searchable=latency_summary(list(searchable)),
    )


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


def pass_result(
    name: str, role: PassRole, scenarios: Sequence[ScenarioResult], min_relevance: float
) -> PassResult:
    """Assemble the pass `name` with `role`: overall and per-category means over counted scenarios'
    queries, and its relevance gate's totals at `min_relevance` (`gate_summary`). Categories are
    in the order in which they first appear among the counted scenarios (SPEC §5), so the console,
    the report JSON and the frames list them as the suite does."""
    counted = [s for s in scenarios if counts_toward_aggregates(s)]
    by_category: dict[str, list[QueryResult]] = {}
    for s in counted:
        by_category.setdefault(s.category, []).extend(s.queries)
    behaving = [s for s in scenarios if counts_toward_behaviour(s)]
    overall = mean_metrics([q for s in counted for q in s.queries])
    categories = {c: mean_metrics(qs) for c, qs in by_category.items()}
    if any(q.behaviour for s in behaving for q in s.queries):
        overall = overall.model_copy(update=behaviour_means([q for s in behaving for q in s.queries]))
        grouped: dict[str, list[QueryResult]] = {}
        for s in behaving:
            grouped.setdefault(s.category, []).extend(s.queries)
        categories = {
            c: agg.model_copy(update=behaviour_means(grouped.get(c, []))) for c, agg in categories.items()
        }
    return PassResult(
        name=name,
        role=role,
        scenarios=list(scenarios),
        overall=overall,
        categories=categories,
        relevance_gate=gate_summary(scenarios, min_relevance),
    )
