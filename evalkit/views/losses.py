"""The biggest losses of a saved run, which the HTML report shows right after its verdict: what
moved most against the recorded baseline, and what the relevance gate cost.

- `scope_losses(run)` (SCOPE_LOSS_COLUMNS): every compared scope (overall, each category) and
  harness metric whose value fell below its recorded baseline (`against` "baseline": `before`
  the baseline, `after` this run, `margin` = this run − the threshold, negative for a
  regression), then every scope whose gated value fell below its ungated one (`against` "gate":
  `before` ungated, `after` gated, `margin` None: the gated pass is report-only unless it has a
  baseline of its own, which the baseline rows then cover). Largest fall first, at most
  LOSS_ROWS; a fall smaller than LOSS_EPSILON is no loss (values are 4-place rounded baselines).
- `query_losses(run)` (QUERY_LOSS_COLUMNS): every query whose gated recall, MRR or hit rate fell
  below its ungated one, largest summed fall first, at most LOSS_ROWS, with the relevant ids the
  gate took out of its top-k. The baseline records scopes, not queries, so no query is compared
  with it; the report's "Queries to look at" lists the queries that miss relevant ids.
- `no_baseline_losses(run)` / `no_gate_losses(run)`: why a side lists nothing, in one line.
"""

from __future__ import annotations

import pandas as pd

from evalkit.harness.sweep import unavailable
from evalkit.metrics import HARNESS_METRICS
from evalkit.views.frames import EvalRun
from evalkit.views.styles import METRIC_LABELS
from evalkit.views.verdict import margins

__all__ = [
    "LOSS_ROWS",
    "QUERY_LOSS_COLUMNS",
    "SCOPE_LOSS_COLUMNS",
    "no_baseline_losses",
    "no_gate_losses",
    "query_losses",
    "scope_losses",
]

LOSS_ROWS = 8
"""How many losses each list shows, the largest first."""

LOSS_EPSILON = 5e-4
"""A fall smaller than this is no loss: baselines are rounded to 4 places."""

SCOPE_LOSS_COLUMNS: tuple[str, ...] = ("against", "scope", "metric", "before", "after", "delta", "margin")
"""One row per scope and metric that fell (`scope_losses`): against "baseline" or "gate"; the
scope ("overall" or a category); the metric's label; the value before (the baseline, or the
ungated pass) and after (this run, or the gated pass); delta = after − before; margin = this run
− the threshold (baseline rows; None for gate rows)."""

QUERY_LOSS_COLUMNS: tuple[str, ...] = ("scenario", "query #", "query", "fell", "lost ids", "_fall")
"""One row per query the gate cost something (`query_losses`): its scenario, number (from 1) and
text; what fell ("recall 0.333 → 0.000; MRR 1.000 → 0.000"); the relevant ids the gate took out
of its top-k ("" when none); `_fall`, the summed fall the rows are ordered by."""


def scope_losses(run: EvalRun) -> pd.DataFrame:
    """The scopes that fell against the baseline, then under the gate (see the module
    docstring); empty, with SCOPE_LOSS_COLUMNS, when none fell."""
    rows: list[dict[str, object]] = [
        {
            "against": "baseline",
            "scope": m.scope,
            "metric": METRIC_LABELS.get(m.metric, m.metric),
            "before": m.baseline,
            "after": m.value,
            "delta": m.delta,
            "margin": m.margin,
        }
        for m in margins(run.result)
        if m.delta is not None and m.delta < -LOSS_EPSILON
    ]
    baseline = sorted(rows, key=lambda row: float(str(row["delta"])))[:LOSS_ROWS]
    gate: list[dict[str, object]] = []
    if run.result.gated is not None:
        scopes = pd.concat(
            [run.categories, run.overall.assign(category="overall")[list(run.categories.columns)]],
            ignore_index=True,
        )
        ungated = scopes[scopes["pass"] == "ungated"].set_index("category")
        gated = scopes[scopes["pass"] == "gated"].set_index("category")
        for scope in ungated.index:
            if scope not in gated.index:
                continue
            for metric in HARNESS_METRICS:
                before, after = float(ungated.at[scope, metric]), float(gated.at[scope, metric])
                if after - before < -LOSS_EPSILON:
                    gate.append(
                        {
                            "against": "gate",
                            "scope": scope,
                            "metric": METRIC_LABELS[metric],
                            "before": before,
                            "after": after,
                            "delta": after - before,
                            "margin": None,
                        }
                    )
        gate = sorted(gate, key=lambda row: float(str(row["delta"])))[:LOSS_ROWS]
    return pd.DataFrame(baseline + gate, columns=list(SCOPE_LOSS_COLUMNS))


def query_losses(run: EvalRun) -> pd.DataFrame:
    """The queries whose gated recall, MRR or hit rate fell below the ungated pass's (see the
    module docstring); empty, with QUERY_LOSS_COLUMNS, without a gated pass or a loss."""
    queries = run.queries
    if run.result.gated is None:
        return pd.DataFrame(columns=list(QUERY_LOSS_COLUMNS))
    key = ["scenario", "query_number"]
    ungated = queries[queries["pass"] == "ungated"].set_index(key)
    gated = queries[queries["pass"] == "gated"].set_index(key)
    compared = ("recall", "mrr", "hit_rate")
    rows = []
    for index in ungated.index:
        if index not in gated.index:
            continue
        before, after = ungated.loc[index], gated.loc[index]
        fell = [
            (metric, float(before[metric]), float(after[metric]))
            for metric in compared
            if float(after[metric]) - float(before[metric]) < -LOSS_EPSILON
        ]
        if not fell:
            continue
        rows.append(
            {
                "scenario": index[0],
                "query #": int(index[1]),
                "query": str(before["query"]),
                "fell": "; ".join(f"{METRIC_LABELS[m]} {b:.3f} → {a:.3f}" for m, b, a in fell),
                "lost ids": ", ".join(str(i) for i in after["lost_from_top_k"]),
                "_fall": sum(a - b for _, b, a in fell),
            }
        )
    rows.sort(key=lambda row: float(str(row["_fall"])))
    return pd.DataFrame(rows[:LOSS_ROWS], columns=list(QUERY_LOSS_COLUMNS))


def no_baseline_losses(run: EvalRun) -> str | None:
    """Why nothing is listed against the baseline, in one line; None when a scope fell."""
    result = run.result
    if result.baseline_check_off is not None:
        return "not compared (the verdict above says why)"
    if result.provenance.config.thresholds is None:
        return "not compared: the run was configured without a thresholds file"
    if not margins(result):
        return "not compared: this report does not record the baseline it was compared with"
    if (scope_losses(run)["against"] == "baseline").any():
        return None
    return "no compared scope fell below its recorded baseline"


def no_gate_losses(run: EvalRun) -> str | None:
    """Why nothing is listed under the gate, in one line; None when a scope or query fell."""
    if run.result.gated is None:
        return unavailable(run.result) or "the run has no gated pass"
    if (scope_losses(run)["against"] == "gate").any() or len(query_losses(run)):
        return None
    return "the relevance gate lowered no scope's and no query's recall, MRR or hit rate"
