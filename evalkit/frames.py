"""The analyst's API: a finished run as tidy pandas DataFrames.

`EvalRun` wraps a `Report` (fresh from a run or loaded from JSON — the frames are built from the
report alone, so both give identical frames). Every frame is long/tidy with a `pass` column
("ungated" or "gated") where both passes apply; rows are ordered by scenario file order, query
order and `rank`, never by score. Benchmark metrics such as `ndcg@10` are appended after the
documented columns of the query, scenario, category and overall frames.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalkit.aggregate import counts_toward_aggregates
from evalkit.results import HARNESS_METRICS, Aggregate, PassResult, Report, read_report, write_report

QUERY_COLUMNS: tuple[str, ...] = (
    "pass", "scenario", "category", "outcome", "measure_only", "counted", "query_index", "query_id",
    "query_category", "query", "project", "top_k", "relevant", "retrieved", "n_relevant", "n_retrieved",
    *HARNESS_METRICS, "passed", "check_errors", "candidates", "dropped_rows", "relevant_dropped",
)  # fmt: skip
"""One row per pass × scenario × query. `counted`: the query feeds category/overall means.
`passed`: no assertion error. `relevant`/`retrieved`/`check_errors` hold lists."""

HIT_COLUMNS: tuple[str, ...] = (
    "pass", "scenario", "category", "query_index", "query", "rank", "id", "relevant", "dropped_by_gate",
    "similarity", "relevance", "low_confidence", "match_source", "standing", "superseded_by",
    "contradicted_by", "bm25_score", "rrf_score", "recency_score", "final_score",
)  # fmt: skip
"""One row per pass × query × retrieved hit, in rank order. `match_source` is "vector", "bm25" or
"vector+bm25". `dropped_by_gate` (ungated rows only): the gated pass's gate removed this id."""

DROPPED_COLUMNS: tuple[str, ...] = ("scenario", "category", "query_index", "query", "id", "relevant")
"""One row per row the gated pass's relevance gate removed."""

SCENARIO_COLUMNS: tuple[str, ...] = (
    "pass", "scenario", "category", "outcome", "status", "measure_only", "counted", "queries",
    *HARNESS_METRICS, "errors", "candidates", "dropped_rows", "relevant_dropped",
)  # fmt: skip
"""One row per pass × scenario; metrics are means over the scenario's queries. `counted`: the
scenario feeds category/overall means (outcome pass, not measure-only)."""

CATEGORY_COLUMNS: tuple[str, ...] = ("pass", "category", "queries", *HARNESS_METRICS)
"""One row per pass × category (gating scenarios only: outcome pass, not measure-only)."""

OVERALL_COLUMNS: tuple[str, ...] = (
    "pass", "queries", *HARNESS_METRICS, "min_relevance", "candidates", "dropped_rows", "queries_with_drops",
)  # fmt: skip
"""One row per pass: the means over every gating query and the relevance gate's totals."""

REGRESSION_COLUMNS: tuple[str, ...] = (
    "kind",
    "scenario",
    "category",
    "metric",
    "actual",
    "threshold",
    "message",
)
"""One row per regression (kind: assertion, metric, present). Empty frame = the run gates green."""

GATE_COMPARISON_COLUMNS: tuple[str, ...] = (
    "scenario", "category", "status", "gated_status",
    *(f"{m}{suffix}" for m in ("recall", "precision", "mrr") for suffix in ("", "_gated", "_delta")),
    "candidates", "dropped_rows", "relevant_dropped",
)  # fmt: skip
"""One row per scenario: ungated vs gated recall/precision/MRR, delta = gated − ungated."""


FRAME_NAMES: tuple[str, ...] = (
    "queries", "hits", "dropped", "scenarios", "categories", "overall", "regressions", "gate_comparison",
)  # fmt: skip
"""The frames an EvalRun offers (the last one is a method: `gate_comparison()`)."""


class EvalRun:
    """A finished evaluation. Build with `evalkit.run_eval(...)` or `evalkit.load_report(path)`."""

    def __init__(self, report: Report) -> None:
        self.report = report

    @property
    def passes(self) -> dict[str, PassResult]:
        """The passes present, "ungated" first."""
        out: dict[str, PassResult] = {"ungated": self.report}
        if self.report.gated is not None:
            out["gated"] = self.report.gated
        return out

    @property
    def ok(self) -> bool:
        """True when the run has no regressions (exit code 0)."""
        return not self.report.regressions

    def save(self, path: str | Path) -> Path:
        """Write the report JSON atomically; `load_report(path)` gives this run back."""
        return write_report(self.report, path)

    def _extra_metrics(self) -> list[str]:
        names: dict[str, None] = {}
        for s in self.report.scenarios:
            for q in s.queries:
                names.update(dict.fromkeys(k for k in q.metrics if k not in HARNESS_METRICS))
        return list(names)

    def _dropped_ids(self) -> dict[tuple[str, int], set[str]]:
        gated = self.report.gated
        if gated is None:
            return {}
        return {(s.name, q.index): {d.id for d in q.dropped} for s in gated.scenarios for q in s.queries}

    @property
    def queries(self) -> pd.DataFrame:
        extra = self._extra_metrics()
        rows = []
        for name, result in self.passes.items():
            for s in result.scenarios:
                counted = counts_toward_aggregates(s)
                for q in s.queries:
                    rows.append(
                        {
                            "pass": name,
                            "scenario": s.name,
                            "category": s.category,
                            "outcome": s.outcome,
                            "measure_only": s.measure_only,
                            "counted": counted,
                            "query_index": q.index,
                            "query_id": q.query_id,
                            "query_category": q.query_category,
                            "query": q.query,
                            "project": q.project,
                            "top_k": q.top_k,
                            "relevant": q.relevant,
                            "retrieved": q.retrieved,
                            "n_relevant": len(q.relevant),
                            "n_retrieved": len(q.retrieved),
                            **{m: q.metrics[m] for m in HARNESS_METRICS},
                            "passed": not q.check_errors,
                            "check_errors": q.check_errors,
                            "candidates": q.candidates,
                            "dropped_rows": len(q.dropped),
                            "relevant_dropped": sum(d.relevant for d in q.dropped),
                            **{m: q.metrics.get(m) for m in extra},
                        }
                    )
        return pd.DataFrame(rows, columns=[*QUERY_COLUMNS, *extra])

    @property
    def hits(self) -> pd.DataFrame:
        dropped = self._dropped_ids()
        rows = []
        for name, result in self.passes.items():
            for s in result.scenarios:
                for q in s.queries:
                    gone = dropped.get((s.name, q.index), set()) if name == "ungated" else set()
                    for h in q.hits:
                        rows.append(
                            {
                                "pass": name,
                                "scenario": s.name,
                                "category": s.category,
                                "query_index": q.index,
                                "query": q.query,
                                "rank": h.rank,
                                "id": h.id,
                                "relevant": h.relevant,
                                "dropped_by_gate": h.id in gone,
                                "similarity": h.similarity,
                                "relevance": h.relevance,
                                "low_confidence": h.low_confidence,
                                "match_source": "+".join(h.match_source),
                                "standing": h.standing,
                                "superseded_by": h.superseded_by,
                                "contradicted_by": h.contradicted_by,
                                "bm25_score": h.bm25_score,
                                "rrf_score": h.rrf_score,
                                "recency_score": h.recency_score,
                                "final_score": h.final_score,
                            }
                        )
        return pd.DataFrame(rows, columns=list(HIT_COLUMNS))

    @property
    def dropped(self) -> pd.DataFrame:
        gated = self.report.gated
        rows = [
            {
                "scenario": s.name,
                "category": s.category,
                "query_index": q.index,
                "query": q.query,
                "id": d.id,
                "relevant": d.relevant,
            }
            for s in (gated.scenarios if gated else [])
            for q in s.queries
            for d in q.dropped
        ]
        return pd.DataFrame(rows, columns=list(DROPPED_COLUMNS))

    @property
    def scenarios(self) -> pd.DataFrame:
        extra = self._extra_metrics()
        rows = []
        for name, result in self.passes.items():
            for s in result.scenarios:
                rows.append(
                    {
                        "pass": name,
                        "scenario": s.name,
                        "category": s.category,
                        "outcome": s.outcome,
                        "status": s.status,
                        "measure_only": s.measure_only,
                        "counted": counts_toward_aggregates(s),
                        "queries": s.metrics.queries,
                        **_metric_values(s.metrics, [*HARNESS_METRICS, *extra]),
                        "errors": sum(len(q.check_errors) for q in s.queries),
                        "candidates": sum(q.candidates for q in s.queries),
                        "dropped_rows": sum(len(q.dropped) for q in s.queries),
                        "relevant_dropped": sum(d.relevant for q in s.queries for d in q.dropped),
                    }
                )
        return pd.DataFrame(rows, columns=[*SCENARIO_COLUMNS, *extra])

    @property
    def categories(self) -> pd.DataFrame:
        extra = self._extra_metrics()
        rows = [
            {
                "pass": name,
                "category": c,
                "queries": agg.queries,
                **_metric_values(agg, [*HARNESS_METRICS, *extra]),
            }
            for name, result in self.passes.items()
            for c, agg in result.categories.items()
        ]
        return pd.DataFrame(rows, columns=[*CATEGORY_COLUMNS, *extra])

    @property
    def overall(self) -> pd.DataFrame:
        extra = self._extra_metrics()
        rows = []
        for name, result in self.passes.items():
            gate = result.relevance_gate
            rows.append(
                {
                    "pass": name,
                    "queries": result.overall.queries,
                    **_metric_values(result.overall, [*HARNESS_METRICS, *extra]),
                    "min_relevance": gate.min_relevance,
                    "candidates": gate.candidates,
                    "dropped_rows": gate.dropped_rows,
                    "queries_with_drops": gate.queries_with_drops,
                }
            )
        return pd.DataFrame(rows, columns=[*OVERALL_COLUMNS, *extra])

    @property
    def regressions(self) -> pd.DataFrame:
        return pd.DataFrame(
            [r.model_dump() for r in self.report.regressions], columns=list(REGRESSION_COLUMNS)
        )

    def gate_comparison(self) -> pd.DataFrame:
        """Per scenario: ungated vs gated recall/precision/MRR, deltas and what the gate dropped.
        Empty (with the documented columns) when the gated pass was skipped."""
        gated = self.report.gated
        rows = []
        for plain, filtered in zip(self.report.scenarios, gated.scenarios if gated else [], strict=False):
            row: dict[str, object] = {
                "scenario": plain.name,
                "category": plain.category,
                "status": plain.status,
                "gated_status": filtered.status,
            }
            for m in ("recall", "precision", "mrr"):
                before, after = plain.metrics.metrics[m], filtered.metrics.metrics[m]
                row.update({m: before, f"{m}_gated": after, f"{m}_delta": after - before})
            row.update(
                candidates=sum(q.candidates for q in filtered.queries),
                dropped_rows=sum(len(q.dropped) for q in filtered.queries),
                relevant_dropped=sum(d.relevant for q in filtered.queries for d in q.dropped),
            )
            rows.append(row)
        return pd.DataFrame(rows, columns=list(GATE_COMPARISON_COLUMNS))

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every frame by name (see FRAME_NAMES), the gate comparison included."""
        return {name: getattr(self, name) for name in FRAME_NAMES[:-1]} | {
            "gate_comparison": self.gate_comparison()
        }


def _metric_values(aggregate: Aggregate, names: list[str]) -> dict[str, float | None]:
    return {m: aggregate.metrics.get(m) for m in names}


def load_report(path: str | Path) -> EvalRun:
    """An `EvalRun` from a report JSON file; its frames equal those of the run that wrote it."""
    return EvalRun(read_report(path))
