"""evalkit's own reference store as a `MemorySystem`, searched with agent-facing semantics
(supersession="suppress", contradiction="flag") as the original service's agents search it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from evalkit.embedders import Embedder, HashingEmbedder
from evalkit.memory import (
    DEFAULT_PIPELINE,
    DEFAULT_STORE_OPTIONS,
    IN_MEMORY,
    VECTOR_FLOOR,
    MemoryStore,
    SearchPipeline,
    StoreOptions,
)
from evalkit.memory.pipeline import strong_match
from evalkit.records import Edge, GateCandidate, SearchResponse, Thought
from evalkit.systems.base import MemorySystem, OpenContext, ScenarioMemory, SearchOptions
from evalkit.systems.capabilities import ALL_CAPABILITIES


def gate_keeps(candidate: GateCandidate, floor: float) -> bool:
    """Whether the reference store's relevance gate at `floor` keeps `candidate`: every row at a
    floor <= 0 (no gate), else a strong one (`evalkit.memory.pipeline.strong_match`: BM25 matched
    it or its similarity >= floor). The rule of the `regate` capability."""
    return floor <= 0.0 or strong_match(candidate.bm25, candidate.similarity, floor)


class _AgentFacingStore(ScenarioMemory):
    """A MemoryStore searched the way an agent searches it: suppress superseded, flag contradicted."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def add_thoughts(self, thoughts: Sequence[Thought]) -> int:
        return self._store.add_thoughts(thoughts)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        self._store.add_edges(edges)

    def delete_thoughts(self, ids: Sequence[str]) -> int:
        """Forget `ids` in every index (`MemoryStore.delete_thoughts`)."""
        return self._store.delete_thoughts(ids)

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> None:
        """Re-embed and re-index `id`'s new content, or set its status (`MemoryStore.update_thought`)."""
        self._store.update_thought(id, content=content, status=status)

    def interrupt(self) -> None:
        """Abort the running SQL statement (thread-safe; what `evalkit serve`'s deadline calls)."""
        self._store.interrupt()

    def watch(self, overdue: Callable[[], bool] | None) -> None:
        """Abort a running SQL statement once `overdue()` is True (`MemoryStore.watch`; what
        `evalkit serve` gives the memories it runs on its event loop)."""
        self._store.watch(overdue)

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        """The store's search; `options.query_id` is not used (the reference store searches by text)."""
        return self._store.search(
            query,
            top_k=options.top_k,
            project=options.project,
            include_global=options.include_global,
            supersession="suppress",
            contradiction="flag",
            recency_weight=options.recency_weight,
            recency_half_life_days=options.recency_half_life_days,
            min_relevance=options.min_relevance,
            now=options.now,
        )


class ReferenceSystem(MemorySystem):
    """evalkit's reference store as the system under test.

    `embedder` (default HashingEmbedder), `options` (the store's settings: retrieval, BM25
    tokenizer, query syntax; see `StoreOptions`) and `pipeline` (the SPEC's, or a variant such as
    a mutation) are fixed for every memory this system opens.

    It declares every capability — but `regate` when its pipeline decides strength or gates
    differently from the SPEC (a mutation of those steps: its gate is not `gate_keeps`) — its
    low-confidence floor (`VECTOR_FLOOR`) and that the mutation suite measures its search
    (`evalkit.systems.declaration`).
    """

    name = "reference"
    capabilities: frozenset[str] = ALL_CAPABILITIES
    confidence_floor = VECTOR_FLOOR
    mutation_testing = True
    """The mutation suite mutates this class's pipeline; a subclass is another system built on the
    store, which that suite does not measure (False unless it declares otherwise)."""
    inline_calls = True
    """`evalkit serve` runs the memory calls on its event loop rather than its store thread
    (`evalkit.systems.namespaces`; two thread hand-offs fewer per request): this class's memories
    stop a call once the server's deadline or shutdown says so (`watch`). A subclass with an
    `open` of its own is served from the store thread unless it declares `inline_calls = True`
    (its memories then need `watch`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass's defaults of `mutation_testing` and `inline_calls` (see them)."""
        super().__init_subclass__(**kwargs)
        if "mutation_testing" not in vars(cls):
            cls.mutation_testing = False
        if "open" in vars(cls) and "inline_calls" not in vars(cls):
            cls.inline_calls = False

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        options: StoreOptions = DEFAULT_STORE_OPTIONS,
        pipeline: SearchPipeline = DEFAULT_PIPELINE,
    ) -> None:
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.options = options
        self.pipeline = pipeline
        if (pipeline.strong, pipeline.gate) != (DEFAULT_PIPELINE.strong, DEFAULT_PIPELINE.gate):
            self.capabilities = ALL_CAPABILITIES - {"regate"}

    needs_workdir: bool = True
    """Whether `open` gets a folder of its own (`evalkit.systems.base`). The store keeps its
    memory in RAM, but an in-process run keeps the runner's scratch folder per scenario (what a
    scenario in progress shows of itself in the temp folder, and what a subclass keeping files
    gets); `evalkit serve` sets it False on the store it serves, so that its namespaces make no
    folder each."""

    def describe(self) -> dict[str, Any]:
        """Settings recorded in the report's provenance: the store options and the embedder."""
        return {
            "system": self.name,
            **self.options.model_dump(),
            "embedder": self.embedder.identity,
            "dim": self.embedder.dim,
        }

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_AgentFacingStore]:
        """A fresh in-memory store (`IN_MEMORY`: no file, schema copied from a template), gone
        when the scenario ends; `context.workdir` is not used, nor `context.embedder` (the store
        embeds with this system's `embedder`). It ranks exactly as a store file does."""
        with MemoryStore(IN_MEMORY, self.embedder, options=self.options, pipeline=self.pipeline) as store:
            yield _AgentFacingStore(store)
