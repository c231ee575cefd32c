"""Tables of a finished run, for the report notebooks (SPEC §3.6, §3.7).

Every function is pure: it reads an `EvalRun` and returns a pandas `Styler` (the plain frame is
`styler.data`). Notebooks call exactly one of these per cell, so they hold no logic of their own.
Nothing here runs anything: the detection-power table shows the mutation result saved with the
run, or says that none was run.

Conventions:
- "ungated" is the measured pass (what baselines and thresholds gate), "gated" the report-only pass
  under the relevance gate, and Δ = gated − ungated. Without a gated pass the gated and Δ columns
  are left out.
- Metric columns are a two-level header (metric, pass); rows keep scenario file order, query
  order and rank order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence

import pandas as pd
from pandas.io.formats.style import Styler

from evalkit.harness.results import LeakKind, QueryResult
from evalkit.harness.sweep import unavailable
from evalkit.harness.uncertainty import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    SMALL_SAMPLE,
    queries_to_judge,
)
from evalkit.metrics import HARNESS, HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR
from evalkit.views.compare import RunComparison, changed_queries, identity_fields
from evalkit.views.compare_many import MultiComparison
from evalkit.views.frames import (
    EvalRun,
    benchmark_metric_frame,
    by_pass,
    check_scenario,
    curve_frame,
    gate_label,
    missing_gated_pass,
    question_category_frame,
)
from evalkit.views.styles import (
    FAIL_CSS,
    GOOD_CSS,
    METRIC_LABELS,
    NA_TEXT,
    QUIET_CSS,
    WARN_CSS,
    delta_css,
    dropped_label,
    format_delta,
    nonempty_fail_css,
    regression_count_css,
    relevant_row_css,
    standing_css,
    status_css,
    style_side_by_side,
    styled,
    true_fail_css,
    true_quiet_css,
    yes_blank,
)
from evalkit.views.sweep import (
    DEFAULT_SWEEP_VALUES,
    DEFAULT_TOLERANCE,
    RECOMMENDATION_COLUMNS,
    recommend_gates,
)
from evalkit.views.verdict import shown_reason
from evalkit.wording import counted

__all__ = [
    "LEAK_COLUMNS",
    "assertion_failures",
    "assertion_results",
    "behaviour_columns",
    "behaviour_css",
    "behaviour_label",
    "behaviour_legend",
    "benchmark_table",
    "caption",
    "category_table",
    "comparison_identity",
    "comparison_metrics",
    "comparison_queries",
    "comparison_scenarios",
    "curve_table",
    "detection_table",
    "gate_recommendation",
    "hits_table",
    "interval_method",
    "interval_table",
    "latency_table",
    "leak_frame",
    "leak_table",
    "metric_columns",
    "missed_relevant",
    "multi_comparison_table",
    "not_applicable_table",
    "question_category_table",
    "ranking_diff_table",
    "regressions_table",
    "run_summary",
    "scenario_table",
]


def gate_recommendation(
    run: EvalRun, tolerance: float = DEFAULT_TOLERANCE, values: Iterable[float] = DEFAULT_SWEEP_VALUES
) -> Styler:
    """Per category and overall: the largest swept gate whose recall loss stays within `tolerance`
    (`evalkit.views.sweep.recommend_gates`), with recall, its loss, precision and its gain at that gate. A
    recommended gate below the run's gate is red (the current gate costs more recall there than
    tolerated). When the run cannot be swept, an empty table whose caption says why."""
    reason = unavailable(run.result)
    if reason is not None or run.result.gated is None:
        return styled(pd.DataFrame(columns=list(RECOMMENDATION_COLUMNS)), f"Gate recommendation: {reason}")
    current = run.result.gated.relevance_gate.min_relevance
    swept = list(values)
    table = recommend_gates(run.gate_sweep(swept), tolerance)
    caption = (
        f"Gate recommendation: the largest gate losing at most {tolerance:g} recall "
        f"(current gate {current:g}; red = the current gate costs more there)"
    )
    top = max(swept)
    styler = styled(table, caption).hide(axis="index").format(precision=3, na_rep="none within tolerance")
    styler = styler.format(
        lambda gate: _recommended(gate, top), subset=["recommended_gate"], na_rep="none within tolerance"
    )
    too_strict = [
        FAIL_CSS if gate < current - 1e-9 else "" for gate in table["recommended_gate"].fillna(-1.0)
    ]
    return styler.apply(lambda _: too_strict, subset=["recommended_gate"], axis=0)


def _recommended(gate: object, top: float) -> str:
    """A recommended gate as the table shows it: at the sweep's top it is no limit, "any (to 1)" —
    no swept gate cost that scope more recall than tolerated — not a gate to set."""
    value = float(str(gate))
    return f"any (to {top:g})" if value >= top - 1e-9 else f"{value:.3f}"


def detection_table(run: EvalRun) -> Styler:
    """The detection power saved with the run (`EvalRun.mutations()`): each injected search bug,
    whether the deterministic gate caught it and what caught it; `caught` green when a real
    mutation was caught or the control stayed quiet, red otherwise. When no mutation result was
    saved with the run, an empty table whose caption says so — "not applicable" when the run's
    system did not declare `mutation_testing` (the mutation suite mutates the search of the
    system that declares it, not this one's)."""
    table = run.mutations()[["mutation", "caught", "control", "caught_by", "regressions", "description"]]
    if not run.result.provenance.declaration.mutation_testing:
        return styled(
            table,
            f"Detection power: not applicable — it measures the reference store's search, this run "
            f"evaluated {run.result.system}",
        )
    if run.result.detection is None:
        return styled(table, "Detection power: not measured with this run (run it with mutations)")
    caught = int((table["caught"] & ~table["control"]).sum())
    real = int((~table["control"]).sum())
    verdict = "every mutation caught, control quiet" if run.result.detection.ok else "GATE MISSED SOMETHING"
    styler = styled(table, f"Detection power: {caught} of {real} injected search bugs caught — {verdict}")
    expected = table["caught"] != table["control"]
    wrapped = ("caught_by", "description")
    return (
        styler.hide(axis="index")
        .set_table_styles(
            {
                column: [{"selector": "td", "props": "white-space: normal; min-width: 24em"}]
                for column in wrapped
            },
            overwrite=False,
        )
        .apply(lambda column: [GOOD_CSS if ok else FAIL_CSS for ok in expected], subset=["caught"], axis=0)
    )


def run_summary(run: EvalRun) -> Styler:
    """What ran and where it came from: mode, system, embedder, top_k, gate value, counts,
    evalkit version, git commit (+ dirty flag), dataset digest, date, Python and notes (wrapped;
    the run's own paths in them shown as `shown_path` shows them, `verdict.shown_reason`)."""
    report = run.result
    prov = report.provenance
    commit = prov.git.commit
    commit_text = "unknown" if not commit else commit[:12] + (" (dirty)" if prov.git.dirty else "")
    queries = sum(len(s.queries) for s in report.scenarios)
    gate = (
        missing_gated_pass(report)
        if report.gated is None
        else f"min_relevance {report.gated.relevance_gate.min_relevance:g} "
        f"(gated pass, {report.gated_pass_role})"
    )
    items = {
        "mode": report.mode,
        "system": report.system,
        "embedder": "none (the system embeds by itself)" if prov.embedder is None else prov.embedder.identity,
        "top_k": str(report.top_k),
        "relevance gate": gate,
        "scenarios": f"{len(report.scenarios)} scenarios, {queries} queries",
        "regressions": str(len(report.regressions)),
        "evalkit version": prov.evalkit_version,
        "git commit": commit_text,
        "dataset digest": prov.dataset_digest[:16],
        "generated at": report.generated_at,
        "python": f"{prov.python} on {prov.platform}",
        "notes": shown_reason(run, "; ".join(report.notes)) or "none",
    }
    frame = pd.DataFrame({"value": list(items.values())}, index=pd.Index(list(items)))
    styler = styled(frame, f"Run summary and provenance — system {report.system}").hide(axis="columns")
    styler = styler.set_table_styles(  # the notes may be long: they wrap, the table stays on screen
        {"value": [{"selector": "td", "props": "white-space: normal; max-width: 60em"}]}, overwrite=False
    )
    return styler.map(regression_count_css, subset=pd.IndexSlice[["regressions"], :])


def scenario_table(run: EvalRun, scenario: str | None = None) -> Styler:
    """One row per scenario (or only `scenario`): category, status, counted (whether it feeds the
    category and overall means: outcome pass and not measure-only), queries, then recall,
    precision, MRR and hit rate ungated | gated | Δ, then — for a suite scored on behaviour
    metrics only (`behaviour_columns`) — each behaviour metric's mean, then the gate's status,
    the rows it dropped from the over-fetched pool, how many of those were relevant, and the
    relevant rows it took out of the ungated top-k ("relevant lost from top-k", the gate's real
    cost). Fail statuses,
    negative Δ and relevant rows lost from the top-k are red; pool drops are amber."""
    names = [scenario] if scenario is not None else None
    if scenario is not None:
        check_scenario(run, scenario)
    ungated, gated = by_pass(run.scenarios, "scenario", names)
    counted = ungated["counted"].astype(bool)
    columns: dict[tuple[str, str], pd.Series] = {
        ("", "category"): ungated["category"],
        ("", "status"): ungated["status"],
        ("", "counted"): counted.map({True: "yes", False: "no"}),
        ("", "queries"): ungated["queries"],
        **metric_columns(ungated, gated),
        **behaviour_columns(run, {s.name: s.metrics.behaviour for s in run.result.scenarios}, ungated.index),
    }
    if gated is not None:
        columns |= {
            ("gate", "status"): gated["status"],
            ("gate", "dropped rows"): gated["dropped_rows"],
            ("gate", "relevant dropped"): gated["relevant_dropped"],
            ("gate", "relevant lost from top-k"): gated["relevant_lost"],
        }
    table = pd.DataFrame(columns)
    table.index.name = None
    return _styled_behaviour(style_side_by_side(table, caption(run, "Per scenario")), table)


def category_table(run: EvalRun) -> Styler:
    """One row per category plus an `overall` row (means over counted queries only): queries, then
    recall, precision, MRR and hit rate ungated | gated | Δ, then — for a suite scored on
    behaviour metrics only — each behaviour metric's mean (`behaviour_columns`; measure-only
    scenarios count toward these, as `evalkit.harness.aggregation.counts_toward_behaviour` says)."""
    ungated, gated = by_pass(run.categories, "category", None)
    overall_u, overall_g = by_pass(run.overall.assign(category="overall"), "category", None)
    ungated = pd.concat([ungated, overall_u])
    gated = None if gated is None or overall_g is None else pd.concat([gated, overall_g])
    measurement = run.result.measurement
    means = {name: aggregate.behaviour for name, aggregate in measurement.categories.items()}
    means["overall"] = measurement.overall.behaviour
    table = pd.DataFrame(
        {
            ("", "queries"): ungated["queries"],
            **metric_columns(ungated, gated),
            **behaviour_columns(run, means, ungated.index),
        }
    )
    table.index.name = None
    styler = style_side_by_side(table, caption(run, "Per category and overall (counted scenarios only)"))
    styler = _styled_behaviour(styler, table)
    return styler.set_properties(subset=pd.IndexSlice[["overall"], :], **{"font-weight": "bold"})


BEHAVIOUR_GROUP = "behaviour (ungated)"
"""The upper header of the behaviour metric columns in the scenario and category tables."""

NOT_SCORED = "–"
"""What a behaviour cell shows where the metric applies to none of the scope's queries (a
scenario without `forbid` has no contamination): not a zero, which would read as a good score."""


def behaviour_label(metric: str) -> str:
    """A behaviour metric's column header: its label and which way is better ("stale-fact rate ↓")."""
    return f"{BEHAVIOUR[metric].label} {'↓' if BEHAVIOUR[metric].lower_is_better else '↑'}"


def behaviour_columns(
    run: EvalRun, means: dict[str, dict[str, float]], index: pd.Index
) -> dict[tuple[str, str], pd.Series]:
    """The behaviour metric columns of a table whose rows are `index` (scenario or category
    names): one per metric the run scored (`EvalRun.behaviour_metrics`), under BEHAVIOUR_GROUP,
    each row's mean from `means` (row name → the measurement pass's behaviour means), NaN where
    the metric applies to none of the row's queries. No column at all for a run of a suite not
    scored on them, so its tables look exactly as before."""
    return {
        (BEHAVIOUR_GROUP, behaviour_label(metric)): pd.Series(
            [means.get(name, {}).get(metric, float("nan")) for name in index], index=index, dtype=float
        )
        for metric in run.behaviour_metrics
    }


def behaviour_css(metric: str) -> Callable[[object], str]:
    """CSS of one behaviour cell: amber when the value is worse than the metric's best (above 0
    for a lower-is-better metric, below 1 otherwise); never red, since a behaviour metric is
    checked only against a baseline that records it."""
    lower = BEHAVIOUR[metric].lower_is_better

    def css(value: object) -> str:
        number = float(value)  # type: ignore[arg-type]
        if number != number:
            return QUIET_CSS
        worse = number > 1e-9 if lower else number < 1 - 1e-9
        return WARN_CSS if worse else ""

    return css


def _styled_behaviour(styler: Styler, table: pd.DataFrame) -> Styler:
    """`styler` with its behaviour columns (if any) shown to three places, NOT_SCORED where a
    metric does not apply, amber where worse than best (`behaviour_css`)."""
    for metric in BEHAVIOUR:
        column = (BEHAVIOUR_GROUP, behaviour_label(metric))
        if column in table.columns:
            styler = styler.format(precision=3, subset=[column], na_rep=NOT_SCORED)
            styler = styler.map(behaviour_css(metric), subset=[column])
    return styler


def behaviour_legend(run: EvalRun) -> Styler:
    """What each behaviour metric the run scored measures, per query: its summary, what 0 and
    1 mean, which way is better, and over how many counted queries its overall mean is
    (the measurement pass)."""
    overall = run.result.measurement.overall
    rows = [
        {
            "metric": BEHAVIOUR[m].label,
            "per query": BEHAVIOUR[m].summary,
            "0 means": BEHAVIOUR[m].zero_means,
            "1 means": BEHAVIOUR[m].one_means,
            "better": "lower (0)" if BEHAVIOUR[m].lower_is_better else "higher (1)",
            "queries": overall.behaviour_queries.get(m, 0),
        }
        for m in run.behaviour_metrics
    ]
    frame = pd.DataFrame(rows, columns=["metric", "per query", "0 means", "1 means", "better", "queries"])
    caption = (
        "Behaviour metrics (this suite asks for them: behaviour_metrics: true): means over the queries "
        f"each applies to, {NOT_SCORED} where none; checked only against a baseline that records them"
    )
    styler = styled(frame, caption).hide(axis="index")
    return styler.set_table_styles(
        {
            column: [{"selector": "td", "props": "white-space: normal; min-width: 14em"}]
            for column in ("per query", "0 means", "1 means")
        },
        overwrite=False,
    )


LEAK_COLUMNS: tuple[str, ...] = (
    "scenario", "category", "status", "queries", "leaking queries", "stale-fact rate", "stale ids returned",
    "contamination", "forbidden ids returned",
)  # fmt: skip
"""One row per scenario of the measurement pass where the stale-fact rate or contamination
applies to some query (`leak_table`)."""


def leak_frame(run: EvalRun) -> pd.DataFrame:
    """LEAK_COLUMNS: for each applicable scenario where the stale-fact rate or contamination
    applies to at least one query, in suite order: how many queries they apply to, which of
    those (numbers from 1) returned a stale or forbidden id, the two means (NaN where one does not
    apply) and the ids behind them (`QueryResult.leaked`, rank order, each once; "not recorded"
    for a report written before they were saved, whose rates are above 0)."""
    rows = []
    for s in run.result.measurement.scenarios:
        applies = [q for q in s.queries if {"stale_fact_rate", "contamination"} & set(q.behaviour)]
        if not applies:
            continue
        leaking = [
            q
            for q in applies
            if q.behaviour.get("stale_fact_rate", 0) > 0 or q.behaviour.get("contamination", 0) > 0
        ]
        rows.append(
            {
                "scenario": s.name,
                "category": s.category,
                "status": s.status,
                "queries": len(applies),
                "leaking queries": ", ".join(str(q.index + 1) for q in leaking),
                "stale-fact rate": s.metrics.behaviour.get("stale_fact_rate", float("nan")),
                "stale ids returned": _leaked(applies, "stale", "stale_fact_rate"),
                "contamination": s.metrics.behaviour.get("contamination", float("nan")),
                "forbidden ids returned": _leaked(applies, "forbidden", "contamination"),
            }
        )
    return pd.DataFrame(rows, columns=list(LEAK_COLUMNS))


def _leaked(queries: Sequence[QueryResult], kind: LeakKind, metric: str) -> str:
    ids = list(dict.fromkeys(i for q in queries for i in q.leaked.get(kind, [])))
    if ids:
        return ", ".join(ids)
    return "not recorded" if any(q.behaviour.get(metric, 0) > 0 for q in queries) else ""


def leak_table(run: EvalRun) -> Styler:
    """`leak_frame` as a table: rates to three places (NOT_SCORED where one does not apply),
    scenarios that returned a stale or forbidden id in amber, and a caption counting them."""
    frame = leak_frame(run)
    leaking = int((frame["leaking queries"] != "").sum())
    caption = (
        f"Stale and forbidden ids returned (measurement pass): {leaking} of "
        f"{counted(len(frame), 'scenario')} returned some"
    )
    styler = styled(frame, caption).hide(axis="index")
    styler = styler.format(precision=3, subset=["stale-fact rate", "contamination"], na_rep=NOT_SCORED)
    styler = styler.map(status_css, subset=["status"])
    styler = styler.map(
        lambda v: WARN_CSS if v else "",
        subset=["leaking queries", "stale ids returned", "forbidden ids returned"],
    )
    return styler.set_table_styles(
        {
            column: [{"selector": "td", "props": "white-space: normal; min-width: 10em"}]
            for column in ("stale ids returned", "forbidden ids returned")
        },
        overwrite=False,
    )


def curve_table(run: EvalRun) -> Styler:
    """The perturbation curve saved with the run (`EvalRun.perturbation_curve`): one row per
    system and metric (its label), one column per value, three places. An empty table whose
    caption says so when the run has none."""
    curve = run.result.perturbation_curve
    if curve is None:
        return styled(pd.DataFrame(), "Perturbation curve: none was measured with this run")
    frame = curve_frame(curve)
    labels = {**{m: HARNESS[m].label for m in HARNESS_METRICS}, **{m: behaviour_label(m) for m in BEHAVIOUR}}
    frame.index = pd.MultiIndex.from_tuples(
        [(system, labels.get(metric, metric)) for system, metric in frame.index], names=["system", "metric"]
    )
    frame.columns = pd.Index([f"{curve.kind}={n}" for n in curve.values])
    caption = (
        f"Overall means (ungated pass) as {curve.kind} per scenario grow (seed {curve.seed}): each column "
        "is one run of the perturbed suite, never compared with a baseline"
    )
    return styled(frame, caption).format(precision=3)


def interval_table(
    run: EvalRun,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    small_sample: int = SMALL_SAMPLE,
) -> Styler:
    """Overall and per category (ungated pass, counted queries): queries, a small-sample flag,
    "too few queries to judge" where no paired test could tell a drop from chance, then each
    metric's mean and its interval as "[low, high]" (EvalRun.confidence_intervals: Wilson for hit
    rate, bootstrap or bounded Wilson for the means). Small samples are amber: one query more or
    less moves their means a lot."""
    frame = run.confidence_intervals(resamples=resamples, level=level, seed=seed, small_sample=small_sample)
    frame = frame[frame["pass"] == "ungated"]
    names = list(dict.fromkeys(frame["name"]))
    first = frame.drop_duplicates("name").set_index("name")
    columns: dict[tuple[str, str], list[object]] = {
        ("", "queries"): [int(first.loc[n, "queries"]) for n in names],
        ("", "small sample"): ["yes" if first.loc[n, "small_sample"] else "" for n in names],
        ("", "judge"): ["too few queries to judge" if first.loc[n, "too_few"] else "" for n in names],
    }
    for metric in HARNESS_METRICS:
        rows = frame[frame["metric"] == metric].set_index("name")
        columns[(METRIC_LABELS[metric], "mean")] = [float(rows.loc[n, "mean"]) for n in names]
        columns[(METRIC_LABELS[metric], f"{level:.0%} CI")] = [
            _interval(rows.loc[n, "ci_low"], rows.loc[n, "ci_high"]) for n in names
        ]
    table = pd.DataFrame(columns, index=pd.Index(names))
    caption = f"Uncertainty: {level:.0%} intervals of each mean (ungated pass, counted queries)"
    styler = styled(table, caption).format(precision=3, subset=[c for c in table.columns if c[1] == "mean"])
    warned: list[Hashable] = [("", "small sample"), ("", "judge")]
    return styler.map(lambda v: WARN_CSS if v in ("yes", "too few queries to judge") else "", subset=warned)


def interval_method(
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    small_sample: int = SMALL_SAMPLE,
) -> str:
    """How `interval_table`'s intervals and flags are computed, one sentence for under the table
    (kept out of its caption, which stays one line so the table fits a 1366 px screen)."""
    return (
        f"{level:.0%} intervals — hit rate: Wilson score; recall, precision, MRR: percentile bootstrap "
        f"({resamples} resamples, seed {seed}) from {small_sample} queries up, else the bounded Wilson "
        f"interval. Small sample = fewer than {small_sample} queries; too few queries to judge = fewer than "
        f"{queries_to_judge(level)}: no drop could be significant at {level:.0%}."
    )


def _interval(low: object, high: object) -> str:
    low_value, high_value = float(low), float(high)  # type: ignore[arg-type]
    if low_value != low_value:  # NaN: no query
        return "n/a (no query)"
    return f"[{low_value:.3f}, {high_value:.3f}]"


def assertion_failures(run: EvalRun) -> Styler:
    """Every assertion error of the ungated pass, one row each: scenario, status (xfail rows are
    expected failures), query number (1-based), query and error. The caption says "none" when
    every assertion held."""
    rows = [
        {"scenario": s.name, "status": s.status, "query #": q.index + 1, "query": q.query, "error": error}
        for s in run.result.scenarios
        for q in s.queries
        for error in q.check_errors
    ]
    frame = pd.DataFrame(rows, columns=["scenario", "status", "query #", "query", "error"])
    caption = (
        f"Assertion errors: {len(frame)} in {len(frame[['scenario', 'query #']].drop_duplicates())} "
        "queries (xfail scenarios fail by design and never gate)"
        if len(frame)
        else "Assertion errors: none — every assertion held"
    )
    return styled(frame, caption).hide(axis="index").map(status_css, subset=["status"])


def regressions_table(run: EvalRun) -> Styler:
    """The run's regressions (what fails CI): kind, scenario, category, metric, actual,
    threshold and message. The caption says "none" when the run has no regression."""
    frame = run.regressions
    caption = (
        f"Regressions: {len(frame)} — this run fails the thresholds"
        if len(frame)
        else "Regressions: none — no regressions"
    )
    styler = styled(frame, caption).hide(axis="index")
    return styler.format(precision=4, na_rep="").map(nonempty_fail_css, subset=["kind"])


def latency_table(run: EvalRun) -> Styler:
    """Search latency (wall ms over both passes' calls) per scenario and overall: calls, p50,
    p95. Reported, never gated; the caption says so when the report has no latency."""
    frame = run.latency
    caption = (
        f"Search latency of {run.result.system} (wall ms, reported only, never gated)"
        if len(frame)
        else "Search latency: not measured in this report"
    )
    return styled(frame, caption).hide(axis="index").format(precision=2)


def not_applicable_table(run: EvalRun) -> Styler:
    """The scenarios the system could not be judged on and the capabilities each needs that the
    system lacks (excluded from means and the baseline check); the caption says "none" when all applied."""
    frame = run.not_applicable.assign(missing=lambda f: f["missing"].map(", ".join))
    caption = (
        f"Not applicable: {counted(len(frame), 'scenario')} need{'s' if len(frame) == 1 else ''} "
        f"capabilities {run.result.system} lacks"
        if len(frame)
        else "Not applicable: none — every scenario applied to this system"
    )
    return styled(frame, caption).hide(axis="index")


def hits_table(run: EvalRun, scenario: str, queries: Iterable[int] | None = None) -> Styler:
    """Every hit the ungated pass retrieved for `scenario`'s queries (only the query numbers in
    `queries` when given), grouped by query (number, text) and in rank order: id, relevant,
    similarity, relevance, match source, low confidence, standing and whether the gated pass's
    gate dropped it. Relevant rows are green, rows the gate dropped red, non-current standing
    amber."""
    check_scenario(run, scenario)
    hits = run.hits
    rows = hits[(hits["pass"] == "ungated") & (hits["scenario"] == scenario)]
    if queries is not None:
        rows = rows[rows["query_number"].isin(list(queries))]
    frame = pd.DataFrame(
        {
            "query #": rows["query_number"],
            "query": rows["query"],
            "rank": rows["rank"],
            "id": rows["id"],
            "relevant": rows["relevant"],
            "similarity": rows["similarity"],
            "relevance": rows["relevance"],
            "match source": rows["match_source"],
            "low confidence": rows["low_confidence"],
            "standing": rows["standing"],
            "dropped by gate": rows["dropped_by_gate"],
        }
    ).set_index(["query #", "query", "rank"])
    styler = styled(frame, f"{scenario}: retrieved hits per query (ungated pass, rank order)")
    styler = styler.format(precision=3, na_rep="—", subset=["similarity", "relevance"])
    styler = styler.format(yes_blank, subset=["relevant", "low confidence"])
    styler = styler.format(dropped_label, subset=["dropped by gate"])
    styler = styler.apply(relevant_row_css, axis=1, subset=["id", "relevant"])
    styler = styler.map(true_fail_css, subset=["dropped by gate"])
    styler = styler.map(true_quiet_css, subset=["low confidence"])
    styler = styler.set_table_styles(  # long query texts wrap instead of widening the table
        [
            {
                "selector": "th.row_heading.level1",
                "props": "white-space: normal; max-width: 24em; text-align: left",
            }
        ],
        overwrite=False,
    )
    return styler.map(standing_css, subset=["standing"])


def missed_relevant(run: EvalRun, scenario: str) -> Styler:
    """Relevant ids that the ungated pass never retrieved for `scenario`'s queries (query number,
    query, id). The caption says "none" when every relevant id was retrieved."""
    check_scenario(run, scenario)
    queries = next(s for s in run.result.scenarios if s.name == scenario).queries
    rows = [
        {"query #": q.index + 1, "query": q.query, "id": rid}
        for q in queries
        for rid in q.relevant
        if rid not in q.retrieved
    ]
    frame = pd.DataFrame(rows, columns=["query #", "query", "id"])
    caption = (
        f"{scenario}: {counted(len(frame), 'relevant id')} never retrieved (ungated pass)"
        if len(frame)
        else f"{scenario}: none — every relevant id was retrieved (ungated pass)"
    )
    return styled(frame, caption).hide(axis="index")


def assertion_results(run: EvalRun, scenario: str) -> Styler:
    """One row per query of `scenario` (ungated pass): query, relevant ids, recall, precision,
    MRR, hit, and the assertion result — `pass`, `fail`, or `xfail` for a failing query of a
    scenario expected to fail — with its errors."""
    check_scenario(run, scenario)
    result = next(s for s in run.result.scenarios if s.name == scenario)
    failed = "xfail" if result.outcome == "xfail" else "fail"
    frame = pd.DataFrame(
        [
            {
                "query #": q.index + 1,
                "query": q.query,
                "relevant": ", ".join(q.relevant) or "(none)",
                **{METRIC_LABELS[m]: q.metrics[m] for m in HARNESS_METRICS},
                "result": failed if q.check_errors else "pass",
                "errors": "; ".join(q.check_errors),
            }
            for q in result.queries
        ],
        columns=["query #", "query", "relevant", *METRIC_LABELS.values(), "result", "errors"],
    )
    styler = styled(frame, f"{scenario}: metrics and assertions per query (ungated pass)")
    styler = styler.hide(axis="index").format(precision=3, subset=list(METRIC_LABELS.values()))
    return styler.map(status_css, subset=["result"])


def caption(run: EvalRun, title: str) -> str:
    if run.result.gated is None:
        return f"{title}: ungated pass ({missing_gated_pass(run.result)})"
    return (
        f"{title}: ungated (measured, checked in CI) vs gated ({gate_label(run)}, "
        f"{run.result.gated_pass_role}); Δ = gated − ungated"
    )


def metric_columns(ungated: pd.DataFrame, gated: pd.DataFrame | None) -> dict[tuple[str, str], pd.Series]:
    columns: dict[tuple[str, str], pd.Series] = {}
    for metric in HARNESS_METRICS:
        label = METRIC_LABELS[metric]
        columns[(label, "ungated")] = ungated[metric]
        if gated is not None:
            columns[(label, "gated")] = gated[metric]
            columns[(label, "Δ")] = gated[metric] - ungated[metric]
    return columns


def comparison_metrics(comparison: RunComparison) -> Styler:
    """Per harness metric: paired counted queries, mean of A and of B, Δ = B − A and the paired
    permutation p-value; Δ coloured like the gate's Δ, p-values below 0.05 in bold."""
    table = comparison.metrics.rename(columns={"mean_a": "A", "mean_b": "B", "delta": "Δ", "p_value": "p"})
    caption = f"Run B vs run A, {comparison.pass_name} pass (p: two-sided paired permutation test)"
    styler = styled(table, caption).hide(axis="index").format(precision=4, subset=["A", "B", "p"])
    styler = styler.format(format_delta, subset=["Δ"]).map(delta_css, subset=["Δ"])
    return styler.map(lambda p: "font-weight: bold" if p < 0.05 else "", subset=["p"])


def comparison_scenarios(comparison: RunComparison) -> Styler:
    """Per scenario: status in A and B (a flip in red when B fails) and Δ of each metric."""
    frame = comparison.scenarios
    table = frame[["scenario", "category", "status_a", "status_b", *(f"{m}_delta" for m in HARNESS_METRICS)]]
    table = table.rename(columns={f"{m}_delta": f"Δ {METRIC_LABELS[m]}" for m in HARNESS_METRICS})
    flips = int(frame["flipped"].sum())
    styler = styled(table, f"Per scenario: {counted(flips, 'status flip')}; Δ = B − A").hide(axis="index")
    deltas: list[Hashable] = [f"Δ {METRIC_LABELS[m]}" for m in HARNESS_METRICS]
    styler = styler.format(format_delta, subset=deltas).map(delta_css, subset=deltas)
    return styler.map(status_css, subset=["status_a", "status_b"])


def comparison_queries(comparison: RunComparison) -> Styler:
    """The paired queries whose metrics or first relevant rank changed: scenario, query number,
    query, Δ of each metric, first relevant rank in A and B and the move ("up 2", "lost", ...)."""
    frame = comparison.queries
    changed = changed_queries(frame)
    table = pd.DataFrame(
        {
            "scenario": changed["scenario"],
            "query #": changed["query_number"],
            "query": changed["query"],
            **{f"Δ {METRIC_LABELS[m]}": changed[f"{m}_delta"] for m in HARNESS_METRICS},
            "first relevant A": changed["first_relevant_a"],
            "first relevant B": changed["first_relevant_b"],
            "move": changed["rank_move"],
        }
    )
    labels: list[Hashable] = [f"Δ {METRIC_LABELS[m]}" for m in HARNESS_METRICS]
    styler = styled(table, f"Queries that changed: {len(table)} of {len(frame)}").hide(axis="index")
    styler = styler.format(format_delta, subset=labels).map(delta_css, subset=labels)
    return styler.format(precision=0, na_rep="—", subset=["first relevant A", "first relevant B"])


def benchmark_table(run: EvalRun) -> Styler:
    """A benchmark run's own metrics (nDCG@k, MAP, recall@k, R-precision, ... as the run recorded
    them) per scenario and overall, ungated pass. For a run without benchmark metrics, an empty
    table whose caption says so."""
    if not run.extra_metrics:
        return styled(pd.DataFrame(columns=["scenario", "queries"]), "Benchmark metrics: none in this run")
    frame = benchmark_metric_frame(run)
    styler = styled(frame, f"Benchmark metrics ({', '.join(run.extra_metrics)}), ungated pass").hide(
        axis="index"
    )
    styler = styler.format(precision=4, subset=list(run.extra_metrics))
    return styler.set_properties(subset=pd.IndexSlice[[len(frame) - 1], :], **{"font-weight": "bold"})


def question_category_table(run: EvalRun) -> Styler:
    """Per question category and overall: queries and every benchmark metric of the run — LoCoMo's
    numbered categories (multi-hop, temporal, open-domain, single-hop, adversarial), captioned as
    such, or LongMemEval's question types. For a run whose queries carry no category (neither),
    an empty table whose caption says so."""
    if not run.extra_metrics or run.queries["query_category"].isna().any():
        return styled(pd.DataFrame(columns=["category", "name"]), "Per question category: not a LoCoMo run")
    frame = question_category_frame(run, run.extra_metrics)
    locomo = all(c == "overall" or str(c).isdigit() for c in frame["category"])
    caption = "Per LoCoMo question category" if locomo else "Per question category"
    styler = styled(frame, f"{caption}, ungated pass").hide(axis="index")
    return styler.format(precision=4, subset=list(run.extra_metrics))


def comparison_identity(runs: Sequence[EvalRun], names: Sequence[str] = ("A", "B")) -> Styler:
    """One row per run (named A, B, ... or by `names`): system, mode, top_k, gate, suite
    fingerprint, commit and date (`evalkit.views.compare.identity_fields`); a field that differs
    between the runs is bold, so runs at gate 0.3 and 0.5 never look identical."""
    frame = pd.DataFrame([identity_fields(run) for run in runs], index=pd.Index(list(names)))
    styler = styled(frame, "The runs compared")
    differing: list[Hashable] = [c for c in frame.columns if frame[c].nunique() > 1 and c != "generated_at"]
    return styler.set_properties(subset=differing, **{"font-weight": "bold"}) if differing else styler


def ranking_diff_table(diff: pd.DataFrame, limit: int = 50) -> Styler:
    """The `limit` largest ranking changes (`evalkit.views.ranking_diff.ranking_diff`): query id,
    query, change, and the ids that entered (green when relevant, red when forbidden), left (red
    when relevant) and moved ("id 3→1"), relevant ids marked "+", forbidden ones "!"."""
    shown = diff.head(limit)
    table = pd.DataFrame(
        {
            "query": shown["query_id"],
            "text": shown["query"],
            "change": shown["change"],
            "entered": shown["entered"].map(", ".join),
            "left": shown["left"].map(", ".join),
            "moved": shown["moved"].map(", ".join),
        }
    )
    more = f" (the {limit} largest shown)" if len(diff) > limit else ""
    caption = (
        f"Ranking changes: {counted(len(diff), 'query', 'queries')}, largest first{more}; "
        "+ relevant, ! forbidden"
    )
    styler = styled(table, caption).hide(axis="index")
    good = [GOOD_CSS if n else "" for n in shown["relevant_entered"]]
    bad = [FAIL_CSS if n else "" for n in shown["forbidden_entered"]]
    lost = [FAIL_CSS if n else "" for n in shown["relevant_left"]]
    styler = styler.apply(
        lambda _: [b or g for g, b in zip(good, bad, strict=True)], subset=["entered"], axis=0
    )
    styler = styler.apply(lambda _: lost, subset=["left"], axis=0)
    return styler.set_table_styles(
        {c: [{"selector": "td", "props": "white-space: normal; min-width: 10em"}] for c in ("text", "moved")},
        overwrite=False,
    )


def multi_comparison_table(comparison: MultiComparison) -> Styler:
    """Runs × scopes (overall first, then each category) × metrics: each run's mean, and for the
    other runs Δ against the baseline run with "*" when the Holm-adjusted paired t-test is
    significant (bold too); Δ coloured like the other deltas."""
    table = comparison.table
    rows: dict[tuple[str, str], dict[tuple[str, str], object]] = {}
    for r in table.itertuples(index=False):
        row = rows.setdefault((str(r.scope), str(r.run)), {("", "queries"): int(str(r.queries))})
        label = METRIC_LABELS[str(r.metric)]
        row[(label, "mean")] = r.mean
        row[(label, "Δ")] = (
            "" if r.run == comparison.baseline else f"{format_delta(r.delta)}{'*' if r.significant else ''}"
        )
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(list(rows), names=["scope", "run"])
    caption = (
        f"Runs side by side, {comparison.pass_name} pass: Δ against run {comparison.baseline}; "
        f"* = significant at {comparison.alpha:g} (paired t-test, Holm-corrected over each run's tests)"
    )
    means: list[Hashable] = [c for c in frame.columns if c[1] == "mean"]
    deltas: list[Hashable] = [c for c in frame.columns if c[1] == "Δ"]
    styler = styled(frame, caption).format(precision=3, subset=means, na_rep=NA_TEXT)
    return styler.map(lambda v: "font-weight: bold" if str(v).endswith("*") else "", subset=deltas)
