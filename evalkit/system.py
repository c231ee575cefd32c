"""The narrow interface between the harness and a memory system under test.

The runner needs three things per scenario: a fresh memory in a directory it owns, a way to add
thoughts and edges, and a search. `MemorySystem` is that contract; `ReferenceSystem` adapts
evalkit's own `MemoryStore` with agent-facing semantics (supersession="suppress",
contradiction="flag"). Another memory system is evaluated by writing a class with the same
`name`, `describe()` and `open()` — see the README section "Evaluating your own memory system".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from evalkit.embedders import Embedder, HashingEmbedder
from evalkit.errors import UsageError
from evalkit.memory import DEFAULT_PIPELINE, MemoryStore, SearchPipeline
from evalkit.memory.fts_query import QUERY_SYNTAX_MODES, build_fts_query
from evalkit.model import Edge, SearchResponse, Thought


class Memory(Protocol):
    """One seeded memory, alive while its `MemorySystem.open()` context is."""

    def add_thoughts(self, thoughts: Sequence[Thought]) -> Any: ...

    def add_edges(self, edges: Sequence[Edge]) -> Any: ...

    def search(
        self,
        query: str,
        *,
        top_k: int,
        project: str | None,
        min_relevance: float | None,
        recency_weight: float,
        recency_half_life_days: float,
        now: datetime,
        include_global: bool = False,
    ) -> SearchResponse:
        """`include_global` (with `project`): also return global thoughts of other projects.
        min_relevance None = the system's own default gate; 0 = no gate. The response's
        `min_relevance` reports the value actually used."""
        ...


class MemorySystem(Protocol):
    """A factory of fresh memories. `open(workdir)` must keep every file inside `workdir`
    (the runner deletes it afterwards) and release its resources when the context exits."""

    name: str

    def describe(self) -> dict[str, Any]: ...

    def open(self, workdir: Path) -> Any: ...


class _AgentFacingStore:
    """A MemoryStore searched the way an agent searches it: suppress superseded, flag contradicted."""

    def __init__(self, store: MemoryStore, retrieval: str) -> None:
        self._store = store
        self._retrieval = retrieval

    def add_thoughts(self, thoughts: Sequence[Thought]) -> int:
        return self._store.add_thoughts(thoughts)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        self._store.add_edges(edges)

    def search(
        self,
        query: str,
        *,
        top_k: int,
        project: str | None,
        min_relevance: float | None,
        recency_weight: float,
        recency_half_life_days: float,
        now: datetime,
        include_global: bool = False,
    ) -> SearchResponse:
        return self._store.search(
            query,
            top_k=top_k,
            project=project,
            include_global=include_global,
            retrieval=self._retrieval,
            supersession="suppress",
            contradiction="flag",
            recency_weight=recency_weight,
            recency_half_life_days=recency_half_life_days,
            min_relevance=min_relevance,
            now=now,
        )


class ReferenceSystem:
    """evalkit's reference store as the system under test.

    `embedder` (default HashingEmbedder), `retrieval` (hybrid | bm25 | vector), `tokenizer`
    (unicode61 | porter), `query_syntax` (delete | space: what the BM25 query builder does with
    FTS5 syntax characters inside a word, see `evalkit.memory.fts_query`) and `pipeline` (the
    SPEC's, or a variant such as a mutation) are fixed for every memory this system opens.
    """

    name = "reference"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        retrieval: str = "hybrid",
        tokenizer: str = "unicode61",
        query_syntax: str = "delete",
        pipeline: SearchPipeline = DEFAULT_PIPELINE,
    ) -> None:
        if query_syntax not in QUERY_SYNTAX_MODES:
            raise UsageError(
                f"unknown query_syntax {query_syntax!r}; use one of: {', '.join(QUERY_SYNTAX_MODES)}"
            )
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.retrieval = retrieval
        self.tokenizer = tokenizer
        self.query_syntax = query_syntax
        self.pipeline = (
            pipeline
            if query_syntax == "delete"
            else replace(pipeline, fts_query=partial(build_fts_query, syntax=query_syntax))
        )

    def describe(self) -> dict[str, Any]:
        """Settings recorded in the report's provenance."""
        return {
            "system": self.name,
            "retrieval": self.retrieval,
            "tokenizer": self.tokenizer,
            "query_syntax": self.query_syntax,
            "embedder": self.embedder.identity,
            "dim": self.embedder.dim,
        }

    @contextmanager
    def open(self, workdir: Path) -> Iterator[_AgentFacingStore]:
        with MemoryStore(
            workdir / "memory.sqlite3", self.embedder, tokenizer=self.tokenizer, pipeline=self.pipeline
        ) as store:
            yield _AgentFacingStore(store, self.retrieval)
