"""Scenario data model: what analysts write in a suite's `scenarios/*.yaml|json` and importers produce.

These are pydantic models (frozen, extra="forbid") because they cross a file boundary. They
validate the shape of one scenario; cross-references (dangling ids, duplicates across files)
are checked by `evalkit.scenarios.loading`, which reports every problem with file, scenario and field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

from evalkit.records import MAX_TOP_K, EdgeType, Status
from evalkit.systems.capabilities import Capability

BUILTIN_CATEGORIES: tuple[str, ...] = (
    "explicit-fact",
    "multi-hop",
    "temporal",
    "supersession",
    "contradiction",
    "consolidation",
    "project-scope",
    "retrieval-quality",
    "no-match",
)
"""The categories of a suite that declares none (no suite.yaml beside its scenarios); the built-in
suite declares exactly these. Importers (BEIR, LoCoMo) use their own."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ThoughtSpec(_Frozen):
    """A thought to seed. `created_at` is an ISO-8601 datetime or a relative offset such as
    `-30d`, `-12h`, `-90m` (resolved against one clock per run); None means the run's clock.

    `distractor: true` marks one of a scenario's thoughts as a distractor: it is seeded like the
    scenario's other thoughts (in file order, before the shared distractors) but, like a shared
    distractor, it is not one of the scenario's own thoughts that `no_relevant` forbids. The flag
    means nothing in the shared distractors file (they are distractors anyway).
    """

    id: str = Field(min_length=1)
    content: str
    project: str = "default"
    status: Status = "active"
    created_at: str | datetime | None = None
    is_cluster: bool = False
    is_global: bool = False
    importance: float = Field(default=1.0, ge=0.0, le=1.0)
    distractor: bool = False


class EdgeSpec(_Frozen):
    """An edge to seed, after all thoughts."""

    source: str
    target: str
    type: EdgeType = "related"


class RankBefore(_Frozen):
    """`before` must be retrieved and rank above `after` (a missing `after` is fine)."""

    before: str
    after: str


class QuerySpec(_Frozen):
    """One labelled query.

    `relevant` lists relevant ids; `grades` optionally gives graded relevance (id -> grade >= 1,
    default 1 for every relevant id) for graded metrics such as nDCG. `id` and `category` are
    optional labels (benchmarks set them: BEIR query ids, LoCoMo question categories).
    `include_global` (with `project`) also searches global thoughts of other projects.
    `min_relevance` pins the relevance gate this query is asked with in every pass, the measured
    (ungated) pass included, so a scenario can assert what the gate must keep; None = the pass's own gate
    (0 in the ungated pass).
    `min_recall` / `min_hit_rate` are absolute floors of this query's recall and hit (the
    metrics at its top_k): below one, the query has an assertion error, with or without a
    baseline (`evalkit.harness.floors`). A floor needs relevant ids (without them both metrics are
    0 by definition).
    """

    query: str
    relevant: list[str] = Field(default_factory=list)
    grades: dict[str, int] = Field(default_factory=dict)
    id: str | None = None
    category: str | None = None
    top_k: int | None = Field(default=None, ge=1, le=MAX_TOP_K)
    project: str | None = None
    include_global: bool = False
    min_relevance: float | None = Field(default=None, ge=0.0, le=1.0)
    forbid: list[str] = Field(default_factory=list)
    rank_before: RankBefore | None = None
    no_relevant: bool = False
    expect_no_strong_match: bool = False
    recency_weight: float | None = Field(default=None, ge=0.0, le=1.0)
    recency_half_life_days: float | None = Field(default=None, gt=0.0)
    min_recall: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    min_hit_rate: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _floors_need_relevant_ids(self) -> QuerySpec:
        for name in ("min_recall", "min_hit_rate"):
            if getattr(self, name) is not None and not self.relevant:
                raise ValueError(
                    f"{name} is set but the query lists no relevant ids (its recall and hit rate are 0 by "
                    "definition); list the relevant ids or drop the floor"
                )
        return self


class UpdateSpec(_Frozen):
    """A thought's new content and/or status (at least one). The system replaces the content in
    every index it keeps (the reference store re-embeds it and re-indexes its text); the id, the
    project, the date and the edges stay."""

    id: str = Field(min_length=1)
    content: str | None = None
    status: Status | None = None

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateSpec:
        if self.content is None and self.status is None:
            raise ValueError("an update changes `content`, `status` or both; give at least one")
        return self


class AddSpec(_Frozen):
    """More thoughts (then edges) seeded between queries, as the initial seeding seeds them."""

    thoughts: list[ThoughtSpec] = Field(default_factory=list)
    edges: list[EdgeSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _adds_something(self) -> AddSpec:
        if not self.thoughts and not self.edges:
            raise ValueError("an add step lists `thoughts`, `edges` or both; give at least one")
        return self


LintRule = Literal[
    "small-corpus", "unreachable-id", "forbid-out-of-reach", "no-shared-word", "duplicate-content",
    "id-collision",
]  # fmt: skip
"""The rules of `evalkit lint` (`evalkit.scenarios.lint`), by code."""


class LintAllowance(_Frozen):
    """A scenario's `lint:` key: the lint rules whose findings in this scenario are expected by
    design (`allow`: rule codes, each once) and why (`reason`, required: it is shown wherever the
    acknowledged findings are). `evalkit lint` then lists those findings as acknowledged, not as
    findings (`--strict` passes, `run` does not warn); other rules still report. It changes
    nothing else: the scenario runs and is scored the same."""

    allow: list[LintRule] = Field(min_length=1)
    reason: str

    @model_validator(mode="before")
    @classmethod
    def _a_mapping(cls, data: object) -> object:
        if not isinstance(data, dict | LintAllowance):
            raise ValueError(
                "`lint` is a mapping: lint: {allow: [RULE, ...], reason: why the scenario means it}"
            )
        return data

    @model_validator(mode="after")
    def _explained_once(self) -> LintAllowance:
        if not self.reason.strip():
            raise ValueError("`reason` is blank; say why the scenario means what these rules flag")
        twice = sorted({code for code in self.allow if self.allow.count(code) > 1})
        if twice:
            raise ValueError(f"`allow` lists {', '.join(twice)} more than once; list each rule once")
        return self


OPERATIONS: tuple[str, ...] = ("delete", "update", "add")
"""The operations a step may hold, one per step."""


class StepSpec(_Frozen):
    """One operation on the memory between queries: exactly one of `delete` (ids to forget),
    `update` (an id's new content or status) or `add` (more thoughts or edges), applied after the
    scenario's query number `after_query` (1-based; 0 = after seeding, before the first query).

    Steps run in file order; steps with the same `after_query` run one after the other. Every
    query then sees the memory as the steps before it left it, in every pass. A step after the
    last query (`after_query` equal to the number of queries) is an error: nothing would see it.
    """

    after_query: StrictInt = Field(ge=0)  # `after_query: true` ran as after query 1
    delete: list[str] | None = Field(default=None, min_length=1)
    update: UpdateSpec | None = None
    add: AddSpec | None = None

    @model_validator(mode="after")
    def _one_operation(self) -> StepSpec:
        given = [name for name in OPERATIONS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a step holds exactly one of {', '.join(OPERATIONS)}"
                + (f" (this one holds {', '.join(given)}); split it into one step each" if given else "")
            )
        return self

    @property
    def operation(self) -> str:
        """The step's operation: "delete", "update" or "add"."""
        return next(name for name in OPERATIONS if getattr(self, name) is not None)


def stable_query_id(scenario: str, index: int, query_id: str | None) -> str:
    """The id a query is known by outside evalkit (frames, run files, TREC exports, replay
    systems, the HTTP `query_id`): its own `id` when it has one (benchmarks: BEIR query ids,
    LoCoMo `conv-26/q3`, LongMemEval question ids), else `<scenario>#<n>` with `n` the query's
    number from 1 (`index` is its 0-based position: the built-in suite's second temporal query is
    `temporal#2`) — the number every message and table shows. Unique within a suite as long as
    explicit ids are (scenario names are unique). Earlier versions used
    `<scenario>/<0-based index>`; `legacy_query_id` gives that form, so a run file using it is
    told the new id instead of "not a query of the suite"."""
    return query_id if query_id is not None else f"{scenario}#{index + 1}"


def legacy_query_id(scenario: str, index: int) -> str:
    """The stable id earlier versions gave an unnamed query: `<scenario>/<0-based index>`."""
    return f"{scenario}/{index}"


class Scenario(_Frozen):
    """A small labelled world: thoughts, edges and queries, seeded into a fresh store.

    `distractors` appends the shared distractor thoughts; `distractors_created_at` (any
    `created_at` form, e.g. `-60d`) re-dates every one of them for this scenario only, so a
    recency probe can date them like its stale thought. None keeps each distractor's own date.
    `requires` lists capabilities the scenario needs beyond those derived from its options and
    assertions (see `evalkit.scenarios.requirements`); a system lacking one gets not_applicable.
    `min_recall` / `min_hit_rate` are absolute floors of the scenario's mean recall and hit rate
    over its queries: below one, the scenario fails, with or without a baseline
    (`evalkit.harness.floors`; each query may also carry its own).
    `steps` delete, update or add thoughts between queries (`StepSpec`); a scenario with a delete
    step needs the `deletion` capability, one with an update step `update`.
    `lint` acknowledges lint rules whose findings the scenario means (`LintAllowance`).
    """

    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    category: str
    description: str = ""
    outcome: Literal["pass", "xfail"] = "pass"
    measure_only: bool = False
    distractors: bool = True
    distractors_created_at: str | datetime | None = None
    requires: list[Capability] = Field(default_factory=list)
    thoughts: list[ThoughtSpec]
    edges: list[EdgeSpec] = Field(default_factory=list)
    queries: list[QuerySpec] = Field(min_length=1)
    steps: list[StepSpec] = Field(default_factory=list)
    min_recall: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    min_hit_rate: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    lint: LintAllowance | None = None

    def steps_before(self, index: int) -> list[StepSpec]:
        """The steps applied just before query `index` (0-based), i.e. those with
        `after_query == index`, in file order."""
        return [step for step in self.steps if step.after_query == index]
