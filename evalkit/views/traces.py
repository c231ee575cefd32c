"""Views of an imported production replay (`evalkit import traces` + `evalkit score`), for the
`traces` notebook: the query log as a frame, the latency distribution per store, the top
queries by result count, what the unlabelled searches show without labels, and the labelled
subset's metrics. Everything here reads saved files (the query log and the score report);
nothing runs.

`TRACE_QUERY_COLUMNS` is the query-log frame: one row per imported search, the query log's
fields (`evalkit.suites.trace_import.QUERY_LOG_FIELDS`) in that order, `start` parsed as a UTC
timestamp, ordered by start time. Latency statistics skip searches without a latency (a missing
time or clock skew) and say how many they skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from evalkit.errors import ReportError
from evalkit.metrics import HARNESS_METRICS
from evalkit.suites.trace_import import NO_STORE, QUERY_LOG, QUERY_LOG_FIELDS, QUERY_LOG_FORMAT
from evalkit.views.charts import ReportFigure
from evalkit.views.frames import EvalRun
from evalkit.views.styles import styled
from evalkit.wording import counted

__all__ = [
    "STORE_LATENCY_COLUMNS",
    "STORE_MEASURE_COLUMNS",
    "TOP_QUERY_COLUMNS",
    "TRACE_QUERY_COLUMNS",
    "TraceReplay",
    "labelled_table",
    "latency_chart",
    "latency_table",
    "load_trace_queries",
    "measures_table",
    "replay_summary",
    "store_latency",
    "store_measures",
    "top_queries",
    "top_queries_table",
]

TRACE_QUERY_COLUMNS: tuple[str, ...] = QUERY_LOG_FIELDS
"""One row per imported search (see the module docstring)."""

STORE_LATENCY_COLUMNS: tuple[str, ...] = (
    "store",
    "searches",
    "timed",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
)
"""One row per store: searches, those with a latency, and latency quantiles (linear
interpolation) and maximum in milliseconds (missing when none is timed)."""

STORE_MEASURE_COLUMNS: tuple[str, ...] = (
    "store", "searches", "labelled", "mean_results", "empty", "degenerate", "stale_rate",
    "with_forbid", "forbidden_returned",
)  # fmt: skip
"""One row per store, from what needs no label: searches, labelled searches, mean result count,
searches with no result, searches with any ranking defect, mean stale-fact rate, searches with a
forbid and those that returned a forbidden record."""

TOP_QUERY_COLUMNS: tuple[str, ...] = (
    "query_id", "store", "query", "result_count", "degenerate", "labelled", "latency_ms",
)  # fmt: skip
"""The top queries table: `query` is the text, or `(no content)` for an import without it."""


@dataclass(frozen=True)
class TraceReplay:
    """An imported production replay: the query log frame (`TRACE_QUERY_COLUMNS`), whether the
    import holds user text, the warnings of the import, and the scored run."""

    queries: pd.DataFrame
    holds_user_text: bool
    warnings: tuple[str, ...]
    run: EvalRun


def load_trace_queries(path: str | Path) -> tuple[pd.DataFrame, bool, tuple[str, ...]]:
    """The query log `path` (a `queries.json`, or the import directory holding it) as
    (frame, holds user text, warnings). ReportError when it is missing or not a query log."""
    file = Path(path)
    if file.is_dir():
        file = file / QUERY_LOG
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(
            f"cannot read the query log {file} ({exc}); pass the output of `evalkit import traces`"
        ) from None
    if not isinstance(data, dict) or data.get("format") != QUERY_LOG_FORMAT:
        raise ReportError(f"{file} is not a query log of format {QUERY_LOG_FORMAT}; import the traces again")
    frame = pd.DataFrame(data["queries"], columns=list(TRACE_QUERY_COLUMNS))
    frame["start"] = pd.to_datetime(frame["start"], utc=True)
    frame["latency_ms"] = frame["latency_ms"].astype(float)
    return frame, bool(data["holds_user_text"]), tuple(data.get("warnings", ()))


def _store(value: str) -> str:
    return value or NO_STORE


def store_latency(queries: pd.DataFrame) -> pd.DataFrame:
    """`STORE_LATENCY_COLUMNS` per store, stores in order of first search."""
    rows = []
    for store, group in queries.groupby(queries["store_id"].map(_store), sort=False):
        timed = group["latency_ms"].dropna().to_numpy(dtype=float)
        quantiles = np.quantile(timed, [0.5, 0.9, 0.99]) if timed.size else [np.nan] * 3
        rows.append(
            {
                "store": store,
                "searches": len(group),
                "timed": int(timed.size),
                "p50_ms": float(quantiles[0]),
                "p90_ms": float(quantiles[1]),
                "p99_ms": float(quantiles[2]),
                "max_ms": float(timed.max()) if timed.size else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(STORE_LATENCY_COLUMNS))


def store_measures(queries: pd.DataFrame) -> pd.DataFrame:
    """`STORE_MEASURE_COLUMNS` per store, stores in order of first search."""
    rows = []
    for store, group in queries.groupby(queries["store_id"].map(_store), sort=False):
        rows.append(
            {
                "store": store,
                "searches": len(group),
                "labelled": int(group["labelled"].sum()),
                "mean_results": float(group["result_count"].mean()),
                "empty": int((group["result_count"] == 0).sum()),
                "degenerate": int(group["degenerate"].map(bool).sum()),
                "stale_rate": float(group["stale_rate"].mean()),
                "with_forbid": int(group["forbid"].map(bool).sum()),
                "forbidden_returned": int(group["forbidden_returned"].map(bool).sum()),
            }
        )
    return pd.DataFrame(rows, columns=list(STORE_MEASURE_COLUMNS))


def top_queries(queries: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The `n` searches with the most results (ties: earlier first), `TOP_QUERY_COLUMNS`."""
    ranked = queries.sort_values("result_count", ascending=False, kind="stable").head(n)
    return pd.DataFrame(
        {
            "query_id": ranked["query_id"],
            "store": ranked["store_id"].map(_store),
            "query": ranked["query"].map(lambda q: q if isinstance(q, str) else "(no content)"),
            "result_count": ranked["result_count"],
            "degenerate": ranked["degenerate"].map(", ".join),
            "labelled": ranked["labelled"],
            "latency_ms": ranked["latency_ms"],
        },
        columns=list(TOP_QUERY_COLUMNS),
    ).reset_index(drop=True)


def replay_summary(replay: TraceReplay) -> str:
    """One paragraph: searches, stores, labelled ones, warnings and whether it holds user text."""
    q = replay.queries
    text = "yes" if replay.holds_user_text else "no"
    return (
        f"{counted(len(q), 'search', 'searches')} from {counted(q['store_id'].nunique(), 'store')}; "
        f"{int(q['labelled'].sum())} labelled "
        f"(scored on recall, precision, MRR), {int((~q['labelled']).sum())} measured without labels; "
        f"{int(q['forbidden_returned'].map(bool).sum())} returned a record deleted before them; "
        f"{counted(len(replay.warnings), 'import warning')}; holds user text: {text}."
    )


def latency_table(replay: TraceReplay) -> Styler:
    """`store_latency` as a table."""
    caption = "Production search latency per store (ms, from the spans' start and end times)"
    return styled(store_latency(replay.queries), caption).hide(axis="index").format(precision=2, na_rep="—")


def measures_table(replay: TraceReplay) -> Styler:
    """`store_measures` as a table: what every search is scored on, labelled or not."""
    caption = "Per store, without labels: result counts, degenerate rankings, stale facts, forbids"
    return styled(store_measures(replay.queries), caption).hide(axis="index").format(precision=3)


def top_queries_table(replay: TraceReplay, n: int = 10) -> Styler:
    """`top_queries` as a table."""
    caption = f"Top {n} searches by result count"
    return styled(top_queries(replay.queries, n), caption).hide(axis="index").format(precision=2, na_rep="—")


def labelled_table(replay: TraceReplay) -> Styler:
    """The labelled subset's metrics per store (the score report's categories) and overall."""
    categories = replay.run.categories
    overall = replay.run.overall
    frame = pd.concat(
        [
            categories[categories["pass"] == "ungated"].rename(columns={"category": "store"}),
            overall[overall["pass"] == "ungated"].assign(store="overall"),
        ],
        ignore_index=True,
    )[["store", "queries", *HARNESS_METRICS]]
    labelled = int(replay.queries["labelled"].sum())
    caption = f"Labelled searches ({labelled} of {len(replay.queries)}): metrics per store and overall"
    return styled(frame, caption).hide(axis="index").format(precision=3)


def latency_chart(replay: TraceReplay) -> ReportFigure:
    """A box plot of search latency per store (timed searches only; a store without any is
    listed with no box)."""
    queries = replay.queries
    stores = list(dict.fromkeys(queries["store_id"].map(_store)))
    data = [
        queries.loc[queries["store_id"].map(_store) == s, "latency_ms"].dropna().to_numpy() for s in stores
    ]
    fig = ReportFigure(figsize=(7, 0.6 * len(stores) + 1.6))
    ax = fig.add_subplot()
    ax.boxplot([d if d.size else np.array([np.nan]) for d in data], orientation="horizontal", showfliers=True)
    ax.set_yticks(range(1, len(stores) + 1), [f"{s} (n={d.size})" for s, d in zip(stores, data, strict=True)])
    ax.invert_yaxis()  # stores top to bottom in order of first search, as in the tables
    ax.set_xlabel("latency (ms)")
    ax.set_title("Search latency per store")
    fig.tight_layout()
    return fig
