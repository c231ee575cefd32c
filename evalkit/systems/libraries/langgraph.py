"""LangGraph's long-term memory store as the system under test: `--system langgraph`, an
`InMemoryStore` with a semantic index. Needs the `langgraph` extra. The SQLite and PostgreSQL
stores (`langgraph-sqlite`, `langgraph-postgres`) use this module's namespace and embeddings.

Each note is an item `{"content", "evalkit_id", "project", "is_global", "status"}` under the key
of its thought's id, indexed on `content` (`fields`) by the run's embedder, given to the store as
a LangChain `Embeddings`; a search is `store.search(namespace, query=…, filter=…)`, the project
filter an equality filter (LangGraph's filters have no OR: with `include_global`, one search per
filter, merged). Upstream behaviour this handles (each shown by a test in
tests/systems/test_libraries.py):

- **Namespaces match as prefixes**: a search in `("a",)` also returns the items of `("a", "b")`.
  Every scenario's namespace is `("evalkit", "evalkit_<32 hex>")`, two levels, so none is a
  prefix of another; a namespace that already holds items or has one below it is refused when
  the scenario opens, and a search that returns an item of any other namespace is an
  AdapterError.
- **`InMemoryStore` pads with `score=None` items** when asked for more than it holds vector
  for (items put without an index): such items are not ranked by similarity, so they are not
  hits. Every note here is indexed and a search never asks for more than the scenario holds.
- **`InMemoryStore` fails a batch that puts one text twice** (`ValueError: Number of embeddings
  (1) does not match number of indices (2)`: it embeds each distinct text once, then pairs the
  embeddings with every item): a scenario's thoughts are put in batches of distinct texts.
- **`SqliteStore` ignores `fields`** (langchain-ai/langgraph#8808: it reads `text_fields`, and
  without it embeds the whole item as JSON, project and status included): the index config
  sets both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from evalkit.embedders import Embedder
from evalkit.errors import AdapterError
from evalkit.systems.libraries.common import Library, LibrarySystem, Note, floats
from evalkit.systems.stores.common import Scope

INDEXED_FIELD = "content"
"""The item field the semantic index embeds."""


class EmbedderEmbeddings(Embeddings):
    """evalkit's embedder as a LangChain `Embeddings`: documents embedded as passages, queries as
    queries (each with the embedder's own prefix, if it has one)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [floats(vector) for vector in self.embedder.embed_passages(texts)]

    def embed_query(self, text: str) -> list[float]:
        return floats(self.embedder.embed_query(text))


def index_config(embedder: Embedder) -> dict[str, Any]:
    """A LangGraph store's `index` setting: the embedder's dimension and embeddings, `content`
    embedded (`fields`, and `text_fields` for `SqliteStore`, which reads only that: #8808)."""
    return {
        "dims": embedder.dim,
        "embed": EmbedderEmbeddings(embedder),
        "fields": [INDEXED_FIELD],
        "text_fields": [INDEXED_FIELD],
    }


class LangGraphNamespace(Library):
    """One scenario's namespace in a LangGraph store (any `BaseStore` with an index)."""

    def __init__(self, store: BaseStore, name: str, system: str) -> None:
        self._store = store
        self._namespace = ("evalkit", name)
        self._system = system
        self._keys: set[str] = set()
        if store.list_namespaces(prefix=self._namespace, limit=1):
            raise AdapterError(
                f"system {system!r}: namespace {self._namespace} already holds items, or one below it "
                "does (LangGraph matches namespaces as prefixes); scenarios must not share one"
            )

    def put(self, notes: Sequence[Note]) -> None:
        for batch in _distinct_texts(notes):
            items = [(note.id, {INDEXED_FIELD: note.content, **note.metadata()}) for note in batch]
            self._store.batch([PutOp(self._namespace, key, value) for key, value in items])
        self._keys.update(note.id for note in notes)

    def nearest(self, query: str, limit: int, scope: Scope) -> list[tuple[str, float]]:
        filters: list[dict[str, Any] | None] = [None]
        if scope.project is not None:
            filters = [{"project": scope.project}]
            if scope.include_global:
                filters.append({"is_global": True})
        best: dict[str, float] = {}
        for where in filters:
            for item in self._store.search(self._namespace, query=query, filter=where, limit=limit):
                if tuple(item.namespace) != self._namespace:
                    raise AdapterError(
                        f"system {self._system!r}: a search in namespace {self._namespace} returned item "
                        f"{item.key!r} of namespace {tuple(item.namespace)}: scenarios are not isolated"
                    )
                if item.score is not None:  # InMemoryStore's padding: not ranked, not a hit
                    best[item.key] = max(item.score, best.get(item.key, item.score))
        return list(best.items())

    def delete(self, ids: Sequence[str]) -> None:
        self._store.batch([PutOp(self._namespace, id_, None) for id_ in ids])
        self._keys.difference_update(ids)

    def drop(self) -> None:
        if self._keys:
            self.delete(sorted(self._keys))


def _distinct_texts(notes: Sequence[Note]) -> list[list[Note]]:
    """`notes` in order, cut into batches in which no text comes twice (`InMemoryStore` embeds a
    batch's distinct texts once each, then fails matching them to its items: see the module
    docstring)."""
    batches: list[list[Note]] = [[]]
    for note in notes:
        if any(other.content == note.content for other in batches[-1]):
            batches.append([])
        batches[-1].append(note)
    return batches


class LangGraphSystem(LibrarySystem):
    """LangGraph's `InMemoryStore` with a semantic index, one per process. The other LangGraph
    stores subclass it for its scenario memories (`LangGraphNamespace`), with their own store."""

    name = "langgraph"
    package = "langgraph"
    index = "exact cosine (numpy, float64)"

    def location_label(self) -> str:
        return "in this process, in memory (InMemoryStore)"

    def _connect(self) -> BaseStore:
        return InMemoryStore(index=index_config(self.embedder))  # type: ignore[arg-type]

    def _create(self, client: Any, name: str, workdir: Path) -> Any:
        return LangGraphNamespace(client, name, self.name)
