"""The analyst's API: a finished run as tidy pandas DataFrames.

`EvalRun` wraps a `RunResult` (fresh from a run or loaded from JSON — the frames are built from
the result alone, so both give identical frames). The long frames (`queries`, `hits`) are built
once per EvalRun; the per-scenario frame and the gate comparison are derived from them, so a
count such as `relevant_dropped` or `relevant_lost` is computed in one place. Every frame is
long/tidy with a `pass` column (the pass's name: "ungated", "gated", a re-gated pass's name)
where several passes apply; rows are ordered by scenario file order, query order and `rank`,
never by score. Benchmark metrics such as `ndcg@10` are appended after the documented columns of
the query, scenario, category and overall frames. Each access returns a fresh copy: changing a
frame never changes the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import UsageError
from evalkit.harness.aggregation import counts_toward_aggregates, counts_toward_behaviour
from evalkit.harness.report_file import load_report, save_report
from evalkit.harness.results import (
    DetectionPower,
    GateSummary,
    PassResult,
    PerturbationCurve,
    RunResult,
)
from evalkit.harness.sweep import lost_from_top_k
from evalkit.harness.uncertainty import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, SMALL_SAMPLE
from evalkit.lazy import lazy_module
from evalkit.metrics import HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR_METRICS
from evalkit.records import REPORTED_HIT_FIELDS, HitField
from evalkit.scenarios import stable_query_id
from evalkit.views.intervals import POWER_COLUMNS, interval_frame, power_rows
from evalkit.views.sweep import DEFAULT_SWEEP_VALUES, gate_sweep

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # read by the frames, not by building an EvalRun

COMPARED_METRICS: tuple[str, ...] = ("recall", "precision", "mrr")
"""The metrics shown ungated → gated side by side (gate comparison, console, gate chart)."""

QUERY_COLUMNS: tuple[str, ...] = (
    "pass", "scenario", "category", "outcome", "measure_only", "counted", "query_number", "query_id",
    "query_category", "query", "project", "top_k", "relevant", "retrieved", "n_relevant", "n_retrieved",
    *HARNESS_METRICS, "passed", "check_errors", "candidates", "dropped_rows", "relevant_dropped",
    "lost_from_top_k", "relevant_lost", "tied", "tied_at_cut", "tied_relevant",
)  # fmt: skip
"""One row per pass × scenario × query. `counted`: the query feeds category/overall means.
`passed`: no assertion error. `relevant`/`retrieved`/`check_errors` hold lists.
The gate's cost, two ways: `dropped_rows`/`relevant_dropped` count rows the gate removed from the
over-fetched candidate pool (most of which the ungated top-k never returned), while
`lost_from_top_k` (ids, ungated rank order) and `relevant_lost` (their number) name the relevant
ids the ungated pass returned that the gated pass no longer returns — what the gate cost the
user. Ungated rows have an empty `lost_from_top_k`.
Ties (`evalkit.harness.ties`): `tied` — the result is decided by ties (True/False; None when
not known: a system whose hits carry no score, or a report that did not record ties);
`tied_at_cut` — the row below the top_k cut ties with the last hit (None: the system does not
say); `tied_relevant` — the relevant ids among tied hits (a list)."""

_HIT_SIGNALS: tuple[HitField, ...] = tuple(f for f in REPORTED_HIT_FIELDS if f.name not in ("id", "rank"))
"""The hit fields after `id`, `rank`, `relevant` and `dropped_by_gate`: the rest of what the
report keeps of a hit (`evalkit.records.Hit` declares them), in its order."""

HIT_COLUMNS: tuple[str, ...] = (
    "pass", "scenario", "category", "query_number", "query", "rank", "id", "relevant", "dropped_by_gate",
    *(f.name for f in _HIT_SIGNALS),
)  # fmt: skip
"""One row per pass × query × retrieved hit, in rank order; after `dropped_by_gate`, one column
per reported hit field (`evalkit.records.REPORTED_HIT_FIELDS`: similarity, relevance,
low_confidence, match_source, standing, superseded_by, contradicted_by, bm25_score, rrf_score,
recency_score, final_score). A set of labels is shown joined (`HitField.joined`): `match_source`
is "vector", "bm25" or "vector+bm25". `dropped_by_gate` (ungated rows only): the gated pass's
gate removed this id."""

DROPPED_COLUMNS: tuple[str, ...] = ("scenario", "category", "query_number", "query", "id", "relevant")
"""One row per row the gated pass's relevance gate removed."""

SCENARIO_COLUMNS: tuple[str, ...] = (
    "pass", "scenario", "category", "outcome", "status", "measure_only", "counted", "queries",
    *HARNESS_METRICS, "errors", "candidates", "dropped_rows", "relevant_dropped", "relevant_lost",
)  # fmt: skip
"""One row per pass × scenario; metrics are means over the scenario's queries (missing, not 0,
for a scenario not applicable to the system). `counted`: the scenario feeds category/overall
means (outcome pass, not measure-only, applicable)."""

CATEGORY_COLUMNS: tuple[str, ...] = ("pass", "category", "queries", *HARNESS_METRICS)
"""One row per pass × category (counted scenarios only: outcome pass, not measure-only)."""

OVERALL_COLUMNS: tuple[str, ...] = (
    "pass", "queries", *HARNESS_METRICS, "min_relevance", "candidates", "dropped_rows", "queries_with_drops",
)  # fmt: skip
"""One row per pass: the means over every counted query and the relevance gate's totals (ungated
row: the totals of the queries that pin their own gate, `RunResult.pinned_gates`)."""

REGRESSION_COLUMNS: tuple[str, ...] = (
    "kind",
    "scenario",
    "category",
    "metric",
    "actual",
    "threshold",
    "message",
)
"""One row per regression (kind: assertion, metric, present). Empty frame = the run has no regression."""

GATE_COMPARISON_COLUMNS: tuple[str, ...] = (
    "scenario", "category", "status", "gated_status",
    *(f"{m}{suffix}" for m in COMPARED_METRICS for suffix in ("", "_gated", "_delta")),
    "candidates", "dropped_rows", "relevant_dropped", "relevant_lost",
)  # fmt: skip
"""One row per scenario: ungated vs gated recall/precision/MRR, delta = gated − ungated; what
the gate dropped from the pool and the relevant ids it took out of the top-k (`relevant_lost`)."""

MUTATION_COLUMNS: tuple[str, ...] = (
    "mutation",
    "description",
    "control",
    "caught",
    "caught_by",
    "regressions",
)
"""One row per mutation run, in catalogue order. `control`: a no-op that must NOT be caught.
`caught`: the run had at least one regression. `caught_by`: the first few regression
messages ("; "-joined, "(+N more)" when there are more). `regressions`: how many there were."""

LATENCY_COLUMNS: tuple[str, ...] = ("scope", "calls", "p50_ms", "p95_ms")
"""One row per scenario that made search calls (in file order), then an "overall" row, then
"first search" (each scenario's first call: a cold start) and "steady state" (every other call)
when the report has them, and "time to searchable" (a system that indexes later: the wait after
each memory's seeding; `calls` counts memories): search latency over both passes' calls, wall
milliseconds. Reported,
never gated. Empty when no call was timed."""

NOT_APPLICABLE_COLUMNS: tuple[str, ...] = ("scenario", "category", "missing")
"""One row per scenario that was not applicable to the system; `missing` lists the capabilities
it needs that the system lacks."""

BEHAVIOUR_COLUMNS: tuple[str, ...] = (
    "pass", "scenario", "category", "counted", "query_number", "query", "metric", "value",
)  # fmt: skip
"""One row per behaviour metric (`evalkit.metrics.BEHAVIOUR`: stale_fact_rate, contamination,
duplicate_rate, query_sensitivity, abstention) per query it applies to, per pass, in query order
(long format: pivot on `metric` for one column each). `counted`: the query feeds the category and
overall behaviour means (its scenario is expected to pass and applicable; measure-only ones
included). Empty for runs of suites that did not ask for behaviour metrics."""

CAUGHT_BY_MESSAGES = 3
"""How many regression messages `caught_by` quotes (the most specific first)."""

FRAME_NAMES: tuple[str, ...] = (
    "queries", "hits", "dropped", "scenarios", "categories", "overall", "regressions", "latency",
    "not_applicable", "behaviour", "gate_comparison",
)  # fmt: skip
"""The frames an EvalRun offers (the last one is a method: `gate_comparison()`)."""

_SCENARIO_COUNTS = ("candidates", "dropped_rows", "relevant_dropped", "relevant_lost")
_NO_QUERIES = dict.fromkeys(("errors", *_SCENARIO_COUNTS), 0)
"""The counts of a scenario that asked no query (not applicable to the system)."""


def _frame_doc(summary: str, columns: Sequence[str], detail: str = "") -> Callable[[Any], property]:
    """Make a frame property whose docstring (what `help(EvalRun)`, `EvalRun.queries?` and an
    IDE show) is `summary`, its columns as the constant lists them and `detail`: written from the
    constant, so the docstring cannot drift from the frame."""

    def wrap(getter: Any) -> property:
        text = f"{summary}\n\nColumns: {', '.join(columns)}."
        getter.__doc__ = text + (f"\n\n{detail}" if detail else "")
        return property(getter)

    return wrap


class EvalRun:
    """A finished evaluation. Build with `evalkit.run_eval(...)` or `evalkit.load_run(path)`.

    Frames (each a fresh copy; their columns are the `*_COLUMNS` constants of this module, named in
    each property's docstring): `queries`, `hits`, `dropped`, `scenarios`, `categories`, `overall`,
    `regressions`, `latency`, `not_applicable`, and the methods `gate_comparison()`,
    `gate_sweep()`, `confidence_intervals()` and `mutations()`. Queries are numbered from 1
    (`query_number`, as in every table and message) and `query_id` is each query's stable id
    (`evalkit.scenarios.stable_query_id`: its own id, else `<scenario>#<n>`)."""

    def __init__(self, result: RunResult) -> None:
        self.result = result

    @property
    def passes(self) -> dict[str, PassResult]:
        """The run's passes by name, in the run's order ("ungated" first)."""
        return {p.name: p for p in self.result.passes}

    @property
    def ok(self) -> bool:
        """True when the run has no regressions (exit code 0)."""
        return not self.result.regressions

    def save(self, path: str | Path) -> Path:
        """Write the result JSON atomically; `load_run(path)` gives this run back."""
        return save_report(self.result, path)

    @property
    def extra_metrics(self) -> list[str]:
        """Metric columns beyond the harness metrics (benchmarks: `ndcg@10`, ...), in query order."""
        return list(self._extra_metrics)

    @_frame_doc(
        "One row per pass × scenario × query (QUERY_COLUMNS, then any benchmark metric).",
        QUERY_COLUMNS,
        "`query_number` counts from 1 in file order; `query_id` is the stable id (`<scenario>#<n>` "
        "or the query's own id); `counted`: the query feeds category and overall means; `passed`: no "
        "assertion error; `relevant`, `retrieved`, `check_errors` and `lost_from_top_k` hold lists.",
    )
    def queries(self) -> pd.DataFrame:
        return self._queries.copy()

    @_frame_doc(
        "One row per pass × query × retrieved hit, in rank order (HIT_COLUMNS).",
        HIT_COLUMNS,
        "`dropped_by_gate` (ungated rows): the gated pass's gate removed this id.",
    )
    def hits(self) -> pd.DataFrame:
        return self._hits.copy()

    @_frame_doc("One row per row the gated pass's relevance gate removed (DROPPED_COLUMNS).", DROPPED_COLUMNS)
    def dropped(self) -> pd.DataFrame:
        return self._dropped.copy()

    @_frame_doc(
        "One row per pass × scenario (SCENARIO_COLUMNS, then any benchmark metric).",
        SCENARIO_COLUMNS,
        "Metrics are means over the scenario's queries: missing (NaN, not 0) for a scenario not "
        "applicable to the system.",
    )
    def scenarios(self) -> pd.DataFrame:
        return self._scenarios.copy()

    @_frame_doc(
        "One row per pass × category, counted scenarios only (CATEGORY_COLUMNS, then any benchmark metric).",
        CATEGORY_COLUMNS,
    )
    def categories(self) -> pd.DataFrame:
        rows = [
            {
                "pass": name,
                "category": c,
                "queries": agg.queries,
                **_metric_values(agg.metrics, self._metrics),
            }
            for name, result in self.passes.items()
            for c, agg in result.categories.items()
        ]
        return pd.DataFrame(rows, columns=[*CATEGORY_COLUMNS, *self._extra_metrics])

    @_frame_doc(
        "One row per pass: means over every counted query and the relevance gate's totals (OVERALL_COLUMNS).",
        OVERALL_COLUMNS,
    )
    def overall(self) -> pd.DataFrame:
        rows = []
        for name, result in self.passes.items():
            gate = result.relevance_gate
            rows.append(
                {
                    "pass": name,
                    "queries": result.overall.queries,
                    **_metric_values(result.overall.metrics, self._metrics),
                    "min_relevance": gate.min_relevance,
                    "candidates": gate.candidates,
                    "dropped_rows": gate.dropped_rows,
                    "queries_with_drops": gate.queries_with_drops,
                }
            )
        return pd.DataFrame(rows, columns=[*OVERALL_COLUMNS, *self._extra_metrics])

    @_frame_doc(
        "One row per regression; empty when the run has none (REGRESSION_COLUMNS).", REGRESSION_COLUMNS
    )
    def regressions(self) -> pd.DataFrame:
        return pd.DataFrame(
            [r.model_dump() for r in self.result.regressions], columns=list(REGRESSION_COLUMNS)
        )

    @_frame_doc(
        "Search latency per scenario, then an overall row, in wall ms over both passes (LATENCY_COLUMNS).",
        LATENCY_COLUMNS,
    )
    def latency(self) -> pd.DataFrame:
        report = self.result.latency
        rows = [{"scope": name, **t.model_dump()} for name, t in report.scenarios.items()]
        for scope, latency in (
            ("overall", report.overall), ("first search", report.first), ("steady state", report.steady),
            ("time to searchable", report.searchable),
        ):  # fmt: skip
            if latency is not None:
                rows.append({"scope": scope, **latency.model_dump()})
        return pd.DataFrame(rows, columns=list(LATENCY_COLUMNS))

    @_frame_doc(
        "One row per scenario not applicable to the system, with the capabilities it lacks "
        "(NOT_APPLICABLE_COLUMNS).",
        NOT_APPLICABLE_COLUMNS,
    )
    def not_applicable(self) -> pd.DataFrame:
        categories = {s.name: s.category for s in self.result.scenarios}
        rows = [
            {"scenario": name, "category": categories[name], "missing": missing}
            for name, missing in self.result.not_applicable.items()
        ]
        return pd.DataFrame(rows, columns=list(NOT_APPLICABLE_COLUMNS))

    def gate_comparison(self) -> pd.DataFrame:
        """Per scenario: ungated vs gated recall/precision/MRR, deltas and what the gate dropped.
        Empty (with the documented columns) when the gated pass was skipped.

        Columns: scenario, category, status, gated_status, recall, recall_gated, recall_delta,
        precision, precision_gated, precision_delta, mrr, mrr_gated, mrr_delta, candidates,
        dropped_rows, relevant_dropped, relevant_lost (GATE_COMPARISON_COLUMNS)."""
        frame = self._scenarios
        ungated = frame[frame["pass"] == "ungated"].set_index("scenario")
        gated = frame[frame["pass"] == "gated"].set_index("scenario")
        if gated.empty:
            return pd.DataFrame(columns=list(GATE_COMPARISON_COLUMNS))
        table = pd.DataFrame(
            {"category": ungated["category"], "status": ungated["status"], "gated_status": gated["status"]}
        )
        for m in COMPARED_METRICS:
            table[m] = ungated[m]
            table[f"{m}_gated"] = gated[m]
            table[f"{m}_delta"] = gated[m] - ungated[m]
        for count in _SCENARIO_COUNTS:
            table[count] = gated[count]
        return table.rename_axis("scenario").reset_index()[list(GATE_COMPARISON_COLUMNS)]

    def gate_sweep(self, values: Iterable[float] = DEFAULT_SWEEP_VALUES) -> pd.DataFrame:
        """The gate re-applied to this run's recorded candidates at each value: one row per value ×
        scope (overall, category, scenario), see `evalkit.views.sweep.SWEEP_COLUMNS`; equal to
        running the gated pass at each value. Pick gates with `evalkit.views.sweep.recommend_gates(sweep)`.
        UsageError when the run has no gated pass or recorded no candidates."""
        return gate_sweep(self.result, values)

    def confidence_intervals(
        self,
        *,
        resamples: int = DEFAULT_RESAMPLES,
        level: float = DEFAULT_LEVEL,
        seed: int = DEFAULT_SEED,
        small_sample: int = SMALL_SAMPLE,
    ) -> pd.DataFrame:
        """Confidence intervals of the overall and per-category means of every harness metric,
        per pass (`evalkit.views.intervals.INTERVAL_COLUMNS`): Wilson score intervals for hit
        rate, for the other metrics the seeded percentile bootstrap from `small_sample` queries
        up (when they do not all agree), else the bounded Wilson interval; `too_few` marks scopes
        with too few queries to judge (fewer than 6 at 95 %)."""
        return interval_frame(
            self._queries, resamples=resamples, level=level, seed=seed, small_sample=small_sample
        )

    def power(self, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
        """Per pass, overall and per category: the smallest drop of mean recall a two-sided paired
        test at `level` could detect with the scope's queries (`evalkit.views.intervals.
        POWER_COLUMNS`; NaN: no drop is detectable)."""
        return pd.DataFrame(power_rows(self.query_rows, level=level), columns=list(POWER_COLUMNS))

    @property
    def behaviour(self) -> pd.DataFrame:
        """The behaviour metrics per query (BEHAVIOUR_COLUMNS); empty when the suite asked for none."""
        rows = [
            {
                "pass": name,
                "scenario": s.name,
                "category": s.category,
                "counted": counts_toward_behaviour(s),
                "query_number": q.index + 1,
                "query": q.query,
                "metric": metric,
                "value": value,
            }
            for name, result in self.passes.items()
            for s in result.scenarios
            for q in s.queries
            for metric, value in q.behaviour.items()
        ]
        return pd.DataFrame(rows, columns=list(BEHAVIOUR_COLUMNS))

    @property
    def behaviour_metrics(self) -> list[str]:
        """The behaviour metrics (`evalkit.metrics.BEHAVIOUR`) the measurement pass scored on
        some query, in registry order; [] for a run of a suite that asked for none (its report,
        tables and console show none of them)."""
        scored = {m for s in self.result.scenarios for q in s.queries for m in q.behaviour}
        return [m for m in BEHAVIOUR_METRICS if m in scored]

    @property
    def perturbation_curve(self) -> pd.DataFrame | None:
        """The perturbation curve saved with the run (`curve_frame`), None when none was
        measured."""
        curve = self.result.perturbation_curve
        return None if curve is None else curve_frame(curve)

    def mutations(self) -> pd.DataFrame:
        """The detection power measured with this run (see `mutation_frame`); empty when mutation
        testing did not run with it.

        Columns: mutation, description, control, caught, caught_by, regressions (MUTATION_COLUMNS)."""
        return mutation_frame(self.result.detection)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every frame by name (see FRAME_NAMES), the gate comparison included."""
        return {name: getattr(self, name) for name in FRAME_NAMES[:-1]} | {
            "gate_comparison": self.gate_comparison()
        }

    # --- built once --------------------------------------------------------------------------

    @cached_property
    def _extra_metrics(self) -> tuple[str, ...]:
        names: dict[str, None] = {}
        for s in self.result.scenarios:
            for q in s.queries:
                names.update(dict.fromkeys(k for k in q.metrics if k not in HARNESS_METRICS))
        return tuple(names)

    @property
    def _metrics(self) -> list[str]:
        return [*HARNESS_METRICS, *self._extra_metrics]

    @cached_property
    def _queries(self) -> pd.DataFrame:
        return pd.DataFrame(self.query_rows, columns=[*QUERY_COLUMNS, *self._extra_metrics])

    @cached_property
    def query_rows(self) -> list[dict[str, Any]]:
        """The rows of `queries` as plain dicts, without pandas (built once; do not change them):
        what the console summary and `power_rows` read, so `evalkit run` needs no frame."""
        measured = {(s.name, q.index): q for s in self.result.scenarios for q in s.queries}
        rows = []
        for name, result in self.passes.items():
            for s in result.scenarios:
                counted = counts_toward_aggregates(s)
                for q in s.queries:
                    lost = lost_from_top_k(measured[(s.name, q.index)], q) if result.relevance_gated else []
                    rows.append(
                        {
                            "pass": name,
                            "scenario": s.name,
                            "category": s.category,
                            "outcome": s.outcome,
                            "measure_only": s.measure_only,
                            "counted": counted,
                            "query_number": q.index + 1,
                            "query_id": stable_query_id(s.name, q.index, q.query_id),
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
                            "lost_from_top_k": lost,
                            "relevant_lost": len(lost),
                            "tied": None if q.ties is None else q.ties.decided,
                            "tied_at_cut": None if q.ties is None else q.ties.at_cut,
                            "tied_relevant": [] if q.ties is None else q.ties.relevant,
                            **{m: q.metrics.get(m) for m in self._extra_metrics},
                        }
                    )
        return rows

    @cached_property
    def _hits(self) -> pd.DataFrame:
        gated = self.result.gated
        gone = (
            {(s.name, q.index): {d.id for d in q.dropped} for s in gated.scenarios for q in s.queries}
            if gated is not None
            else {}
        )
        rows = []
        for name, result in self.passes.items():
            for s in result.scenarios:
                for q in s.queries:
                    dropped = gone.get((s.name, q.index), set()) if not result.relevance_gated else set()
                    for h in q.hits:
                        rows.append(
                            {
                                "pass": name,
                                "scenario": s.name,
                                "category": s.category,
                                "query_number": q.index + 1,
                                "query": q.query,
                                "rank": h.rank,
                                "id": h.id,
                                "relevant": h.relevant,
                                "dropped_by_gate": h.id in dropped,
                                **{f.name: _frame_value(f, getattr(h, f.name)) for f in _HIT_SIGNALS},
                            }
                        )
        return pd.DataFrame(rows, columns=list(HIT_COLUMNS))

    @cached_property
    def _dropped(self) -> pd.DataFrame:
        gated = self.result.gated
        rows = [
            {
                "scenario": s.name,
                "category": s.category,
                "query_number": q.index + 1,
                "query": q.query,
                "id": d.id,
                "relevant": d.relevant,
            }
            for s in (gated.scenarios if gated else [])
            for q in s.queries
            for d in q.dropped
        ]
        return pd.DataFrame(rows, columns=list(DROPPED_COLUMNS))

    @cached_property
    def _scenarios(self) -> pd.DataFrame:
        """Scenario metrics from the result (the means it recorded); counts from `scenario_counts`."""
        by_scenario = self.scenario_counts
        rows = [
            {
                "pass": name,
                "scenario": s.name,
                "category": s.category,
                "outcome": s.outcome,
                "status": s.status,
                "measure_only": s.measure_only,
                "counted": counts_toward_aggregates(s),
                "queries": s.metrics.queries,
                **_metric_values(s.metrics.metrics if s.status != "not_applicable" else {}, self._metrics),
                **by_scenario.get((name, s.name), _NO_QUERIES),
            }
            for name, result in self.passes.items()
            for s in result.scenarios
        ]
        return pd.DataFrame(rows, columns=[*SCENARIO_COLUMNS, *self._extra_metrics])

    @cached_property
    def scenario_counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """(pass, scenario) → its queries' assertion errors (`errors`), candidates, dropped rows,
        relevant rows dropped and relevant ids lost from the top-k, summed from `query_rows` (the
        one place they are counted; a scenario that asked no query is absent: all 0)."""
        counts: dict[tuple[str, str], dict[str, int]] = {}
        for row in self.query_rows:
            summed = counts.setdefault((row["pass"], row["scenario"]), dict(_NO_QUERIES))
            summed["errors"] += len(row["check_errors"])
            for name in _SCENARIO_COUNTS:
                summed[name] += row[name]
        return counts


def _frame_value(spec: HitField, value: Any) -> Any:
    """A hit field's value in the hits frame: a set of labels joined by its separator."""
    return spec.joined.join(value) if spec.joined is not None else value


def _metric_values(metrics: dict[str, float], names: list[str]) -> dict[str, float | None]:
    return {m: metrics.get(m) for m in names}


def curve_frame(curve: PerturbationCurve) -> pd.DataFrame:
    """A perturbation curve as a wide frame (what `evalkit.perturbation_curve` returns): one row
    per (system, metric) — the index levels `system` and `metric`, the harness metrics first, then
    any behaviour metric measured at every value — and one column per value in the order measured
    (the columns' name is the curve's kind: "distractors" or "stale-repeats"), holding the overall
    mean of the measurement pass."""
    rows = {
        (system, metric): points
        for system, metrics in curve.series.items()
        for metric, points in metrics.items()
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(curve.values))
    frame.index = pd.MultiIndex.from_tuples(list(rows), names=["system", "metric"])
    frame.columns = frame.columns.set_names(curve.kind)
    return frame


def mutation_frame(detection: DetectionPower | None) -> pd.DataFrame:
    """One row per mutation of `detection` (MUTATION_COLUMNS), in catalogue order; empty with the
    columns for None."""
    rows = [
        {
            "mutation": o.mutation,
            "description": o.description,
            "control": o.control,
            "caught": o.caught,
            "caught_by": _caught_by([r.message for r in o.regressions]),
            "regressions": len(o.regressions),
        }
        for o in (detection.outcomes if detection else [])
    ]
    return pd.DataFrame(rows, columns=list(MUTATION_COLUMNS))


def _caught_by(messages: list[str]) -> str:
    quoted = "; ".join(messages[:CAUGHT_BY_MESSAGES])
    more = len(messages) - CAUGHT_BY_MESSAGES
    return f"{quoted} (+{more} more)" if more > 0 else quoted


def benchmark_metric_frame(
    run: EvalRun, metrics: Sequence[str] | None = None, pass_name: str = "ungated"
) -> pd.DataFrame:
    """One row per scenario of the pass, then an "overall" row: `scenario`, `queries` and the
    mean of each metric (default: every benchmark metric of the run). UsageError for an unknown
    metric or pass."""
    labels = _checked_metrics(run, metrics)
    scenarios = _pass_rows(run.scenarios, pass_name)
    overall = _pass_rows(run.overall, pass_name).assign(scenario="overall")
    columns = ["scenario", "queries", *labels]
    return pd.concat([scenarios[columns], overall[columns]], ignore_index=True)


def question_category_frame(
    run: EvalRun, metrics: Sequence[str] = ("recall@5", "recall@10"), pass_name: str = "ungated"
) -> pd.DataFrame:
    """Per question category: `category` (numeric ones ascending first, e.g. LoCoMo's "1".."5",
    then other labels such as LongMemEval's question types alphabetically), `name` (the name the
    run's provenance gives the category, `Provenance.question_categories`: LoCoMo's multi-hop,
    temporal, open-domain, single-hop, adversarial; "" for labels the run did not name),
    `queries` and
    the mean of each metric over that category's queries; then an "overall" row over all of them.
    Only queries that count toward aggregates are used (LongMemEval's abstention questions, which
    are measure-only, do not). UsageError when the run's queries carry no category (not a LoCoMo
    or LongMemEval run), or for an unknown metric or pass."""
    labels = _checked_metrics(run, metrics)
    queries = _pass_rows(run.queries, pass_name)
    queries = queries[queries["counted"]]
    if queries.empty or queries["query_category"].isna().any():
        raise UsageError(
            "question_category_frame needs a run whose queries all carry a category, such as a LoCoMo run"
        )
    grouped = queries.groupby("query_category", sort=False)
    table = grouped[labels].mean().join(grouped.size().rename("queries"))
    table = table.loc[sorted(table.index, key=_category_key)].rename_axis("category").reset_index()
    provenance = run.result.provenance
    names = provenance.question_categories if provenance is not None else {}
    table.insert(1, "name", [names.get(c, "") for c in table["category"]])
    overall = {"category": "overall", "name": "", "queries": len(queries), **queries[labels].mean().to_dict()}
    table = pd.concat([table, pd.DataFrame([overall])], ignore_index=True)
    return table[["category", "name", "queries", *labels]]


def _category_key(category: str) -> tuple[int, int, str]:
    """Numeric categories first, in numeric order, then any other label alphabetically."""
    return (0, int(category), "") if category.isdigit() else (1, 0, category)


def _checked_metrics(run: EvalRun, metrics: Sequence[str] | None) -> list[str]:
    available = [*HARNESS_METRICS, *run.extra_metrics]
    labels = run.extra_metrics if metrics is None else list(metrics)
    unknown = [m for m in labels if m not in available]
    if unknown:
        raise UsageError(
            f"{'metric' if len(unknown) == 1 else 'metrics'} {', '.join(unknown)} not in this run; "
            f"available: {', '.join(available)}"
        )
    return labels


def _pass_rows(frame: pd.DataFrame, pass_name: str) -> pd.DataFrame:
    if pass_name not in set(frame["pass"]):
        raise UsageError(f"pass {pass_name!r} not in this run; passes: {', '.join(frame['pass'].unique())}")
    return frame[frame["pass"] == pass_name]


def check_scenario(run: EvalRun, scenario: str) -> None:
    names = [s.name for s in run.result.scenarios]
    if scenario not in names:
        raise UsageError(f"scenario {scenario!r} is not in this run; its scenarios are: {', '.join(names)}")


def by_pass(
    frame: pd.DataFrame, key: str, names: list[str] | None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The ungated rows and the gated rows (None when there is no gated pass), indexed by `key`."""
    if names is not None:
        frame = frame[frame[key].isin(names)]
    ungated = frame[frame["pass"] == "ungated"].set_index(key)
    gated = frame[frame["pass"] == "gated"].set_index(key)
    return ungated, (gated.reindex(ungated.index) if len(gated) else None)


def gate_drops(gate: GateSummary) -> str:
    """What a pass's relevance gate did: "dropped N of M candidate rows across Q/T queries"."""
    return (
        f"dropped {gate.dropped_rows} of {gate.candidates} candidate rows across "
        f"{gate.queries_with_drops}/{gate.queries} queries"
    )


def missing_gated_pass(result: RunResult) -> str:
    """How a run without a gated pass says so: "no relevance gate" when its system declares none
    (nothing was skipped), else "gated pass skipped" (the run was made with --gated-pass off)."""
    declared = result.provenance.declaration
    return "gated pass skipped" if "relevance_gate" in declared.capabilities else "no relevance gate"


def gate_label(run: EvalRun) -> str:
    gated = run.result.gated
    return "no gate" if gated is None else f"min_relevance {gated.relevance_gate.min_relevance:g}"


def load_run(path: str | Path) -> EvalRun:
    """An `EvalRun` from a JSON report file; its frames equal those of the run that wrote it."""
    return EvalRun(load_report(path))
