"""Tables and charts of a finished run, for the report notebooks (SPEC §3.6, §3.7).

Every function is pure: it reads an `EvalRun` and returns a new display object — a pandas
`Styler` for tables (the plain frame is `styler.data`), a `ReportFigure` (a matplotlib `Figure`
built without pyplot: no global figure registry, nothing to close) for charts. Notebooks call
exactly one of these per cell, so they hold no logic of their own.

Conventions shared by the tables:
- "ungated" is the measured pass (what baselines and thresholds gate), "gated" the report-only pass
  under the relevance gate, and Δ = gated − ungated. Without a gated pass the gated and Δ columns
  are left out (and the gate charts say so).
- Metric columns are a two-level header (metric, pass); rows keep scenario file order, query
  order and rank order.
- Red marks what fails CI (status `fail`, relevant rows dropped, negative Δ); amber marks what is
  expected or informative (`xfail`, `xpass`, irrelevant drops, superseded/contradicted standing).
"""

from __future__ import annotations

import io
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from pandas.api.types import is_bool_dtype, is_numeric_dtype
from pandas.io.formats.style import Styler

from evalkit.api import run_eval
from evalkit.errors import RegressionError, UsageError
from evalkit.frames import EvalRun, load_report
from evalkit.memory import VECTOR_FLOOR
from evalkit.mutations import MutantsResult, run_mutants
from evalkit.results import HARNESS_METRICS

METRIC_LABELS: dict[str, str] = {
    "recall": "recall",
    "precision": "precision",
    "mrr": "MRR",
    "hit_rate": "hit rate",
}
"""Display names of the harness metrics (column headers, chart titles)."""

FAIL_CSS = "background-color: #f8d7da; color: #842029; font-weight: bold"
"""Cells that fail CI: status fail, relevant rows dropped by the gate, a failed query."""
WARN_CSS = "background-color: #fff3cd; color: #664d03"
"""Cells worth a look that do not fail CI: xfail/xpass, irrelevant drops, non-current standing."""
RELEVANT_CSS = "background-color: #d1e7dd"
"""Retrieved rows the query labels relevant (drill-down)."""
LOSS_CSS = "color: #b02a37; font-weight: bold"
"""A metric that fell under the gate (negative Δ)."""
GAIN_CSS = "color: #146c43; font-weight: bold"
"""A metric that rose under the gate (positive Δ)."""
GOOD_CSS = "background-color: #d1e7dd; color: #0f5132"
"""A check that did its job (a mutation caught, the control quiet)."""
QUIET_CSS = "color: #8a8a8a"
"""Zero deltas and low-confidence flags."""

UNGATED_COLOR = "#4c72b0"
GATED_COLOR = "#dd8452"
RELEVANT_COLOR = "#2f9e44"
DROPPED_RELEVANT_COLOR = "#c92a2a"
DROPPED_IRRELEVANT_COLOR = "#adb5bd"
METRIC_COLORS = ("#4c72b0", "#55a868", "#c44e52", "#8172b3")


class ReportFigure(Figure):
    """A matplotlib Figure that renders itself as PNG in IPython (`_repr_png_`), so a notebook
    displays it — and nbconvert embeds it as base64 — whatever the matplotlib backend."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        return buffer.getvalue()


# --- running -----------------------------------------------------------------------------------


def load_or_run(
    report_json: str | Path | None,
    *,
    mode: str = "deterministic",
    top_k: int = 5,
    gated: bool = True,
    min_relevance: float | None = None,
    datasets: str | Path = "datasets",
    thresholds: str | Path | None = "datasets/thresholds.json",
    scenarios: Sequence[str] | None = None,
) -> EvalRun:
    """The run a notebook shows: `load_report(report_json)` when a path is given (the other
    options are then ignored: the report records its own), else `run_eval(...)` with them
    (`scenarios` None = the whole suite)."""
    if report_json is not None:
        return load_report(report_json)
    return run_eval(
        mode=mode,
        top_k=top_k,
        gated=gated,
        min_relevance=min_relevance,
        datasets=datasets,
        thresholds=thresholds,
        scenarios=scenarios,
    )


def assert_thresholds(run: EvalRun, fail: bool = True) -> str:
    """Raise RegressionError listing every regression when `fail` and the run has any.

    Returns the verdict line otherwise: "No gating regressions." or, with `fail` False, how many
    regressions were found but not raised.
    """
    regressions = run.report.regressions
    if not regressions:
        return "No gating regressions."
    lines = [f"  - [{r.kind}] {r.message}" for r in regressions]
    message = f"{len(regressions)} regression(s) against the thresholds:\n" + "\n".join(lines)
    if fail:
        raise RegressionError(message)
    return message + "\n(not raised: fail_on_regression is False)"


def detection_power(
    enabled: bool = True,
    *,
    datasets: str | Path = "datasets",
    thresholds: str | Path = "datasets/thresholds.json",
    top_k: int = 5,
) -> Styler:
    """The mutation suite's table (`evalkit.mutations.run_mutants`): each injected search bug,
    whether the deterministic gate caught it and what caught it. `enabled` False gives an empty
    table whose caption says the section was skipped."""
    if not enabled:
        skipped = pd.DataFrame(columns=["mutation", "caught"])
        return _styled(skipped, "Detection power: skipped (mutants=False)")
    return mutants_table(run_mutants(datasets=datasets, thresholds=thresholds, top_k=top_k))


def mutants_table(result: MutantsResult) -> Styler:
    """Mutations with `caught` highlighted: red when a real mutation escaped or the control
    raised an alarm, green otherwise."""
    table = result.table[["mutation", "caught", "control", "caught_by", "regressions", "description"]]
    caught = sum(table["caught"] & ~table["control"])
    real = int((~table["control"]).sum())
    verdict = "every mutation caught, control quiet" if result.ok else "GATE MISSED SOMETHING"
    styler = _styled(table, f"Detection power: {caught} of {real} injected search bugs caught — {verdict}")
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


# --- summary and per-scenario tables -----------------------------------------------------------


def run_summary(run: EvalRun) -> Styler:
    """What ran and where it came from: mode, system, embedder, top_k, gate value, counts,
    evalkit version, git commit (+ dirty flag), dataset digest, date, Python and notes."""
    report = run.report
    prov = report.provenance
    git = prov.get("git") or {}
    commit = git.get("commit")
    commit_text = "unknown" if not commit else commit[:12] + (" (dirty)" if git.get("dirty") else "")
    queries = sum(len(s.queries) for s in report.scenarios)
    gate = (
        "gated pass skipped"
        if report.gated is None
        else f"min_relevance {report.gated.relevance_gate.min_relevance:g} (gated pass, report-only)"
    )
    items = {
        "mode": report.mode,
        "system": report.system,
        "embedder": str((prov.get("embedder") or {}).get("identity", "unknown")),
        "top_k": str(report.top_k),
        "relevance gate": gate,
        "scenarios": f"{len(report.scenarios)} scenarios, {queries} queries",
        "regressions": str(len(report.regressions)),
        "evalkit version": str(prov.get("evalkit_version", "unknown")),
        "git commit": commit_text,
        "dataset digest": str(prov.get("dataset_digest", "unknown"))[:16],
        "generated at": report.generated_at,
        "python": f"{prov.get('python', '?')} on {prov.get('platform', '?')}",
        "notes": "; ".join(report.notes) or "none",
    }
    frame = pd.DataFrame({"value": list(items.values())}, index=pd.Index(list(items)))
    styler = _styled(frame, "Run summary and provenance").hide(axis="columns")
    return styler.map(_regression_count_css, subset=pd.IndexSlice[["regressions"], :])


def scenario_table(run: EvalRun, scenario: str | None = None) -> Styler:
    """One row per scenario (or only `scenario`): category, status, counted (whether it feeds the
    category and overall means: outcome pass and not measure-only), queries, then recall,
    precision, MRR and hit rate ungated | gated | Δ, then the gate's status, dropped rows and
    relevant rows dropped. Fail statuses, negative Δ and relevant drops are highlighted."""
    names = [scenario] if scenario is not None else None
    if scenario is not None:
        _check_scenario(run, scenario)
    ungated, gated = _by_pass(run.scenarios, "scenario", names)
    counted = ungated["counted"].astype(bool)
    columns: dict[tuple[str, str], pd.Series] = {
        ("", "category"): ungated["category"],
        ("", "status"): ungated["status"],
        ("", "counted"): counted.map({True: "yes", False: "no"}),
        ("", "queries"): ungated["queries"],
        **_metric_columns(ungated, gated),
    }
    if gated is not None:
        columns |= {
            ("gate", "status"): gated["status"],
            ("gate", "dropped rows"): gated["dropped_rows"],
            ("gate", "relevant dropped"): gated["relevant_dropped"],
        }
    table = pd.DataFrame(columns)
    table.index.name = None
    return _style_side_by_side(table, _caption(run, "Per scenario"))


def category_table(run: EvalRun) -> Styler:
    """One row per category plus an `overall` row (means over gating queries only): queries, then
    recall, precision, MRR and hit rate ungated | gated | Δ."""
    ungated, gated = _by_pass(run.categories, "category", None)
    overall_u, overall_g = _by_pass(run.overall.assign(category="overall"), "category", None)
    ungated = pd.concat([ungated, overall_u])
    gated = None if gated is None or overall_g is None else pd.concat([gated, overall_g])
    table = pd.DataFrame({("", "queries"): ungated["queries"], **_metric_columns(ungated, gated)})
    table.index.name = None
    styler = _style_side_by_side(table, _caption(run, "Per category and overall (gating scenarios only)"))
    return styler.set_properties(subset=pd.IndexSlice[["overall"], :], **{"font-weight": "bold"})


def assertion_failures(run: EvalRun) -> Styler:
    """Every assertion error of the ungated pass, one row each: scenario, status (xfail rows are
    expected failures), query number (1-based), query and error. The caption says "none" when
    every assertion held."""
    rows = [
        {"scenario": s.name, "status": s.status, "query #": q.index + 1, "query": q.query, "error": error}
        for s in run.report.scenarios
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
    return _styled(frame, caption).hide(axis="index").map(status_css, subset=["status"])


def regressions_table(run: EvalRun) -> Styler:
    """The run's regressions (what fails CI): kind, scenario, category, metric, actual,
    threshold and message. The caption says "none" when the run gates green."""
    frame = run.regressions
    caption = (
        f"Regressions: {len(frame)} — this run fails the thresholds"
        if len(frame)
        else "Regressions: none — no gating regressions"
    )
    styler = _styled(frame, caption).hide(axis="index")
    return styler.format(precision=4, na_rep="").map(_nonempty_fail_css, subset=["kind"])


# --- drill-down tables ---------------------------------------------------------------------------


def hits_table(run: EvalRun, scenario: str) -> Styler:
    """Every hit the ungated pass retrieved for `scenario`'s queries, grouped by query (number,
    text) and in rank order: id, relevant, similarity, relevance, match source, low confidence,
    standing and whether the gated pass's gate dropped it. Relevant rows are green, rows the
    gate dropped red, non-current standing amber."""
    _check_scenario(run, scenario)
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
    styler = _styled(frame, f"{scenario}: retrieved hits per query (ungated pass, rank order)")
    styler = styler.format(precision=3, na_rep="—", subset=["similarity", "relevance"])
    styler = styler.format(_yes_blank, subset=["relevant", "low confidence"])
    styler = styler.format(_dropped_label, subset=["dropped by gate"])
    styler = styler.apply(_relevant_row_css, axis=1, subset=["id", "relevant"])
    styler = styler.map(_true_fail_css, subset=["dropped by gate"])
    styler = styler.map(_true_quiet_css, subset=["low confidence"])
    styler = styler.set_table_styles(  # long query texts wrap instead of widening the table
        [
            {
                "selector": "th.row_heading.level1",
                "props": "white-space: normal; max-width: 24em; text-align: left",
            }
        ],
        overwrite=False,
    )
    return styler.map(_standing_css, subset=["standing"])


def missed_relevant(run: EvalRun, scenario: str) -> Styler:
    """Relevant ids that the ungated pass never retrieved for `scenario`'s queries (query number,
    query, id). The caption says "none" when every relevant id was retrieved."""
    _check_scenario(run, scenario)
    queries = next(s for s in run.report.scenarios if s.name == scenario).queries
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
    return _styled(frame, caption).hide(axis="index")


def assertion_results(run: EvalRun, scenario: str) -> Styler:
    """One row per query of `scenario` (ungated pass): query, relevant ids, recall, precision,
    MRR, hit, and the assertion result — `pass`, `fail`, or `xfail` for a failing query of a
    scenario expected to fail — with its errors."""
    _check_scenario(run, scenario)
    result = next(s for s in run.report.scenarios if s.name == scenario)
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
    styler = _styled(frame, f"{scenario}: metrics and assertions per query (ungated pass)")
    styler = styler.hide(axis="index").format(precision=3, subset=list(METRIC_LABELS.values()))
    return styler.map(status_css, subset=["result"])


# --- charts ------------------------------------------------------------------------------------


def gate_chart(run: EvalRun) -> ReportFigure:
    """Three panels (recall, precision, MRR), one horizontal bar pair per scenario: ungated vs
    gated. Without a gated pass, one bar per scenario."""
    ungated, gated = _by_pass(run.scenarios, "scenario", None)
    names = list(ungated.index)
    y = np.arange(len(names))
    height = 0.4 if gated is not None else 0.7
    fig = ReportFigure(figsize=(13, 1.6 + 0.42 * len(names)), layout="constrained")
    axes = fig.subplots(1, 3, sharey=True)
    for ax, metric in zip(axes, ("recall", "precision", "mrr"), strict=True):
        offset = -height / 2 if gated is not None else 0.0
        ax.barh(y + offset, ungated[metric], height=height, color=UNGATED_COLOR, label="ungated")
        if gated is not None:
            ax.barh(
                y + height / 2,
                gated[metric],
                height=height,
                color=GATED_COLOR,
                label=f"gated ({_gate_label(run)})",
            )
        ax.set_title(METRIC_LABELS[metric])
        ax.set_xlim(0, 1.05)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    fig.suptitle("Ungated vs gated, per scenario")
    return fig


def dropped_chart(run: EvalRun) -> ReportFigure:
    """Rows the relevance gate dropped, per scenario: one stacked horizontal bar each, relevant
    (red) then irrelevant (grey). Without a gated pass the panel says so and holds no bars."""
    comparison = run.gate_comparison()
    fig = ReportFigure(figsize=(13, 1.6 + 0.35 * max(len(comparison), 1)), layout="constrained")
    ax = fig.subplots()
    gated = run.report.gated
    if gated is None:
        ax.text(0.5, 0.5, "gated pass skipped: nothing was dropped", ha="center", va="center")
        ax.set_axis_off()
        return fig
    y = np.arange(len(comparison))
    relevant = comparison["relevant_dropped"].to_numpy()
    irrelevant = comparison["dropped_rows"].to_numpy() - relevant
    ax.barh(y, relevant, color=DROPPED_RELEVANT_COLOR, label="relevant rows dropped")
    ax.barh(y, irrelevant, left=relevant, color=DROPPED_IRRELEVANT_COLOR, label="irrelevant rows dropped")
    ax.set_yticks(y, comparison["scenario"])
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("rows dropped (summed over the scenario's queries)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right")
    g = gated.relevance_gate
    ax.set_title(
        f"Rows dropped by the relevance gate ({_gate_label(run)}): {g.dropped_rows} of {g.candidates} "
        f"candidates across {g.queries_with_drops}/{g.queries} queries"
    )
    return fig


def category_chart(run: EvalRun) -> ReportFigure:
    """Grouped vertical bars: recall, precision, MRR and hit rate per category and overall
    (ungated pass: what the thresholds gate)."""
    ungated, _ = _by_pass(run.categories, "category", None)
    overall, _ = _by_pass(run.overall.assign(category="overall"), "category", None)
    frame = pd.concat([ungated, overall])
    x = np.arange(len(frame))
    width = 0.8 / len(HARNESS_METRICS)
    fig = ReportFigure(figsize=(13, 4.8), layout="constrained")
    ax = fig.subplots()
    for i, (metric, color) in enumerate(zip(HARNESS_METRICS, METRIC_COLORS, strict=True)):
        ax.bar(x + (i - 1.5) * width, frame[metric], width=width, color=color, label=METRIC_LABELS[metric])
    ax.set_xticks(x, list(frame.index), rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean over the category's queries")
    ax.grid(axis="y", alpha=0.3)
    fig.legend(loc="outside right upper", frameon=False)
    ax.set_title("Per-category metrics (ungated pass, gating scenarios only)")
    return fig


def rank_chart(run: EvalRun, scenario: str) -> ReportFigure:
    """Two panels for `scenario`'s ungated hits: similarity by rank and relevance by rank, one
    line per query, points green when relevant and grey otherwise, a red cross on rows the gate
    dropped. The similarity panel draws the low-confidence floor and the gate's floor."""
    _check_scenario(run, scenario)
    hits = run.hits
    rows = hits[(hits["pass"] == "ungated") & (hits["scenario"] == scenario)]
    fig = ReportFigure(figsize=(13, 4.5), layout="constrained")
    axes = fig.subplots(1, 2, sharex=True)
    for ax, column in zip(axes, ("similarity", "relevance"), strict=True):
        values = rows[column].astype(float)
        for _, group in rows.assign(value=values).groupby("query_index", sort=False):
            ax.plot(group["rank"], group["value"], color="#ced4da", linewidth=1, zorder=1)
        relevant = rows["relevant"].astype(bool)
        dropped = rows["dropped_by_gate"].astype(bool)
        ax.scatter(rows["rank"][relevant], values[relevant], color=RELEVANT_COLOR, label="relevant", zorder=2)
        ax.scatter(
            rows["rank"][~relevant], values[~relevant], color="#868e96", label="not relevant", zorder=2
        )
        ax.scatter(
            rows["rank"][dropped],
            values[dropped],
            marker="x",
            s=90,
            color=DROPPED_RELEVANT_COLOR,
            label="dropped by gate",
            zorder=3,
        )
        ax.set_title(f"{column} by rank")
        ax.set_xlabel("rank")
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].axhline(VECTOR_FLOOR, linestyle="--", color="#495057", linewidth=1, label="low-confidence floor")
    if run.report.gated is not None:
        floor = run.report.gated.relevance_gate.min_relevance
        axes[0].axhline(floor, linestyle=":", color=DROPPED_RELEVANT_COLOR, linewidth=1.5, label="gate floor")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=5, frameon=False)
    fig.suptitle(f"{scenario}: similarity and relevance by rank (ungated pass, one line per query)")
    return fig


# --- style functions (public so that tests pin the colours) -------------------------------------


def status_css(value: object) -> str:
    """CSS for a status or result cell: red for fail, amber for xfail/xpass, none otherwise."""
    if value == "fail":
        return FAIL_CSS
    if value in ("xfail", "xpass"):
        return WARN_CSS
    return ""


def delta_css(value: object) -> str:
    """CSS for a Δ (gated − ungated) cell: red when the gate lowered the metric, green when it
    raised it, grey when unchanged."""
    number = float(value)  # type: ignore[arg-type]
    if number < -1e-9:
        return LOSS_CSS
    if number > 1e-9:
        return GAIN_CSS
    return QUIET_CSS


def format_delta(value: object) -> str:
    """A Δ as text: signed to three places ("+0.133", "-0.067"), exactly "0" when unchanged."""
    number = float(value)  # type: ignore[arg-type]
    return "0" if abs(number) < 1e-9 else f"{number:+.3f}"


def dropped_css(value: object) -> str:
    """CSS for a count of dropped rows: amber when any were dropped."""
    return WARN_CSS if float(value) > 0 else ""  # type: ignore[arg-type]


def relevant_dropped_css(value: object) -> str:
    """CSS for a count of relevant rows dropped: red when any were (the gate lost a right answer)."""
    return FAIL_CSS if float(value) > 0 else ""  # type: ignore[arg-type]


# --- helpers -------------------------------------------------------------------------------------


def _check_scenario(run: EvalRun, scenario: str) -> None:
    names = [s.name for s in run.report.scenarios]
    if scenario not in names:
        raise UsageError(f"scenario {scenario!r} is not in this run; its scenarios are: {', '.join(names)}")


def _by_pass(
    frame: pd.DataFrame, key: str, names: list[str] | None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The ungated rows and the gated rows (None when there is no gated pass), indexed by `key`."""
    if names is not None:
        frame = frame[frame[key].isin(names)]
    ungated = frame[frame["pass"] == "ungated"].set_index(key)
    gated = frame[frame["pass"] == "gated"].set_index(key)
    return ungated, (gated.reindex(ungated.index) if len(gated) else None)


def _metric_columns(ungated: pd.DataFrame, gated: pd.DataFrame | None) -> dict[tuple[str, str], pd.Series]:
    columns: dict[tuple[str, str], pd.Series] = {}
    for metric in HARNESS_METRICS:
        label = METRIC_LABELS[metric]
        columns[(label, "ungated")] = ungated[metric]
        if gated is not None:
            columns[(label, "gated")] = gated[metric]
            columns[(label, "Δ")] = gated[metric] - ungated[metric]
    return columns


def _style_side_by_side(table: pd.DataFrame, caption: str) -> Styler:
    def where(*second: str) -> list[Hashable]:
        return [c for c in table.columns if c[1] in second]

    metrics = where("ungated", "gated")
    styler = _styled(table, caption).format(precision=3, subset=metrics)
    styler = styler.format(format_delta, subset=where("Δ")).map(delta_css, subset=where("Δ"))
    styler = styler.map(status_css, subset=where("status")).map(dropped_css, subset=where("dropped rows"))
    styler = styler.map(relevant_dropped_css, subset=where("relevant dropped"))
    return styler.set_table_styles(
        [
            {
                "selector": "th.col_heading.level0",
                "props": "text-align: center; border-bottom: 1px solid #999",
            },
            {"selector": "", "props": "font-size: 12px"},
        ],
        overwrite=False,
    )


def _styled(frame: pd.DataFrame, caption: str) -> Styler:
    """The frame's Styler with the caption (left, bold, one line), body cells kept on one line
    (column headers may wrap, so wide tables stay within the page) and text columns left-aligned."""
    styler = frame.style.set_caption(caption).set_table_styles(
        [
            {"selector": "caption", "props": "text-align: left; font-weight: bold; white-space: nowrap"},
            {"selector": "td, th.row_heading", "props": "white-space: nowrap"},
            {"selector": "td, th", "props": "padding: 0.3em 0.35em"},
        ]
    )
    text: list[Hashable] = [
        c for c in frame.columns if not (is_numeric_dtype(frame[c]) or is_bool_dtype(frame[c]))
    ]
    return styler.set_properties(subset=text, **{"text-align": "left"})


def _caption(run: EvalRun, title: str) -> str:
    if run.report.gated is None:
        return f"{title}: ungated pass (gated pass skipped)"
    return (
        f"{title}: ungated (measured, gates CI) vs gated ({_gate_label(run)}, report-only); "
        "Δ = gated − ungated"
    )


def _gate_label(run: EvalRun) -> str:
    gated = run.report.gated
    return "no gate" if gated is None else f"min_relevance {gated.relevance_gate.min_relevance:g}"


def _regression_count_css(value: object) -> str:
    return FAIL_CSS if str(value) != "0" else ""


def _nonempty_fail_css(value: object) -> str:
    return FAIL_CSS if value else ""


def _is_true(value: object) -> bool:
    """True for a boolean True (Python or numpy); False for False, None and anything else."""
    return isinstance(value, bool | np.bool_) and bool(value)


def _true_fail_css(value: object) -> str:
    return FAIL_CSS if _is_true(value) else ""


def _true_quiet_css(value: object) -> str:
    return QUIET_CSS if _is_true(value) else ""


def _standing_css(value: object) -> str:
    return WARN_CSS if value not in ("current", None) else ""


def _relevant_row_css(row: pd.Series) -> list[str]:
    return [RELEVANT_CSS if row["relevant"] else ""] * len(row)


def _yes_blank(value: object) -> str:
    return "yes" if _is_true(value) else ""


def _dropped_label(value: object) -> str:
    return "dropped" if _is_true(value) else ""
