"""Two saved runs compared query by query: what moved, and is it more than chance?

`compare_runs(a, b)` pairs the queries of one pass of each run by (scenario, query index) and
returns a `RunComparison` of three frames:
- `metrics` (COMPARISON_METRIC_COLUMNS): per harness metric, the means of A and B over the
  paired counted queries (outcome pass, not measure-only, in both runs), Δ = B − A and the
  two-sided p-value of a paired test (`evalkit.harness.uncertainty`): McNemar's exact test on the
  discordant pairs for a rate (hit rate: a query either has a hit or not), the paired permutation
  test for the other metrics (means of scores in [0, 1]);
- `scenarios` (COMPARISON_SCENARIO_COLUMNS): per scenario of both runs, status in A and B, whether
  it flipped, and each metric's scenario mean in A, B and Δ;
- `queries` (COMPARISON_QUERY_COLUMNS): per paired query, each metric in A, B and Δ, whether its
  assertions passed in each, and the rank of its first relevant hit in A and B with the move.
Queries present in only one run (another dataset or scenario selection) are not paired; their
counts are `only_a` / `only_b`. Comparing runs of different modes or top_k is allowed (that may be
the point) and shown in `identity`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalkit.errors import UsageError
from evalkit.harness.uncertainty import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    mcnemar_exact_pvalue,
    paired_permutation_pvalue,
)
from evalkit.lazy import lazy_module
from evalkit.metrics import HARNESS, HARNESS_METRICS
from evalkit.views.frames import EvalRun

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # read by the frames, not by building an EvalRun

COMPARISON_METRIC_COLUMNS: tuple[str, ...] = (
    "metric", "queries", "mean_a", "mean_b", "delta", "p_value", "test",
)  # fmt: skip
"""One row per harness metric over the paired counted queries; `delta` = mean_b − mean_a;
`test` names the paired test behind `p_value`: "mcnemar-exact" (a rate) or "permutation"."""

COMPARISON_SCENARIO_COLUMNS: tuple[str, ...] = (
    "scenario", "category", "status_a", "status_b", "flipped",
    *(f"{m}_{side}" for m in HARNESS_METRICS for side in ("a", "b", "delta")),
)  # fmt: skip
"""One row per scenario present in both runs (A's order)."""

COMPARISON_QUERY_COLUMNS: tuple[str, ...] = (
    "scenario", "category", "query_number", "query", "counted",
    *(f"{m}_{side}" for m in HARNESS_METRICS for side in ("a", "b", "delta")),
    "passed_a", "passed_b", "first_relevant_a", "first_relevant_b", "rank_move",
)  # fmt: skip
"""One row per paired query (A's order). `first_relevant_*`: 1-based rank of the first relevant
id retrieved (NaN when none). `rank_move`: "same", "up N" / "down N" (B's rank is N better /
worse), "found" (only B retrieved a relevant id), "lost" (only A did), "" when neither did."""


@dataclass(frozen=True)
class RunComparison:
    """The comparison of run A with run B on one pass (see the module docstring)."""

    identity: str
    pass_name: str
    metrics: pd.DataFrame
    scenarios: pd.DataFrame
    queries: pd.DataFrame
    only_a: int
    only_b: int


def compare_runs(
    a: EvalRun,
    b: EvalRun,
    *,
    pass_name: str = "ungated",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    names: tuple[str, str] = ("A", "B"),
) -> RunComparison:
    """Compare `a` (before) with `b` (after) on `pass_name` ("ungated" or "gated"). UsageError
    when a run lacks that pass or the runs share no query; its message calls the runs by `names`
    (the CLI passes the report files)."""
    frames = [_pass_queries(run, pass_name, label) for run, label in zip((a, b), names, strict=True)]
    keys = ["scenario", "query_number"]
    paired = frames[0].merge(frames[1], on=keys, suffixes=("_a", "_b"))
    if paired.empty:
        raise UsageError(
            f"runs {names[0]} and {names[1]} share no query (pairs are matched by scenario and query "
            "index); compare two runs of the same suite and scenarios"
        )
    queries = _query_frame(paired)
    counted = queries[queries["counted"]]
    metrics = pd.DataFrame(
        [
            {
                "metric": m,
                "queries": len(counted),
                "mean_a": counted[f"{m}_a"].mean(),
                "mean_b": counted[f"{m}_b"].mean(),
                "delta": counted[f"{m}_b"].mean() - counted[f"{m}_a"].mean(),
                "p_value": _paired_pvalue(
                    m, counted[f"{m}_a"].tolist(), counted[f"{m}_b"].tolist(), resamples, seed
                ),
                "test": "mcnemar-exact" if HARNESS[m].rate else "permutation",
            }
            for m in HARNESS_METRICS
        ],
        columns=list(COMPARISON_METRIC_COLUMNS),
    )
    return RunComparison(
        identity=identity_lines((a, b), names),
        pass_name=pass_name,
        metrics=metrics,
        scenarios=_scenario_frame(a, b, pass_name),
        queries=queries,
        only_a=len(frames[0]) - len(paired),
        only_b=len(frames[1]) - len(paired),
    )


def _paired_pvalue(metric: str, before: list[float], after: list[float], resamples: int, seed: int) -> float:
    """The p-value of the paired test for `metric` (see COMPARISON_METRIC_COLUMNS' `test`)."""
    if HARNESS[metric].rate:
        return mcnemar_exact_pvalue(before, after)
    return paired_permutation_pvalue(before, after, resamples=resamples, seed=seed)


def changed_queries(queries: pd.DataFrame) -> pd.DataFrame:
    """The rows of a comparison's `queries` frame whose metrics or first relevant rank moved."""
    deltas = [f"{m}_delta" for m in HARNESS_METRICS]
    return queries[(queries[deltas].abs() > 1e-12).any(axis=1) | ~queries["rank_move"].isin(["same", ""])]


def first_relevant_rank(retrieved: list[str], relevant: list[str]) -> float:
    """1-based rank of the first relevant id in `retrieved`, NaN when none is retrieved."""
    wanted = set(relevant)
    return next((float(rank) for rank, i in enumerate(retrieved, start=1) if i in wanted), float("nan"))


def rank_move(before: float, after: float) -> str:
    """How the first relevant rank moved from `before` to `after` (see COMPARISON_QUERY_COLUMNS)."""
    missing_before, missing_after = before != before, after != after  # NaN: none retrieved
    if missing_before and missing_after:
        return ""
    if missing_before:
        return "found"
    if missing_after:
        return "lost"
    steps = int(before - after)
    return "same" if steps == 0 else f"up {steps}" if steps > 0 else f"down {-steps}"


def _pass_queries(run: EvalRun, pass_name: str, label: str) -> pd.DataFrame:
    queries = run.queries
    rows = queries[queries["pass"] == pass_name]
    if rows.empty:
        fix = (
            "re-run it without --gated-pass off, or compare the ungated passes (--pass ungated)"
            if pass_name == "gated"
            else "compare reports written by evalkit run"
        )
        raise UsageError(f"run {label} has no {pass_name} pass to compare; {fix}")
    firsts = [first_relevant_rank(r, v) for r, v in zip(rows["retrieved"], rows["relevant"], strict=True)]
    columns = ["scenario", "category", "query_number", "query", "counted", *HARNESS_METRICS, "passed"]
    return rows[columns].assign(first_relevant=firsts)


def _query_frame(paired: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "scenario": paired["scenario"],
            "category": paired["category_a"],
            "query_number": paired["query_number"],
            "query": paired["query_a"],
            "counted": paired["counted_a"].astype(bool) & paired["counted_b"].astype(bool),
        }
    )
    _add_metric_sides(frame, paired)
    frame["passed_a"], frame["passed_b"] = paired["passed_a"], paired["passed_b"]
    frame["first_relevant_a"], frame["first_relevant_b"] = (
        paired["first_relevant_a"],
        paired["first_relevant_b"],
    )
    frame["rank_move"] = [
        rank_move(x, y) for x, y in zip(frame["first_relevant_a"], frame["first_relevant_b"], strict=True)
    ]
    return frame[list(COMPARISON_QUERY_COLUMNS)].reset_index(drop=True)


def _scenario_frame(a: EvalRun, b: EvalRun, pass_name: str) -> pd.DataFrame:
    sides = [run.scenarios[run.scenarios["pass"] == pass_name] for run in (a, b)]
    paired = sides[0].merge(sides[1], on="scenario", suffixes=("_a", "_b"))
    frame = pd.DataFrame(
        {
            "scenario": paired["scenario"],
            "category": paired["category_a"],
            "status_a": paired["status_a"],
            "status_b": paired["status_b"],
            "flipped": paired["status_a"] != paired["status_b"],
        }
    )
    _add_metric_sides(frame, paired)
    return frame[list(COMPARISON_SCENARIO_COLUMNS)].reset_index(drop=True)


def _add_metric_sides(frame: pd.DataFrame, paired: pd.DataFrame) -> None:
    """Add `<metric>_a`, `<metric>_b` and `<metric>_delta` (B − A) columns to `frame` (built here)."""
    for m in HARNESS_METRICS:
        frame[f"{m}_a"], frame[f"{m}_b"] = paired[f"{m}_a"], paired[f"{m}_b"]
        frame[f"{m}_delta"] = paired[f"{m}_b"] - paired[f"{m}_a"]


IDENTITY_FIELDS: tuple[str, ...] = ("system", "mode", "top_k", "gate", "suite", "commit", "generated_at")
"""What tells two runs apart (`identity_fields`)."""


def identity_fields(run: EvalRun) -> dict[str, str]:
    """The run's identity (IDENTITY_FIELDS): the gate is the gated pass's ("min_relevance 0.4"),
    "no gated pass" without one; the suite is the first 12 characters of its fingerprint (the
    dataset digest baselines are keyed by); the commit is 12 characters (+ " (dirty)"),
    "unknown" outside git."""
    result = run.result
    git = result.provenance.git
    gated = result.gated
    return {
        "system": result.system,
        "mode": result.mode,
        "top_k": str(result.top_k),
        "gate": "no gated pass" if gated is None else f"min_relevance {gated.relevance_gate.min_relevance:g}",
        "suite": result.provenance.dataset_digest[:12],
        "commit": "unknown" if not git.commit else git.commit[:12] + (" (dirty)" if git.dirty else ""),
        "generated_at": result.generated_at,
    }


def run_identity(run: EvalRun) -> str:
    """`identity_fields` on one line: "system S · mode M · top_k K · gate G · suite F · commit C ·
    generated_at"."""
    fields = identity_fields(run)
    return " · ".join(
        value if name == "generated_at" else f"{name} {value}" for name, value in fields.items()
    )


def identity_lines(runs: tuple[EvalRun, ...], names: tuple[str, ...]) -> str:
    """One line per run: "A: <identity>", or "A = <name>: <identity>" when the run has a name of
    its own (the CLI passes the report files)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    lines = []
    for i, (run, name) in enumerate(zip(runs, names, strict=True)):
        letter = letters[i] if i < len(letters) else f"R{i + 1}"
        label = letter if name == letter else f"{letter} = {name}"
        lines.append(f"{label}: {run_identity(run)}")
    return "\n".join(lines)
