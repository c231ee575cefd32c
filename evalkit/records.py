"""Core records shared by the store, the harness and any other memory system under test.

`Thought` and `Edge` are what gets seeded; `Hit` and `SearchResponse` are what a search returns.
They are frozen slotted dataclasses: cheap to build in hot loops, impossible to mutate by accident.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from typing import Any, Literal, get_args, get_origin, get_type_hints

MAX_TOP_K = 1000
"""The most rows one search returns (SPEC §1.3 clamps top_k to [1, MAX_TOP_K]); also the cap of
every over-fetch, candidate pool, run top_k and benchmark cutoff."""

EdgeType = Literal[
    "related",
    "parent",
    "develops",
    "replaces",
    "cluster",
    "references",
    "depends_on",
    "contradicts",
    "supports",
]
"""An edge type. `replaces` is directed (source supersedes target), `contradicts` is symmetric,
`cluster` goes from a cluster thought to a member."""

EDGE_TYPES: tuple[str, ...] = get_args(EdgeType)
"""Every edge type a store accepts."""

Status = Literal["active", "draft", "archived"]
STATUSES: tuple[str, ...] = get_args(Status)
"""Every thought status a store accepts."""

Standing = Literal["current", "contradicted", "superseded"]
STANDINGS: tuple[str, ...] = get_args(Standing)
"""Every standing a hit may carry."""

MatchSource = Literal["vector", "bm25"]
MATCH_SOURCES: tuple[str, ...] = get_args(MatchSource)
"""The legs a hit may be matched by, in the order `match_source` lists them."""


DEFAULT_HALF_LIFE_DAYS = 30.0
"""The recency half-life (days) of a search that does not give one (SPEC §1.3): the default of
the store, the protocol's wire shapes, the MCP tool and the runner."""


def _about(description: str, *, enum: tuple[str, ...] = (), **constraints: float | int) -> dict[str, Any]:
    """A thought field's one-line `description`, the values it takes (`enum`, documented in the
    wire's OpenAPI document) and its value constraints (pydantic's `ge`, `le`, `min_length`), for
    the shapes that validate it at a boundary (`evalkit.shapes`); the dataclass itself checks
    none of them."""
    return {"description": description, "enum": enum, "constraints": constraints}


@dataclass(frozen=True, slots=True)
class Thought:
    """One stored memory. `created_at` None means "now" at insertion time (UTC).

    `embedding` None means the store's embedder computes it from `content`.

    These fields are the one declaration of a thought: the HTTP/MCP wire shape
    (`evalkit.systems.http.wire.ThoughtIn`, every field but `embedding`), the MCP mapping's thought
    names and the seeding of scenario thoughts derive from them, and a test checks the scenario
    model's `ThoughtSpec` against them. A field's `_about` bounds are checked where thoughts cross a
    boundary (wire, scenario files).
    """

    id: str = field(metadata=_about("the thought's id, unique in its memory; hits name it", min_length=1))
    content: str = field(metadata=_about("the text the system indexes and embeds"))
    project: str = field(
        default="default",
        metadata=_about("its project; a search filtered to a project sees only that project's thoughts"),
    )
    status: str = field(
        default="active",
        metadata=_about(
            "its lifecycle status (stored; the harness's searches do not filter on it)", enum=STATUSES
        ),
    )
    created_at: datetime | None = field(
        default=None,
        metadata=_about(
            "when it was written (ISO-8601 with a timezone); null = the system's now; recency ages from it"
        ),
    )
    is_cluster: bool = field(
        default=False,
        metadata=_about("a cluster (summary) thought; `cluster` edges go from it to its members"),
    )
    is_global: bool = field(
        default=False,
        metadata=_about("returned across projects to a search filtered to a project with `include_global`"),
    )
    importance: float = field(
        default=1.0, metadata=_about("0..1 (stored; the reference store does not rank by it)", ge=0.0, le=1.0)
    )
    embedding: tuple[float, ...] | None = field(
        default=None, metadata=_about("its vector (None: the store's embedder embeds `content`; never sent)")
    )


THOUGHT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Thought))
"""Every field of a thought, in declaration order."""

SENT_THOUGHT_FIELDS: tuple[str, ...] = tuple(name for name in THOUGHT_FIELDS if name != "embedding")
"""The fields of a thought that are sent to a system (the system embeds `content` itself)."""


@dataclass(frozen=True, slots=True)
class Edge:
    """A typed link between two thoughts, unique on (source, target, type)."""

    source: str
    target: str
    type: str = "related"


HitRole = Literal["core", "signal"]
"""`core`: what any memory system can give for a retrieved row (its id, rank, relevance score,
confidence and standing); `signal`: a named score or label one system computes (the reference
store's vector similarity, BM25 score, fusion and recency scores)."""


def _declare(role: HitRole, description: str, *, reported: bool = True, joined: str | None = None) -> Any:
    """The declaration of one `Hit` field (dataclass field metadata, read into `HIT_FIELDS`)."""
    return {"hit": (role, description, reported, joined)}


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved thought with the signals its system computed for it.

    Only `id` is required: another memory system fills the signals it has and leaves the rest at
    their defaults. `rank` 0 means "not given": the harness numbers hits by their position.
    `similarity`/`distance` are None when the vector leg did not return the row; `bm25_score`
    is None when BM25 did not match it. `recency_score`/`final_score` are None unless the search
    used a positive recency weight. `match_source` is a subset of ("vector", "bm25") in that order.
    `relevance` is None for systems without a relevance score; `low_confidence` is None for
    systems that report no confidence signal. The reference store fills every field.

    The fields below are the one declaration of a hit (read as `HIT_FIELDS`): the HTTP/MCP wire
    shape (`evalkit.systems.http.wire.HitOut`), the report's `HitRecord`, the run-file reader, the
    MCP mapping's hit names, the harness's finiteness checks and the hits DataFrame's columns
    all derive from it, in this order (the report's key order). Adding a signal is one line
    here (plus the system that computes it). A field that is not `reported` travels on the
    wire but is not kept in the report (it is derived from a reported one or is bulky text).
    """

    id: str = field(metadata=_declare("core", "the thought's id, as given to add_thoughts"))
    content: str = field(default="", metadata=_declare("core", "the thought's text", reported=False))
    project: str = field(
        default="default", metadata=_declare("core", "the thought's project", reported=False)
    )
    rank: int = field(
        default=0,
        metadata=_declare("core", "1-based position in the ranking; 0 = numbered by list position"),
    )
    similarity: float | None = field(
        default=None,
        metadata=_declare("signal", "vector-leg similarity, 1 - cosine distance (None: not returned)"),
    )
    relevance: float | None = field(
        default=None,
        metadata=_declare(
            "core",
            "the system's relevance score, higher = more relevant (None: it has none); the ranking is "
            "the hits' order, not this score; the reference store's lies in [0, 1], 1 = first in every leg",
        ),
    )
    low_confidence: bool | None = field(
        default=None,
        metadata=_declare("core", "the system judges the match weak (None: no confidence signal)"),
    )
    match_source: tuple[MatchSource, ...] = field(
        default=(), metadata=_declare("signal", "the legs that matched it, of vector, bm25", joined="+")
    )
    standing: Standing = field(
        default="current",
        metadata=_declare(
            "core",
            "current; contradicted (a `contradicts` edge touches it); "
            "superseded (a `replaces` edge targets it)",
        ),
    )
    superseded_by: tuple[str, ...] = field(
        default=(), metadata=_declare("core", "ids of the thoughts that replace it")
    )
    contradicted_by: tuple[str, ...] = field(
        default=(), metadata=_declare("core", "ids of the thoughts that contradict it")
    )
    bm25_score: float | None = field(
        default=None, metadata=_declare("signal", "-bm25() of the BM25 leg (None: BM25 did not match it)")
    )
    rrf_score: float | None = field(default=None, metadata=_declare("signal", "reciprocal-rank-fusion score"))
    recency_score: float | None = field(
        default=None, metadata=_declare("signal", "recency decay 0.5^(age/half-life) (None: recency off)")
    )
    final_score: float | None = field(
        default=None, metadata=_declare("signal", "relevance + weight * recency decay (None: recency off)")
    )
    distance: float | None = field(
        default=None,
        metadata=_declare("signal", "vector-leg cosine distance (None: not returned)", reported=False),
    )


@dataclass(frozen=True, slots=True)
class HitField:
    """One declared field of `Hit`: its `name`, its Python `annotation` (the resolved type),
    its `default` (`REQUIRED` for `id`), its `role`, a one-line `description`, whether the report
    keeps it (`reported`) and, for a set of labels, the separator a DataFrame joins them with
    (`joined`, None = the value as it is). `sequence` fields are tuples in a `Hit` and lists in
    JSON."""

    name: str
    annotation: Any
    default: Any
    role: HitRole
    description: str
    reported: bool
    joined: str | None

    @property
    def sequence(self) -> bool:
        return get_origin(self.annotation) is tuple

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


REQUIRED: Any = MISSING
"""The `default` of a declared field that has none (`HitField.required`)."""


def _hit_fields() -> tuple[HitField, ...]:
    hints = get_type_hints(Hit)
    return tuple(HitField(f.name, hints[f.name], f.default, *f.metadata["hit"]) for f in fields(Hit))


HIT_FIELDS: tuple[HitField, ...] = _hit_fields()
"""The declaration of every `Hit` field, in order (see `Hit`)."""

REPORTED_HIT_FIELDS: tuple[HitField, ...] = tuple(f for f in HIT_FIELDS if f.reported)
"""The hit fields a report keeps, in the report's order."""


_SEQUENCES = frozenset(f.name for f in HIT_FIELDS if f.sequence)


def hit_from_values(values: Mapping[str, Any]) -> Hit:
    """A `Hit` from plain values (JSON: lists for the sequence fields, which become tuples);
    absent fields take their defaults. TypeError for a name that is not a hit field."""
    plain: dict[str, Any] = {k: tuple(v) if k in _SEQUENCES else v for k, v in values.items()}
    return Hit(**plain)


def reported_values(hit: Hit) -> dict[str, Any]:
    """The reported fields of `hit` as plain values (lists for the sequence fields), in order."""
    values = {f.name: getattr(hit, f.name) for f in REPORTED_HIT_FIELDS}
    return {name: list(v) if name in _SEQUENCES else v for name, v in values.items()}


TIE_TOLERANCE = 1e-9
"""Two ranking scores tie when they differ by at most this, relative to the larger (or absolutely
below 1e-12): the same score computed in another order or carried through JSON still ties."""


def ranking_score(hit: Hit) -> float | None:
    """The score `hit` was ranked by, as far as its fields say: the recency-combined
    `final_score` when the system gave one, else its `relevance`, else its vector `similarity`;
    None when the hit carries none of them (its ties cannot be judged)."""
    for value in (hit.final_score, hit.relevance, hit.similarity):
        if value is not None:
            return value
    return None


def scores_tie(first: float | None, second: float | None) -> bool:
    """Whether two ranking scores are equal within `TIE_TOLERANCE` (None ties with nothing)."""
    if first is None or second is None:
        return False
    return math.isclose(first, second, rel_tol=TIE_TOLERANCE, abs_tol=1e-12)


@dataclass(frozen=True, slots=True)
class GateCandidate:
    """A row that reached the relevance gate, with the signals the gate reads (SPEC §1.3 steps
    7–8): `bm25` — the BM25 leg matched it; `similarity` — its vector-leg similarity (None when the
    vector leg did not return it). Which rows a gate keeps is the system's rule: a system that
    declares the `regate` capability gates them by `evalkit.systems.declaration.REGATE_RULE`."""

    id: str
    bm25: bool
    similarity: float | None


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """The result of one search call.

    `candidates` counts rows that reached the relevance gate and `filtered_out` the rows it
    removed (both 0 when no gate ran); `min_relevance` is the gate value actually used (0 = none).
    `dropped_ids` names the rows the gate removed, in pipeline order (len == filtered_out).
    `gate_candidates` lists every row that reached the gate, in pipeline order, with the signals
    the gate reads, so the gate can be re-applied at another value without searching again
    (empty when no gate ran, or when a system does not report them).
    `cut_tied` says whether the best row the top_k cut left out ties with the last row returned
    (the same standing and a tying ranking score, `scores_tie`), so that which of them made the
    top_k was the system's tie-break: None when the system does not say, False when nothing was
    left out.
    """

    hits: tuple[Hit, ...] = field(default_factory=tuple)
    candidates: int = 0
    filtered_out: int = 0
    min_relevance: float = 0.0
    dropped_ids: tuple[str, ...] = ()
    gate_candidates: tuple[GateCandidate, ...] = ()
    cut_tied: bool | None = None

    @property
    def ids(self) -> list[str]:
        """Retrieved ids in rank order."""
        return [h.id for h in self.hits]
