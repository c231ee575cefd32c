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

from pydantic import Field, create_model

from evalkit.records import (
    DEFAULT_HALF_LIFE_DAYS,
    MAX_TOP_K,
    SENT_THOUGHT_FIELDS,
    Edge,
    GateCandidate,
    SearchResponse,
    Thought,
    hit_from_values,
)
from evalkit.shapes import hit_model_fields, thought_model_fields
from evalkit.validation import FrozenModel

MAX_BATCH = 10_000
"""The most thoughts or edges one request may carry."""


class ThoughtIn(
    create_model(  # type: ignore[misc]
        "_ThoughtInFields", __base__=FrozenModel, **thought_model_fields(exclude=["embedding"])
    )
):
    """One thought to add: every field of `evalkit.Thought` but `embedding` (the system embeds).
    `created_at` None = the server's now."""


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
    recency_half_life_days: float = Field(default=DEFAULT_HALF_LIFE_DAYS, gt=0.0)
    now: datetime
    query_id: str | None = None


class HitOut(create_model("_HitOutFields", __base__=FrozenModel, **hit_model_fields())):  # type: ignore[misc]
    """One hit: every field of `evalkit.Hit` (see it for each signal's meaning); only `id` is
    required."""


class CandidateOut(FrozenModel):
    """A row that reached the relevance gate (see `evalkit.records.GateCandidate`): `bm25` — the
    BM25 leg matched it; `similarity` — its vector-leg similarity, None when that leg missed it."""

    id: str
    bm25: bool = False
    similarity: float | None = None


class SearchOut(FrozenModel):
    """A search result; without a relevance gate leave the counts at 0 and `dropped_ids` and
    `gate_candidates` empty. `gate_candidates` (optional) lets `evalkit sweep` re-apply the gate
    at other values without searching again."""

    hits: list[HitOut]
    candidates: int = 0
    filtered_out: int = 0
    min_relevance: float = 0.0
    dropped_ids: list[str] = Field(default_factory=list)
    gate_candidates: list[CandidateOut] = Field(default_factory=list)


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
        thoughts=[ThoughtIn(**{name: getattr(t, name) for name in SENT_THOUGHT_FIELDS}) for t in thoughts]
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
    hits = tuple(hit_from_values(h.model_dump()) for h in body.hits)
    return SearchResponse(
        hits=hits,
        candidates=body.candidates,
        filtered_out=body.filtered_out,
        min_relevance=body.min_relevance,
        dropped_ids=tuple(body.dropped_ids),
        gate_candidates=tuple(GateCandidate(**c.model_dump()) for c in body.gate_candidates),
    )
