"""Core records shared by the store, the harness and any other memory system under test.

`Thought` and `Edge` are what gets seeded; `Hit` and `SearchResponse` are what a search returns.
They are frozen slotted dataclasses: cheap to build in hot loops, impossible to mutate by accident.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, get_args

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

MATCH_SOURCES: tuple[str, ...] = ("vector", "bm25")
"""The legs a hit may be matched by, in the order `match_source` lists them."""


@dataclass(frozen=True, slots=True)
class Thought:
    """One stored memory. `created_at` None means "now" at insertion time (UTC).

    `embedding` None means the store's embedder computes it from `content`.
    """

    id: str
    content: str
    project: str = "default"
    status: str = "active"
    created_at: datetime | None = None
    is_cluster: bool = False
    is_global: bool = False
    importance: float = 1.0
    embedding: tuple[float, ...] | None = None


@dataclass(frozen=True, slots=True)
class Edge:
    """A typed link between two thoughts, unique on (source, target, type)."""

    source: str
    target: str
    type: str = "related"


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
    """

    id: str
    content: str = ""
    project: str = "default"
    rank: int = 0
    similarity: float | None = None
    distance: float | None = None
    match_source: tuple[str, ...] = ()
    rrf_score: float | None = None
    bm25_score: float | None = None
    relevance: float | None = None
    low_confidence: bool | None = None
    standing: Standing = "current"
    superseded_by: tuple[str, ...] = ()
    contradicted_by: tuple[str, ...] = ()
    recency_score: float | None = None
    final_score: float | None = None


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """The result of one search call.

    `candidates` counts rows that reached the relevance gate and `filtered_out` the rows it
    removed (both 0 when no gate ran); `min_relevance` is the gate value actually used (0 = none).
    `dropped_ids` names the rows the gate removed, in pipeline order (len == filtered_out).
    """

    hits: tuple[Hit, ...] = field(default_factory=tuple)
    candidates: int = 0
    filtered_out: int = 0
    min_relevance: float = 0.0
    dropped_ids: tuple[str, ...] = ()

    @property
    def ids(self) -> list[str]:
        """Retrieved ids in rank order."""
        return [h.id for h in self.hits]
