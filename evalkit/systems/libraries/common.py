"""What every built-in library system shares: the run's embedder, isolation, filters, ranking.

A library system (`--system langgraph`, …) is a memory library used the way an agent uses it:
the library is given texts and embeds them itself, with the run's embedder plugged in through
the library's own embedding hook (the hashing embedder by default, MiniLM with `--embedder real`;
nothing is downloaded), then searched with the query's text. What the libraries differ in is
how they put, search, delete and drop one scenario's notes (`Library`); the rest is here and
in `evalkit.systems.stores.common`, whose system (`StoreSystem`: a client per process, pickling
without it, the fork check) and ranking (`top_hits`) they reuse:

- **Isolation.** Each scenario is a namespace (or user, run, index) of its own, named
  `evalkit_<32 hex>`, emptied when the scenario closes — also on an error. A library that
  returns a row from another namespace, or an id the scenario never gave it, is an
  AdapterError (isolation is checked on every search, not assumed).
- **Filters.** Every note carries `project`, `is_global` and `status` as metadata; a search with
  `project` uses the library's own filter. Thoughts of every status are searched.
- **Ranking and ties.** Hits are ordered by the similarity the library gives, compared at float32
  precision, ties later-seeded first (`evalkit.systems.stores.common.ranked`); a search asks for
  `top_k + 1` rows, more while the cut ties, never more than the scenario holds.
- **Operations.** `delete_thoughts` and `update_thought` use the library's delete and its
  put-again (upsert: the content is embedded again): capabilities `projects`, `global_thoughts`,
  `deletion` and `update`. Edges are accepted and ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from evalkit.embedders import Embedder
from evalkit.errors import AdapterError
from evalkit.records import Edge, SearchResponse, Thought
from evalkit.systems.base import ScenarioMemory, SearchOptions
from evalkit.systems.stores.common import STORE_CAPABILITIES, Scope, StoreSystem, top_hits

LIBRARY_CAPABILITIES: frozenset[str] = STORE_CAPABILITIES | {"deletion", "update"}
"""What a built-in library system offers: the stores' filters plus deletion and update."""


@dataclass(frozen=True, slots=True)
class Note:
    """One thought as a library keeps it: `key` is its seeding position in the scenario."""

    id: str
    key: int
    content: str
    project: str
    is_global: bool
    status: str

    def metadata(self) -> dict[str, Any]:
        """What the library stores beside the text (its filters read `project` and `is_global`)."""
        return {
            "evalkit_id": self.id,
            "project": self.project,
            "is_global": self.is_global,
            "status": self.status,
        }


class Library(Protocol):
    """One scenario's namespace in a library (a system creates it; the memory fills and queries it)."""

    def put(self, notes: Sequence[Note]) -> None:
        """Add `notes`, or replace those whose id is there already (the text embedded again)."""
        ...

    def nearest(self, query: str, limit: int, scope: Scope) -> list[tuple[str, float]]:
        """Up to `limit` notes in `scope` most similar to `query`, as (id, similarity) pairs;
        AdapterError for a row of another namespace."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Forget the notes `ids`."""
        ...

    def drop(self) -> None:
        """Remove everything in the namespace."""
        ...


class LibraryMemory(ScenarioMemory):
    """One scenario's memory in a library (with deletion and update)."""

    def __init__(self, system: LibrarySystem, library: Library) -> None:
        self._system = system
        self._library = library
        self._notes: dict[str, Note] = {}
        self._keys: dict[str, int] = {}
        """Every id ever seeded → its position, deleted ones too: a library that still returns a
        deleted thought shows a ghost the scenario's assertions count, not an unknown id."""

    def add_thoughts(self, thoughts: Sequence[Thought]) -> int:
        """Put `thoughts`; AdapterError for an id given twice."""
        notes: list[Note] = []
        seen = set(self._keys)
        for thought in thoughts:
            if thought.id in seen:
                raise AdapterError(f"system {self._system.name!r}: thought id {thought.id!r} added twice")
            seen.add(thought.id)
            notes.append(
                Note(
                    thought.id,
                    len(self._keys) + len(notes),
                    thought.content,
                    thought.project,
                    thought.is_global,
                    thought.status,
                )
            )
        if notes:
            self._library.put(notes)
        self._notes.update((note.id, note) for note in notes)
        self._keys.update((note.id, note.key) for note in notes)
        return len(notes)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        """Edges are ignored: these libraries keep no links."""

    def delete_thoughts(self, ids: Sequence[str]) -> None:
        """Forget `ids` through the library's delete."""
        self._library.delete(list(ids))
        for id_ in ids:
            self._notes.pop(id_, None)

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> None:
        """Put the thought again with its new content and/or status (same id, project, position)."""
        note = self._notes[id]
        note = replace(
            note, content=note.content if content is None else content, status=status or note.status
        )
        self._library.put([note])
        self._notes[id] = note

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        """The `top_k` notes in scope most similar to `query` by the library's own search (ties:
        later-seeded first). The gate, recency and clock options are not used (no capability)."""
        scope = Scope(options.project, options.include_global)
        return top_hits(
            lambda limit: self._library.nearest(query, limit, scope),
            self._keys,
            options.top_k,
            self._system.name,
        )


class LibrarySystem(StoreSystem):
    """A memory library as the system under test: a `StoreSystem` whose `_create` gives a
    `Library` and whose memories hand texts to it (see the module docstring). `index` says in
    the report how the library searches."""

    capabilities: frozenset[str] = LIBRARY_CAPABILITIES
    index: str = "exact cosine"

    def __init__(self, location: str | None = None, embedder: Embedder | None = None) -> None:
        super().__init__(location, embedder)

    def describe(self) -> dict[str, Any]:
        """The library and its version, where it keeps its data, the embedder, its index and ties."""
        described = super().describe()
        return {"system": self.name, "library": described.pop("store"), **described, "index": self.index}

    def _create(self, client: Any, name: str, workdir: Path) -> Any:
        """A new `Library` (namespace `name`) for one scenario."""
        raise NotImplementedError

    def _memory(self, collection: Any) -> LibraryMemory:
        return LibraryMemory(self, collection)


def floats(vector: Any) -> list[float]:
    """An embedding as the plain floats a library takes."""
    return [float(x) for x in vector]
