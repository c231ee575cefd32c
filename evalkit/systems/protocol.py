"""The narrow interface between the harness and a memory system under test.

The runner needs three things per scenario: a fresh memory in a directory it owns, a way to add
thoughts and edges, and a search. `MemorySystem` is the factory of fresh memories;
`ScenarioMemory` is the one memory a scenario is seeded into and searched. Another memory
system is evaluated by writing a class with the same `name`, `describe()` and `open()` — see
the README section "Evaluating your own memory system".
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from evalkit.records import Edge, SearchResponse, Thought


class ScenarioMemory(Protocol):
    """One memory, alive while its `MemorySystem.open()` context is: seeded with one scenario's
    thoughts (then edges) and searched with its queries."""

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
        query_id: str | None = None,
    ) -> SearchResponse:
        """`include_global` (with `project`): also return global thoughts of other projects.
        min_relevance None = the system's own default gate; 0 = no gate. The response's
        `min_relevance` reports the value actually used. `query_id` is the query's stable id
        (`evalkit.scenarios.stable_query_id`; the runner always passes it): a system that searches
        by text ignores it, one that replays recorded results looks the ranking up by it."""
        ...


class MemorySystem(Protocol):
    """A factory of fresh memories. `open(workdir)` returns a context manager yielding a
    `ScenarioMemory`; it must keep every file inside `workdir` (the runner deletes it afterwards)
    and release its resources when the context exits. `describe()` is recorded in the report's
    provenance (JSON-serialisable values only)."""

    name: str

    def describe(self) -> dict[str, Any]: ...

    def open(self, workdir: Path) -> AbstractContextManager[ScenarioMemory]: ...
