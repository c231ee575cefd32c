"""Every result of a run, as pydantic models that are also the JSON report's schema.

One `PassResult` per pass (ungated, gated); the `RunResult` is the ungated pass plus run metadata
(the `RunConfig` and the rest of the provenance), regressions, the gated pass nested under `gated`
and, when mutation testing ran with the run, its `DetectionPower`. Field names are the JSON keys
and, flattened, the DataFrame columns (`evalkit.views.frames`). `schema_version` changes when a
field changes meaning or shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, ValidationError, create_model, model_serializer

from evalkit.errors import ReportError
from evalkit.files import write_atomic
from evalkit.harness.provenance import Provenance
from evalkit.metrics import judgements
from evalkit.records import REPORTED_HIT_FIELDS, GateCandidate
from evalkit.shapes import hit_model_fields
from evalkit.validation import FrozenModel as _Model

SCHEMA_VERSION = 2
"""2: provenance is a typed record holding the run's `RunConfig`; `detection` added; the top-level
`relevance_gate` summarises the gated pass (SPEC §5), the measurement pass's pinned gates moved to
`pinned_gates`."""


class HitRecord(
    create_model(  # type: ignore[misc]
        "_HitRecordFields",
        __base__=_Model,
        **hit_model_fields(
            REPORTED_HIT_FIELDS,
            required=("id", "rank"),
            after={"rank": {"relevant": (bool, Field(description="the query labels it relevant"))}},
        ),
    )
):
    """One retrieved row with its signals: the reported fields of `evalkit.Hit`, in its order,
    with `relevant` (whether the query labels it relevant) after `rank`. `id`, `rank` and
    `relevant` are required; a signal absent from an older report takes its default."""


class DroppedRecord(_Model):
    """A row the relevance gate removed from one query's candidates."""

    id: str
    relevant: bool


class CandidateRecord(_Model):
    """A row that reached the gated pass's relevance gate (`evalkit.records.GateCandidate`):
    its id, whether BM25 matched it and its vector similarity."""

    id: str
    bm25: bool
    similarity: float | None

    def candidate(self) -> GateCandidate:
        """The row as the gate's record (what a gate rule reads)."""
        return GateCandidate(self.id, self.bm25, self.similarity)


class QueryResult(_Model):
    """One query of one pass: what came back, its scores and its assertion errors. `grades`
    holds the query's graded judgements when it has any (BEIR qrels: id → grade, 0 and negative
    grades included; ids of `relevant` without a grade count 1); it is left out of the JSON when
    empty, so reports of ungraded suites keep their shape.

    `gate_candidates` (gated pass only): every row that reached the gate, in pipeline order, so
    that `evalkit.harness.sweep` can re-apply the gate at other values. None — and left out of
    the JSON — when not recorded: the ungated pass, queries that pin their own gate (they keep it
    in every pass), and systems that report no candidates.
    """

    index: int
    query: str
    query_id: str | None = None
    query_category: str | None = None
    project: str | None = None
    top_k: int
    relevant: list[str]
    grades: dict[str, int] = Field(default_factory=dict)
    retrieved: list[str]
    hits: list[HitRecord]
    metrics: dict[str, float]
    check_errors: list[str]
    candidates: int = 0
    dropped: list[DroppedRecord] = Field(default_factory=list)
    gate_candidates: list[CandidateRecord] | None = None

    @model_serializer(mode="wrap")
    def _omit_absent_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.grades:
            data.pop("grades", None)
        if self.gate_candidates is None:
            data.pop("gate_candidates", None)
        return data

    @property
    def qrels(self) -> dict[str, int]:
        """The judgements the metrics used (`evalkit.metrics.judgements`), as qrels files hold them."""
        return judgements(self.relevant, self.grades)


class Latency(_Model):
    """Search latency over `calls` search calls: median and 95th percentile, wall ms (numpy's
    linear-interpolation percentile). Reported, never gated."""

    calls: int
    p50_ms: float
    p95_ms: float


class LatencyReport(_Model):
    """Search latency of a run, over every search call of both passes: overall and per scenario
    (scenarios that were not applicable made no call and are absent). Kept apart from the passes
    because wall-clock times differ between otherwise identical runs."""

    overall: Latency | None
    scenarios: dict[str, Latency]


class Aggregate(_Model):
    """Mean metrics over `queries` queries."""

    queries: int
    metrics: dict[str, float]


class ScenarioResult(_Model):
    """One scenario of one pass. status: pass | fail | xfail | xpass | not_applicable (the system
    lacks a capability the scenario needs: nothing was seeded or asked, `queries` is empty, and
    `RunResult.not_applicable` says which capabilities were missing)."""

    name: str
    category: str
    outcome: Literal["pass", "xfail"]
    status: Literal["pass", "fail", "xfail", "xpass", "not_applicable"]
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
    """One reason a run fails CI. kind: assertion | metric | present (the ungated pass against
    its mode's baseline) | baseline (metric gating was off under `require_baseline`) |
    gated-metric | gated-present (the gated pass against its gated baseline, only when one was
    recorded for the run's mode, top_k and gate)."""

    kind: Literal["assertion", "metric", "present", "baseline", "gated-metric", "gated-present"]
    message: str
    scenario: str | None = None
    category: str | None = None
    metric: str | None = None
    actual: float | None = None
    threshold: float | None = None


class GatedBaselineRef(_Model):
    """The gated baseline a run's gated pass was gated on: its key and when it was recorded."""

    mode: str
    top_k: int
    min_relevance: float
    recorded_at: str


class MutationOutcome(_Model):
    """One catalogued mutation's suite run: the gating regressions it caused, most specific first
    (none = the mutation escaped). `control` marks the no-op that must NOT be caught."""

    mutation: str
    description: str
    control: bool
    regressions: list[Regression]

    @property
    def caught(self) -> bool:
        return bool(self.regressions)

    @property
    def expected(self) -> bool:
        """Caught for a real mutation, not caught for the control."""
        return self.caught != self.control


class DetectionPower(_Model):
    """The mutation suite's outcomes, in catalogue order: does the gate catch real search bugs?"""

    outcomes: list[MutationOutcome]

    @property
    def ok(self) -> bool:
        """True when every mutation was caught and no control was."""
        return all(o.expected for o in self.outcomes)


GATING_OFF = "metric gating OFF"
"""How every note that turns metric gating off begins (console, JSON notes, the report's verdict)."""


class RunResult(PassResult):
    """A whole run: the ungated pass (top level), its regressions, provenance, the gated pass and
    the detection power measured with the run (None when mutation testing did not run).

    As in the original service's report (SPEC §5), the top-level `relevance_gate` describes the
    report-only gated pass — the gate the service resolved (0.4 by default) and what it dropped —
    or is None when that pass was skipped. What the measurement pass's own per-query pinned gates
    (queries that set `min_relevance`) dropped is `pinned_gates`.

    `gated_baseline` names the gated baseline the gated pass was gated on (its regressions are of
    kinds `gated-metric`/`gated-present`); None — and left out of the JSON — when the gated pass
    was report-only.
    """

    relevance_gate: GateSummary | None  # type: ignore[assignment]
    pinned_gates: GateSummary
    schema_version: int = SCHEMA_VERSION
    mode: str
    generated_at: str
    top_k: int
    system: str
    provenance: Provenance
    regressions: list[Regression]
    notes: list[str] = Field(default_factory=list)
    gated: PassResult | None = None
    gated_baseline: GatedBaselineRef | None = None
    detection: DetectionPower | None = None
    latency: LatencyReport | None = None
    """None in reports written before latency was measured."""
    not_applicable: dict[str, list[str]] = Field(default_factory=dict)
    """Scenario name → the capabilities it needs that the system lacks (left out of the JSON
    when every scenario applied)."""

    @property
    def gated_pass_role(self) -> str:
        """ "report-only", or "gated on its baseline recorded <when>" (see `gated_baseline`)."""
        if self.gated_baseline is None:
            return "report-only"
        return f"gated on its baseline recorded {self.gated_baseline.recorded_at}"

    @property
    def metric_gating_off(self) -> str | None:
        """The note saying why metrics were not compared with a baseline (it starts with
        GATING_OFF), or None when they were — or when the run had no thresholds file to gate on by
        design (`RunConfig.thresholds` None: benchmarks)."""
        return next((note for note in self.notes if note.startswith(GATING_OFF)), None)

    def verdict(self) -> str:
        """The one-line verdict of a run without regressions: "No gating regressions." only when
        the metrics were compared with a baseline; otherwise the metric-gating-OFF note."""
        off = self.metric_gating_off
        return "No gating regressions." if off is None else f"{off} — no assertion regressions"


def write_result(result: RunResult, path: str | Path) -> Path:
    """Write the run as indented JSON, atomically (temp file in the same folder + rename).
    `detection` is left out when mutation testing did not run, `gated_baseline` when the gated
    pass was report-only, `not_applicable` when every scenario applied."""
    exclude = {name for name in ("detection", "gated_baseline") if getattr(result, name) is None}
    if not result.not_applicable:
        exclude.add("not_applicable")
    return write_atomic(path, result.model_dump_json(indent=2, exclude=exclude) + "\n")


def read_result(path: str | Path) -> RunResult:
    """Load a run written by `write_result`; a missing or invalid file raises ReportError."""
    source = Path(path)
    try:
        return RunResult.model_validate_json(source.read_bytes())
    except FileNotFoundError as exc:
        raise ReportError(f"report {source} does not exist; run `evalkit run --out {source}` first") from exc
    except ValidationError as exc:
        raise ReportError(
            f"report {source} is not an evalkit report of schema {SCHEMA_VERSION} "
            f"(re-run it with this evalkit version): {exc}"
        ) from exc
