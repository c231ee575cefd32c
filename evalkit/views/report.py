"""The sections of the HTML report (notebooks/eval_report.ipynb), each shown only when it applies.

A report notebook calls `section(run, KEY)` once per cell and `contents(run)` for the table of
contents; both read the same catalogue (`SECTIONS`), so the contents, the headings and their
anchors always agree. A `Section` renders itself (IPython `_repr_html_`, text for logs) as its
heading — `<h2 id="KEY">` or `<h3 id="KEY">`, one hierarchy: the notebook's only `#` heading is
its title, every section is level 2, and a level-3 section follows its level-2 parent — then an
introduction and its tables and charts. When a section does not apply to the run, it keeps its
heading (so the contents' link lands somewhere) and says why in one sentence instead of showing
an empty table or an "untitled" chart; the children of a section that does not apply are not
shown at all (`Section.hidden`).

When a section applies (decisions where the issue is silent):
- Rows dropped by the relevance gate, the gate sweep and the gate recommendation: only with a
  gated pass (and, for the last two, a re-gatable system with recorded candidates); the reason
  names why there is none — the system declares no relevance gate, or the run was made with
  --gated-pass off — as `evalkit.harness.sweep.unavailable` says.
- Not applicable scenarios: only when some were; latency: only when measured; the trend: only
  when the history holds runs.
- Benchmark metrics and their children: only for a run with benchmark metrics (`evalkit bench`).
- Detection power: when the run's system declares mutation testing; "not measured" otherwise.
- Behaviour metrics (stale-fact rate, contamination, duplicate rate@k, query sensitivity,
  abstention): only for a run of a suite scored on them (`behaviour_metrics: true`, every pack).
  Their means sit beside the four harness metrics in the per-scenario and per-category tables,
  with a legend above the first (what 0 and 1 mean, which way is better), and "Stale and
  forbidden ids returned" names, per scenario, the stale or forbidden ids that came back. For
  any other run these sections are absent, not "not shown" (`_Spec.absent`: hidden and left out
  of the contents), and the tables have no such column, so its report reads exactly as before.
- The perturbation curve ("How fast does this system degrade as memory grows?"): only for a
  run saved with one (`evalkit run --perturb KIND=N,N,…`, the notebook's `perturbation_curve`),
  absent otherwise in the same way.
- "Queries to look at" lists every query of the measurement pass that failed an assertion or
  missed a relevant id, failing scenarios first, each linked to its scenario's drill-down
  section (`#scenario-<name>`, `scenario_anchor`), which "Drill-down per scenario" holds for
  each listed scenario (its per-query metrics, missed relevant ids and the hits of its listed
  queries); the table shows the FAILURE_ROWS worst, and says how many there are in all.

Figures are embedded as PNG no narrower than READABLE_SCALE of their natural width (a narrow
screen scrolls them sideways instead of shrinking their text below legibility); tables scroll
inside their own box when a screen is narrower than they are.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from evalkit.files import shown_path
from evalkit.harness.sweep import unavailable
from evalkit.views import charts, losses, tables
from evalkit.views.frames import EvalRun
from evalkit.views.styles import LOSS_CSS, status_css, styled
from evalkit.views.tables import leak_frame
from evalkit.views.verdict import PAGE_TITLE_KEY, Verdict, run_verdict
from evalkit.wording import counted

__all__ = [
    "FAILURE_COLUMNS",
    "SECTIONS",
    "Section",
    "contents",
    "drilldown",
    "failure_table",
    "failures_frame",
    "scenario_anchor",
    "section",
]

READABLE_SCALE = 0.6
"""The smallest share of its natural width a chart is shown at: at 100 dpi a 10 pt label is about
14 px, so 0.6 keeps it above 8 px on a phone-sized screen."""

FAILURE_ROWS = 50
"""How many queries the failure table shows (the worst first); a benchmark can miss hundreds."""

FAILURE_COLUMNS: tuple[str, ...] = (
    "scenario", "scenario status", "query #", "query_id", "query", "recall", "hit rate", "problem",
)  # fmt: skip
"""One row per query to look at (`failures_frame`): the scenario and its status (whether its
assertions held: `pass` beside recall 0 is a query that broke no assertion yet missed its
relevant ids), the query's number (from 1) and stable id, its text, recall and hit rate, and what
went wrong (the assertion errors, else the relevant ids it missed)."""


@dataclass(frozen=True)
class Section:
    """One rendered section: `key` (its anchor), `title`, `level` (2 or 3), `intro` (HTML
    paragraphs), `parts` (tables, charts, HTML strings or objects with `_repr_html_`), `reason`
    (why it is not shown, None when it is) and `hidden` (its parent does not apply: nothing is
    rendered)."""

    key: str
    title: str
    level: int
    intro: str = ""
    parts: tuple[Any, ...] = ()
    reason: str | None = None
    hidden: bool = False

    def _repr_html_(self) -> str:
        if self.hidden:
            return ""
        heading = f'<h{self.level} id="{self.key}">{html.escape(self.title)}</h{self.level}>'
        if self.reason is not None:
            return f'{heading}<p class="evalkit-not-shown"><i>Not shown: {html.escape(self.reason)}</i></p>'
        return heading + self.intro + "".join(_html(part) for part in self.parts)

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """HTML and text; a part that names the page (the verdict's `page_title`) passes it on as
        display metadata, which the HTML report's <title> takes (`evalkit.notebooks.page_title`)."""
        titles = [part.page_title for part in self.parts if isinstance(part, Verdict)]
        metadata = {"text/html": {PAGE_TITLE_KEY: titles[0]}} if titles and self.reason is None else {}
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}, metadata

    def __repr__(self) -> str:
        if self.hidden:
            return ""
        mark = "#" * self.level
        if self.reason is not None:
            return f"{mark} {self.title}\nNot shown: {self.reason}"
        return "\n\n".join(
            [f"{mark} {self.title}", *(repr(part) for part in self.parts if not isinstance(part, str))]
        )


@dataclass(frozen=True)
class _Spec:
    key: str
    title: str
    level: int
    intro: str | Callable[[EvalRun], str]
    build: Callable[[EvalRun, dict[str, Any]], tuple[Any, ...]]
    reason: Callable[[EvalRun, dict[str, Any]], str | None] = lambda run, options: None
    parent: str | None = None
    options: tuple[str, ...] = field(default=())
    absent: Callable[[EvalRun], bool] = lambda run: False


def scenario_anchor(scenario: str) -> str:
    """The anchor of `scenario`'s drill-down section: "scenario-" + the name with every character
    outside [A-Za-z0-9_-] replaced by "-"."""
    return "scenario-" + re.sub(r"[^A-Za-z0-9_-]", "-", scenario)


def failures_frame(run: EvalRun) -> pd.DataFrame:
    """The queries to look at (FAILURE_COLUMNS): every query of the measurement pass that failed
    an assertion or missed a relevant id, queries of failing scenarios first, then by recall
    (lowest first), then in suite order. Empty (with the columns) when every query held."""
    queries = run.queries
    rows = queries[queries["pass"] == "ungated"]
    status = run.scenarios.set_index(["pass", "scenario"])["status"]
    picked = []
    for order, row in enumerate(rows.itertuples(index=False)):
        missed = [i for i in row.relevant if i not in row.retrieved]
        if not row.check_errors and not missed:
            continue
        scenario_status = status[("ungated", row.scenario)]
        picked.append(
            {
                "scenario": row.scenario,
                "scenario status": scenario_status,
                "query #": row.query_number,
                "query_id": row.query_id,
                "query": row.query,
                "recall": row.recall,
                "hit rate": row.hit_rate,
                "problem": "; ".join(row.check_errors) or f"missed relevant: {', '.join(missed)}",
                "_order": (scenario_status != "fail", row.recall, order),
            }
        )
    picked.sort(key=lambda r: r.pop("_order"))
    return pd.DataFrame(picked, columns=list(FAILURE_COLUMNS))


def failure_table(run: EvalRun) -> Styler:
    """`failures_frame` as a table whose scenario cells link to their drill-down sections: its
    first FAILURE_ROWS rows (the caption says how many there are in all)."""
    every = failures_frame(run)
    frame = every.head(FAILURE_ROWS)
    shown = f" ({len(frame)} shown, the worst first)" if len(every) > len(frame) else ""
    caption = (
        f"{counted(len(every), 'query', 'queries')} to look at (measurement pass){shown}: failed assertions "
        "first; the scenario links to its drill-down"
        if len(every)
        else "Every query held its assertions and retrieved every relevant id"
    )
    styler = styled(frame, caption).hide(axis="index").format(precision=3, subset=["recall", "hit rate"])
    styler = styler.format(_scenario_link, subset=["scenario"])
    styler = styler.format(_escaped, subset=["query", "problem", "query_id"])
    return styler.map(status_css, subset=["scenario status"]).set_table_styles(
        {
            column: [{"selector": "td", "props": "white-space: normal; min-width: 14em"}]
            for column in ("query", "problem")
        },
        overwrite=False,
    )


def _scenario_link(name: object) -> str:
    return f'<a href="#{scenario_anchor(str(name))}">{html.escape(str(name))}</a>'


def _escaped(text: object) -> str:
    return html.escape(str(text))


def contents(run: EvalRun, **options: Any) -> Section:
    """The table of contents: a nested list linking every section that is rendered (a section
    that does not apply is listed with "(not shown)"; a hidden one is not listed)."""
    items = []
    for spec in SECTIONS:
        if spec.key == "contents":
            continue
        one = section(run, spec.key, **options)
        if one.hidden:
            continue
        note = " <i>(not shown)</i>" if one.reason is not None else ""
        indent = ' style="margin-left: 1.5em"' if one.level == 3 else ""
        items.append(f'<li{indent}><a href="#{one.key}">{html.escape(one.title)}</a>{note}</li>')
    drill = [
        f'<li style="margin-left: 3em"><a href="#{scenario_anchor(name)}">{html.escape(name)}</a></li>'
        for name in _drilled(run)
    ]
    return Section("contents", "Contents", 2, parts=(f"<ul>{''.join(items + drill)}</ul>",))


def section(run: EvalRun, key: str, **options: Any) -> Section:
    """The section `key` of `SECTIONS` for `run` ("contents" is `contents`). Options some
    sections read: `history` (the `load_history` frame, for the trend) and `history_path` (named
    in its reason). KeyError names the known keys."""
    specs = {s.key: s for s in SECTIONS}
    if key not in specs:
        raise KeyError(f"no report section {key!r}; known: {', '.join(specs)}")
    if key == "contents":
        return contents(run, **options)
    spec = specs[key]
    if spec.absent(run):
        return Section(spec.key, spec.title, spec.level, hidden=True)
    if spec.parent is not None and specs[spec.parent].reason(run, options) is not None:
        return Section(spec.key, spec.title, spec.level, hidden=True)
    reason = spec.reason(run, options)
    if reason is not None:
        return Section(spec.key, spec.title, spec.level, reason=reason)
    intro = spec.intro if isinstance(spec.intro, str) else spec.intro(run)
    return Section(spec.key, spec.title, spec.level, intro=intro, parts=spec.build(run, options))


def drilldown(run: EvalRun, scenario: str) -> Section:
    """The drill-down of one scenario (level 3, anchor `scenario_anchor`): its metrics and
    assertions per query, the relevant ids it never retrieved and the hits, in rank order, of its
    queries in the failure table and among the biggest losses under the gate (a benchmark
    conversation asks hundreds of queries)."""
    listed = pd.concat([failures_frame(run).head(FAILURE_ROWS), losses.query_losses(run)])
    numbers = sorted(set(listed.loc[listed["scenario"] == scenario, "query #"].astype(int)))
    return Section(
        scenario_anchor(scenario),
        f"Scenario {scenario}",
        3,
        parts=(
            tables.assertion_results(run, scenario),
            tables.missed_relevant(run, scenario),
            tables.hits_table(run, scenario, numbers),
        ),
    )


# --- the catalogue ------------------------------------------------------------------------------


def _p(*paragraphs: str) -> str:
    return "".join(f"<p>{text}</p>" for text in paragraphs)


def _no_gated_pass(run: EvalRun) -> str | None:
    """Why the run has no gated pass (`unavailable`'s first two reasons), None when it has one."""
    return None if run.result.gated is not None else unavailable(run.result)


def _no_sweep(run: EvalRun, options: dict[str, Any]) -> str | None:
    return unavailable(run.result)


def _no_benchmark(run: EvalRun, options: dict[str, Any]) -> str | None:
    if run.extra_metrics:
        return None
    return "this run recorded no benchmark metrics (only `evalkit bench` runs do: nDCG@k, MAP, ...)"


def _no_question_categories(run: EvalRun, options: dict[str, Any]) -> str | None:
    if run.queries["query_category"].isna().any():
        return "the benchmark's queries carry no question category"
    return None


def _no_trend(run: EvalRun, options: dict[str, Any]) -> str | None:
    history = options.get("history")
    if history is not None and len(history):
        return None
    where = options.get("history_path")
    if where is not None and str(where).lower() == "none":
        return "the run history is off (history none)"
    shown = shown_path(where) if where else None  # relative to where the command ran...
    at = f" at {shown}" if shown and not Path(shown).is_absolute() else ""  # ...else unnamed: no machine path
    return f"no run history{at} yet: `evalkit run` and `evalkit report` append each run to it"


def _no_detection(run: EvalRun, options: dict[str, Any]) -> str | None:
    result = run.result
    if not result.provenance.declaration.mutation_testing:
        return (
            f"mutation testing measures the reference store's search; this run evaluated {result.system}, "
            "which declares no mutation testing"
        )
    if result.detection is None:
        return "no mutation result was saved with this run (run it with `evalkit run --mutants report`)"
    return None


def _no_not_applicable(run: EvalRun, options: dict[str, Any]) -> str | None:
    return None if run.result.not_applicable else "every scenario applied to this system"


def _no_latency(run: EvalRun, options: dict[str, Any]) -> str | None:
    return (
        None
        if len(run.latency)
        else "this report holds no search latencies (written before they were measured)"
    )


def _no_drilldown(run: EvalRun, options: dict[str, Any]) -> str | None:
    return None if _drilled(run) else "no query to look at"


def _no_behaviour(run: EvalRun) -> bool:
    return not run.behaviour_metrics


def _no_leak_metrics(run: EvalRun, options: dict[str, Any]) -> str | None:
    if leak_frame(run).empty:
        return "no query of this suite has a stale id in memory or a forbid list, so nothing could leak"
    return None


def _no_curve(run: EvalRun) -> bool:
    return run.result.perturbation_curve is None


def _curve(run: EvalRun) -> pd.DataFrame:
    curve = run.perturbation_curve
    if curve is None:  # the section is absent without one (`_no_curve`)
        raise ValueError("the run has no perturbation curve")
    return curve


def _scenario_parts(run: EvalRun) -> tuple[Any, ...]:
    legend = (tables.behaviour_legend(run),) if run.behaviour_metrics else ()
    return (*legend, tables.scenario_table(run))


def _drilled(run: EvalRun) -> list[str]:
    """The scenarios of the failure table's shown rows, in the order they first appear there, then
    those of the biggest losses under the gate (`losses.query_losses`) not among them."""
    shown = [*failures_frame(run).head(FAILURE_ROWS)["scenario"], *losses.query_losses(run)["scenario"]]
    return list(dict.fromkeys(shown))


_NOT_SHOWN = "A section that does not apply to this run keeps its heading and says why in one line."


def _reading(run: EvalRun) -> str:
    """How to read the report: the two passes and the colours; for a run without a gated pass,
    one line saying so instead of explaining a pass it does not have."""
    marks = (
        "Red marks what fails CI or loses a right answer; amber marks expected failures (xfail)"
        + (" and irrelevant rows the gate dropped" if run.result.gated is not None else "")
        + "; n/a marks a value that does not exist (a scenario the system could not be judged on). "
        + _NOT_SHOWN
    )
    if run.result.gated is None:
        why = html.escape(_no_gated_pass(run) or "the run has no gated pass")
        return _p(
            "How well the memory system retrieves what it should, scenario by scenario, measured with "
            "<code>min_relevance = 0</code>: baselines, thresholds and CI checks use it. "
            f"No gated pass: {why}.",
            marks,
        )
    return _p(
        "How well the memory system retrieves what it should, scenario by scenario. The <b>ungated</b> "
        "pass (<code>min_relevance = 0</code>) is the measurement: baselines, thresholds and CI checks use "
        "it. The <b>gated</b> pass applies the system's relevance gate and is report-only unless a gated "
        "baseline was recorded: it shows which rows an agent would never see.",
        "Δ = gated − ungated. " + marks,
    )


def _scenarios_intro(run: EvalRun) -> str:
    gate = (
        ", then what the gate did: the gated pass's status, the rows it dropped and how many of them were "
        "relevant"
        if run.result.gated is not None
        else ""
    )
    return _p(
        f"Recall, precision, MRR and hit rate of each scenario (means over its queries){gate}. "
        "Measure-only and xfail scenarios never count toward category and overall means."
    )


def _loss_parts(run: EvalRun) -> tuple[Any, ...]:
    """The biggest losses (`evalkit.views.losses`): against the baseline, then under the gate, each
    a table whose scope links to the per-category table and whose query links to its scenario's
    drill-down, or one line saying why there is none; then how many queries to look at."""
    parts: list[Any] = []
    scopes = losses.scope_losses(run)
    why = losses.no_baseline_losses(run)
    if why is not None:
        parts.append(_p(f"<b>Against the baseline:</b> {html.escape(why)}."))
    else:
        rows = scopes[scopes["against"] == "baseline"].drop(columns="against")
        rows = rows.rename(columns={"before": "baseline", "after": "this run", "delta": "Δ"})
        table = styled(
            rows,
            "Against the baseline: the scopes that fell most (margin = this run − the threshold; "
            "below 0 is a regression)",
        )
        table = table.hide(axis="index").format(precision=3, subset=["baseline", "this run", "Δ", "margin"])
        parts.append(table.format(_scope_link, subset=["scope"]).map(_negative_css, subset=["Δ", "margin"]))
    why = losses.no_gate_losses(run)
    if why is not None:
        parts.append(_p(f"<b>Under the relevance gate:</b> {html.escape(why)}."))
    else:
        rows = scopes[scopes["against"] == "gate"].drop(columns=["against", "margin"])
        if len(rows):
            rows = rows.rename(columns={"before": "ungated", "after": "gated", "delta": "Δ"})
            table = styled(rows, f"Under the relevance gate ({_gate_role(run)}): the scopes that fell most")
            table = table.hide(axis="index").format(precision=3, subset=["ungated", "gated", "Δ"])
            parts.append(table.format(_scope_link, subset=["scope"]).map(_negative_css, subset=["Δ"]))
        queries = losses.query_losses(run).drop(columns="_fall")
        if len(queries):
            table = styled(
                queries.rename(columns={"lost ids": "relevant ids the gate took out of the top-k"}),
                "Under the relevance gate: the queries that lost most (the scenario links to its drill-down)",
            ).hide(axis="index")
            parts.append(table.format(_scenario_link, subset=["scenario"]).format(_escaped, subset=["query"]))
    count = len(failures_frame(run))
    if count:
        parts.append(
            _p(
                f"{counted(count, 'query', 'queries')} missed a relevant id or failed an assertion: "
                '<a href="#failures">Queries to look at</a>.'
            )
        )
    return tuple(parts)


def _scope_link(name: object) -> str:
    return f'<a href="#categories">{html.escape(str(name))}</a>'


def _negative_css(value: object) -> str:
    return LOSS_CSS if isinstance(value, int | float) and value < 0 else ""


def _gate_role(run: EvalRun) -> str:
    gated = run.result.gated
    return (
        ""
        if gated is None
        else f"min_relevance {gated.relevance_gate.min_relevance:g}, {run.result.gated_pass_role}"
    )


SECTIONS: tuple[_Spec, ...] = (
    _Spec("verdict", "Verdict", 2, "", lambda run, o: (replace(run_verdict(run), reproduce_in_html=False),)),
    _Spec(
        "losses",
        "Biggest losses",
        2,
        _p(
            "What moved most against the recorded baseline and under the relevance gate; each links to "
            "its details."
        ),
        lambda run, o: _loss_parts(run),
    ),
    _Spec("contents", "Contents", 2, "", lambda run, o: ()),
    _Spec("how-to-read", "How to read this report", 2, _reading, lambda run, o: ()),
    _Spec(
        "failures",
        "Queries to look at",
        2,
        _p(
            "Each query that failed an assertion or missed a relevant id; the scenario links to its "
            "drill-down. <i>Scenario status</i> is the scenario's verdict on its assertions (forbid, "
            "rank_before, floors, ...): <code>pass</code> beside recall 0.000 is a query that broke no "
            "assertion yet missed its relevant ids, which the metrics and the baseline count instead."
        ),
        lambda run, o: (failure_table(run),),
    ),
    _Spec(
        "summary",
        "Run summary and provenance",
        2,
        "",
        lambda run, o: (tables.run_summary(run), run_verdict(run).reproduce_html()),
    ),
    _Spec(
        "scenarios",
        "Per scenario: ungated vs gated",
        2,
        _scenarios_intro,
        lambda run, o: _scenario_parts(run),
    ),
    _Spec("charts", "Charts", 2, "", lambda run, o: ()),
    _Spec(
        "gate-chart",
        "Recall, precision and MRR per scenario",
        3,
        "",
        lambda run, o: (charts.gate_chart(run),),
        parent="charts",
    ),
    _Spec(
        "dropped",
        "Rows dropped by the relevance gate",
        3,
        _p("Relevant vs irrelevant rows the gate removed from the over-fetched pool, per scenario."),
        lambda run, o: (charts.dropped_chart(run),),
        lambda run, o: _no_gated_pass(run),
        parent="charts",
    ),
    _Spec(
        "candidates",
        "Gate candidates: similarity and BM25 match",
        3,
        _p(
            "Every row that reached the relevance gate, over the whole suite: which the gate kept and which "
            "it dropped, the relevant ones it dropped in red with their id, and the gate as a dashed line."
        ),
        lambda run, o: (charts.candidates_chart(run),),
        _no_sweep,
        parent="charts",
    ),
    _Spec(
        "sweep",
        "Gate sweep: recall and precision against the gate",
        3,
        _p(
            "The gate re-applied to this run's recorded candidates at 0, 0.05, …, 1 — no new search, "
            "identical "
            "to running the gated pass at each value. The dashed line is the current gate."
        ),
        lambda run, o: (charts.sweep_chart(run),),
        _no_sweep,
        parent="charts",
    ),
    _Spec(
        "category-chart",
        "Per-category metrics",
        3,
        "",
        lambda run, o: (charts.category_chart(run),),
        parent="charts",
    ),
    _Spec(
        "categories",
        "Per category and overall",
        2,
        _p("Means over the counted queries (scenarios with outcome <code>pass</code>, not measure-only)."),
        lambda run, o: (tables.category_table(run),),
    ),
    _Spec(
        "uncertainty",
        "How sure are these means?",
        3,
        _p(
            "Seeded percentile bootstrap intervals of each mean (ungated pass). Categories hold a handful of "
            "queries, so one query more or less moves their means a lot: small samples are flagged."
        ),
        lambda run, o: (tables.interval_table(run), _p(tables.interval_method())),
        parent="categories",
    ),
    _Spec(
        "leaks",
        "Stale and forbidden ids returned",
        2,
        _p(
            "Per scenario, the ids that should not have come back: superseded or deleted ones (the "
            "stale-fact rate counts them) and ones a query forbids (contamination counts them). 0 is the "
            "goal for both; an xfail scenario may leak by design (its reason is in its file)."
        ),
        lambda run, o: (tables.leak_table(run),),
        _no_leak_metrics,
        absent=_no_behaviour,
    ),
    _Spec(
        "not-applicable",
        "Not applicable scenarios",
        2,
        _p(
            "Scenarios that need a capability the system under test does not declare: not run, never a "
            "failure, excluded from category and overall means and from the baseline check."
        ),
        lambda run, o: (tables.not_applicable_table(run),),
        _no_not_applicable,
    ),
    _Spec(
        "latency",
        "Search latency",
        2,
        _p(
            "Wall time of each search call, p50 and p95 per scenario and overall, over both passes. Reported "
            "beside quality so memory systems can be compared on speed too; never gated."
        ),
        lambda run, o: (tables.latency_table(run),),
        _no_latency,
    ),
    _Spec(
        "trend",
        "Trend over the recorded runs",
        2,
        _p(
            "The overall means of every run appended to the history by <code>evalkit run</code> and "
            "<code>evalkit report</code>, one line per system, mode, top_k and suite fingerprint, by date "
            "(<code>evalkit report</code> appends this report's own run after rendering it: the next "
            "report shows it)."
        ),
        lambda run, o: (charts.trend_chart(o["history"]),),
        _no_trend,
    ),
    _Spec(
        "perturbation",
        "How fast does this system degrade as memory grows?",
        2,
        _p(
            "The overall means as every scenario's memory is grown deterministically: "
            "<code>distractors</code> adds N off-topic notes per scenario from a shipped pool (a larger N "
            "keeps every note of a smaller one), <code>stale-repeats</code> K older copies of each "
            "superseded fact. Value 0 is this run's "
            "own suite. A flat line is a system that holds up; each point is one run of the perturbed suite, "
            "never compared with a baseline."
        ),
        lambda run, o: (charts.perturbation_chart(_curve(run)), tables.curve_table(run)),
        absent=_no_curve,
    ),
    _Spec(
        "gate-recommendation",
        "Which gate can each category afford?",
        2,
        _p(
            "Per category, the largest swept gate whose recall loss against the ungated pass stays within "
            "0.02 "
            "(<code>evalkit sweep --tolerance</code> chooses another), with the precision it buys. "
            "<i>any (to 1)</i>: no swept gate costs that scope more recall than that, so the gate does not "
            "limit it."
        ),
        lambda run, o: (tables.gate_recommendation(run),),
        _no_sweep,
    ),
    _Spec(
        "benchmark",
        "Benchmark metrics",
        2,
        _p(
            "The metrics the benchmark recorded (nDCG@k, MAP, recall@k, R-precision, ...) per scenario and "
            "overall."
        ),
        lambda run, o: (tables.benchmark_table(run),),
        _no_benchmark,
    ),
    _Spec(
        "question-categories",
        "Per question category",
        3,
        "",
        lambda run, o: (tables.question_category_table(run),),
        _no_question_categories,
        parent="benchmark",
    ),
    _Spec(
        "benchmark-chart",
        "Benchmark metrics, overall",
        3,
        "",
        lambda run, o: (charts.benchmark_chart(run),),
        parent="benchmark",
    ),
    _Spec(
        "detection",
        "Detection power",
        2,
        _p(
            "Each row injects a realistic bug into the reference search (supersession not suppressed, a leg "
            "switched off, a wrong RRF constant, ...) and runs the suite: a trustworthy suite catches every "
            "mutation and raises no alarm on the no-op control."
        ),
        lambda run, o: (tables.detection_table(run),),
        _no_detection,
    ),
    _Spec(
        "assertions",
        "Assertion failures",
        2,
        _p(
            "Hard per-query checks: <code>forbid</code>, <code>no_relevant</code>, "
            "<code>expect_no_strong_match</code>, "
            "<code>rank_before</code>, floors."
        ),
        lambda run, o: (tables.assertion_failures(run),),
    ),
    _Spec(
        "regressions",
        "Regressions",
        2,
        _p("What fails CI: assertion errors of failing scenarios and metrics below their thresholds."),
        lambda run, o: (tables.regressions_table(run),),
    ),
    _Spec(
        "drilldown",
        "Drill-down per scenario",
        2,
        _p("Each scenario of the queries to look at: its queries, the relevant ids it missed and its hits."),
        lambda run, o: tuple(drilldown(run, name) for name in _drilled(run)),
        _no_drilldown,
    ),
)
"""Every section of the main report, in page order (a level-3 section names its `parent`)."""


def _html(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, charts.ReportFigure):
        png = part._repr_png_()
        width = _png_width(png)
        data = base64.b64encode(png).decode("ascii")
        return (
            '<div class="evalkit-chart" style="overflow-x: auto; max-width: 100%">'
            f'<img src="data:image/png;base64,{data}" alt="{html.escape(part.alt_text)}" '
            f'style="width: 100%; max-width: {width}px; min-width: {int(width * READABLE_SCALE)}px"></div>'
        )
    if isinstance(part, Styler):
        return f'<div class="evalkit-table" style="overflow-x: auto; max-width: 100%">{part.to_html()}</div>'
    rendered: str = part._repr_html_()
    return rendered


def _png_width(png: bytes) -> int:
    """The pixel width in a PNG's IHDR chunk."""
    return int.from_bytes(png[16:20], "big")
