"""Turn a suite run into a `Report`: run both passes, gate on the recorded thresholds, record
provenance. This is the library behind `evalkit run` and `evalkit.run_eval`.

Decisions where the SPEC is silent:
- The thresholds file is read before anything runs, so an invalid file fails fast (exit 2).
- Metric gating is off, with a note in the report, when the file is missing, has no entry for
  the mode, or the entry was recorded at another top_k (metrics at another cut-off are not
  comparable). Assertion regressions always gate.
- A run restricted with `scenarios=` is not metric-gated either (a note says so): baselines
  average whole categories of the whole suite, so a subset's means are not comparable.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from evalkit.datasets import Suite
from evalkit.errors import UsageError
from evalkit.metrics import MetricSpec
from evalkit.provenance import collect
from evalkit.results import Report
from evalkit.runner import run_suite
from evalkit.system import MemorySystem
from evalkit.thresholds import assertion_regressions, load_thresholds, metric_regressions


def check_top_k(top_k: int) -> int:
    """top_k as given when it is an int in [1, 1000]; otherwise UsageError."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 1000:
        raise UsageError(f"top_k must be an integer from 1 to 1000, got {top_k!r}")
    return top_k


def check_gate(min_relevance: float | None) -> float | None:
    """min_relevance as given when None or a number in [0, 1]; otherwise UsageError."""
    if min_relevance is not None and not 0.0 <= float(min_relevance) <= 1.0:
        raise UsageError(
            f"min_relevance must be from 0 to 1 (or None for the service default), got {min_relevance}"
        )
    return min_relevance


def evaluate(
    suite: Suite,
    system: MemorySystem,
    *,
    mode: str,
    embedder_info: dict[str, object],
    top_k: int = 5,
    gated: bool = True,
    min_relevance: float | None = None,
    thresholds: str | Path | None = None,
    selected: bool = False,
    extra_metrics: Sequence[MetricSpec] = (),
    clock: datetime | None = None,
    progress: bool | None = None,
) -> Report:
    """Run `suite` on `system` and build the report, regressions included.

    `mode` keys the thresholds entry; `thresholds` None disables metric gating without a note
    (benchmarks); `selected` marks a run restricted to some scenarios (not metric-gated).
    """
    check_top_k(top_k)
    check_gate(min_relevance)
    entries = load_thresholds(thresholds) if thresholds is not None else None
    result = run_suite(
        suite,
        system,
        top_k=top_k,
        gated=gated,
        min_relevance=min_relevance,
        extra_metrics=extra_metrics,
        clock=clock,
        progress=progress,
    )
    regressions = assertion_regressions(result.ungated)
    notes: list[str] = []
    entry = None if entries is None else entries.get(mode)
    if selected and entries is not None:
        notes.append("scenarios were selected by name: metric gating is off (assertions still gate)")
    elif thresholds is not None and entries is None:
        notes.append(f"no thresholds file at {thresholds}: metric gating is off (assertions still gate)")
    elif entries is not None and entry is None:
        notes.append(
            f"{thresholds} has no {mode!r} entry: metric gating is off; record one with --update-baseline"
        )
    elif entry is not None and entry.top_k != top_k:
        notes.append(
            f"the {mode!r} baseline was recorded at top_k={entry.top_k}, this run used top_k={top_k}: "
            "metric gating is off (assertions still gate)"
        )
    elif entry is not None:
        regressions += metric_regressions(result.ungated, entry)
    return Report(
        scenarios=result.ungated.scenarios,
        overall=result.ungated.overall,
        categories=result.ungated.categories,
        relevance_gate=result.ungated.relevance_gate,
        mode=mode,
        generated_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
        top_k=top_k,
        system=system.name,
        provenance=collect(suite.digest, system.describe(), dict(embedder_info)),
        regressions=regressions,
        notes=notes,
        gated=result.gated,
    )
