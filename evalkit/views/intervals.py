"""Uncertainty of a saved run's means: one confidence interval per pass × scope (overall, each
category) × metric, and the power of each scope (the smallest recall drop it could detect), from
the per-query scores of counted queries (the queries the means are taken over: outcome pass, not
measure-only). The methods are `evalkit.harness.uncertainty`'s: Wilson score intervals for rates
(hit rate), the percentile bootstrap or the bounded Wilson interval for means, "too few queries
to judge" below `queries_to_judge` queries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from evalkit.harness.uncertainty import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    SMALL_SAMPLE,
    mean_interval,
    min_detectable_drop,
    queries_to_judge,
)
from evalkit.lazy import lazy_module
from evalkit.metrics import HARNESS, HARNESS_METRICS

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # interval_frame's; power_rows needs none

INTERVAL_COLUMNS: tuple[str, ...] = (
    "pass", "scope", "name", "metric", "queries", "mean", "ci_low", "ci_high", "level", "small_sample",
    "method", "too_few",
)  # fmt: skip
"""One row per pass × scope × metric. `scope` is "overall" (name "overall") or "category";
`mean` is the scope's mean (what the report shows), `ci_low`/`ci_high` its interval at `level`
(NaN only for a scope without queries), computed by `method`: "wilson" (a rate: hit rate),
"bootstrap" (a mean over at least `small_sample` queries that do not all agree) or
"wilson-bounded" (any other mean; see `evalkit.harness.uncertainty`). `small_sample`: fewer
queries than the threshold asked for (default `evalkit.harness.uncertainty.SMALL_SAMPLE`);
`too_few`: too few queries to judge — fewer than `queries_to_judge(level)` (6 at 95 %), so no
paired test at that level could tell any drop from chance."""

POWER_COLUMNS: tuple[str, ...] = (
    "pass", "scope", "name", "queries", "can_drop", "needed", "detectable_drop", "too_few", "level",
)  # fmt: skip
"""One row per pass × scope (overall first, then categories in suite order): `queries` counted,
`can_drop` — how many of them have recall to lose, `needed` — how many must get worse (with none
getting better) for a two-sided paired test at `level` to reject (`queries_to_judge`), and
`detectable_drop` — the smallest drop of the scope's mean recall that could then be significant
(`evalkit.harness.uncertainty.min_detectable_drop`; NaN when fewer than `needed` queries can get
worse: no drop is detectable). `too_few`: fewer queries than `needed`."""


def _scopes(queries: pd.DataFrame) -> list[tuple[str, str, str, pd.DataFrame]]:
    """(pass, scope, name, rows) of the counted queries: per pass (in frame order), overall then
    each category in the order it first appears."""
    counted = queries[queries["counted"].astype(bool)]
    scopes = []
    for pass_name, in_pass in counted.groupby("pass", sort=False):
        scopes.append((str(pass_name), "overall", "overall", in_pass))
        scopes += [
            (str(pass_name), "category", str(c), g) for c, g in in_pass.groupby("category", sort=False)
        ]
    return scopes


def interval_frame(
    queries: pd.DataFrame,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    small_sample: int = SMALL_SAMPLE,
) -> pd.DataFrame:
    """INTERVAL_COLUMNS rows from an EvalRun's `queries` frame: overall first, then categories in
    the order they first appear, per pass (ungated first); metrics in HARNESS_METRICS order."""
    needed = queries_to_judge(level)
    rows = []
    for pass_name, scope, name, group in _scopes(queries):
        for metric in HARNESS_METRICS:
            values = group[metric].astype(float).tolist()
            low, high, method = mean_interval(
                values,
                rate=HARNESS[metric].rate,
                resamples=resamples,
                level=level,
                seed=seed,
                small_sample=small_sample,
            )
            rows.append(
                {
                    "pass": pass_name,
                    "scope": scope,
                    "name": name,
                    "metric": metric,
                    "queries": len(values),
                    "mean": sum(values) / len(values),
                    "ci_low": low,
                    "ci_high": high,
                    "level": level,
                    "small_sample": len(values) < small_sample,
                    "method": method,
                    "too_few": len(values) < needed,
                }
            )
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))


def power_rows(queries: Iterable[Mapping[str, Any]], *, level: float = DEFAULT_LEVEL) -> list[dict[str, Any]]:
    """POWER_COLUMNS rows (dicts) from the rows of an EvalRun's `queries` frame (`EvalRun.query_rows`:
    plain Python, no pandas), in the scopes and order of `interval_frame`: per pass in row order,
    overall then each category in the order it first appears, counted queries only. A query can
    lose recall when it has relevant ids and recall above 0; the least it can lose is one relevant
    id, 1/|relevant|."""
    needed = queries_to_judge(level)
    by_pass: dict[str, list[Mapping[str, Any]]] = {}
    for row in queries:
        if row["counted"]:
            by_pass.setdefault(str(row["pass"]), []).append(row)
    scopes: list[tuple[str, str, str, list[Mapping[str, Any]]]] = []
    for pass_name, rows in by_pass.items():
        categories: dict[str, list[Mapping[str, Any]]] = {}
        for row in rows:
            categories.setdefault(str(row["category"]), []).append(row)
        scopes.append((pass_name, "overall", "overall", rows))
        scopes += [(pass_name, "category", category, group) for category, group in categories.items()]
    result = []
    for pass_name, scope, name, group in scopes:
        steps = [1.0 / q["n_relevant"] for q in group if q["n_relevant"] > 0 and q["recall"] > 0]
        result.append(
            {
                "pass": pass_name,
                "scope": scope,
                "name": name,
                "queries": len(group),
                "can_drop": len(steps),
                "needed": needed,
                "detectable_drop": min_detectable_drop(steps, len(group), level=level),
                "too_few": len(group) < needed,
                "level": level,
            }
        )
    return result
