"""Every result of a run, as pydantic models that are also the JSON report's schema.

One `PassResult` per pass, each with its name, role and relevance-gate summary; the `RunResult`
holds its passes (measurement first) plus run metadata (the `RunConfig` and the rest of the
provenance), regressions and, when mutation testing ran with the run, its `DetectionPower`. The
JSON report keeps the original service's shape (SPEC §5: the measurement pass at the top level,
the gated pass nested under `gated`), which `RunResult` writes and reads. Field names are the JSON
keys and, flattened, the DataFrame columns (`evalkit.views.frames`). Report files are read and
written by `evalkit.harness.report_file`, which brings older shapes up to this one first:
the models read the current shape only.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)

from evalkit.harness.provenance import Provenance
from evalkit.harness.repeats import Stability
from evalkit.harness.ties import TieRecord
from evalkit.harness.verdict import RunVerdict, SuiteStrength, degenerate_findings, judge, suite_strength
from evalkit.metrics import judgements
from evalkit.records import REPORTED_HIT_FIELDS, GateCandidate
from evalkit.shapes import hit_model_fields
from evalkit.validation import FrozenModel as _Model

SCHEMA_VERSION = 4
"""The version of the report shape these models write and read. It moves with every change of
the shape, with the migration from the previous version (`evalkit.harness.report_file.MIGRATIONS`,
which also lists what each version changed)."""


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
    `relevant` are required; a signal the system did not give takes its default."""


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


LeakKind = Literal["stale", "forbidden"]
"""The kinds of ids `QueryResult.leaked` names: stale (superseded or deleted) and forbidden."""


class QueryResult(_Model):
    """One query of one pass: what came back, its scores and its assertion errors. `grades`
    holds the query's graded judgements when it has any (BEIR qrels: id → grade, 0 and negative
    grades included; ids of `relevant` without a grade count 1); it is left out of the JSON when
    empty, so reports of ungraded suites keep their shape.

    `gate_candidates` (gated pass only): every row that reached the gate, in pipeline order, so
    that `evalkit.harness.sweep` can re-apply the gate at other values. None — and left out of
    the JSON — when not recorded: the ungated pass, queries that pin their own gate (they keep it
    in every pass), and systems that report no candidates.

    `ties` (`evalkit.harness.ties`): whether the result is decided by ties — the row below the
    top_k cut ties with the last hit, or a relevant id sits among tied hits. None — and left out
    of the JSON — when not known: systems whose hits carry no ranking score and that say nothing
    about their cut, and reports of version 2 written before ties were recorded.

    `behaviour`: the behaviour metrics that apply to this query (`evalkit.metrics.BEHAVIOUR`:
    stale-fact rate, contamination, duplicate rate@k, query sensitivity, abstention), for suites
    that ask for them; left out of the JSON when empty. `leaked`: the returned ids behind a
    non-zero stale-fact rate (`"stale"`: superseded or deleted) or contamination
    (`"forbidden"`), in rank order, for the same suites; a kind with no such id is left out, and
    the key is left out of the JSON when both are.
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
    ties: TieRecord | None = None
    behaviour: dict[str, float] = Field(default_factory=dict)
    leaked: dict[LeakKind, list[str]] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _omit_absent_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.behaviour:
            data.pop("behaviour", None)
        if not self.leaked:
            data.pop("leaked", None)
        if not self.grades:
            data.pop("grades", None)
        if self.gate_candidates is None:
            data.pop("gate_candidates", None)
        if self.ties is None:
            data.pop("ties", None)
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
    (scenarios that were not applicable made no call and are absent), and apart the first call
    of each scenario (`first`: a cold start — a cache, a connection, a lazily built index — shows
    there) and every other call (`steady`). With a scenario cut into shards across workers, only
    its first shard's first call counts as first. `searchable`: for a system that indexes later,
    the wait from the end of each memory's seeding until it found the last thought seeded
    (`evalkit.harness.readiness`; None for any other system). Kept apart from the passes because wall-clock
    times differ between otherwise identical runs."""

    overall: Latency | None
    scenarios: dict[str, Latency]
    first: Latency | None = None
    steady: Latency | None = None
    searchable: Latency | None = None


class Aggregate(_Model):
    """Mean metrics over `queries` queries. `behaviour`: the mean of each behaviour metric
    (`evalkit.metrics.BEHAVIOUR`) over the queries it applies to, `behaviour_queries` how many
    those are; both left out of the JSON when empty (suites that do not ask for them)."""

    queries: int
    metrics: dict[str, float]
    behaviour: dict[str, float] = Field(default_factory=dict)
    behaviour_queries: dict[str, int] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _omit_no_behaviour(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.behaviour:
            data.pop("behaviour", None)
            data.pop("behaviour_queries", None)
        return data


class ScenarioResult(_Model):
    """One scenario of one pass. status: pass | fail | xfail | xpass | not_applicable (the system
    lacks a capability the scenario needs: nothing was seeded or asked, `queries` is empty, and
    `RunResult.not_applicable` says which capabilities were missing). `floor_errors`: the
    scenario's own floors (`min_recall`, `min_hit_rate` on its means, `evalkit.harness.floors`)
    that its means missed; left out of the JSON when empty, so reports keep their shape."""

    name: str
    category: str
    outcome: Literal["pass", "xfail"]
    status: Literal["pass", "fail", "xfail", "xpass", "not_applicable"]
    measure_only: bool
    metrics: Aggregate
    queries: list[QueryResult]
    floor_errors: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_no_floor_errors(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.floor_errors:
            data.pop("floor_errors", None)
        return data


class GateSummary(_Model):
    """What the relevance gate did in one pass (all zeros for the ungated pass)."""

    min_relevance: float
    candidates: int
    dropped_rows: int
    queries_with_drops: int
    queries: int


PassRole = Literal["measurement", "report-only", "own-baseline", "re-gated"]
"""What a pass is for: `measurement` (min_relevance 0, what baselines and regressions use),
`report-only` (asked under the relevance gate, reported beside the measurement, never gated),
`own-baseline` (the relevance-gated pass, gated against its own gated baseline) and `re-gated`
(the gated pass at another gate value: re-gated from its recorded candidates by
`evalkit.harness.sweep.regate_pass`, or asked by one more `PassSpec` of the runner's plan — the two
agree). Only the measurement is ever compared with the mode's baseline."""

MEASUREMENT = "ungated"
"""The measurement pass's name (the top level of the report; the frames' `pass` value)."""

GATED = "gated"
"""The relevance-gated pass's name (role report-only or own-baseline; `gated` in the report)."""


class PassResult(_Model):
    """One sweep over all scenarios: its `name` ("ungated", "gated", "gated@0.6", ...), its
    `role`, per-scenario results, the overall and per-category means, and what its relevance gate
    did (for the measurement pass: the gates its queries pin themselves).

    `name` and `role` are not written inside the pass's JSON: the report places each pass by its
    role (SPEC §5, see `RunResult`), and reading it gives them back."""

    name: str = Field(exclude=True)
    role: PassRole = Field(exclude=True)
    scenarios: list[ScenarioResult]
    overall: Aggregate
    categories: dict[str, Aggregate]
    relevance_gate: GateSummary

    @property
    def relevance_gated(self) -> bool:
        """True for a pass asked under the relevance gate (every role but the measurement)."""
        return self.role != "measurement"


class Regression(_Model):
    """One reason a run fails CI. kind: assertion (an assertion or floor of a failing scenario) |
    metric | present (the ungated pass against its mode's baseline) | baseline (the baseline check was
    off under `require_baseline`) | degenerate (recall 0 on every query with relevant ids) |
    gated-metric | gated-present (the gated pass against its gated baseline, only when one was
    recorded for the run's mode, top_k and gate) | mutation (an injected search bug the suite did
    not catch, or a false alarm of the no-op control: only when the run was asked to fail on
    escaped mutations, `RunResult.with_detection`)."""

    kind: Literal[
        "assertion", "metric", "present", "baseline", "degenerate", "gated-metric", "gated-present",
        "mutation",
    ]  # fmt: skip
    message: str
    scenario: str | None = None
    category: str | None = None
    metric: str | None = None
    actual: float | None = None
    threshold: float | None = None


def degenerate_regressions(measurement: PassResult) -> list[Regression]:
    """A regression (kind `degenerate`) when recall is 0 on every query with relevant ids of the
    scenarios expected to pass (xfail ones left out): a run that retrieved nothing relevant where
    it should is never PASS, even against a baseline recorded at 0.
    The other degenerate findings are listed in the verdict, not regressions."""
    return [
        Regression(kind="degenerate", message=d.message)
        for d in degenerate_findings(measurement)
        if d.kind == "recall-zero"
    ]


class GatedBaselineRef(_Model):
    """The gated baseline a run's gated pass was checked against: its key and when it was recorded."""

    mode: str
    top_k: int
    min_relevance: float
    recorded_at: str


class MutationOutcome(_Model):
    """One catalogued mutation's suite run: the regressions it caused, most specific first
    (none = the mutation escaped). `control` marks the no-op that must NOT be caught. `hint`
    says what a suite needs to catch the mutation (for the control: what its false alarm means;
    "" when it has none)."""

    mutation: str
    description: str
    control: bool
    regressions: list[Regression]
    hint: str

    @property
    def caught(self) -> bool:
        return bool(self.regressions)

    @property
    def expected(self) -> bool:
        """Caught for a real mutation, not caught for the control."""
        return self.caught != self.control


class DetectionPower(_Model):
    """The mutation suite's outcomes, in catalogue order: does the gate catch real search bugs?
    `checked_against` says what the mutants were compared with: a baseline recorded in the thresholds
    file, or (when none of the reference store on this suite is recorded there) the suite's own
    unmutated run; None when not recorded (a version-2 report written before it was)."""

    outcomes: list[MutationOutcome]
    checked_against: str | None

    @property
    def ok(self) -> bool:
        """True when every mutation was caught and no control was."""
        return all(o.expected for o in self.outcomes)

    @property
    def injected(self) -> list[MutationOutcome]:
        """The real mutations (the control left out)."""
        return [o for o in self.outcomes if not o.control]

    @property
    def caught(self) -> int:
        """How many real mutations were caught."""
        return sum(o.caught for o in self.injected)

    @property
    def escaped(self) -> list[MutationOutcome]:
        """The real mutations no regression caught, in catalogue order."""
        return [o for o in self.injected if not o.caught]

    @property
    def false_alarms(self) -> list[MutationOutcome]:
        """The controls that were caught (the gate failed an unchanged search)."""
        return [o for o in self.outcomes if o.control and o.caught]

    def regressions(self) -> list[Regression]:
        """One regression (kind `mutation`) per escaped mutation and per false alarm of the
        control: what a run saved with this detection power adds under `fail_on_escaped` (the
        hints are in the verdict's suite strength)."""
        found = [
            Regression(
                kind="mutation",
                message=f"suite strength: mutation {o.mutation} escaped, no regression caught it "
                f"({o.description})",
            )
            for o in self.escaped
        ]
        found += [
            Regression(
                kind="mutation",
                message=f"suite strength: the no-op control {o.mutation} was caught, a false alarm "
                f"({o.regressions[0].message})",
            )
            for o in self.false_alarms
        ]
        return found


class PerturbationCurve(_Model):
    """How the harness metrics move as a suite's memory grows (`evalkit.perturbation_curve`,
    `evalkit run --perturb KIND=N,N,…`): the perturbation's `kind` ("distractors": N pool distractors
    per scenario; "stale-repeats": K copies of each superseded thought), the `seed` of its draw,
    the `values` measured (in the order given; 0 is the unperturbed suite) and `series`: per
    system name, per harness metric, the measurement pass's overall mean at each value, in the
    order of `values`. Each point is a run of the perturbed suite, never compared with a baseline.
    Saved under the report's optional `perturbation_curve` key, left out when none was measured."""

    kind: Literal["distractors", "stale-repeats"]
    seed: int = Field(ge=0)
    values: list[Annotated[int, Field(ge=0)]] = Field(min_length=1)
    series: dict[str, dict[str, list[float]]] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_point_per_value(self) -> PerturbationCurve:
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"a perturbation curve measures each value once; got {self.values}")
        for system, metrics in self.series.items():
            for metric, points in metrics.items():
                if len(points) != len(self.values):
                    raise ValueError(
                        f"perturbation curve {system!r} {metric}: {len(points)} points for "
                        f"{len(self.values)} values"
                    )
        return self


BASELINE_CHECK_OFF = "baseline check OFF"
"""How every note that turns the baseline check off begins (console, JSON notes, the report's verdict)."""

_ASSERTIONS_STILL_COUNT = " (assertions still count)"
"""The closing words of the note (stripped by `baseline_check_reason`)."""


def baseline_check_reason(note: str) -> str:
    """Why the baseline check was off, from its note: the note without its prefix and its
    closing "(assertions still count)"; a note without them comes back stripped."""
    reason = note.removeprefix(BASELINE_CHECK_OFF).removeprefix(":").strip()
    return reason.removesuffix(_ASSERTIONS_STILL_COUNT)


_RELEVANCE_GATED: tuple[PassRole, ...] = ("report-only", "own-baseline")
"""The roles of the relevance-gated pass (named GATED, at most one per run)."""

_PASS_KEYS = ("scenarios", "overall", "categories", "relevance_gate")
"""A pass's keys in the report, in the order they are written."""

_BEFORE_GATED = (
    "schema_version", "mode", "generated_at", "top_k", "system", "provenance", "regressions", "notes",
)  # fmt: skip
"""The run's keys written before the nested `gated` pass (SPEC §5 order); the rest follow it."""


class RunResult(_Model):
    """A whole run: its passes, its regressions, provenance and the detection power measured with
    the run (None when mutation testing did not run).

    `passes`, in plan order (`evalkit.harness.runner.pass_plan`): the measurement pass (named
    MEASUREMENT, role measurement) first; then, unless it was skipped, the relevance-gated pass
    (named GATED, role report-only — or own-baseline when `gated_baseline` names the gated baseline
    it was checked against, its regressions being of kinds `gated-metric`/`gated-present`); then any
    re-gated passes (role re-gated, each with its own name) added with `with_pass`. Look a pass
    up with `measurement`, `gated` or `pass_named`; `scenarios`, `overall` and `categories` are
    the measurement's.

    The report JSON keeps the original service's shape (SPEC §5, `_to_report`): the top level is
    the measurement pass's scenarios, overall and categories; the top-level `relevance_gate` is
    the relevance-gated pass's summary (the gate the service resolved, 0.4 by default, and what it
    dropped) or null when that pass was skipped, while what the measurement's own per-query pinned
    gates (queries that set `min_relevance`) dropped is `pinned_gates`; the relevance-gated pass
    is nested under `gated` in the same shape (null when skipped). Re-gated passes, for which the
    original report has no place, are written under `regated` (a list of passes with their
    `name`), left out when there are none — so every report of a plain run keeps the exact shape.
    Reading takes that shape back (`_from_report`); `passes` may also be given directly.
    """

    passes: tuple[PassResult, ...]
    schema_version: int = SCHEMA_VERSION
    mode: str
    generated_at: str
    top_k: int
    system: str
    provenance: Provenance
    regressions: list[Regression]
    notes: list[str] = Field(default_factory=list)
    gated_baseline: GatedBaselineRef | None = None
    detection: DetectionPower | None = None
    latency: LatencyReport
    not_applicable: dict[str, list[str]] = Field(default_factory=dict)
    """Scenario name → the capabilities it needs that the system lacks (left out of the JSON
    when every scenario applied)."""
    stability: Stability | None = None
    """What `--repeat N` showed (`evalkit.harness.repeats`): the queries whose ids or order
    differed between the N runs, of which this is the first. None — and left out of the JSON —
    for a run that was not repeated."""
    perturbation_curve: PerturbationCurve | None = None
    """The perturbation curve measured with the run (`evalkit run --perturb KIND=N,N,…`), None — and
    left out of the JSON — when none was; never part of the verdict."""
    verdict: RunVerdict | None = None
    """PASS, FAIL or NOT COMPARED with its reasons and the degenerate retrieval found
    (`evalkit.harness.verdict`). Never None on a built result: computed from the run when it is
    not given (a new run); a report's stored verdict is kept as written."""

    @field_validator("schema_version")
    @classmethod
    def _current_version(cls, version: int) -> int:
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"the models read reports of schema {SCHEMA_VERSION} only, got {version}: read report "
                "files with evalkit.harness.report_file, which migrates older ones"
            )
        return version

    @model_validator(mode="before")
    @classmethod
    def _from_report(cls, data: Any) -> Any:
        """The report's shape (SPEC §5) as `passes`; data that already has `passes` is kept."""
        if not isinstance(data, dict) or "passes" in data:
            return data
        return _report_passes(data)

    @model_validator(mode="after")
    def _with_verdict(self) -> RunResult:
        """The verdict computed when none was given. Set on the frozen instance while it is being
        validated (the one place it may be), so `RunResult(...)` and `model_validate` both work."""
        if self.verdict is None:
            object.__setattr__(self, "verdict", self.judged())
        return self

    def judged(self) -> RunVerdict:
        """The verdict computed from this run's regressions, notes, configuration, measurement
        pass, detection power and, for a repeated run, stability (`evalkit.harness.verdict.judge`),
        whatever `verdict` holds."""
        return judge(
            self.regressions,
            self.metrics_not_compared,
            degenerate_findings(self.measurement),
            None if self.detection is None else suite_strength(self.detection),
            stability=self.stability,
        )

    def with_detection(self, detection: DetectionPower, fail_on_escaped: bool = False) -> RunResult:
        """This run with `detection` (the mutation suite run with it) saved, its verdict judged
        again so that it states the suite strength. With `fail_on_escaped`, each escaped mutation
        and each false alarm of the control is also a regression (kind `mutation`), so the run
        fails (`evalkit run --mutants fail`)."""
        added = detection.regressions() if fail_on_escaped else []
        data = {**dict(self), "detection": detection, "verdict": None}
        return RunResult.model_validate({**data, "regressions": [*self.regressions, *added]})

    @property
    def outcome(self) -> RunVerdict:
        """The run's verdict (`verdict`, computed when absent)."""
        return self.verdict if self.verdict is not None else self.judged()

    @property
    def strength(self) -> SuiteStrength | None:
        """The verdict's suite strength; None when the mutation suite did not run with the run."""
        return self.outcome.strength

    @model_validator(mode="after")
    def _check_passes(self) -> RunResult:
        """The passes are in the documented order, names unique, and the relevance-gated pass's
        role agrees with `gated_baseline`."""
        roles = [p.role for p in self.passes]
        names = [p.name for p in self.passes]
        if not self.passes or self.passes[0].role != "measurement" or self.passes[0].name != MEASUREMENT:
            raise ValueError(f"a run's first pass is its measurement, named {MEASUREMENT!r}; got {names}")
        rest = self.passes[1:]
        gated = [p for p in rest if p.role in _RELEVANCE_GATED]
        if gated and (rest[0] is not gated[0] or len(gated) > 1 or gated[0].name != GATED):
            raise ValueError(f"a run has at most one relevance-gated pass, {GATED!r}, second; got {names}")
        if roles.count("measurement") != 1 or len(set(names)) != len(names):
            raise ValueError(f"a run has one measurement pass and unique pass names; got {names}")
        if (self.gated_baseline is not None) != ("own-baseline" in roles):
            raise ValueError(
                "the relevance-gated pass has role own-baseline exactly when `gated_baseline` names "
                f"its baseline; got roles {roles} and gated_baseline {self.gated_baseline}"
            )
        return self

    @model_serializer(mode="wrap")
    def _to_report(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The report's shape (SPEC §5; see the class docstring), keys in the original order."""
        data: dict[str, Any] = handler(self)
        dumped = dict(zip((p.name for p in self.passes), data.pop("passes"), strict=True))
        top = dumped[MEASUREMENT]
        gated = dumped.get(GATED)
        report = {key: top[key] for key in _PASS_KEYS[:-1]}
        report["relevance_gate"] = None if gated is None else gated["relevance_gate"]
        report["pinned_gates"] = top["relevance_gate"]
        report.update({key: data.pop(key) for key in _BEFORE_GATED if key in data})
        report["gated"] = gated
        report.update(data)
        regated = [{"name": p.name, **dumped[p.name]} for p in self.passes if p.role == "re-gated"]
        if regated:
            report["regated"] = regated
        return report

    @property
    def measurement(self) -> PassResult:
        """The measurement pass (min_relevance 0): what baselines and regressions use."""
        return self.passes[0]

    @property
    def gated(self) -> PassResult | None:
        """The relevance-gated pass (report-only or own-baseline), or None when it was skipped."""
        return next((p for p in self.passes if p.role in _RELEVANCE_GATED), None)

    def pass_named(self, name: str) -> PassResult | None:
        """The pass called `name` ("ungated", "gated", a re-gated pass's name), or None."""
        return next((p for p in self.passes if p.name == name), None)

    def with_pass(self, one: PassResult) -> RunResult:
        """This run with `one` in place of the pass of the same name, or added after the others
        (a re-gated pass of a sweep). ValidationError when the passes would break the order or
        role rules above (a second relevance-gated pass, a re-gated pass named "gated", ...)."""
        kept = [one if p.name == one.name else p for p in self.passes]
        passes = kept if one.name in {p.name for p in self.passes} else [*kept, one]
        return RunResult.model_validate({**dict(self), "passes": tuple(passes)})

    def with_curve(self, curve: PerturbationCurve) -> RunResult:
        """This run with the perturbation curve measured beside it saved (the verdict is kept:
        a curve is never compared with a baseline)."""
        return RunResult.model_validate({**dict(self), "perturbation_curve": curve})

    def with_stability(self, stability: Stability) -> RunResult:
        """This run (the first of repeated runs) with what the repeats showed, its verdict
        computed again (the reason naming the unstable queries added)."""
        return RunResult.model_validate({**dict(self), "stability": stability, "verdict": None})

    @property
    def scenarios(self) -> list[ScenarioResult]:
        """The measurement pass's scenarios."""
        return self.measurement.scenarios

    @property
    def overall(self) -> Aggregate:
        """The measurement pass's overall means."""
        return self.measurement.overall

    @property
    def categories(self) -> dict[str, Aggregate]:
        """The measurement pass's per-category means."""
        return self.measurement.categories

    @property
    def relevance_gate(self) -> GateSummary | None:
        """The relevance-gated pass's gate summary (the report's top-level `relevance_gate`), or
        None when that pass was skipped."""
        gated = self.gated
        return None if gated is None else gated.relevance_gate

    @property
    def pinned_gates(self) -> GateSummary:
        """What the measurement pass's own per-query pinned gates dropped (`pinned_gates`)."""
        return self.measurement.relevance_gate

    @property
    def gated_pass_role(self) -> str:
        """ "report-only", or "checked against its baseline recorded <when>" (see `gated_baseline`)."""
        if self.gated_baseline is None:
            return "report-only"
        return f"checked against its baseline recorded {self.gated_baseline.recorded_at}"

    @property
    def baseline_check_off(self) -> str | None:
        """The note saying why metrics were not compared with a baseline (it starts with
        BASELINE_CHECK_OFF), or None when they were — or when the run had no thresholds file to
        compare with by design (`RunConfig.thresholds` None: benchmarks)."""
        return next((note for note in self.notes if note.startswith(BASELINE_CHECK_OFF)), None)

    @property
    def metrics_not_compared(self) -> str | None:
        """Why the metrics were not compared with a baseline (the baseline-check-OFF note without
        its prefix, or that the run was configured without a thresholds file), None when they
        were. A run for which this is not None is never PASS."""
        off = self.baseline_check_off
        if off is not None:
            return baseline_check_reason(off)
        if self.provenance.config.thresholds is None:
            return "the run was configured without a thresholds file (no baselines)"
        return None

    def verdict_line(self) -> str:
        """The one-line summary of a run without regressions: "No gating regressions." only when
        the metrics were compared with a baseline; otherwise the baseline-check-OFF note (or, for
        a run configured without a thresholds file, that no baseline was asked for)."""
        off = self.baseline_check_off
        if off is not None:
            return f"{off} — no assertion regressions"
        if self.provenance.config.thresholds is None:
            return f"{BASELINE_CHECK_OFF}: no baselines (no thresholds file) — no assertion regressions"
        return "No gating regressions."


def _report_passes(report: dict[str, Any]) -> dict[str, Any]:
    """A report's fields (SPEC §5 shape) with its passes gathered under `passes`: the top level
    as the measurement (its gate summary is `pinned_gates`), `gated` as the relevance-gated pass
    (role own-baseline when `gated_baseline` is set), `regated` as re-gated passes. The top-level
    `relevance_gate` repeats the gated pass's summary: it is required, must be null without a
    gated pass and equal to the gated pass's summary otherwise (ValueError)."""
    data = dict(report)
    measurement = {key: data.pop(key) for key in _PASS_KEYS[:-1] if key in data}
    if "pinned_gates" in data:
        measurement["relevance_gate"] = data.pop("pinned_gates")
    if "relevance_gate" not in data:
        raise ValueError("relevance_gate: required (the gated pass's summary, or null without one)")
    summary, gated = data.pop("relevance_gate"), data.pop("gated", None)
    passes: list[Any] = [{"name": MEASUREMENT, "role": "measurement", **measurement}]
    if gated is None and summary is not None:
        raise ValueError("relevance_gate must be null when the report has no gated pass (`gated` null)")
    if gated is not None:
        role = "report-only" if data.get("gated_baseline") is None else "own-baseline"
        fields = dict(gated)
        if _summary(fields.get("relevance_gate")) != _summary(summary):
            raise ValueError("relevance_gate must repeat gated.relevance_gate, the gated pass's summary")
        passes.append({**fields, "name": GATED, "role": role})
    passes.extend({**dict(p), "role": "re-gated"} for p in data.pop("regated", []))
    return {"passes": passes, **data}


def _summary(value: Any) -> Any:
    """`value` as a GateSummary when it is one (a dict or the model), else as given."""
    try:
        return GateSummary.model_validate(value)
    except ValidationError:
        return value
