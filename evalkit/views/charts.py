"""Charts of a finished run, for the report notebooks: each function reads an `EvalRun` and
returns a `ReportFigure` (a matplotlib `Figure` built without pyplot: no global figure registry,
nothing to close), which renders itself as PNG in IPython and in nbconvert's HTML."""

from __future__ import annotations

import io
from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from evalkit.harness.results import PassResult
from evalkit.harness.sweep import unavailable
from evalkit.metrics import HARNESS_METRICS
from evalkit.views.frames import (
    COMPARED_METRICS,
    EvalRun,
    benchmark_metric_frame,
    by_pass,
    check_scenario,
    gate_drops,
    gate_label,
    missing_gated_pass,
)
from evalkit.views.styles import (
    DROPPED_IRRELEVANT_COLOR,
    DROPPED_RELEVANT_COLOR,
    GATED_COLOR,
    METRIC_COLORS,
    METRIC_LABELS,
    POOL_RELEVANT_COLOR,
    RELEVANT_COLOR,
    SERIES_COLORS,
    UNGATED_COLOR,
    metric_colors,
)
from evalkit.views.sweep import DEFAULT_SWEEP_VALUES
from evalkit.wording import counted

__all__ = [
    "ReportFigure",
    "benchmark_chart",
    "candidates_chart",
    "category_chart",
    "dropped_chart",
    "gate_chart",
    "perturbation_chart",
    "rank_chart",
    "sweep_chart",
    "trend_chart",
]


class ReportFigure(Figure):
    """A matplotlib Figure that renders itself as PNG in IPython (`_repr_png_`), so a notebook
    displays it — and nbconvert embeds it as base64 — whatever the matplotlib backend. The PNG's
    display metadata carries `alt`, the figure's description (`alt_text`), which
    `evalkit.notebooks.render_html` writes into the image's alt attribute; the text/plain form
    is that description too, not `<Figure size …>`."""

    @property
    def alt_text(self) -> str:
        """ "Chart: " + the suptitle and each axes' title, "; "-joined ("untitled" when none)."""
        titles = [ax.get_title() for ax in self.axes if ax.get_title()]
        if self.get_suptitle():
            titles.insert(0, self.get_suptitle())
        return "Chart: " + ("; ".join(titles) or "untitled")

    def __repr__(self) -> str:
        return self.alt_text

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        return buffer.getvalue()

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, bytes], dict[str, dict[str, str]]]:
        """The PNG with its alt text as display metadata (IPython asks for this first)."""
        return {"image/png": self._repr_png_()}, {"image/png": {"alt": self.alt_text}}


def gate_chart(run: EvalRun) -> ReportFigure:
    """Three panels (recall, precision, MRR), one horizontal bar pair per scenario: ungated vs
    gated. Without a gated pass, one bar per scenario."""
    ungated, gated = by_pass(run.scenarios, "scenario", None)
    ungated = ungated[list(COMPARED_METRICS)].astype(float)  # n/a (not applicable) as NaN: no bar
    gated = None if gated is None else gated[list(COMPARED_METRICS)].astype(float)
    names = list(ungated.index)
    y = np.arange(len(names))
    height = 0.4 if gated is not None else 0.7
    fig = ReportFigure(figsize=(13, 1.6 + 0.42 * len(names)), layout="constrained")
    axes = fig.subplots(1, 3, sharey=True)
    for ax, metric in zip(axes, COMPARED_METRICS, strict=True):
        offset = -height / 2 if gated is not None else 0.0
        ax.barh(y + offset, ungated[metric], height=height, color=UNGATED_COLOR, label="ungated")
        if gated is not None:
            ax.barh(
                y + height / 2,
                gated[metric],
                height=height,
                color=GATED_COLOR,
                label=f"gated ({gate_label(run)})",
            )
        ax.set_title(METRIC_LABELS[metric])
        ax.set_xlim(0, 1.05)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.suptitle("Ungated vs gated, per scenario")
    # below the panels: a legend "outside upper center" is drawn over the suptitle
    fig.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    return fig


def dropped_chart(run: EvalRun) -> ReportFigure:
    """Rows the relevance gate dropped from the over-fetched pool, per scenario: one stacked
    horizontal bar each, relevant (amber) then irrelevant (grey); a red label "N lost from top-k"
    after the bar of each scenario where the gate took relevant rows out of the ungated top-k.
    Without a gated pass the panel says so and holds no bars."""
    comparison = run.gate_comparison()
    fig = ReportFigure(figsize=(13, 1.6 + 0.35 * max(len(comparison), 1)), layout="constrained")
    ax = fig.subplots()
    gated = run.result.gated
    if gated is None:
        ax.text(0.5, 0.5, f"{missing_gated_pass(run.result)}: nothing was dropped", ha="center", va="center")
        ax.set_axis_off()
        return fig
    y = np.arange(len(comparison))
    relevant = comparison["relevant_dropped"].to_numpy()
    irrelevant = comparison["dropped_rows"].to_numpy() - relevant
    ax.barh(y, relevant, color=POOL_RELEVANT_COLOR, label="relevant rows dropped from the pool")
    ax.barh(y, irrelevant, left=relevant, color=DROPPED_IRRELEVANT_COLOR, label="irrelevant rows dropped")
    for row, lost, end in zip(y, comparison["relevant_lost"], relevant + irrelevant, strict=True):
        if lost:
            label = f" {lost} relevant lost from top-k"
            ax.text(
                float(end), float(row), label, va="center", color=DROPPED_RELEVANT_COLOR, fontweight="bold"
            )
    ax.set_xlim(0, max(1, int((relevant + irrelevant).max())) * 1.3)  # room for the labels
    ax.set_yticks(y, comparison["scenario"])
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("rows dropped (summed over the scenario's queries)")
    ax.grid(axis="x", alpha=0.3)
    # below the axes: inside them it could cover a "lost from top-k" label
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
    ax.set_title(f"Rows the relevance gate dropped ({gate_label(run)}): {gate_drops(gated.relevance_gate)}")
    return fig


CANDIDATE_LABELS = 12
"""At most this many dropped relevant rows are labelled with their id in the candidates chart."""


def candidates_chart(run: EvalRun) -> ReportFigure:
    """Every row that reached the gated pass's relevance gate, suite-wide (`QueryResult.
    gate_candidates`): similarity on x, and two bands on y — BM25 matched or vector only — with
    the rows of each band spread a little apart in suite order so that equal similarities stay
    visible (labels are stepped too); relevant rows green, others grey; rows the gate dropped
    (the run's own `dropped` record, not recomputed) drawn as crosses, the relevant ones in red
    and labelled with their id (the first CANDIDATE_LABELS). The gate's value is drawn as a
    dashed line. A row without a similarity sits at 0. Without candidates (no gated pass, a
    system that reports none) the figure says so."""
    gated = run.result.gated
    rows = []
    if gated is not None:
        for s in gated.scenarios:
            for q in s.queries:
                dropped = {d.id for d in q.dropped}
                for c in q.gate_candidates or []:
                    rows.append((c.similarity or 0.0, c.bm25, c.id in q.relevant, c.id in dropped, c.id))
    fig = ReportFigure(figsize=(13, 4.8), layout="constrained")
    ax = fig.subplots()
    if gated is None or not rows:
        ax.text(0.5, 0.5, "no gate candidates recorded in this run", ha="center", va="center")
        ax.set_axis_off()
        return fig
    frame = pd.DataFrame(rows, columns=["similarity", "bm25", "relevant", "dropped", "id"])
    frame["y"] = frame["bm25"].astype(float) + [((i % 9) - 4) * 0.035 for i in range(len(frame))]
    groups = (
        ("relevant, kept", frame["relevant"] & ~frame["dropped"], RELEVANT_COLOR, "o"),
        ("not relevant, kept", ~frame["relevant"] & ~frame["dropped"], "#adb5bd", "o"),
        ("not relevant, dropped", ~frame["relevant"] & frame["dropped"], DROPPED_IRRELEVANT_COLOR, "x"),
        ("relevant, dropped", frame["relevant"] & frame["dropped"], DROPPED_RELEVANT_COLOR, "X"),
    )
    for label, mask, color, marker in groups:
        part = frame[mask]
        ax.scatter(
            part["similarity"], part["y"], color=color, marker=marker, s=28, label=f"{label} ({len(part)})"
        )
    lost = frame[frame["relevant"] & frame["dropped"]].head(CANDIDATE_LABELS).to_dict("records")
    for i, row in enumerate(lost):  # labels stepped up and down so that rows at one spot stay legible
        ax.annotate(
            str(row["id"]),
            (float(row["similarity"]), float(row["y"])),
            xytext=(6, 12 * ((i % 5) - 2)),
            textcoords="offset points",
            color=DROPPED_RELEVANT_COLOR,
            fontsize="small",
        )
    gate = gated.relevance_gate.min_relevance
    ax.axvline(gate, linestyle="--", color="#495057", linewidth=1.2, label=f"gate {gate:g}")
    ax.set_yticks([0, 1], ["vector only", "BM25 matched"])
    ax.set_ylim(-0.5, 1.5)
    ax.set_xlabel("similarity (0 when the row has none)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"Rows that reached the relevance gate ({_candidates_counted(gated, len(frame))})")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=5, frameon=False)
    return fig


def _candidates_counted(gated: PassResult, shown: int) -> str:
    """ "540 candidates, gated pass, every query", or, when queries that set their own gate
    recorded none (`QueryResult.gate_candidates` None: the sweep cannot move their gate), why the
    count differs from the dropped-rows chart's: "540 of the gated pass's 585: 3 queries with a
    gate of their own not drawn"."""
    total = gated.relevance_gate.candidates
    if shown == total:
        return f"{shown} candidates, gated pass, every query"
    pinned = sum(1 for s in gated.scenarios for q in s.queries if q.gate_candidates is None and q.candidates)
    own = counted(pinned, "query", "queries")
    return f"{shown} of the gated pass's {total}: {own} with a gate of their own not drawn"


def category_chart(run: EvalRun) -> ReportFigure:
    """Grouped vertical bars: every harness metric (recall, precision, MRR, hit rate) per category
    and overall (ungated pass: what the thresholds gate)."""
    ungated, _ = by_pass(run.categories, "category", None)
    overall, _ = by_pass(run.overall.assign(category="overall"), "category", None)
    frame = pd.concat([ungated, overall])
    x = np.arange(len(frame))
    width = 0.8 / len(HARNESS_METRICS)
    middle = (len(HARNESS_METRICS) - 1) / 2
    fig = ReportFigure(figsize=(13, 4.8), layout="constrained")
    ax = fig.subplots()
    for i, (metric, color) in enumerate(metric_colors()):
        ax.bar(x + (i - middle) * width, frame[metric], width=width, color=color, label=METRIC_LABELS[metric])
    ax.set_xticks(x, list(frame.index), rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean over the category's queries")
    ax.grid(axis="y", alpha=0.3)
    fig.legend(loc="outside right upper", frameon=False)
    ax.set_title("Per-category metrics (ungated pass, counted scenarios only)")
    return fig


def rank_chart(run: EvalRun, scenario: str) -> ReportFigure:
    """Two panels for `scenario`'s ungated hits: similarity by rank and relevance by rank, one
    line per query, points green when relevant and grey otherwise, a red cross on rows the gate
    dropped. The similarity panel draws the low-confidence floor the run's system declared
    (`SystemDeclaration.confidence_floor`; none when it declared none) and the gate's floor."""
    check_scenario(run, scenario)
    hits = run.hits
    rows = hits[(hits["pass"] == "ungated") & (hits["scenario"] == scenario)]
    fig = ReportFigure(figsize=(13, 4.5), layout="constrained")
    axes = fig.subplots(1, 2, sharex=True)
    for ax, column in zip(axes, ("similarity", "relevance"), strict=True):
        values = rows[column].astype(float)
        for _, group in rows.assign(value=values).groupby("query_number", sort=False):
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
    floor = run.result.provenance.declaration.confidence_floor
    if floor is not None:
        axes[0].axhline(floor, linestyle="--", color="#495057", linewidth=1, label="low-confidence floor")
    if run.result.gated is not None:
        floor = run.result.gated.relevance_gate.min_relevance
        axes[0].axhline(floor, linestyle=":", color=DROPPED_RELEVANT_COLOR, linewidth=1.5, label="gate floor")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=5, frameon=False)
    fig.suptitle(f"{scenario}: similarity and relevance by rank (ungated pass, one line per query)")
    return fig


def sweep_chart(run: EvalRun, values: Iterable[float] = DEFAULT_SWEEP_VALUES) -> ReportFigure:
    """The gate sweep (`EvalRun.gate_sweep`): overall recall and precision against the gate value
    (left) and each category's recall (right), with the run's gate marked by a dashed line. When
    the run cannot be swept (no gated pass, no recorded candidates) the figure says why."""
    fig = ReportFigure(figsize=(13, 4.6), layout="constrained")
    reason = unavailable(run.result)
    if reason is not None or run.result.gated is None:
        ax = fig.subplots()
        ax.text(0.5, 0.5, f"no gate sweep: {reason}", ha="center", va="center", wrap=True)
        ax.set_axis_off()
        return fig
    sweep = run.gate_sweep(values)
    current = run.result.gated.relevance_gate.min_relevance
    overall = sweep[sweep["scope"] == "overall"]
    left, right = fig.subplots(1, 2, sharey=True)
    for metric, color in (("recall", METRIC_COLORS[0]), ("precision", METRIC_COLORS[1])):
        left.plot(
            overall["min_relevance"], overall[metric], marker="o", color=color, label=METRIC_LABELS[metric]
        )
    left.set_title("Overall recall and precision")
    categories = sweep[sweep["scope"] == "category"]
    for i, (name, group) in enumerate(categories.groupby("name", sort=False)):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        right.plot(group["min_relevance"], group["recall"], marker=".", color=color, label=str(name))
    right.set_title("Recall per category")
    for ax in (left, right):
        ax.axvline(current, linestyle="--", color="#495057", linewidth=1.2, label=f"current gate {current:g}")
        ax.set_xlabel("min_relevance (gate)")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize="small")
    fig.suptitle(f"Gate sweep from the recorded candidates ({len(overall)} gate values)")
    return fig


TREND_TICKS = 6
"""At most this many labelled runs per trend panel (date and commit; the others are points only)."""


def trend_chart(history: pd.DataFrame) -> ReportFigure:
    """The run history (`evalkit.load_history`): one panel per harness metric, the overall
    ungated mean of each run (2 × 2 panels), one line per series — system, mode, top_k and suite fingerprint
    (the first 8 characters of the dataset digest), so runs of different systems or suites are
    never joined into one line — at the run's position in append order; each x tick names the
    run's date (UTC, from `generated_at`) and its commit (7 characters, "?" outside git). A run
    with regressions is drawn as a red cross. The legend sits below the panels. An empty history
    gives a figure that says so."""
    overall = history[(history["pass"] == "ungated") & (history["scope"] == "overall")]
    fig = ReportFigure(figsize=(13, 7.5), layout="constrained")
    if overall.empty:
        ax = fig.subplots()
        ax.text(
            0.5,
            0.5,
            "no run history yet: `evalkit run` and `evalkit report` append each run",
            ha="center",
            va="center",
        )
        ax.set_axis_off()
        return fig
    runs = overall.drop_duplicates("run_id")
    order = {run: i for i, run in enumerate(runs["run_id"], start=1)}
    ticks = [
        _run_tick(str(when), commit)
        for when, commit in zip(runs["generated_at"], runs["git_commit"], strict=True)
    ]
    step = -(-len(ticks) // TREND_TICKS)  # at most TREND_TICKS labelled ticks per panel
    series_of = overall.assign(
        run=lambda f: f["run_id"].map(order),
        series=lambda f: [
            f"{s} · {m} · top_k {k} · suite {str(d)[:8]}"
            for s, m, k, d in zip(f["system"], f["mode"], f["top_k"], f["dataset_digest"], strict=True)
        ],
    )
    axes = fig.subplots(2, -(-len(HARNESS_METRICS) // 2), sharey=True).flatten()  # room for the ticks
    for ax, metric in zip(axes, HARNESS_METRICS, strict=True):
        rows = series_of[series_of["metric"] == metric]
        for i, (name, series) in enumerate(rows.groupby("series", sort=False)):
            color = SERIES_COLORS[i % len(SERIES_COLORS)]
            ax.plot(series["run"], series["value"], marker="o", color=color, label=str(name))
            failed = series[series["regressions"] > 0]
            ax.scatter(
                failed["run"], failed["value"], marker="x", s=80, color=DROPPED_RELEVANT_COLOR, zorder=3
            )
        ax.set_title(METRIC_LABELS[metric])
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        shown = list(range(1, len(ticks) + 1, step))
        ax.set_xticks(shown, [ticks[i - 1] for i in shown], fontsize="small")
        ax.set_xlim(0.5, len(ticks) + 0.5)
    for ax in axes[:: len(axes) // 2]:
        ax.set_ylabel("overall mean")
    fig.suptitle(
        f"Trend over {counted(len(order), 'run')} (overall, ungated pass; red cross = run with regressions)"
    )
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
    return fig


def perturbation_chart(curve: pd.DataFrame) -> ReportFigure:
    """A perturbation curve (`evalkit.perturbation_curve`): one panel per harness metric, the
    overall mean over the perturbation's size (the curve's column name: "distractors" or
    "stale-repeats"), one line per system, the legend below the panels."""
    kind = str(curve.columns.name or "perturbation")
    sizes = [int(n) for n in curve.columns]
    fig = ReportFigure(figsize=(11, 6.5), layout="constrained")
    axes = fig.subplots(2, -(-len(HARNESS_METRICS) // 2), sharey=True).flatten()
    systems = list(dict.fromkeys(curve.index.get_level_values("system")))
    for ax, metric in zip(axes, HARNESS_METRICS, strict=True):
        for i, system in enumerate(systems):
            ax.plot(
                sizes,
                curve.loc[(system, metric)].to_numpy(dtype=float),
                marker="o",
                color=SERIES_COLORS[i % len(SERIES_COLORS)],
                label=system,
            )
        ax.set_title(METRIC_LABELS[metric])
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(f"{kind} per scenario")
        ax.grid(alpha=0.3)
    for ax in axes[:: len(axes) // 2]:
        ax.set_ylabel("overall mean")
    fig.suptitle(f"Metrics as memory grows ({kind} added per scenario; ungated pass)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False)
    return fig


def _run_tick(generated_at: str, commit: object) -> str:
    """ "2026-11-30\nab12cd3": a run's UTC date and short commit, one x tick."""
    return f"{str(generated_at)[:10]}\n{commit[:7] if isinstance(commit, str) and commit else '?'}"


def benchmark_chart(run: EvalRun) -> ReportFigure:
    """A benchmark run's own metrics: one bar per metric (overall, ungated pass), labelled with
    its value. A run without benchmark metrics gives a figure that says so."""
    fig = ReportFigure(figsize=(13, 3.6), layout="constrained")
    ax = fig.subplots()
    if not run.extra_metrics:
        ax.text(0.5, 0.5, "no benchmark metrics in this run", ha="center", va="center")
        ax.set_axis_off()
        return fig
    overall = benchmark_metric_frame(run).iloc[-1]
    names = list(run.extra_metrics)
    values = [float(overall[m]) for m in names]
    bars = ax.bar(names, values, color=UNGATED_COLOR)
    ax.bar_label(bars, labels=[f"{v:.3f}" for v in values])
    ax.set_ylim(0, 1.1)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Benchmark metrics, overall over {int(overall['queries'])} queries (ungated pass)")
    return fig
