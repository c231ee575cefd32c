"""What every built-in vector-store system shares: embedding, isolation, filters, ranking.

A store system (`--system chroma`, `qdrant`, `lancedb`, `pgvector`) is the vector store an agent's
memory is commonly built on, used the way such an agent uses it: thoughts embedded with the run's
embedder (the hashing embedder by default, MiniLM with `--embedder real`), searched by cosine similarity,
filtered by project through the store's own metadata filter. What the backends differ in is
only how they create, fill, query and drop one collection (`Collection`); the rest is here:

- **Isolation.** Each scenario gets a collection (table) of its own, named `evalkit_<32 hex>`,
  created when the scenario opens and dropped when it closes — also on an error.
- **Filters.** Every row carries `project` and `is_global` as metadata; a search with `project`
  asks the store for `project = p` (or `is_global` as well when `include_global`). `project` None
  searches every row. Thoughts of every status are stored and searched (the reference store's
  agent-facing search has no status filter either).
- **Ranking and ties.** Hits are ordered by cosine similarity, best first; rows of equal
  similarity (identical texts give identical vectors) are ordered later-seeded first, the order
  the reference store's vector leg gives them. Similarities are compared at float32 precision
  (`FLOAT32_TIE`): the stores compute in float32, so one similarity comes back a few units in
  its last place apart from one row, or one store, to the next (pgvector returned two rows of
  one true similarity 2e-8 apart); each run of similarities within `FLOAT32_TIE` of the next is
  one tie, reported with the run's highest similarity rounded to float32, so that the harness
  sees the tie too. Stores return ties in an order of their own, so a search asks for
  `top_k + 1` rows and, while the row after the cut ties with the last one kept, asks again for
  twice as many: the `top_k` hits never depend on the store's tie order. A row whose similarity
  is not a number (a stored or query vector of all zeros: text with nothing to embed) counts as
  similarity 0.
- **Hits** carry `id`, `rank` and `similarity` (1 − cosine distance, as the store computed it) and
  nothing else: these stores have no relevance gate, confidence, supersession, contradiction or
  recency, so `capabilities` is `projects` and `global_thoughts`, and scenarios needing more are
  not applicable. Edges are accepted and ignored.
- **Workers.** A system pickles without its client (`--workers` ships it to other processes);
  each process connects on its first scenario. `close()` releases this process's client. Chroma
  and LanceDB (`fork_safe = False`) cannot run in a process forked from one that had used them:
  such a process raises AdapterError rather than hang or crash (`--workers` does not fork from
  the caller: see `evalkit.harness.executors`).
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from evalkit.embedders import Embedder, HashingEmbedder, Vectors
from evalkit.errors import AdapterError, UsageError
from evalkit.records import Edge, Hit, SearchResponse, Thought
from evalkit.systems.base import MemorySystem, OpenContext, ScenarioMemory, SearchOptions

_FIRST_USED_IN: dict[str, int] = {}
"""Store name → the process that first used a store that is not fork-safe (a forked child
inherits this map, and so knows it is not that process)."""

FLOAT32_TIE = 1e-6
"""Two similarities closer than this are one (see the module docstring): float32 carries about 7
significant digits, and a cosine summed over a few hundred float32 products a few units of the
last of them (the four stores differ by up to 1.4e-7 on the built-in suite)."""

STORE_CAPABILITIES: frozenset[str] = frozenset({"projects", "global_thoughts"})
"""What a built-in store system offers: a project filter and global thoughts, both by metadata."""


@dataclass(frozen=True, slots=True)
class Row:
    """One thought as a store keeps it: `key` is its seeding position in the scenario (0, 1, …),
    for stores that need integer ids; `vector` the embedding as floats."""

    id: str
    key: int
    vector: list[float]
    project: str
    is_global: bool


@dataclass(frozen=True, slots=True)
class Scope:
    """A search's filter: `project` None = every row, else rows of `project`, plus rows with
    `is_global` when `include_global`."""

    project: str | None
    include_global: bool


class Collection(Protocol):
    """One scenario's collection in a store (a backend creates it; the memory fills and queries it)."""

    def insert(self, rows: Sequence[Row]) -> None:
        """Add `rows` (ids not in the collection yet)."""
        ...

    def nearest(self, vector: list[float], limit: int, scope: Scope) -> list[tuple[str, float]]:
        """Up to `limit` rows in `scope` nearest `vector` by cosine, as (id, similarity) pairs."""
        ...

    def drop(self) -> None:
        """Remove the collection and everything in it."""
        ...


class VectorStoreMemory(ScenarioMemory):
    """One scenario's memory in a store: what the runner seeds and searches."""

    def __init__(self, system: StoreSystem, collection: Collection) -> None:
        self._system = system
        self._collection = collection
        self._keys: dict[str, int] = {}

    def add_thoughts(self, thoughts: Sequence[Thought]) -> int:
        """Embed and insert `thoughts`; AdapterError for an id given twice."""
        seen = set(self._keys)
        for thought in thoughts:
            if thought.id in seen:
                raise AdapterError(f"system {self._system.name!r}: thought id {thought.id!r} added twice")
            seen.add(thought.id)
        if not thoughts:
            return 0
        vectors = self._system.embedder.embed_passages([t.content for t in thoughts])
        rows = [
            Row(t.id, len(self._keys) + i, _floats(vectors[i]), t.project, t.is_global)
            for i, t in enumerate(thoughts)
        ]
        self._collection.insert(rows)
        self._keys.update((row.id, row.key) for row in rows)
        return len(rows)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        """Edges are ignored: a vector store has no links (see the module docstring)."""

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        """The `top_k` rows in scope most similar to `query` (ties: later-seeded first). The gate,
        recency and clock options are not used: the store has none of them (no capability)."""
        vector = _floats(self._system.embedder.embed_query(query))
        scope = Scope(options.project, options.include_global)
        return top_hits(
            lambda limit: self._collection.nearest(vector, limit, scope),
            self._keys,
            options.top_k,
            self._system.name,
        )


def top_hits(
    nearest: Callable[[int], list[tuple[str, float]]], keys: Mapping[str, int], top_k: int, system: str
) -> SearchResponse:
    """The `top_k` hits of a search whose `nearest(limit)` gives up to `limit` (id, similarity)
    pairs in scope (in any order), ranked by `ranked` over `keys` (id → seeding position, the
    rows searched): asks for `top_k + 1` rows, then twice as many while the row after the cut
    ties with the last one kept, so the hits never depend on the order a store gives its ties."""
    if not keys or top_k < 1:
        return SearchResponse()
    limit = min(top_k + 1, len(keys))
    while True:
        found = ranked(nearest(limit), keys, system)
        if len(found) < limit or limit >= len(keys) or found[-1][1] != found[top_k - 1][1]:
            break  # every row tied with the last one kept is in `found`
        limit = min(2 * limit, len(keys))
    hits = tuple(
        Hit(id=id_, rank=rank, similarity=similarity)
        for rank, (id_, similarity) in enumerate(found[:top_k], start=1)
    )
    cut_tied = len(found) > top_k and found[top_k][1] == found[top_k - 1][1]
    return SearchResponse(hits=hits, cut_tied=cut_tied)


def ranked(
    found: Sequence[tuple[str, float]], keys: Mapping[str, int], system: str
) -> list[tuple[str, float]]:
    """`found` best first, NaN similarities as 0, compared at float32 precision: each run of
    similarities within `FLOAT32_TIE` of the next is one tie, ordered later-seeded first (by
    `keys`, id → seeding position) and reported with the run's highest similarity rounded to
    float32. AdapterError for an id the store made up."""
    cleaned = []
    for id_, similarity in found:
        if id_ not in keys:
            raise AdapterError(f"system {system!r}: the store returned unknown id {id_!r}")
        cleaned.append((id_, similarity if math.isfinite(similarity) else 0.0))
    cleaned.sort(key=lambda pair: -pair[1])
    result: list[tuple[str, float]] = []
    start = 0
    for end in range(1, len(cleaned) + 1):
        if end == len(cleaned) or cleaned[end - 1][1] - cleaned[end][1] > FLOAT32_TIE:
            tie = sorted(cleaned[start:end], key=lambda pair: -keys[pair[0]])
            top = float(np.float32(cleaned[start][1]))
            result.extend((id_, top) for id_, _ in tie)
            start = end
    return result


class StoreSystem(MemorySystem):
    """A vector store as the system under test. A backend subclass
    sets `name` and `package` (the distribution whose version the report records) and implements
    `_connect` (the client, made once per process) and `_create` (a new collection)."""

    package: ClassVar[str]
    location_form: ClassVar[str | None] = None
    """How the spec names a location after the colon (None: the store takes no location)."""
    fork_safe: ClassVar[bool] = True
    """False when the store's library cannot be used in a process forked from one that used it."""
    capabilities: frozenset[str] = STORE_CAPABILITIES

    def __init__(self, location: str | None = None, embedder: Embedder | None = None) -> None:
        if location is not None and self.location_form is None:
            raise UsageError(
                f"system '{self.name}:{location}': the built-in {self.name} system runs in this process "
                f"and takes no location; use plain '{self.name}'"
            )
        self.location = location
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self._client: Any = None

    def describe(self) -> dict[str, Any]:
        """The store, its package version and location, the embedder, and the tie rule."""
        return {
            "system": self.name,
            "store": f"{self.package} {_version(self.package)}",
            "location": self.location_label(),
            "embedder": self.embedder.identity,
            "dim": self.embedder.dim,
            "similarity": "cosine",
            "ties": "later-seeded first",
        }

    def location_label(self) -> str:
        """Where the collections live, as the report shows it (no password)."""
        return self.location or "in this process"

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[ScenarioMemory]:
        """A fresh collection for one scenario (in `context.workdir` for a store that keeps its
        files there), dropped when the context exits."""
        if not self.fork_safe and _FIRST_USED_IN.setdefault(self.name, os.getpid()) != os.getpid():
            raise AdapterError(
                f"system {self.name!r}: this process was forked from a process that had already used "
                f"{self.package}, which does not survive a fork (it hangs or crashes); start it fresh, or "
                "run on evalkit's workers (`--workers N`, `make_executor`: they are not forked)"
            )
        if self._client is None:
            self._client = self._connect()
        collection = self._create(self._client, f"evalkit_{uuid.uuid4().hex}", context.workdir)
        try:
            yield self._memory(collection)
        finally:
            collection.drop()

    def _memory(self, collection: Any) -> ScenarioMemory:
        """The scenario's memory over its collection (a library system has its own kind)."""
        return VectorStoreMemory(self, collection)

    def close(self) -> None:
        """Release this process's client (a later scenario connects again)."""
        client, self._client = self._client, None
        if client is not None:
            self._disconnect(client)

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the live client: a copy connects on its first scenario."""
        return {**self.__dict__, "_client": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _connect(self) -> Any:
        raise NotImplementedError

    def _create(self, client: Any, name: str, workdir: Path) -> Collection:
        raise NotImplementedError

    def _disconnect(self, client: Any) -> None:
        """Close `client` (default: nothing to close)."""


class WorkdirStoreSystem(StoreSystem):
    """A store that keeps each scenario's collection in that scenario's working directory (Chroma,
    LanceDB): there is no shared client to connect (each `_create` opens its own), and the store's
    library does not survive a fork (`fork_safe` False)."""

    fork_safe: ClassVar[bool] = False

    def location_label(self) -> str:
        return "in this process, each scenario's working directory"

    def _connect(self) -> None:
        return None


def _floats(vector: Vectors) -> list[float]:
    return [float(x) for x in vector]


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:  # imported from a source tree without its metadata
        return "unknown"
