"""The console summary of a run (SPEC §3.6), as one string.

Tables size each column from its content (SPEC §5): width = max(header, widest cell), so long
scenario or category names never push the other columns out of line. Text columns are
left-aligned, numbers right-aligned, columns separated by two spaces, trailing blanks dropped.
Categories are listed in the order of the pass's `categories`, which is the order in which they
first appear in the suite.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.results import PassResult, Report

_METRICS = ("recall", "precision", "mrr", "hit_rate")


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
    """Per-scenario rows, the overall row and one line per category."""
    header = ["scenario", "category", "nq", "recall", "prec", "mrr", "hit", "status"]
    rows = [
        [
            s.name,
            s.category,
            str(s.metrics.queries),
            *_values(s.metrics.metrics),
            _status(s.status, s.measure_only),
        ]
        for s in result.scenarios
    ]
    overall = ["overall", "", str(result.overall.queries), *_values(result.overall.metrics), ""]
    head, *body, foot = _columns([header, *rows, overall], right=frozenset(range(2, 7)))
    rule = "-" * max(len(line) for line in (head, *body, foot))
    lines = [head, rule, *body, rule, foot]
    width = max((len(c) for c in result.categories), default=0)
    for category, agg in result.categories.items():
        m = agg.metrics
        lines.append(
            f"  {category:<{width}} recall {m['recall']:.3f}  precision {m['precision']:.3f}  "
            f"mrr {m['mrr']:.3f}  hit {m['hit_rate']:.3f}  ({agg.queries} queries)"
        )
    return lines


def _values(metrics: dict[str, float]) -> list[str]:
    return [f"{metrics[m]:.3f}" for m in _METRICS]


def gate_headline(gated: PassResult) -> str:
    """ "Gated pass (report-only): min_relevance X — dropped N of M candidate rows across Q/T queries"."""
    g = gated.relevance_gate
    return (
        f"Gated pass (report-only): min_relevance {g.min_relevance:g} — dropped {g.dropped_rows} of "
        f"{g.candidates} candidate rows across {g.queries_with_drops}/{g.queries} queries"
    )


def render_gate_comparison(ungated: PassResult, gated: PassResult) -> list[str]:
    """Ungated → gated recall, precision and MRR per scenario and overall, with dropped rows."""
    header = ["scenario", "recall", "precision", "mrr", "dropped", "rel.dropped"]
    rows = []
    for u, g in zip(ungated.scenarios, gated.scenarios, strict=True):
        dropped = sum(len(q.dropped) for q in g.queries)
        relevant = sum(d.relevant for q in g.queries for d in q.dropped)
        rows.append([u.name, *_arrows(u.metrics.metrics, g.metrics.metrics), str(dropped), str(relevant)])
    overall = ["overall", *_arrows(ungated.overall.metrics, gated.overall.metrics), "", ""]
    return [gate_headline(gated), *_columns([header, *rows, overall], right=frozenset(range(1, 6)))]


def _arrows(before: dict[str, float], after: dict[str, float]) -> list[str]:
    return [f"{before[m]:.3f} → {after[m]:.3f}" for m in ("recall", "precision", "mrr")]


def render_report(report: Report) -> str:
    """The whole console summary: header, pass table, gated comparison, regressions, notes."""
    queries = sum(len(s.queries) for s in report.scenarios)
    lines = [
        f"evalkit · mode {report.mode} · system {report.system} · top_k {report.top_k} · "
        f"{len(report.scenarios)} scenarios · {queries} queries",
        "",
        *render_pass_table(report),
    ]
    if report.gated is not None:
        lines += ["", *render_gate_comparison(report, report.gated)]
    lines.append("")
    if report.regressions:
        lines.append(f"Regressions ({len(report.regressions)}):")
        lines += [f"  - [{r.kind}] {r.message}" for r in report.regressions]
    else:
        lines.append("No gating regressions.")
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines)
