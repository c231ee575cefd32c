"""Absolute floors a scenario file declares: `min_recall` and `min_hit_rate`, per query or per
scenario, that hold with or without a baseline.

A floor is an assertion on a metric rather than on the hits: a query below its own floor has an
error in its `check_errors` (prefixed with the floor's key, like every assertion's), and a
scenario whose mean over its queries is below its floor has the error in `floor_errors`. Either
makes the scenario `fail` (an xfail scenario `xfail`), so the measurement pass's floor errors are
assertion regressions (`harness.regressions.assertion_regressions`) and fail the run.

A metric is below its floor when metric + `TOLERANCE` < floor (the baselines' rule, absorbing
float noise), so `min_recall: 1.0` holds for a recall of exactly 1. A new floor is one entry in
`FLOORS` plus its field on `QuerySpec` and `Scenario` (`evalkit.scenarios.model`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from evalkit.harness.regressions import TOLERANCE
from evalkit.scenarios.model import QuerySpec, Scenario

FLOORS: Mapping[str, str] = MappingProxyType({"min_recall": "recall", "min_hit_rate": "hit_rate"})
"""Floor key (in scenario files) → the harness metric it bounds from below."""


def query_floor_errors(query: QuerySpec, metrics: Mapping[str, float]) -> list[str]:
    """`<key>: <metric> X is below the query's floor F` for each floor of `query` its `metrics`
    miss; [] when the query declares none or meets them."""
    return [
        f"{key}: {metric} {metrics[metric]:.4f} is below the query's floor {floor:g}"
        for key, metric in FLOORS.items()
        if (floor := getattr(query, key)) is not None and metrics[metric] + TOLERANCE < floor
    ]


def scenario_floor_errors(scenario: Scenario, means: Mapping[str, float], queries: int) -> list[str]:
    """`<key>: the scenario's mean <metric> X over N queries is below its floor F` for each floor
    of `scenario` that `means` (over `queries` queries) miss; [] when it declares none, meets
    them, or asked no query (a not-applicable scenario is judged on nothing)."""
    if queries == 0:
        return []
    return [
        f"{key}: the scenario's mean {metric} {means[metric]:.4f} over {queries} queries is below its "
        f"floor {floor:g}"
        for key, metric in FLOORS.items()
        if (floor := getattr(scenario, key)) is not None and means[metric] + TOLERANCE < floor
    ]
