"""The run history as analysts read it: one row per run with its overall metrics, and the frame
the trend chart draws (`evalkit.harness.history` writes and reads the file)."""

from __future__ import annotations

import pandas as pd

from evalkit.harness.history import load_history
from evalkit.metrics import HARNESS_METRICS

__all__ = ["RUN_TABLE_COLUMNS", "history_table", "load_history"]

RUN_TABLE_COLUMNS: tuple[str, ...] = (
    "generated_at", "system", "mode", "top_k", "git_commit", "regressions", *HARNESS_METRICS,
)  # fmt: skip
"""One row per run, oldest first: identity, regression count and overall ungated means."""


def history_table(history: pd.DataFrame) -> pd.DataFrame:
    """One row per run of a `load_history` frame (RUN_TABLE_COLUMNS), in append order; the commit
    shortened to 12 characters ("unknown" outside a git checkout). Empty (with the columns) for an
    empty history."""
    overall = history[(history["pass"] == "ungated") & (history["scope"] == "overall")]
    if overall.empty:
        return pd.DataFrame(columns=list(RUN_TABLE_COLUMNS))
    identity = overall.drop_duplicates("run_id").set_index("run_id")[list(RUN_TABLE_COLUMNS[:6])]
    metrics = overall.pivot(index="run_id", columns="metric", values="value")
    table = identity.join(metrics).reset_index(drop=True)
    table["git_commit"] = table["git_commit"].map(lambda c: c[:12] if isinstance(c, str) else "unknown")
    return table[list(RUN_TABLE_COLUMNS)]
