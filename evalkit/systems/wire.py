"""The JSON shapes evalkit's HTTP contract and MCP server exchange, and their conversion to and
from the core records (one definition for the server, the HTTP client and the MCP tools).

Everything a scenario can ask is here: thoughts with every field of `Thought` (dates as ISO-8601
with a timezone), edges, and a search with every query option the harness uses. A response hit
needs only `id`; every other field is optional (see `Hit`). Request batches are bounded by
`MAX_BATCH` (a longer list is a 422 error from the server), a search's query by
`MAX_QUERY_CHARS` and `MAX_QUERY_TERMS` (so that no single search can hold the server for long:
the BM25 leg's cost grows faster than its number of terms).

Every shape is a `WireModel`: strict types (no silent coercion: `"relevance": true`, `"0.5"`,
`"rank": "1"` or `"low_confidence": "yes"` are errors, as they are from a Python adapter; an
integer is accepted for a float; dates are ISO-8601 strings), unknown keys are errors, and no
string may hold a lone UTF-16 surrogate (JSON can carry one as `"\\ud800"`, but it is not
Unicode text: SQLite cannot store it and a store would fail on it far from the cause).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from pydantic import ConfigDict, Field, create_model, field_validator, model_validator

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

MAX_QUERY_CHARS = 20_000
"""The longest search query (characters) the contract carries; a longer one is a 422."""

MAX_QUERY_TERMS = 1_000
"""The most whitespace-separated terms a search query may hold (a 422 beyond). At this bound a
search over the reference store takes about 0.2 s; at 16,000 terms it took 5 s and at 128,000
terms 35 s (the BM25 leg ORs every term)."""

_SURROGATE = re.compile(r"[\ud800-\udfff]")

IsoDatetime = Annotated[datetime, Field(strict=False)]
"""A datetime that arrives as an ISO-8601 string (the one lax type of the strict wire models)."""


def _surrogate_path(data: Any) -> str | None:
    """The path (`a.0.b`) of the first string in `data` (keys included) holding a lone
    surrogate, or None. Iterative, so a deeply nested value cannot exhaust the stack."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return path or "(value)"
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return f"{path}.{key!a}".lstrip(".")
                stack.append((f"{path}.{key}".lstrip("."), item))
        elif isinstance(value, list | tuple):
            stack.extend((f"{path}.{i}".lstrip("."), item) for i, item in enumerate(value))
    return None


class WireModel(FrozenModel):
    """A shape of the contract: strict types, unknown keys forbidden, no lone surrogates (see
    the module docstring)."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode="before")
    @classmethod
    def _no_surrogates(cls, data: Any) -> Any:
        where = _surrogate_path(data)
        if where is not None:
            raise ValueError(f"{where} holds a lone UTF-16 surrogate (not Unicode text); send valid UTF-8")
        return data


class ThoughtIn(
    create_model(  # type: ignore[misc]
        "_ThoughtInFields",
        __base__=WireModel,
        **thought_model_fields(exclude=["embedding"], types={datetime: IsoDatetime}),
    )
):
    """One thought to add: every field of `evalkit.Thought` but `embedding` (the system embeds).
    `created_at` None = the server's now."""


class ThoughtsIn(WireModel):
    thoughts: list[ThoughtIn] = Field(max_length=MAX_BATCH)


class EdgeIn(WireModel):
    source: str
    target: str
    type: str = "related"


class EdgesIn(WireModel):
    edges: list[EdgeIn] = Field(max_length=MAX_BATCH)


class SearchIn(WireModel):
    """One search: the options of `ScenarioMemory.search`. `min_relevance` None = the system's
    default gate, 0 = none; `now` is the run's clock; `query_id` the query's stable id (a service
    that replays recorded rankings looks them up by it; one that searches by text ignores it)."""

    query: str = Field(max_length=MAX_QUERY_CHARS)
    top_k: int = Field(ge=1, le=MAX_TOP_K)
    project: str | None = None
    include_global: bool = False
    min_relevance: float | None = Field(default=None, ge=0.0, le=1.0)
    recency_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    recency_half_life_days: float = Field(default=DEFAULT_HALF_LIFE_DAYS, gt=0.0)
    now: IsoDatetime
    query_id: str | None = None

    @field_validator("query")
    @classmethod
    def _few_terms(cls, query: str) -> str:
        terms = len(query.split())
        if terms > MAX_QUERY_TERMS:
            raise ValueError(
                f"the query has {terms} terms, over the {MAX_QUERY_TERMS} a search may hold; "
                "send a shorter query"
            )
        return query


class HitOut(create_model("_HitOutFields", __base__=WireModel, **hit_model_fields())):  # type: ignore[misc]
    """One hit: every field of `evalkit.Hit` (see it for each signal's meaning); only `id` is
    required."""


class CandidateOut(WireModel):
    """A row that reached the relevance gate (see `evalkit.records.GateCandidate`): `bm25` — the
    BM25 leg matched it; `similarity` — its vector-leg similarity, None when that leg missed it."""

    id: str
    bm25: bool = False
    similarity: float | None = None


class SearchOut(WireModel):
    """A search result; without a relevance gate leave the counts at 0 and `dropped_ids` and
    `gate_candidates` empty. `gate_candidates` (optional) lets `evalkit sweep` re-apply the gate
    at other values without searching again."""

    hits: list[HitOut]
    candidates: int = 0
    filtered_out: int = 0
    min_relevance: float = 0.0
    dropped_ids: list[str] = Field(default_factory=list)
    gate_candidates: list[CandidateOut] = Field(default_factory=list)
    cut_tied: bool | None = None
    """Optional: whether the best row the top_k cut left out ties with the last hit returned
    (null: not said); the report records which queries are decided by ties."""


class SystemInfo(WireModel):
    """What a server says about its system: name, capabilities, and a description for the report."""

    name: str
    capabilities: list[str]
    describe: dict[str, Any] = Field(default_factory=dict)


class NamespaceOut(WireModel):
    namespace: str


class AddedOut(WireModel):
    added: int


class FieldErrorOut(WireModel):
    """One problem of a request that does not match its shape: where (`loc`), what (`msg`)."""

    loc: list[str | int]
    msg: str
    type: str


class ErrorOut(WireModel):
    """Every error reply (400, 401, 404, 408, 413, 422, 500, 503): `detail` is the reason, or for
    a body that does not match its shape (422) one entry per problem."""

    detail: str | list[FieldErrorOut]


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
    """A SearchResponse as the wire shape (lax: the record's tuples become lists)."""
    return SearchOut.model_validate(asdict(response), strict=False)


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
        cut_tied=body.cut_tied,
    )
