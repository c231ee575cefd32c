"""Small hand-built results for tests of aggregation, baselines and frames."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.harness.aggregation import mean_metrics, pass_result
from evalkit.harness.checks import scenario_status
from evalkit.harness.config import RunConfig
from evalkit.harness.results import (
    GATED,
    MEASUREMENT,
    DroppedRecord,
    LatencyReport,
    PassResult,
    QueryResult,
    Regression,
    RunResult,
    ScenarioResult,
)
from evalkit.harness.runner import MEASUREMENT_PASS, PassSpec
from evalkit.systems.declaration import declaration_of
from evalkit.systems.reference import ReferenceSystem


def query(
    index: int = 0,
    *,
    recall: float = 1.0,
    precision: float = 0.5,
    mrr: float = 1.0,
    hit_rate: float = 1.0,
    errors: tuple[str, ...] = (),
    dropped: tuple[tuple[str, bool], ...] = (),
    candidates: int = 0,
) -> QueryResult:
    return QueryResult(
        index=index,
        query=f"query {index}",
        top_k=5,
        relevant=["r"],
        retrieved=["r", "x"],
        hits=[],
        metrics={"recall": recall, "precision": precision, "mrr": mrr, "hit_rate": hit_rate},
        check_errors=list(errors),
        candidates=candidates,
        dropped=[DroppedRecord(id=i, relevant=r) for i, r in dropped],
    )


def scenario(
    name: str,
    category: str,
    queries: list[QueryResult],
    *,
    outcome: str = "pass",
    measure_only: bool = False,
) -> ScenarioResult:
    status = scenario_status(outcome, any(q.check_errors for q in queries))
    return ScenarioResult(
        name=name,
        category=category,
        outcome=outcome,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        measure_only=measure_only,
        metrics=mean_metrics(queries),
        queries=queries,
    )


def a_pass(*scenarios: ScenarioResult, gate: float = 0.0) -> PassResult:
    """A pass of these scenarios (`pass_result`, as the runner assembles one): the measurement at
    gate 0, the report-only gated pass at any other gate."""
    spec = MEASUREMENT_PASS if gate == 0.0 else PassSpec(GATED, "report-only", gate)
    return pass_result(spec.name, spec.role, list(scenarios), gate)


def a_run(
    ungated: PassResult,
    gated: PassResult | None = None,
    *,
    regressions: Sequence[Regression] = (),
    notes: Sequence[str] = (),
    thresholds: Path | None = Path("datasets/thresholds.json"),
    top_k: int = 5,
    **fields: Any,
) -> RunResult:
    """A whole deterministic run of the reference system with these hand-built passes (placed as
    the measurement and the report-only gated pass, whatever gate they were built at),
    regressions and notes, and placeholder provenance; `fields` set other RunResult fields
    (`provenance`, `gated_baseline`, ...)."""
    passes = [ungated.model_copy(update={"name": MEASUREMENT, "role": "measurement"})]
    if gated is not None:
        passes.append(gated.model_copy(update={"name": GATED, "role": "report-only"}))
    placeholder = {
        "config": RunConfig(thresholds=thresholds),
        "evalkit_version": "0.1.0",
        "git": {"commit": None, "dirty": None},
        "python": "3.11",
        "platform": "Linux",
        "packages": {},
        "dataset_digest": "0" * 64,
        "system": {"system": "reference"},
        "embedder": None,
        "declaration": declaration_of(ReferenceSystem()),
    }
    return RunResult(
        **{
            "passes": tuple(passes),
            "mode": "deterministic",
            "generated_at": "2026-01-02T03:04:05+00:00",
            "top_k": top_k,
            "system": "reference",
            "provenance": placeholder,
            "regressions": list(regressions),
            "notes": list(notes),
            "latency": LatencyReport(overall=None, scenarios={}),
            **fields,
        }
    )
