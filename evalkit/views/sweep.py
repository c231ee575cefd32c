"""The gate sweep of a saved run: what each relevance-gate value would cost and buy, and which
gate each category can afford.

`gate_sweep(result, values)` re-applies the gate to the run's recorded candidates at each value
(`evalkit.harness.sweep.regate_pass`: no search, exactly what a gated run at that value gives) and
returns one row per value × scope (SWEEP_COLUMNS). `recommend_gates(sweep, tolerance)` picks, per
scope, the largest gate whose recall loss against the ungated pass stays within `tolerance`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from evalkit.harness.aggregation import counts_toward_aggregates
from evalkit.harness.results import PassResult, QueryResult, RunResult
from evalkit.harness.sweep import lost_from_top_k, regate_pass
from evalkit.lazy import lazy_module
from evalkit.metrics import HARNESS_METRICS

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # loaded by the functions that read it, not on import

DEFAULT_SWEEP_VALUES: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(21))
"""0, 0.05, …, 1.0."""

DEFAULT_TOLERANCE = 0.02
"""Recall a gate may cost a scope before it is too strict (the thresholds' margin, SPEC §3.5)."""

SWEEP_COLUMNS: tuple[str, ...] = (
    "min_relevance", "scope", "name", "queries", *HARNESS_METRICS, "recall_loss", "precision_gain",
    "rows_kept", "rows_dropped", "relevant_lost",
)  # fmt: skip
"""One row per gate value × scope. `scope` is "overall" (name "overall"), "category" or
"scenario"; overall and category rows average the queries of counted scenarios (outcome pass, not
measure-only), scenario rows all of the scenario's queries. `recall_loss` = the scope's ungated
recall − its recall at this gate; `precision_gain` = its precision at this gate − its ungated
precision. `rows_kept`/`rows_dropped`: candidate rows the gate kept and
removed (summed over the scope's queries); `relevant_lost`: relevant ids of the ungated top-k
missing at this gate."""

RECOMMENDATION_COLUMNS: tuple[str, ...] = (
    "scope", "name", "queries", "recommended_gate", "recall", "recall_loss", "precision", "precision_gain",
)  # fmt: skip
"""One row per overall/category scope: the largest swept gate whose recall loss is within the
tolerance, with recall, its loss, precision and its gain over the ungated pass at that gate.
`recommended_gate` is NaN when no swept value stays within the tolerance (include 0)."""


def gate_sweep(result: RunResult, values: Iterable[float] = DEFAULT_SWEEP_VALUES) -> pd.DataFrame:
    """One row per gate value (in the order given, duplicates removed) × scope (overall, each
    category, each scenario); see SWEEP_COLUMNS. UsageError when the run has no gated pass or no
    recorded candidates, or for a value outside [0, 1]."""
    measured = {(s.name, q.index): q for s in result.scenarios for q in s.queries}
    rows: list[dict[str, object]] = []
    for value in dict.fromkeys(float(v) for v in values):
        regated = regate_pass(result, value)
        for scope, name, queries in _scopes(regated):
            baseline = [measured[key] for key, _ in queries]
            rows.append(_row(value, scope, name, [q for _, q in queries], baseline))
    return pd.DataFrame(rows, columns=list(SWEEP_COLUMNS))


def recommend_gates(sweep: pd.DataFrame, tolerance: float = DEFAULT_TOLERANCE) -> pd.DataFrame:
    """Per overall and category scope of `sweep`: the largest gate whose `recall_loss` is at most
    `tolerance` (+1e-9 for rounding); see RECOMMENDATION_COLUMNS."""
    picked = ["recall", "recall_loss", "precision", "precision_gain"]
    rows = []
    scopes = sweep[sweep["scope"].isin(["overall", "category"])]
    for (scope, name), group in scopes.groupby(["scope", "name"], sort=False):
        within = group[group["recall_loss"] <= tolerance + 1e-9].sort_values("min_relevance")
        best = within.tail(1).to_dict("records")
        found = best[0] if best else dict.fromkeys(["min_relevance", *picked], float("nan"))
        rows.append(
            {
                "scope": scope,
                "name": name,
                "queries": int(group["queries"].iloc[0]),
                "recommended_gate": found["min_relevance"],
                **{column: found[column] for column in picked},
            }
        )
    return pd.DataFrame(rows, columns=list(RECOMMENDATION_COLUMNS))


Keyed = list[tuple[tuple[str, int], QueryResult]]


def _scopes(regated: PassResult) -> list[tuple[str, str, Keyed]]:
    """(scope, name, [((scenario, query index), query)]) for overall, each category (sorted, as
    in the pass's categories) and each scenario (file order)."""
    keyed = [(s, [((s.name, q.index), q) for q in s.queries]) for s in regated.scenarios]
    counted = [(s, qs) for s, qs in keyed if counts_toward_aggregates(s)]
    categories = sorted({s.category for s, _ in counted})
    return [
        ("overall", "overall", [kq for _, qs in counted for kq in qs]),
        *(("category", c, [kq for s, qs in counted if s.category == c for kq in qs]) for c in categories),
        *(("scenario", s.name, qs) for s, qs in keyed),
    ]


def _row(
    value: float, scope: str, name: str, queries: list[QueryResult], ungated: list[QueryResult]
) -> dict[str, object]:
    count = len(queries)

    def mean(metric: str, of: list[QueryResult]) -> float:
        return sum(q.metrics[metric] for q in of) / count if count else 0.0

    return {
        "min_relevance": value,
        "scope": scope,
        "name": name,
        "queries": count,
        **{m: mean(m, queries) for m in HARNESS_METRICS},
        "recall_loss": mean("recall", ungated) - mean("recall", queries),
        "precision_gain": mean("precision", queries) - mean("precision", ungated),
        "rows_kept": sum(_pool(q) - len(q.dropped) for q in queries),
        "rows_dropped": sum(len(q.dropped) for q in queries),
        "relevant_lost": sum(len(lost_from_top_k(u, q)) for u, q in zip(ungated, queries, strict=True)),
    }


def _pool(query: QueryResult) -> int:
    """Rows that reached the gate: the recorded candidates, else the recorded count."""
    return len(query.gate_candidates) if query.gate_candidates is not None else query.candidates
