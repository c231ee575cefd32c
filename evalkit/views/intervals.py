"""Confidence intervals of a saved run's means: one seeded bootstrap interval per pass × scope
(overall, each category) × metric, from the per-query scores of counted queries (the queries the
means are taken over: outcome pass, not measure-only)."""

from __future__ import annotations

import pandas as pd

from evalkit.harness.uncertainty import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    SMALL_SAMPLE,
    bootstrap_ci,
)
from evalkit.metrics import HARNESS_METRICS

INTERVAL_COLUMNS: tuple[str, ...] = (
    "pass", "scope", "name", "metric", "queries", "mean", "ci_low", "ci_high", "level", "small_sample",
)  # fmt: skip
"""One row per pass × scope × metric. `scope` is "overall" (name "overall") or "category";
`mean` is the scope's mean (what the report shows), `ci_low`/`ci_high` its percentile bootstrap
interval at `level` (NaN for fewer than two queries); `small_sample`: fewer queries than the
threshold asked for (default `evalkit.harness.uncertainty.SMALL_SAMPLE`)."""


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
    counted = queries[queries["counted"].astype(bool)]
    rows = []
    for pass_name, in_pass in counted.groupby("pass", sort=False):
        scopes = [("overall", "overall", in_pass)]
        scopes += [("category", str(c), group) for c, group in in_pass.groupby("category", sort=False)]
        for scope, name, group in scopes:
            for metric in HARNESS_METRICS:
                values = group[metric].astype(float).tolist()
                low, high = bootstrap_ci(values, resamples=resamples, level=level, seed=seed)
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
                    }
                )
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))
