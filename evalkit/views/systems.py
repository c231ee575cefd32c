"""Several systems' saved runs of one suite side by side: one row per system (`evalkit
compare-systems` runs them; this module only reads the runs).

`systems_table(runs)` gives SYSTEMS_COLUMNS: the system, what it is built on (the library or
store and its version, from the system's own `describe()` in the run's provenance; evalkit's
version for a system that names neither, such as the reference store), its counted
queries, the overall harness metrics (recall, precision, MRR, hit rate), the stale-fact rate (the
share of returned ids superseded or deleted, over the queries it applies to; missing when the
suite does not ask for behaviour metrics), how many scenarios were not applicable to it and the
median search latency (wall ms, reported, never compared). `systems_markdown` and
`systems_html` render one table per suite, each with the suite, the date and evalkit's version.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import pandas as pd

from evalkit.packaged import evalkit_version
from evalkit.views.frames import EvalRun

SYSTEMS_COLUMNS: tuple[str, ...] = (
    "system", "built_on", "queries", "recall", "precision", "mrr", "hit_rate", "stale_fact_rate",
    "not_applicable", "p50_ms",
)  # fmt: skip
"""One row per system (see the module docstring)."""

_HEADINGS = {
    "system": "system",
    "built_on": "built on",
    "queries": "queries",
    "recall": "recall",
    "precision": "precision",
    "mrr": "MRR",
    "hit_rate": "hit rate",
    "stale_fact_rate": "stale-fact rate",
    "not_applicable": "not applicable",
    "p50_ms": "p50 ms",
}


def systems_table(runs: Sequence[EvalRun]) -> pd.DataFrame:
    """SYSTEMS_COLUMNS, one row per run in the given order."""
    rows = []
    for run in runs:
        result = run.result
        described = result.provenance.system or {}
        latency = result.latency.overall if result.latency else None
        rows.append(
            {
                "system": result.system,
                "built_on": described.get("library")
                or described.get("store")
                or f"evalkit {result.provenance.evalkit_version}",
                "queries": result.overall.queries,
                **{
                    name: result.overall.metrics.get(name, math.nan)
                    for name in ("recall", "precision", "mrr")
                },
                "hit_rate": result.overall.metrics.get("hit_rate", math.nan),
                "stale_fact_rate": result.overall.behaviour.get("stale_fact_rate", math.nan),
                "not_applicable": len(result.not_applicable),
                "p50_ms": latency.p50_ms if latency else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(SYSTEMS_COLUMNS))


def _cells(table: pd.DataFrame) -> list[list[str]]:
    """The table's values as text: metrics to 3 places, latency to 2, a missing value as '—'."""
    rows = []
    for record in table.to_dict("records"):
        cells = []
        for column in SYSTEMS_COLUMNS:
            value = record[column]
            if isinstance(value, float) and math.isnan(value):
                cells.append("—")
            elif column == "p50_ms":
                cells.append(f"{value:.2f}")
            elif isinstance(value, float):
                cells.append(f"{value:.3f}")
            else:
                cells.append(str(value))
        rows.append(cells)
    return rows


def _caption(runs: Sequence[EvalRun], suite: str) -> str:
    first = runs[0].result
    return (
        f"Suite {suite}, {first.mode} mode, top_k {first.top_k}; generated {first.generated_at[:10]} "
        f"by evalkit {evalkit_version()} (`evalkit compare-systems`). Latency is wall time on the machine "
        "that ran it, reported only."
    )


def systems_markdown(by_suite: Mapping[str, Sequence[EvalRun]]) -> str:
    """The tables as a Markdown page section: per suite (suite name → its runs, in order) a caption
    line, then the table."""
    heading = "| " + " | ".join(_HEADINGS[c] for c in SYSTEMS_COLUMNS) + " |"
    rule = "|" + "|".join("---" for _ in SYSTEMS_COLUMNS) + "|"
    sections = []
    for suite, runs in by_suite.items():
        body = ["| " + " | ".join(cells) + " |" for cells in _cells(systems_table(runs))]
        sections.append("\n".join([_caption(runs, suite), "", heading, rule, *body]) + "\n")
    return "\n".join(sections)


def systems_html(by_suite: Mapping[str, Sequence[EvalRun]]) -> str:
    """The tables as a standalone HTML page: per suite a caption, then its table."""
    head = "".join(f"<th>{html.escape(_HEADINGS[c])}</th>" for c in SYSTEMS_COLUMNS)
    tables = "".join(
        f"<p>{html.escape(_caption(runs, suite))}</p><table><thead><tr>{head}</tr></thead><tbody>"
        + "".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells) + "</tr>"
            for cells in _cells(systems_table(runs))
        )
        + "</tbody></table>"
        for suite, runs in by_suite.items()
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>evalkit: systems compared</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,td:nth-child(2)"
        "{text-align:left}p{margin-top:1.5em}</style></head><body><h1>Systems compared</h1>"
        f"{tables}</body></html>\n"
    )
