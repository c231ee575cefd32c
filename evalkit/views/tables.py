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

import pandas as pd
from pandas.io.formats.style import Styler

from evalkit.errors import RegressionError
from evalkit.metrics import HARNESS_METRICS
from evalkit.views.frames import EvalRun, by_pass, check_scenario, gate_label
from evalkit.views.styles import (
    FAIL_CSS,
    GOOD_CSS,
    METRIC_LABELS,
    dropped_label,
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


def assert_thresholds(run: EvalRun, fail: bool = True) -> str:
    """Raise RegressionError listing every regression when `fail` and the run has any.

    Returns the verdict line otherwise (`RunResult.verdict`: "No gating regressions." only when
    the metrics were compared with a baseline, else the "metric gating OFF: ..." note) or, with
    `fail` False, how many regressions were found but not raised. A metric-gating-OFF note
    follows the regressions in either case.
    """
    regressions = run.result.regressions
    if not regressions:
        return run.result.verdict()
    off = run.result.metric_gating_off
    lines = [f"  - [{r.kind}] {r.message}" for r in regressions] + ([off] if off is not None else [])
    message = f"{len(regressions)} regression(s) against the thresholds:\n" + "\n".join(lines)
    if fail:
        raise RegressionError(message)
    return message + "\n(not raised: fail_on_regression is False)"


def detection_table(run: EvalRun) -> Styler:
    """The detection power saved with the run (`EvalRun.mutations()`): each injected search bug,
    whether the deterministic gate caught it and what caught it; `caught` green when a real
    mutation was caught or the control stayed quiet, red otherwise. When no mutation result was
    saved with the run, an empty table whose caption says so."""
    table = run.mutations()[["mutation", "caught", "control", "caught_by", "regressions", "description"]]
    if run.result.system != "reference":
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
    evalkit version, git commit (+ dirty flag), dataset digest, date, Python and notes."""
    report = run.result
    prov = report.provenance
    commit = prov.git.commit
    commit_text = "unknown" if not commit else commit[:12] + (" (dirty)" if prov.git.dirty else "")
    queries = sum(len(s.queries) for s in report.scenarios)
    gate = (
        "gated pass skipped"
        if report.gated is None
        else f"min_relevance {report.gated.relevance_gate.min_relevance:g} (gated pass, report-only)"
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
        "notes": "; ".join(report.notes) or "none",
    }
    frame = pd.DataFrame({"value": list(items.values())}, index=pd.Index(list(items)))
    styler = styled(frame, f"Run summary and provenance — system {report.system}").hide(axis="columns")
    return styler.map(regression_count_css, subset=pd.IndexSlice[["regressions"], :])


def scenario_table(run: EvalRun, scenario: str | None = None) -> Styler:
    """One row per scenario (or only `scenario`): category, status, counted (whether it feeds the
    category and overall means: outcome pass and not measure-only), queries, then recall,
    precision, MRR and hit rate ungated | gated | Δ, then the gate's status, dropped rows and
    relevant rows dropped. Fail statuses, negative Δ and relevant drops are highlighted."""
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
    }
    if gated is not None:
        columns |= {
            ("gate", "status"): gated["status"],
            ("gate", "dropped rows"): gated["dropped_rows"],
            ("gate", "relevant dropped"): gated["relevant_dropped"],
        }
    table = pd.DataFrame(columns)
    table.index.name = None
    return style_side_by_side(table, caption(run, "Per scenario"))


def category_table(run: EvalRun) -> Styler:
    """One row per category plus an `overall` row (means over gating queries only): queries, then
    recall, precision, MRR and hit rate ungated | gated | Δ."""
    ungated, gated = by_pass(run.categories, "category", None)
    overall_u, overall_g = by_pass(run.overall.assign(category="overall"), "category", None)
    ungated = pd.concat([ungated, overall_u])
    gated = None if gated is None or overall_g is None else pd.concat([gated, overall_g])
    table = pd.DataFrame({("", "queries"): ungated["queries"], **metric_columns(ungated, gated)})
    table.index.name = None
    styler = style_side_by_side(table, caption(run, "Per category and overall (gating scenarios only)"))
    return styler.set_properties(subset=pd.IndexSlice[["overall"], :], **{"font-weight": "bold"})


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
    threshold and message. The caption says "none" when the run gates green."""
    frame = run.regressions
    caption = (
        f"Regressions: {len(frame)} — this run fails the thresholds"
        if len(frame)
        else "Regressions: none — no gating regressions"
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
    system lacks (excluded from means and gating); the caption says "none" when all applied."""
    frame = run.not_applicable.assign(missing=lambda f: f["missing"].map(", ".join))
    caption = (
        f"Not applicable: {len(frame)} scenario(s) need capabilities {run.result.system} lacks"
        if len(frame)
        else "Not applicable: none — every scenario applied to this system"
    )
    return styled(frame, caption).hide(axis="index")


def hits_table(run: EvalRun, scenario: str) -> Styler:
    """Every hit the ungated pass retrieved for `scenario`'s queries, grouped by query (number,
    text) and in rank order: id, relevant, similarity, relevance, match source, low confidence,
    standing and whether the gated pass's gate dropped it. Relevant rows are green, rows the
    gate dropped red, non-current standing amber."""
    check_scenario(run, scenario)
    hits = run.hits
    rows = hits[(hits["pass"] == "ungated") & (hits["scenario"] == scenario)]
    frame = pd.DataFrame(
        {
            "query #": rows["query_index"] + 1,
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
        f"{scenario}: {len(frame)} relevant id(s) never retrieved (ungated pass)"
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
        return f"{title}: ungated pass (gated pass skipped)"
    return (
        f"{title}: ungated (measured, gates CI) vs gated ({gate_label(run)}, report-only); "
        "Δ = gated − ungated"
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
