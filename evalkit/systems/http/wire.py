"""The JSON shapes evalkit's HTTP contract and MCP server exchange, and their conversion to and
from the core records (one definition for the server, the HTTP client and the MCP tools).

Every field and option carries a description and every label set an enum, so the OpenAPI
document `evalkit serve` publishes is the contract's reference (the meaning of `project: null`,
`include_global`, `min_relevance` null vs 0, the ranking order, the supersession the harness
expects: `SUPERSESSION_RULE`). Everything a scenario can ask is here: thoughts with every field
of `Thought` (dates as ISO-8601 with a timezone), edges, and a search with every query option
the harness uses, alone or several in one request (`SearchBatchIn`, at most `MAX_SEARCH_BATCH`),
and a namespace created with its seed and the previous one's drop (`NamespaceIn`).
A response hit needs only `id`; every other field is optional (see `Hit`). Request batches are
bounded by `MAX_BATCH` (a longer list is a 422 error from the server), a search's query by
`MAX_QUERY_CHARS` and `MAX_QUERY_TERMS` (so that no single search can hold the server for long:
the BM25 leg's cost grows faster than its number of terms).

Every shape is a `WireModel`: strict types (no silent coercion: `"relevance": true`, `"0.5"`,
`"rank": "1"` or `"low_confidence": "yes"` are errors, as they are from a Python adapter; an
integer is accepted for a float; dates are ISO-8601 strings), unknown keys are errors (in
requests; the HTTP client drops a reply's unknown keys with one warning, see
`evalkit.systems.http.client`), and no string may hold a lone UTF-16 surrogate (JSON can carry
one as `"\\ud800"`, but it is not Unicode text: SQLite cannot store it and a store would fail on
it far from the cause).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import asdict
from datetime import datetime
from types import UnionType
from typing import Annotated, Any, NotRequired, Union, get_args, get_origin

from pydantic import (
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationInfo,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticSerializationError, to_json
from typing_extensions import TypedDict  # pydantic's own dependency; it needs this one before 3.12

from evalkit.records import (
    DEFAULT_HALF_LIFE_DAYS,
    EDGE_TYPES,
    HIT_FIELDS,
    MAX_TOP_K,
    SENT_THOUGHT_FIELDS,
    Edge,
    GateCandidate,
    SearchResponse,
    Thought,
    hit_from_values,
)
from evalkit.shapes import hit_model_fields, thought_model_fields
from evalkit.systems.base import MemorySystem, SearchOptions
from evalkit.systems.capabilities import CAPABILITIES, CAPABILITY_MEANINGS, declared_capabilities
from evalkit.validation import FrozenModel

MAX_BATCH = 10_000
"""The most thoughts or edges one request may carry."""

MAX_SEARCH_BATCH = 256
"""The most searches one `POST .../search/batch` request may carry (what `evalkit serve`
advertises in `/info`'s `search_batch`; a longer list is a 422)."""

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
    surrogate, or None. Iterative, so a deeply nested value cannot exhaust the stack. A first
    walk only gathers the strings (one regex over them all: building a path per value cost most
    of a request's validation); the paths are built only when a surrogate is there."""
    texts: list[str] = []
    pending: list[Any] = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            texts.extend(key for key in value if isinstance(key, str))
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            pending.extend(value)
    if not _SURROGATE.search("".join(texts)):
        return None
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


SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
"""Where a lone surrogate could hide in raw JSON: a `\\udXXX` escape, or the UTF-8-style bytes
of a surrogate (Python's json reads them with surrogatepass). A body without either holds none,
so its validation can skip the walk (`NO_SURROGATES`)."""

_WALKED: ContextVar[bool] = ContextVar("evalkit_wire_walked", default=False)
"""True while an enclosing wire model validates: it has walked the whole value already."""

NO_SURROGATES = "no_surrogates"
"""A validation-context key: `{NO_SURROGATES: True}` says the caller has made sure the data
holds no lone surrogate (e.g. raw JSON without a surrogate escape), so the walk is skipped."""


class WireModel(FrozenModel):
    """A shape of the contract: strict types, unknown keys forbidden, no lone surrogates (see
    the module docstring). The surrogate walk runs once per validated document: the outermost
    wire model walks the whole value, the models nested in it do not walk again."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode="wrap")
    @classmethod
    def _no_surrogates(cls, data: Any, handler: ModelWrapValidatorHandler[Any], info: ValidationInfo) -> Any:
        if _WALKED.get() or (info.context or {}).get(NO_SURROGATES):
            return handler(data)
        where = _surrogate_path(data)
        if where is not None:
            raise ValueError(f"{where} holds a lone UTF-16 surrogate (not Unicode text); send valid UTF-8")
        token = _WALKED.set(True)
        try:
            return handler(data)
        finally:
            _WALKED.reset(token)


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
    """Thoughts to add to a namespace, in order (at most `MAX_BATCH`)."""

    thoughts: list[ThoughtIn] = Field(
        max_length=MAX_BATCH,
        description=f"the thoughts to add (at most {MAX_BATCH}); ids are unique in a namespace",
    )


class EdgeIn(WireModel):
    """A typed link between two thoughts already added to the namespace."""

    source: str = Field(description="the id of the thought the edge starts at")
    target: str = Field(description="the id of the thought the edge points to")
    type: str = Field(
        default="related",
        description=(
            "the edge type. `replaces`: source supersedes target (the target is superseded, see "
            "SearchOut.hits); `contradicts`: symmetric, neither side wins; `cluster`: from a cluster "
            "thought to a member. An unknown type or id is a 422"
        ),
        json_schema_extra={"enum": list(EDGE_TYPES)},
    )


class EdgesIn(WireModel):
    """Edges to add to a namespace, in order (at most `MAX_BATCH`)."""

    edges: list[EdgeIn] = Field(max_length=MAX_BATCH, description=f"the edges to add (at most {MAX_BATCH})")


class NamespaceIn(WireModel):
    """The optional body of `POST /namespaces` on a server whose /info says `seeded_create`: the
    new memory is seeded with `thoughts`, then `edges`, in the same request (what a client would
    otherwise send as `POST .../thoughts` and `POST .../edges` right after creating it). All or
    nothing: when the system rejects a thought or an edge, the error is the reply and no
    namespace is left behind. On a server whose /info also says `drop_with_create`, `drop` names
    a namespace to drop first, in the same request (the client's previous scenario's: what it
    would otherwise send as `DELETE /namespaces/{ns}`); an unknown one is a 404 and nothing is
    created. `drop` is left out of the JSON when it is None, so a body without it is what a
    server from before the field accepts."""

    thoughts: list[ThoughtIn] = Field(
        default_factory=list,
        max_length=MAX_BATCH,
        description=f"thoughts to add first, in order (at most {MAX_BATCH}); ids are unique in a namespace",
    )
    edges: list[EdgeIn] = Field(
        default_factory=list,
        max_length=MAX_BATCH,
        description=f"edges to add after the thoughts, in order (at most {MAX_BATCH})",
    )
    drop: str | None = Field(
        default=None,
        max_length=200,
        description=(
            "a namespace to drop in the same request, before this one is created (its memory and "
            "files are gone, as after `DELETE /namespaces/{ns}`; only on a server whose /info says "
            "`drop_with_create`); an unknown namespace is a 404 and nothing is created. Absent or "
            "null: nothing is dropped"
        ),
    )

    @model_serializer(mode="wrap")
    def _without_null_drop(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("drop") is None:
            data.pop("drop", None)
        return data


class SearchIn(WireModel):
    """One search: the options of `ScenarioMemory.search`. `min_relevance` None = the system's
    default gate, 0 = none; `now` is the run's clock; `query_id` the query's stable id (a service
    that replays recorded rankings looks them up by it; one that searches by text ignores it)."""

    query: str = Field(
        max_length=MAX_QUERY_CHARS,
        description=(
            f"the question, as an agent would ask it (at most {MAX_QUERY_CHARS} characters and "
            f"{MAX_QUERY_TERMS} whitespace-separated terms)"
        ),
    )
    top_k: int = Field(
        ge=1, le=MAX_TOP_K, description="the most hits to return; fewer when fewer thoughts qualify"
    )
    project: str | None = Field(
        default=None,
        description=(
            "null = search every project; a name = only that project's thoughts (capability "
            "`projects`), plus the `is_global` thoughts of other projects when `include_global` is true"
        ),
    )
    include_global: bool = Field(
        default=False,
        description=(
            "with `project` set, also return thoughts marked `is_global` from any project (capability "
            "`global_thoughts`); without `project` every thought is searched anyway"
        ),
    )
    min_relevance: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description=(
            "the relevance gate. null = the system's own default gate (the reference store's is 0.4); "
            "0 = no gate: no row is dropped for being weak; a value in (0, 1] = drop the rows the system "
            "judges weaker than it (capability `relevance_gate`; the reference store keeps a row when "
            "BM25 matched it or its vector similarity is at least the value). The harness's measurement "
            "pass sends 0, its report-only gated pass null; report the value used in the reply's "
            "`min_relevance`"
        ),
    )
    recency_weight: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description=(
            "0 = rank by relevance alone; w > 0 = rank by relevance + w * 0.5^(age_days / "
            "recency_half_life_days), the age measured from `created_at` to `now` (capability `recency`)"
        ),
    )
    recency_half_life_days: float = Field(
        default=DEFAULT_HALF_LIFE_DAYS,
        gt=0.0,
        description="the age in days at which the recency bonus halves (used only with recency_weight > 0)",
    )
    now: IsoDatetime = Field(
        description=(
            "the run's clock (ISO-8601 with a timezone): recency ages are measured to it, and the "
            "relative dates of scenario files were resolved against it"
        )
    )
    query_id: str | None = Field(
        default=None,
        description=(
            "the query's stable id (`<scenario>#<n>` with n from 1, or the id the scenario gives it): "
            "a system that searches by text ignores it, one that replays recorded rankings looks them "
            "up by it"
        ),
    )

    def options(self) -> SearchOptions:
        """The search's options, as a served memory's `search` takes them."""
        return SearchOptions(**self.model_dump(exclude={"query"}))

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


class SearchBatchIn(WireModel):
    """Several searches of one namespace in one request (`POST .../search/batch`), answered in
    order, each as if it had been sent alone, one after the other."""

    searches: list[SearchIn] = Field(
        max_length=MAX_SEARCH_BATCH,
        description=(
            "the searches, answered in this order (at most the `search_batch` the server's /info "
            f"advertises; `evalkit serve` takes {MAX_SEARCH_BATCH})"
        ),
    )


class HitOut(create_model("_HitOutFields", __base__=WireModel, **hit_model_fields())):  # type: ignore[misc]
    """One hit: every field of `evalkit.Hit` (see it for each signal's meaning); only `id` is
    required."""


class CandidateOut(WireModel):
    """A row that reached the relevance gate (see `evalkit.records.GateCandidate`): `bm25` — the
    BM25 leg matched it; `similarity` — its vector-leg similarity, None when that leg missed it."""

    id: str = Field(description="the row's thought id")
    bm25: bool = Field(default=False, description="the BM25 leg matched it")
    similarity: float | None = Field(
        default=None, description="its vector-leg similarity (null: the vector leg did not return it)"
    )


SUPERSESSION_RULE = (
    "a thought that is the target of a `replaces` edge is superseded: with the `supersession` "
    "capability the search never returns it, and fetches enough candidates that `top_k` is still "
    "filled with current thoughts (the harness forbids superseded ids and expects the current one)"
)
"""What the harness expects of a system declaring `supersession` (the scenario category)."""

CONTRADICTION_RULE = (
    "thoughts joined by a `contradicts` edge are returned flagged (`contradicted_by`, `standing` "
    "contradicted) and ranked after the undisputed ones (capability `contradiction`)"
)
"""What the harness expects of a system declaring `contradiction`."""


class SearchOut(WireModel):
    """A search result; without a relevance gate leave the counts at 0 and `dropped_ids` and
    `gate_candidates` empty. `gate_candidates` (optional) lets `evalkit sweep` re-apply the gate
    at other values without searching again."""

    hits: list[HitOut] = Field(
        description=(
            "the best `top_k` thoughts, best first: the list order is the ranking (rank 1 first; "
            "`rank`, when given, must be 1, 2, ..., n), whatever the scores say; each id at most once, "
            "and only ids added to this namespace. Supersession: " + SUPERSESSION_RULE + ". "
            "Contradiction: " + CONTRADICTION_RULE
        )
    )
    candidates: int = Field(default=0, description="rows that reached the relevance gate (0: no gate ran)")
    filtered_out: int = Field(default=0, description="rows the gate removed (0: no gate ran)")
    min_relevance: float = Field(
        default=0.0,
        description="the gate value actually applied (0 = none; for a request's null, the system's default)",
    )
    dropped_ids: list[str] = Field(
        default_factory=list,
        description="ids of the rows the gate removed, in pipeline order (as many as filtered_out)",
    )
    gate_candidates: list[CandidateOut] = Field(
        default_factory=list,
        description=(
            "optional: every row that reached the gate, in pipeline order, with the signals the gate "
            "reads, so that `evalkit sweep` can re-apply it at other values (capability `regate`)"
        ),
    )
    cut_tied: bool | None = Field(
        default=None,
        description=(
            "optional: whether the best row the top_k cut left out ties with the last hit returned "
            "(the same standing and an equal ranking score), so that the system's tie-break chose "
            "between them; null: not said. The report records which queries are decided by ties"
        ),
    )


class SearchBatchOut(WireModel):
    """The results of a `SearchBatchIn`, one per search, in the order asked."""

    results: list[SearchOut] = Field(description="one result per search of the request, in its order")


class SystemInfo(WireModel):
    """What a server says about its system: name, capabilities, and a description for the report."""

    name: str = Field(
        min_length=1,
        description=(
            "the system's name: the report names the system by it, and baselines are recorded per "
            "name (keep it stable across runs; the URL is recorded separately)"
        ),
    )
    capabilities: list[str] = Field(
        description=(
            "what the system can do; scenarios needing a capability it lacks are reported not "
            "applicable (an unknown name is an error of the run, naming the known ones). "
            + "; ".join(f"`{name}`: {CAPABILITY_MEANINGS[name]}" for name in CAPABILITIES)
        ),
        json_schema_extra={"items": {"type": "string", "enum": list(CAPABILITIES)}},
    )
    describe: dict[str, Any] = Field(
        default_factory=dict, description="settings recorded in the report's provenance (JSON values)"
    )
    embedder: str | None = Field(
        default=None,
        description=(
            "the embedding model the service embeds with, by name (recorded in the report). A run of "
            "a service embeds with the service's model, not evalkit's: its mode is `system`, whatever "
            "it says here"
        ),
    )
    search_batch: int = Field(
        default=0,
        ge=0,
        description=(
            "the most searches `POST /namespaces/{ns}/search/batch` takes in one request; 0 (or "
            "absent) = the server has no batch endpoint, and the client sends one search per request"
        ),
    )
    seeded_create: bool = Field(
        default=False,
        description=(
            "true: `POST /namespaces` takes an optional NamespaceIn body (thoughts and edges) and seeds "
            "the new memory with it in the same request, so a client creates and seeds a scenario's "
            "memory in one round trip; false (or absent): it takes no body, and the client sends the "
            "thoughts and edges to `POST /namespaces/{ns}/thoughts` and `.../edges`"
        ),
    )
    drop_with_create: bool = Field(
        default=False,
        description=(
            "true (with `seeded_create`): `POST /namespaces` also takes NamespaceIn's `drop`, a "
            "namespace to drop in the same request before the new one is created, so a client drops "
            "a scenario's memory with the next scenario's creation instead of a `DELETE` of its own "
            "(the last one still goes as a `DELETE`); false (or absent): the client sends every "
            "drop as `DELETE /namespaces/{ns}` and waits for it"
        ),
    )


def system_info(system: MemorySystem, **contract: Any) -> SystemInfo:
    """What `evalkit serve` says about the system it serves (over HTTP, and over MCP): its name,
    capabilities and description, and its embedder — its `own_embedder`, else the `embedder` its
    `describe()` names (the reference store's) — with the contract's `contract` settings."""
    described = system.describe()
    named = described.get("embedder")
    return SystemInfo(
        name=system.name,
        capabilities=sorted(declared_capabilities(system)),
        describe=described,
        embedder=system.own_embedder or (named if isinstance(named, str) else None),
        **contract,
    )


class NamespaceOut(WireModel):
    """A fresh, empty, isolated memory."""

    namespace: str = Field(
        description="its id, used in the URLs of the namespace (letters, digits and . _ ~ -, at most 200)"
    )


class AddedOut(WireModel):
    """How many items a request added."""

    added: int = Field(description="the number of thoughts or edges added")


class FieldErrorOut(WireModel):
    """One problem of a request that does not match its shape: where (`loc`), what (`msg`)."""

    loc: list[str | int] = Field(
        description='the path to the problem, from `body` (e.g. ["body", "thoughts", 0, "id"])'
    )
    msg: str = Field(description="what is wrong, in words")
    type: str = Field(description="the kind of problem (pydantic's error type, e.g. `missing`)")


class ErrorOut(WireModel):
    """Every error reply (400, 401, 404, 408, 413, 422, 500, 503): `detail` is the reason, or for
    a body that does not match its shape (422) one entry per problem."""

    detail: str | list[FieldErrorOut] = Field(
        description=(
            "the reason, in words; for a body that does not match its shape (422), one entry per "
            "problem (the input is not echoed)"
        )
    )


_SCALARS = (bool, int, float, datetime, type(None))


def scalar_context(*rows: dict[str, Any]) -> dict[str, bool] | None:
    """The validation context of request `rows` built from evalkit's records: `{NO_SURROGATES:
    True}` when every value is a scalar and no string holds a lone surrogate (one regex over all
    the strings instead of the wire models' walk of every value, which built a path per value
    and cost more than the rest of the validation), else None: the walk runs and names the path."""
    texts = []
    for row in rows:
        for value in row.values():
            if isinstance(value, str):
                texts.append(value)
            elif not isinstance(value, _SCALARS):
                return None
    return None if _SURROGATE.search("".join(texts)) else {NO_SURROGATES: True}


def thoughts_in(thoughts: list[Thought]) -> ThoughtsIn:
    """Thoughts as a request body (embeddings are not sent: the server's system embeds)."""
    rows = [{name: getattr(t, name) for name in SENT_THOUGHT_FIELDS} for t in thoughts]
    context = scalar_context(*rows)
    items = [ThoughtIn.model_validate(row, context=context) for row in rows]
    return ThoughtsIn.model_validate({"thoughts": items}, context=context)


def thoughts_out(body: ThoughtsIn | NamespaceIn) -> list[Thought]:
    return [Thought(**t.model_dump()) for t in body.thoughts]


def edges_in(edges: list[Edge]) -> EdgesIn:
    rows = [asdict(e) for e in edges]
    context = scalar_context(*rows)
    return EdgesIn.model_validate(
        {"edges": [EdgeIn.model_validate(r, context=context) for r in rows]}, context=context
    )


def search_in(query: str, options: SearchOptions) -> SearchIn:
    """A search as a request body (`SearchIn` of `query` and `options`, see `scalar_context`)."""
    row = {"query": query, **vars(options)}
    return SearchIn.model_validate(row, context=scalar_context(row))


def edges_out(body: EdgesIn | NamespaceIn) -> list[Edge]:
    return [Edge(**e.model_dump()) for e in body.edges]


_HIT_NAMES = tuple(f.name for f in HIT_FIELDS)
_HIT_SEQUENCES = frozenset(f.name for f in HIT_FIELDS if f.sequence)


def plain_search_out(response: SearchResponse) -> dict[str, Any]:
    """`response` as JSON-ready values (lists for tuples), in SearchOut's key order, built field
    by field from the store's records (`dataclasses.asdict` deep-copies every value, ten times
    slower; a pydantic round trip costs several times the searches). HTTP and MCP replies both
    answer with it; the values are the store's own, already checked when it made them."""
    hits = []
    for hit in response.hits:
        values = {name: getattr(hit, name) for name in _HIT_NAMES}
        for name in _HIT_SEQUENCES:
            values[name] = list(values[name])
        hits.append(values)
    return {
        "hits": hits,
        "candidates": response.candidates,
        "filtered_out": response.filtered_out,
        "min_relevance": response.min_relevance,
        "dropped_ids": list(response.dropped_ids),
        "gate_candidates": [
            {"id": c.id, "bm25": c.bm25, "similarity": c.similarity} for c in response.gate_candidates
        ],
        "cut_tied": response.cut_tied,
    }


def search_out(response: SearchResponse) -> SearchOut:
    """A SearchResponse as the wire shape (lax: the record's tuples become lists)."""
    return SearchOut.model_validate(plain_search_out(response), strict=False, context={NO_SURROGATES: True})


def search_json(response: SearchResponse) -> bytes:
    """`response` as a SearchOut JSON body: ASCII JSON (as every reply of `evalkit serve`),
    serialised without a pydantic round trip (the client validates what it receives). TypeError
    for a value that is not a SearchResponse (a served system's bug, named), ValueError for a NaN
    or infinite score (JSON cannot carry one)."""
    return _ascii_json(_checked_plain(response))


def search_batch_json(responses: Sequence[SearchResponse]) -> bytes:
    """`responses` as a SearchBatchOut JSON body (see `search_json`)."""
    return _ascii_json({"results": [_checked_plain(r) for r in responses]})


def _checked_plain(response: Any) -> dict[str, Any]:
    if not isinstance(response, SearchResponse):
        raise TypeError(f"search() returned {type(response).__name__}, not a SearchResponse")
    return plain_search_out(response)


_NON_FINITE = re.compile(rb"[:,\[]-?(?:NaN|Infinity)")
"""Where pydantic-core's JSON may hold a NaN or an infinity (it writes them as bare constants,
which JSON does not have); a string holding such text matches too, harmlessly (see `_ascii_json`)."""


def _ascii_json(body: Any) -> bytes:
    """`body` (JSON values) as compact ASCII JSON, by pydantic-core's serialiser (about five times
    faster than `json.dumps` on search replies, which held a served store's thread and the client
    waiting). `json.dumps` writes it instead, with its errors, when the output may hold a NaN or
    an infinity (ValueError), when pydantic-core cannot serialise a value (TypeError, as before),
    and on a pydantic-core without `ensure_ascii`. Floats may be spelt otherwise (`0.00001` for
    `1e-05`): the same numbers."""
    try:
        out = to_json(body, ensure_ascii=True)
    except (TypeError, PydanticSerializationError):
        out = None
    if out is None or _NON_FINITE.search(out):
        return json.dumps(body, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
    return out


@functools.cache
def plain_reader(model: type[WireModel]) -> TypeAdapter[Any]:
    """A validator accepting exactly the JSON `model` accepts (the same types, constraints, strict
    mode and forbidden unknown keys, field by field, nested wire models included) that gives
    plain values instead of models: dicts holding only the keys sent (absent ones take the
    model's defaults where they are read, see `plain_search_response`). Building a model per hit
    and candidate, then dumping each again, cost three times the validation of a batch reply.
    It skips the surrogate walk, so use it only on JSON without a surrogate escape
    (`SURROGATE_BYTES`); TypeError for a model with validators of its own, which it could not
    repeat."""
    return TypeAdapter(_plain_type(model))


_PLAIN_TYPES: dict[type[WireModel], Any] = {}
_TYPED_DICT: Any = TypedDict  # called with a computed name and fields, which type checkers refuse


def _plain_type(annotation: Any) -> Any:
    """`annotation` with every wire model in it replaced by its TypedDict (see `plain_reader`)."""
    if isinstance(annotation, type) and issubclass(annotation, WireModel):
        if annotation not in _PLAIN_TYPES:
            decorators = annotation.__pydantic_decorators__
            own = [*decorators.field_validators, *decorators.validators, *decorators.root_validators]
            own += [name for name in decorators.model_validators if name != "_no_surrogates"]
            if own:
                raise TypeError(f"{annotation.__name__} has validators of its own ({', '.join(own)})")
            fields: dict[str, Any] = {}
            for name, field in annotation.model_fields.items():
                kind = _plain_type(field.annotation)
                kind = Annotated[kind, *field.metadata] if field.metadata else kind
                fields[name] = kind if field.is_required() else NotRequired[kind]
            plain = _TYPED_DICT(f"Plain{annotation.__name__}", fields)
            plain.__pydantic_config__ = ConfigDict(strict=True, extra="forbid")
            _PLAIN_TYPES[annotation] = plain
        return _PLAIN_TYPES[annotation]
    args = get_args(annotation)
    if not args:
        return annotation
    origin = get_origin(annotation)
    if origin is Union or origin is UnionType:
        return Union[tuple(_plain_type(arg) for arg in args)]  # noqa: UP007 - built at run time
    if origin is list:
        return list[_plain_type(args[0])]  # type: ignore[misc]
    return annotation


_SEARCH_DEFAULTS = {
    name: field.get_default(call_default_factory=True)
    for name, field in SearchOut.model_fields.items()
    if not field.is_required()
}
_CANDIDATE_DEFAULTS = {
    name: field.get_default(call_default_factory=True)
    for name, field in CandidateOut.model_fields.items()
    if not field.is_required()
}


def plain_search_response(body: Mapping[str, Any]) -> SearchResponse:
    """A SearchOut as plain values (from `plain_reader(SearchOut)`, or a model's `model_dump()`)
    as a SearchResponse: what `search_response` makes of the model, absent keys taking
    SearchOut's, HitOut's (`Hit`'s) and CandidateOut's defaults."""
    values = {**_SEARCH_DEFAULTS, **body}
    return SearchResponse(
        hits=tuple(hit_from_values(hit) for hit in values["hits"]),
        candidates=values["candidates"],
        filtered_out=values["filtered_out"],
        min_relevance=values["min_relevance"],
        dropped_ids=tuple(values["dropped_ids"]),
        gate_candidates=tuple(
            GateCandidate(**{**_CANDIDATE_DEFAULTS, **c}) for c in values["gate_candidates"]
        ),
        cut_tied=values["cut_tied"],
    )


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
