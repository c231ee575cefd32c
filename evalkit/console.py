"""The console summary of a run (SPEC §3.6), as one string."""

from __future__ import annotations

from evalkit.results import PassResult, Report

_HEADER = (
    f"{'scenario':<22} {'category':<18} {'nq':>3} {'recall':>7} {'prec':>7} {'mrr':>7} {'hit':>7}  status"
)


def _row(name: str, category: str, queries: int, metrics: dict[str, float], status: str) -> str:
    values = " ".join(f"{metrics[m]:>7.3f}" for m in ("recall", "precision", "mrr", "hit_rate"))
    return f"{name:<22} {category:<18} {queries:>3} {values}  {status}".rstrip()


def _status(outcome_status: str, measure_only: bool) -> str:
    return f"{outcome_status} (measure-only)" if measure_only else outcome_status


def render_pass_table(result: PassResult) -> list[str]:
    """Per-scenario rows, the overall row and one line per category."""
    lines = [_HEADER, "-" * len(_HEADER)]
    for s in result.scenarios:
        lines.append(
            _row(s.name, s.category, s.metrics.queries, s.metrics.metrics, _status(s.status, s.measure_only))
        )
    lines.append("-" * len(_HEADER))
    lines.append(_row("overall", "", result.overall.queries, result.overall.metrics, ""))
    for category, agg in result.categories.items():
        m = agg.metrics
        lines.append(
            f"  {category:<20} recall {m['recall']:.3f}  precision {m['precision']:.3f}  "
            f"mrr {m['mrr']:.3f}  hit {m['hit_rate']:.3f}  ({agg.queries} queries)"
        )
    return lines


def gate_headline(gated: PassResult) -> str:
    """ "Gated pass (report-only): min_relevance X — dropped N of M candidate rows across Q/T queries"."""
    g = gated.relevance_gate
    return (
        f"Gated pass (report-only): min_relevance {g.min_relevance:g} — dropped {g.dropped_rows} of "
        f"{g.candidates} candidate rows across {g.queries_with_drops}/{g.queries} queries"
    )


def render_gate_comparison(ungated: PassResult, gated: PassResult) -> list[str]:
    """Ungated → gated recall, precision and MRR per scenario and overall, with dropped rows."""
    lines = [
        gate_headline(gated),
        f"{'scenario':<22} {'recall':>15} {'precision':>15} {'mrr':>15} {'dropped':>8} {'rel.dropped':>11}",
    ]
    pairs = [
        (u.name, u.metrics.metrics, g.metrics.metrics, g.queries)
        for u, g in zip(ungated.scenarios, gated.scenarios, strict=True)
    ]
    for name, before, after, queries in pairs:
        dropped = sum(len(q.dropped) for q in queries)
        relevant = sum(d.relevant for q in queries for d in q.dropped)
        lines.append(f"{name:<22} {_arrows(before, after)} {dropped:>8} {relevant:>11}")
    lines.append(f"{'overall':<22} {_arrows(ungated.overall.metrics, gated.overall.metrics)}")
    return lines


def _arrows(before: dict[str, float], after: dict[str, float]) -> str:
    return " ".join(f"{before[m]:>6.3f} → {after[m]:<6.3f}" for m in ("recall", "precision", "mrr"))


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
