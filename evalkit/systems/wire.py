"""The JSON shapes evalkit's HTTP contract and MCP server exchange, and their conversion to and
from the core records (one definition for the server, the HTTP client and the MCP tools).

Everything a scenario can ask is here: thoughts with every field of `Thought` (dates as ISO-8601
with a timezone), edges, and a search with every query option the harness uses. A response hit
needs only `id`; every other field is optional (see `Hit`). Request batches are bounded by
`MAX_BATCH` (a longer list is a 422 error from the server).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from pydantic import Field

from evalkit.records import MAX_TOP_K, Edge, Hit, SearchResponse, Thought
from evalkit.validation import FrozenModel

MAX_BATCH = 10_000
"""The most thoughts or edges one request may carry."""


class ThoughtIn(FrozenModel):
    """One thought to add. `created_at` None = the server's now."""

    id: str = Field(min_length=1)
    content: str
    project: str = "default"
    status: str = "active"
    created_at: datetime | None = None
    is_cluster: bool = False
    is_global: bool = False
    importance: float = Field(default=1.0, ge=0.0, le=1.0)


class ThoughtsIn(FrozenModel):
    thoughts: list[ThoughtIn] = Field(max_length=MAX_BATCH)


class EdgeIn(FrozenModel):
    source: str
    target: str
    type: str = "related"


class EdgesIn(FrozenModel):
    edges: list[EdgeIn] = Field(max_length=MAX_BATCH)


class SearchIn(FrozenModel):
    """One search: the options of `ScenarioMemory.search`. `min_relevance` None = the system's
    default gate, 0 = none; `now` is the run's clock; `query_id` the query's stable id (a service
    that replays recorded rankings looks them up by it; one that searches by text ignores it)."""

    query: str
    top_k: int = Field(ge=1, le=MAX_TOP_K)
    project: str | None = None
    include_global: bool = False
    min_relevance: float | None = Field(default=None, ge=0.0, le=1.0)
    recency_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    recency_half_life_days: float = Field(default=30.0, gt=0.0)
    now: datetime
    query_id: str | None = None


class HitOut(FrozenModel):
    """One hit: only `id` is required (see `evalkit.Hit` for each signal's meaning)."""

    id: str
    content: str = ""
    project: str = "default"
    rank: int = 0
    similarity: float | None = None
    distance: float | None = None
    match_source: list[str] = Field(default_factory=list)
    rrf_score: float | None = None
    bm25_score: float | None = None
    relevance: float | None = None
    low_confidence: bool | None = None
    standing: str = "current"
    superseded_by: list[str] = Field(default_factory=list)
    contradicted_by: list[str] = Field(default_factory=list)
    recency_score: float | None = None
    final_score: float | None = None


class SearchOut(FrozenModel):
    """A search result; without a relevance gate leave the counts at 0 and `dropped_ids` empty."""

    hits: list[HitOut]
    candidates: int = 0
    filtered_out: int = 0
    min_relevance: float = 0.0
    dropped_ids: list[str] = Field(default_factory=list)


class SystemInfo(FrozenModel):
    """What a server says about its system: name, capabilities, and a description for the report."""

    name: str
    capabilities: list[str]
    describe: dict[str, Any] = Field(default_factory=dict)


class NamespaceOut(FrozenModel):
    namespace: str


class AddedOut(FrozenModel):
    added: int


def thoughts_in(thoughts: list[Thought]) -> ThoughtsIn:
    """Thoughts as a request body (embeddings are not sent: the server's system embeds)."""
    return ThoughtsIn(
        thoughts=[ThoughtIn(**{k: v for k, v in asdict(t).items() if k != "embedding"}) for t in thoughts]
    )


def thoughts_out(body: ThoughtsIn) -> list[Thought]:
    return [Thought(**t.model_dump()) for t in body.thoughts]


def edges_in(edges: list[Edge]) -> EdgesIn:
    return EdgesIn(edges=[EdgeIn(**asdict(e)) for e in edges])


def edges_out(body: EdgesIn) -> list[Edge]:
    return [Edge(**e.model_dump()) for e in body.edges]


def search_out(response: SearchResponse) -> SearchOut:
    """A SearchResponse as the wire shape."""
    return SearchOut.model_validate(asdict(response))


def search_response(body: SearchOut) -> SearchResponse:
    """The wire shape as a SearchResponse (lists become tuples)."""
    hits = tuple(
        Hit(
            **{
                **h.model_dump(),
                "match_source": tuple(h.match_source),
                "superseded_by": tuple(h.superseded_by),
                "contradicted_by": tuple(h.contradicted_by),
            }
        )
        for h in body.hits
    )
    return SearchResponse(
        hits=hits,
        candidates=body.candidates,
        filtered_out=body.filtered_out,
        min_relevance=body.min_relevance,
        dropped_ids=tuple(body.dropped_ids),
    )
