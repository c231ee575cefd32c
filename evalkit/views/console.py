"""The console summaries (SPEC §3.6), each one string built from a saved run.

`render_run` is what `evalkit run` prints; `render_benchmark` what `evalkit bench` prints;
`render_detection` what `evalkit mutants` prints. They read an `EvalRun` (fresh or loaded from
JSON) and never run anything.

Tables size each column from its content (SPEC §5): width = max(header, widest cell), so long
scenario or category names never push the other columns out of line. Text columns are
left-aligned, numbers right-aligned, columns separated by two spaces, trailing blanks dropped.
Categories are listed in the order of the pass's `categories`, which is the order in which they
first appear in the suite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalkit.harness.results import DetectionPower, PassResult, PerturbationCurve
from evalkit.lazy import lazy_module
from evalkit.metrics import HARNESS, HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR, BEHAVIOUR_METRICS
from evalkit.views.compare import RunComparison, changed_queries
from evalkit.views.frames import (
    CAUGHT_BY_MESSAGES,
    COMPARED_METRICS,
    EvalRun,
    benchmark_metric_frame,
    gate_drops,
)
from evalkit.views.intervals import power_rows
from evalkit.wording import counted

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.views.compare_many import MultiComparison  # scipy: loaded by `evalkit compare` only
else:
    pd = lazy_module("pandas")  # not for `render_run`: `evalkit run` loads no pandas


def _columns(rows: Sequence[Sequence[str]], right: frozenset[int]) -> list[str]:
    """`rows` (the header first) as aligned lines; columns whose index is in `right` are
    right-aligned. Every row has the header's number of cells."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def _status(outcome_status: str, measure_only: bool) -> str:
    return f"{outcome_status} (measure-only)" if measure_only else outcome_status


def render_pass_table(result: PassResult) -> list[str]:
    """Per-scenario rows, the overall row and one line per category: one column (and one value
    per category line) per harness metric, headed by its registered `column` (`inline`)."""
    header = ["scenario", "category", "nq", *(HARNESS[m].column for m in HARNESS_METRICS), "status"]
    rows = [
        [
            s.name,
            s.category,
            str(s.metrics.queries),
            *_values(None if s.status == "not_applicable" else s.metrics.metrics),
            _status(s.status, s.measure_only),
        ]
        for s in result.scenarios
    ]
    overall = ["overall", "", str(result.overall.queries), *_values(result.overall.metrics), ""]
    head, *body, foot = _columns(
        [header, *rows, overall], right=frozenset(range(2, 3 + len(HARNESS_METRICS)))
    )
    rule = "-" * max(len(line) for line in (head, *body, foot))
    lines = [head, rule, *body, rule, foot]
    width = max((len(c) for c in result.categories), default=0)
    for category, agg in result.categories.items():
        values = "  ".join(f"{HARNESS[m].inline} {agg.metrics[m]:.3f}" for m in HARNESS_METRICS)
        lines.append(f"  {category:<{width}} {values}  ({counted(agg.queries, 'query', 'queries')})")
    return lines


def _values(metrics: dict[str, float] | None) -> list[str]:
    """The harness metrics as table cells; None (a not-applicable scenario) shows "n/a", never
    zeros."""
    return [f"{metrics[m]:.3f}" if metrics is not None else "n/a" for m in HARNESS_METRICS]


def gate_headline(gated: PassResult, role: str = "report-only") -> str:
    """ "Gated pass (ROLE): min_relevance X — dropped N of M candidate rows across Q/T queries",
    ROLE being "report-only" or, when a gated baseline was recorded for it, "checked against its
    baseline recorded WHEN" (`RunResult.gated_pass_role`)."""
    gate = gated.relevance_gate
    return f"Gated pass ({role}): min_relevance {gate.min_relevance:g} — {gate_drops(gate)}"


def render_gate_comparison(run: EvalRun) -> list[str]:
    """Ungated → gated recall, precision and MRR per scenario (not-applicable ones left out) and
    overall, with the rows the gate dropped from the pool, how many were relevant, and the
    relevant rows it took out of the ungated top-k (`lost@k`, the gate's real cost); [] when the
    run has no gated pass."""
    result = run.result
    if result.gated is None:
        return []
    header = ["scenario", "recall", "precision", "mrr", "dropped", "rel.dropped", "lost@k"]
    gated = {s.name: s for s in result.gated.scenarios}
    counts = run.scenario_counts
    rows = []
    for s in result.scenarios:  # the rows of `run.gate_comparison()`, read without pandas
        if s.status == "not_applicable":
            continue
        dropped = counts.get((result.gated.name, s.name), {})
        rows.append(
            [
                s.name,
                *_arrows(s.metrics.metrics, gated[s.name].metrics.metrics),
                *(str(dropped.get(c, 0)) for c in ("dropped_rows", "relevant_dropped", "relevant_lost")),
            ]
        )
    overall = ["overall", *_arrows(result.overall.metrics, result.gated.overall.metrics), "", "", ""]
    return [
        gate_headline(result.gated, result.gated_pass_role),
        *_columns([header, *rows, overall], right=frozenset(range(1, 7))),
    ]


def _arrows(before: dict[str, float], after: dict[str, float]) -> list[str]:
    return [f"{before[m]:.3f} → {after[m]:.3f}" for m in COMPARED_METRICS]


DEGENERATE_SHOWN = 10
"""At most this many degenerate-retrieval findings are listed in the console (then "... and N more")."""


def render_run(run: EvalRun) -> str:
    """The whole console summary: header, pass table, gated comparison, regressions or the
    verdict line, the degenerate retrieval found, the verdict (PASS / FAIL / NOT COMPARED), notes.
    When the baseline check was off, its note stands where "No gating regressions." would (or, with
    regressions, follows them) rather than being one note among others."""
    result = run.result
    queries = sum(len(s.queries) for s in result.scenarios)
    lines = [
        f"evalkit · mode {result.mode} · system {result.system} · top_k {result.top_k} · "
        f"{counted(len(result.scenarios), 'scenario')} · {counted(queries, 'query', 'queries')}",
        "",
        *render_pass_table(result.measurement),
    ]
    lines += render_behaviour(result.measurement)
    if result.gated is not None:
        lines += ["", *render_gate_comparison(run)]
    lines += ["", *render_latency(run), *render_not_applicable(run), *render_power(run), *render_ties(run)]
    lines += render_stability(run)
    lines.append("")
    off = result.baseline_check_off
    if result.regressions:
        lines.append(f"Regressions ({len(result.regressions)}):")
        lines += [f"  - [{r.kind}] {r.message}" for r in result.regressions]
        lines += [off] if off is not None else []
    else:
        lines.append(result.verdict_line())
    lines += render_degenerate(run)
    lines += render_strength(run)
    lines.append(render_verdict_line(run))
    listed = _not_applicable_notes(run)
    lines += [f"note: {n}" for n in result.notes if n != off and n not in listed]
    return "\n".join(lines)


def render_curve(curve: PerturbationCurve) -> str:
    """A perturbation curve (`evalkit run --perturb KIND=N,N,…`): a title line naming the kind and the
    seed, then one row per system and metric (harness metrics, then any behaviour metric measured
    at every value) and one column per value, three places; a closing line says the curve is never
    compared with a baseline."""
    labels = {**{m: HARNESS[m].label for m in HARNESS_METRICS}, **{m: BEHAVIOUR[m].label for m in BEHAVIOUR}}
    several = len(curve.series) > 1
    header = [*(["system"] if several else []), "metric", *(str(n) for n in curve.values)]
    rows = [
        [*([system] if several else []), labels.get(metric, metric), *(f"{v:.3f}" for v in points)]
        for system, metrics in curve.series.items()
        for metric, points in metrics.items()
    ]
    first = len(header) - len(curve.values)
    head, *body = _columns([header, *rows], right=frozenset(range(first, len(header))))
    rule = "-" * max(len(line) for line in (head, *body))
    systems = ", ".join(curve.series)
    return "\n".join(
        [
            "",
            f"Perturbation curve ({curve.kind} added per scenario, seed {curve.seed}; {systems}; "
            "overall means, ungated pass):",
            head,
            rule,
            *body,
            "  each value is one run of the perturbed suite; never compared with a baseline",
        ]
    )


def render_behaviour(result: PassResult) -> list[str]:
    """The behaviour metrics of a pass beside its table (suites that ask for them): one row per
    scenario and the overall row, one column per behaviour metric ("-" where it does not apply),
    then how many queries each overall mean is over; [] when the pass has none."""
    measured = [m for m in BEHAVIOUR_METRICS if m in result.overall.behaviour]
    if not measured:
        return []
    header = ["scenario", *(BEHAVIOUR[m].label for m in measured)]

    def cells(values: dict[str, float]) -> list[str]:
        return [f"{values[m]:.3f}" if m in values else "-" for m in measured]

    rows = [[s.name, *cells(s.metrics.behaviour)] for s in result.scenarios if s.status != "not_applicable"]
    overall = ["overall", *cells(result.overall.behaviour)]
    head, *body, foot = _columns([header, *rows, overall], right=frozenset(range(1, 1 + len(measured))))
    rule = "-" * max(len(line) for line in (head, *body, foot))
    over = ", ".join(f"{BEHAVIOUR[m].label} {result.overall.behaviour_queries[m]}" for m in measured)
    arrows = ", ".join(
        f"{BEHAVIOUR[m].label} {'↓' if BEHAVIOUR[m].lower_is_better else '↑'}" for m in measured
    )
    return [
        "",
        f"Behaviour metrics (better: {arrows}; checked only against a baseline that records them):",
        head,
        rule,
        *body,
        rule,
        foot,
        f"  overall means over queries: {over}",
    ]


def _not_applicable_notes(run: EvalRun) -> set[str]:
    """The notes that name a not-applicable scenario (`not applicable: <name> (...`): the "Not
    applicable" list above shows each of them already, with its category."""
    prefixes = tuple(f"not applicable: {name} (" for name in run.result.not_applicable)
    return {note for note in run.result.notes if prefixes and note.startswith(prefixes)}


def render_degenerate(run: EvalRun) -> list[str]:
    """ "Degenerate retrieval (N):" and one line per finding (the first `DEGENERATE_SHOWN`); []
    when there is none."""
    found = run.result.outcome.degenerate
    if not found:
        return []
    lines = [f"Degenerate retrieval ({len(found)}):"]
    lines += [f"  - [{d.kind}] {d.message}" for d in found[:DEGENERATE_SHOWN]]
    if len(found) > DEGENERATE_SHOWN:
        lines.append(f"  ... and {len(found) - DEGENERATE_SHOWN} more (the report's `verdict.degenerate`)")
    return lines


def render_power(run: EvalRun) -> list[str]:
    """The power line of the measurement pass (`EvalRun.power`'s rows, read without pandas): the
    smallest recall drop a two-sided paired test at 95 % could detect, overall and per category,
    then the categories with too few queries to judge; [] for a run without counted queries."""
    scopes = [r for r in power_rows(run.query_rows) if r["pass"] == run.result.measurement.name]
    if not scopes:
        return []
    level = float(scopes[0]["level"])

    def drop(row: dict[str, Any]) -> str:
        if math.isnan(row["detectable_drop"]):
            return f"none detectable ({row['can_drop']} of {row['queries']} can get worse)"
        return f"{row['detectable_drop']:.3f}"

    overall, categories = scopes[0], scopes[1:]
    judged = [r for r in categories if not r["too_few"]]
    few = [r for r in categories if r["too_few"]]
    needed = int(overall["needed"])
    line = (
        f"Power ({level:.0%}): the smallest recall drop a paired test could detect is {drop(overall)} "
        f"overall ({counted(int(overall['queries']), 'query', 'queries')}; {needed} must get worse)"
    )
    if judged:
        line += "; per category: " + ", ".join(f"{r['name']} {drop(r)} ({r['queries']})" for r in judged)
    lines = [line]
    if few:
        lines.append(
            f"Too few queries to judge (fewer than {needed}: no drop could be significant): "
            + ", ".join(f"{r['name']} ({r['queries']})" for r in few)
        )
    return lines


TIES_SHOWN = 10
"""At most this many tie-decided or unstable queries are named in the console (then "and N more")."""


def render_ties(run: EvalRun) -> list[str]:
    """ "Ties: N of M queries are decided by ties (...): names" for the measurement pass (see
    `evalkit.harness.ties`); [] when none is, or the report recorded no ties."""
    queries = [(s, q) for s in run.result.measurement.scenarios for q in s.queries if q.ties is not None]
    tied = [(s, q) for s, q in queries if q.ties is not None and q.ties.decided]
    if not tied:
        return []
    names = ", ".join(
        f"{s.name} query {q.index + 1}" + (" (at the cut)" if q.ties and q.ties.at_cut else "")
        for s, q in tied[:TIES_SHOWN]
    )
    more = f" and {len(tied) - TIES_SHOWN} more" if len(tied) > TIES_SHOWN else ""
    return [
        f"Ties: {len(tied)} of {counted(len(queries), 'query', 'queries')} decided by ties (equal scores "
        f"across the top_k cut or around a relevant id; `--repeat N` shows whether they hold): {names}{more}"
    ]


def render_stability(run: EvalRun) -> list[str]:
    """What repeated runs showed (`--repeat N`): one line, then each unstable query of the
    measurement pass (the first `TIES_SHOWN`) with its distinct rankings and the runs that gave
    them; [] for a run that was not repeated."""
    stability = run.result.stability
    if stability is None:
        return []
    lines = [f"Repeated runs ({stability.runs}): {stability.summary()}"]
    measured = [u for u in stability.unstable if u.pass_name == stability.unstable[0].pass_name]
    for u in measured[:TIES_SHOWN]:
        seen = "; ".join(
            f"run{'s' if len(runs) > 1 else ''} {','.join(map(str, runs))}: [{', '.join(r)}]"
            for r, runs in zip(u.rankings, u.runs, strict=True)
        )
        lines.append(f"  - {u.label} {u.text!r}: {seen}")
    return lines


def render_strength(run: EvalRun) -> list[str]:
    """ "Suite strength: caught N of M injected bugs (mutants checked against ...)" and, for each escaped
    mutation (then a false alarm of the control), what the suite needs to catch it; [] when the
    mutation suite did not run with the run."""
    strength, detection = run.result.strength, run.result.detection
    if strength is None or detection is None:
        return []
    checked_against = (
        f" (mutants checked against {detection.checked_against})" if detection.checked_against else ""
    )
    head = strength.line[0].upper() + strength.line[1:]
    return [
        f"{head}{checked_against}" + (":" if strength.escaped else ""),
        *(f"  - {h}" for h in strength.hints()),
    ]


def render_verdict_line(run: EvalRun) -> str:
    """ "Verdict: PASS|FAIL|NOT COMPARED — reason; reason"."""
    verdict = run.result.outcome
    return f"Verdict: {verdict.value} — {'; '.join(verdict.reasons)}"


def render_latency(run: EvalRun) -> list[str]:
    """ "Search latency (wall, both passes, reported only): p50 X ms, p95 Y ms over N calls;
    slowest scenario S (p95 Z ms)", then "first search of a scenario p50 F ms, the others p50 G
    ms" when both were measured; [] for a report without latency."""
    report = run.result.latency
    if report.overall is None:
        return []
    overall = report.overall
    slowest, worst = max(report.scenarios.items(), key=lambda item: item[1].p95_ms)
    lines = [
        f"Search latency (wall, both passes, reported only): p50 {overall.p50_ms:.2f} ms, "
        f"p95 {overall.p95_ms:.2f} ms over {overall.calls} calls; slowest scenario {slowest} "
        f"(p95 {worst.p95_ms:.2f} ms)"
    ]
    if report.first is not None and report.steady is not None:
        lines.append(
            f"  first search of a scenario p50 {report.first.p50_ms:.2f} ms (cold start), "
            f"the others p50 {report.steady.p50_ms:.2f} ms"
        )
    if report.searchable is not None:
        lines.append(
            f"  searchable after seeding: p50 {report.searchable.p50_ms:.2f} ms, p95 "
            f"{report.searchable.p95_ms:.2f} ms over {report.searchable.calls} memories (it indexes later)"
        )
    return lines


def render_not_applicable(run: EvalRun) -> list[str]:
    """One line per scenario the system could not be judged on, naming what it lacks."""
    missing = run.result.not_applicable
    if not missing:
        return []
    categories = {s.name: s.category for s in run.result.scenarios}
    return [
        f"Not applicable ({counted(len(missing), 'scenario')}, excluded from means and the baseline check):",
        *(f"  - {name} ({categories[name]}): needs {', '.join(needs)}" for name, needs in missing.items()),
    ]


def render_benchmark(
    run: EvalRun, categories: pd.DataFrame | None = None, category_label: str = "LoCoMo category"
) -> str:
    """A benchmark's summary: header, notes, metric table, the per-category table when given
    (LoCoMo categories, LongMemEval question types: `category_label` names them), the gated
    comparison, assertion errors."""
    result = run.result
    store = result.provenance.config.store
    embedder = result.provenance.embedder
    lines = [
        f"evalkit bench · mode {result.mode} · system {result.system} · retrieval {store.retrieval} · "
        f"tokenizer {store.tokenizer} · top_k {result.top_k} · "
        f"{'gated pass added' if result.gated else 'ungated'}",
        f"embedder: {'none (the system embeds by itself)' if embedder is None else embedder.identity}",
        *(f"  {note}" for note in result.notes),
        "",
        _table(benchmark_metric_frame(run)),
    ]
    if categories is not None:
        lines += ["", f"Per {category_label} (ungated):", _table(categories)]
    if result.gated is not None:
        lines += ["", *render_gate_comparison(run)]
    lines += ["", *render_latency(run)]
    if result.regressions:
        lines += ["", f"Assertion errors ({len(result.regressions)}):"]
        lines += [f"  - {r.message}" for r in result.regressions]
    return "\n".join(lines)


def _table(frame: pd.DataFrame) -> str:
    return frame.to_string(index=False, float_format=lambda x: f"{x:.4f}")


def render_detection(detection: DetectionPower) -> str:
    """The mutation table: one line per mutation (caught yes/no, regression count, verdict), then
    the first regression messages that caught it, indented; a closing verdict line, and what the
    mutants were checked against (`DetectionPower.checked_against`, when the result says)."""
    names = [f"{o.mutation} (control)" if o.control else o.mutation for o in detection.outcomes]
    width = max(len("mutation"), *(len(name) for name in names))
    lines = [f"{'mutation':<{width}}  caught  regressions  verdict", "-" * (width + 32)]
    for name, outcome in zip(names, detection.outcomes, strict=True):
        verdict = "ok" if outcome.expected else ("FALSE ALARM" if outcome.control else "ESCAPED")
        caught = "yes" if outcome.caught else "no"
        lines.append(f"{name:<{width}}  {caught:<6}  {len(outcome.regressions):>11}  {verdict}")
        lines.extend(f"    {r.message}" for r in outcome.regressions[:CAUGHT_BY_MESSAGES])
    lines.append("-" * (width + 32))
    escaped = [o.mutation for o in detection.outcomes if not o.expected]
    lines.append(
        "Every mutation was caught; the control raised no alarm."
        if not escaped
        else f"Not as expected: {', '.join(escaped)}"
    )
    if detection.checked_against:
        lines.append(f"Mutants checked against {detection.checked_against}")
    return "\n".join(lines)


def render_sweep(run: EvalRun, sweep: pd.DataFrame, recommendation: pd.DataFrame, tolerance: float) -> str:
    """What `evalkit sweep` prints: the sweep rows given (one per gate value × scope), then the
    recommended gate per overall/category scope and the run's current gate."""
    gated = run.result.gated
    current = "none" if gated is None else f"{gated.relevance_gate.min_relevance:g}"
    lines = [
        f"Gate sweep · mode {run.result.mode} · system {run.result.system} · top_k {run.result.top_k} · "
        f"current gate {current} (recomputed from the run's recorded candidates)",
        "",
        _table(sweep),
        "",
        f"Recommended gate per category: the largest gate losing at most {tolerance:g} recall",
        _table(recommendation),
    ]
    return "\n".join(lines)


def render_comparison(comparison: RunComparison) -> str:
    """What `evalkit compare` prints: both runs' identity, the per-metric test, scenario status
    flips, and the queries whose metrics or first relevant rank changed."""
    scenarios, queries = comparison.scenarios, comparison.queries
    flips = scenarios[scenarios["flipped"]]
    deltas = [f"{m}_delta" for m in HARNESS_METRICS]
    changed = changed_queries(queries)
    lines = [
        f"Comparing two runs ({comparison.pass_name} pass; Δ = B − A; p = paired permutation test, "
        "hit rate: McNemar's exact test)",
        comparison.identity,
        f"paired queries: {len(queries)} ({int(queries['counted'].sum())} counted); only in A: "
        f"{comparison.only_a}; only in B: {comparison.only_b}",
        "",
        _table(comparison.metrics),
        "",
        f"Scenario status flips: {len(flips)}",
    ]
    lines += [f"  {r.scenario}: {r.status_a} → {r.status_b}" for r in flips.itertuples()]
    lines += ["", f"Queries that changed: {len(changed)}"]
    if len(changed):
        columns = ["scenario", "query_number", *deltas, "first_relevant_a", "first_relevant_b", "rank_move"]
        lines.append(_table(changed[columns]))
    return "\n".join(lines)


def render_history(table: pd.DataFrame, path: object) -> str:
    """What `evalkit history` prints: one line per run (see `history_table`), or that there is none."""
    if table.empty:
        return f"no runs in {path} yet (`evalkit run` appends each run)"
    return f"{counted(len(table), 'run')} in {path}, oldest first (overall, ungated pass):\n{_table(table)}"


def render_ranking_diff(diff: pd.DataFrame, *, limit: int = 20) -> str:
    """What `evalkit compare` prints about rankings: the `limit` largest ranking changes
    (`evalkit.views.ranking_diff.ranking_diff`), one block per query — the ids that entered, left
    and moved, relevant ids marked "+", forbidden ones "!" — and how many more there are."""
    if diff.empty:
        return "Ranking changes: none (every paired query retrieved the same ids in the same order)"
    lines = [
        f"Ranking changes: {counted(len(diff), 'query', 'queries')}, largest first (+ relevant, ! forbidden)"
    ]
    for row in diff.head(limit).to_dict("records"):
        lines.append(f"  {row['query_id']} (change {row['change']}): {row['query']}")
        for label, ids in (("entered", row["entered"]), ("left", row["left"]), ("moved", row["moved"])):
            if ids:
                lines.append(f"    {label}: {', '.join(ids)}")
    if len(diff) > limit:
        lines.append(f"  … and {counted(len(diff) - limit, 'more query', 'more queries')}")
    return "\n".join(lines)


def render_many(comparison: MultiComparison) -> str:
    """What `evalkit compare` prints for its runs side by side: each run's identity, then one
    line per scope × run with each metric's mean and, for a run other than the baseline, its Δ
    and a "*" when the Holm-adjusted paired t-test is significant."""
    table = comparison.table
    lines = [
        f"Runs side by side ({comparison.pass_name} pass; Δ against {comparison.baseline}; * = Holm-adjusted "
        f"paired t-test p < {comparison.alpha:g} over each run's {len(table) // len(comparison.names)} "
        "tests)",
        *(
            f"{name}: {identity}"
            for name, identity in zip(comparison.names, comparison.identities, strict=True)
        ),
    ]
    rows = []
    for (scope, run), group in table.groupby(["scope", "run"], sort=False):
        cells: dict[str, object] = {"scope": scope, "run": run, "queries": int(group["queries"].iloc[0])}
        for r in group.itertuples(index=False):
            shown = f"{r.mean:.4f}"
            if run != comparison.baseline:
                shown += f" ({r.delta:+.4f}{'*' if r.significant else ''})"
            cells[str(r.metric)] = shown
        rows.append(cells)
    ordered = pd.DataFrame(rows).sort_values("scope", key=lambda s: s.map(_scope_order(table)), kind="stable")
    lines.append(ordered.to_string(index=False))
    return "\n".join(lines)


def _scope_order(table: pd.DataFrame) -> dict[str, int]:
    return {scope: i for i, scope in enumerate(dict.fromkeys(table["scope"]))}
