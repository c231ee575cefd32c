"""The report: every result of a run, as pydantic models that are also the JSON file's schema.

One `PassResult` per pass (ungated, gated); the `Report` is the ungated pass plus run metadata,
regressions and the gated pass nested under `gated`. Field names are the JSON keys and, flattened,
the DataFrame columns (`evalkit.frames`). `schema_version` changes when a field changes meaning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit.errors import ReportError
from evalkit.files import write_atomic

SCHEMA_VERSION = 1

HARNESS_METRICS: tuple[str, ...] = ("recall", "precision", "mrr", "hit_rate")
"""The per-query metrics of SPEC §3.3, always present; benchmarks add `name@k` metrics."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HitRecord(_Model):
    """One retrieved row with its signals; `relevant` is whether the query labels it relevant."""

    id: str
    rank: int
    relevant: bool
    similarity: float | None
    relevance: float
    low_confidence: bool | None
    match_source: list[str]
    standing: str
    superseded_by: list[str] = []
    contradicted_by: list[str] = []
    bm25_score: float | None = None
    rrf_score: float | None = None
    recency_score: float | None = None
    final_score: float | None = None


class DroppedRecord(_Model):
    """A row the relevance gate removed from one query's candidates."""

    id: str
    relevant: bool


class QueryResult(_Model):
    """One query of one pass: what came back, its scores and its assertion errors."""

    index: int
    query: str
    query_id: str | None = None
    query_category: str | None = None
    project: str | None = None
    top_k: int
    relevant: list[str]
    retrieved: list[str]
    hits: list[HitRecord]
    metrics: dict[str, float]
    check_errors: list[str]
    candidates: int = 0
    dropped: list[DroppedRecord] = []


class Aggregate(_Model):
    """Mean metrics over `queries` queries."""

    queries: int
    metrics: dict[str, float]


class ScenarioResult(_Model):
    """One scenario of one pass. status: pass | fail | xfail | xpass."""

    name: str
    category: str
    outcome: Literal["pass", "xfail"]
    status: Literal["pass", "fail", "xfail", "xpass"]
    measure_only: bool
    metrics: Aggregate
    queries: list[QueryResult]


class GateSummary(_Model):
    """What the relevance gate did in one pass (all zeros for the ungated pass)."""

    min_relevance: float
    candidates: int
    dropped_rows: int
    queries_with_drops: int
    queries: int


class PassResult(_Model):
    """One sweep over all scenarios."""

    scenarios: list[ScenarioResult]
    overall: Aggregate
    categories: dict[str, Aggregate]
    relevance_gate: GateSummary


class Regression(_Model):
    """One reason a run fails CI. kind: assertion | metric | present."""

    kind: Literal["assertion", "metric", "present"]
    message: str
    scenario: str | None = None
    category: str | None = None
    metric: str | None = None
    actual: float | None = None
    threshold: float | None = None


class Report(PassResult):
    """A whole run: the ungated pass (top level), its regressions, provenance and the gated pass."""

    schema_version: int = SCHEMA_VERSION
    mode: str
    generated_at: str
    top_k: int
    system: str
    provenance: dict[str, Any]
    regressions: list[Regression]
    notes: list[str] = []
    gated: PassResult | None = None


def write_report(report: Report, path: str | Path) -> Path:
    """Write the report as indented JSON, atomically (temp file in the same folder + rename)."""
    return write_atomic(path, report.model_dump_json(indent=2) + "\n")


def read_report(path: str | Path) -> Report:
    """Load a report written by `write_report`; a missing or invalid file raises ReportError."""
    source = Path(path)
    try:
        return Report.model_validate_json(source.read_bytes())
    except FileNotFoundError as exc:
        raise ReportError(f"report {source} does not exist; run `evalkit run --out {source}` first") from exc
    except ValidationError as exc:
        raise ReportError(
            f"report {source} is not an evalkit report (schema {SCHEMA_VERSION}): {exc}"
        ) from exc
