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
    """One row per run of a `load_history` frame (RUN_TABLE_COLUMNS); the commit shortened to 12
    characters. Empty (with the columns) for an empty history."""
    overall = history[(history["pass"] == "ungated") & (history["scope"] == "overall")]
    if overall.empty:
        return pd.DataFrame(columns=list(RUN_TABLE_COLUMNS))
    keys = ["run_id", "generated_at", "system", "mode", "top_k", "git_commit", "regressions"]
    wide = overall.pivot_table(index=keys, columns="metric", values="value", sort=False, dropna=False)
    table = wide.reset_index()
    table["git_commit"] = table["git_commit"].map(lambda c: c[:12] if isinstance(c, str) else "unknown")
    return table[list(RUN_TABLE_COLUMNS)]
