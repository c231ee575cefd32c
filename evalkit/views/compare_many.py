"""Several saved runs side by side, ranx-style: systems × metrics, overall and per category, each
run tested against one baseline run with the Holm correction.

`compare_many(runs, baseline=0)` pairs the counted queries of one pass of every run with the
baseline run's by (scenario, query number) and returns a `MultiComparison`:
- `table` (MULTI_COMPARISON_COLUMNS): one row per run × scope ("overall", then each category in
  the baseline run's order) × harness metric: the run's mean over the paired queries, Δ against
  the baseline run's mean over the same queries, the two-sided p-value of a paired Student's t-test
  (`scipy.stats.ttest_rel`, what ranx uses by default) and the Holm-adjusted p-value.
- Holm's step-down correction is applied per run over its family of tests (every scope × metric
  of that run against the baseline): with 4 metrics × (1 + C categories) tests a run would
  otherwise be "significant" somewhere by chance. `significant` = adjusted p < `alpha`.
- A pair of samples with no difference at all (every paired query scores the same) has p = 1;
  a scope with fewer than 2 paired queries cannot be tested: p is missing (NaN) and never
  significant. The baseline run's own rows have Δ 0 and no p-value.
- Runs are named by `names` (default "A", "B", "C", ...); `identities` holds each run's identity
  line (`evalkit.views.compare.run_identity`).
UsageError for fewer than two runs, a baseline index out of range, a run without the pass, or a
run that shares no query with the baseline run.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from scipy import stats

from evalkit.errors import UsageError
from evalkit.metrics import HARNESS_METRICS
from evalkit.views.compare import run_identity
from evalkit.views.frames import EvalRun

MULTI_COMPARISON_COLUMNS: tuple[str, ...] = (
    "run", "scope", "metric", "queries", "mean", "delta", "p_value", "p_holm", "significant",
)  # fmt: skip
"""One row per run × scope × harness metric (see the module docstring); `delta` = run − baseline."""

DEFAULT_ALPHA = 0.05
"""The significance level `significant` compares the Holm-adjusted p-value with."""


@dataclass(frozen=True)
class MultiComparison:
    """Runs compared with the baseline run `baseline` (its name) on one pass."""

    names: tuple[str, ...]
    baseline: str
    identities: tuple[str, ...]
    pass_name: str
    alpha: float
    table: pd.DataFrame


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order: sorted ascending, the i-th smallest
    (from 0) is multiplied by (m − i), made monotone non-decreasing and capped at 1 (Holm 1979).
    NaN entries stay NaN and do not count in m."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(tested)
    adjusted = [float("nan")] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def paired_t_pvalue(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of a paired Student's t-test of `b` against `a`; 1.0 when every pair is
    equal (no difference to test), NaN with fewer than 2 pairs."""
    if len(a) < 2:
        return float("nan")
    differences = [y - x for x, y in zip(a, b, strict=True)]
    if all(abs(d - differences[0]) < 1e-12 for d in differences):
        return 1.0 if abs(differences[0]) < 1e-12 else 0.0  # a constant non-zero shift: no variance
    return float(stats.ttest_rel(b, a).pvalue)


def compare_many(
    runs: Sequence[EvalRun],
    *,
    baseline: int = 0,
    names: Sequence[str] | None = None,
    pass_name: str = "ungated",
    alpha: float = DEFAULT_ALPHA,
) -> MultiComparison:
    """Compare every run of `runs` with `runs[baseline]` (see the module docstring)."""
    if len(runs) < 2:
        raise UsageError("compare at least two runs")
    if not 0 <= baseline < len(runs):
        raise UsageError(f"baseline run {baseline} is not one of the {len(runs)} runs (0..{len(runs) - 1})")
    labels = tuple(names or _letters(len(runs)))
    if len(labels) != len(runs):
        raise UsageError(f"{len(runs)} runs need {len(runs)} names, got {len(labels)}")
    frames = [_counted(run, pass_name, label) for run, label in zip(runs, labels, strict=True)]
    base = frames[baseline]
    scopes = ["overall", *dict.fromkeys(base["category"])]
    rows: list[dict[str, object]] = []
    for index, (label, frame) in enumerate(zip(labels, frames, strict=True)):
        paired = base.merge(frame, on=["scenario", "query_number"], suffixes=("_base", ""))
        if paired.empty:
            raise UsageError(
                f"run {label} shares no counted query with the baseline run {labels[baseline]} (queries are "
                "paired by scenario and query number); compare runs of the same suite"
            )
        family: list[dict[str, object]] = []
        for scope in scopes:
            rows_in = paired if scope == "overall" else paired[paired["category_base"] == scope]
            for metric in HARNESS_METRICS:
                before, after = rows_in[f"{metric}_base"].tolist(), rows_in[metric].tolist()
                mean = sum(after) / len(after) if after else float("nan")
                delta = mean - (sum(before) / len(before)) if before else float("nan")
                family.append(
                    {
                        "run": label,
                        "scope": scope,
                        "metric": metric,
                        "queries": len(after),
                        "mean": mean,
                        "delta": 0.0 if index == baseline else delta,
                        "p_value": float("nan") if index == baseline else paired_t_pvalue(before, after),
                    }
                )
        adjusted = holm([float(r["p_value"]) for r in family])  # type: ignore[arg-type]
        for row, p in zip(family, adjusted, strict=True):
            row["p_holm"] = p
            row["significant"] = not math.isnan(p) and p < alpha
        rows += family
    return MultiComparison(
        names=labels,
        baseline=labels[baseline],
        identities=tuple(run_identity(run) for run in runs),
        pass_name=pass_name,
        alpha=alpha,
        table=pd.DataFrame(rows, columns=list(MULTI_COMPARISON_COLUMNS)),
    )


def _letters(count: int) -> list[str]:
    return [string.ascii_uppercase[i] if i < 26 else f"R{i + 1}" for i in range(count)]


def _counted(run: EvalRun, pass_name: str, label: str) -> pd.DataFrame:
    queries = run.queries
    rows = queries[(queries["pass"] == pass_name) & queries["counted"].astype(bool)]
    if rows.empty:
        raise UsageError(f"run {label} has no counted query in a {pass_name} pass to compare")
    return rows[["scenario", "category", "query_number", *HARNESS_METRICS]]
