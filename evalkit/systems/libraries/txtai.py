"""txtai as the system under test: `--system txtai`, a txtai `Embeddings` index per scenario, in
memory, with the exact `numpy` backend and content storage (SQLite in memory). Needs the `txtai`
extra: `txtai-minimal` (txtai without its default dependencies: no torch or transformers, which
the deterministic mode does not need) and msgpack.

The index's vectors are the run's embedder, as a txtai vectors method of its own
(`EmbedderVectors`, an `External` whose `encode` embeds txtai's `query` category as queries and
its `data` as passages). Each thought is a document `(id, {"text", "evalkit_id", "project",
"is_global", "status"})`; a search is txtai SQL, the project filter a WHERE clause:

    select id, score from txtai where similar(:query, :candidates) and (project = :project or is_global = 1)

with `candidates` every row of the index (txtai filters the candidates the vector search gave:
fewer would make the filter lose rows). `delete_thoughts` is `Embeddings.delete`,
`update_thought` `Embeddings.upsert`.

txtai drops every row whose score is not above 0 (a deleted row is kept as a zeroed vector, and
that filter hides it), so a search can return fewer rows than it holds: rows of similarity 0 or
below are never returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
from txtai import Embeddings
from txtai.vectors.dense.external import External

from evalkit.systems.libraries.common import LibrarySystem, Note
from evalkit.systems.stores.common import Scope

_EMBEDDER = "evalkit_embedder"
"""The key of txtai's vectors config holding the run's embedder."""


class EmbedderVectors(External):
    """The run's embedder as txtai vectors: the `query` category embedded as queries, the rest
    (`data`) as passages; float32, as txtai stores them."""

    def encode(self, data: Any, category: str | None = None) -> Any:
        embedder = self.config[_EMBEDDER]
        if category == "query":
            return np.asarray([embedder.embed_query(text) for text in data], dtype=np.float32)
        return np.asarray(embedder.embed_passages(list(data)), dtype=np.float32)


class TxtaiIndex:
    """One scenario's txtai index."""

    def __init__(self, embedder: Any) -> None:
        method = f"{EmbedderVectors.__module__}.{EmbedderVectors.__qualname__}"
        self._index = Embeddings({"method": method, _EMBEDDER: embedder, "content": True, "backend": "numpy"})
        self._ids: set[str] = set()

    def put(self, notes: Sequence[Note]) -> None:
        documents = [(note.id, {"text": note.content, **note.metadata()}, None) for note in notes]
        if self._ids:
            self._index.upsert(documents)
        else:
            self._index.index(documents)
        self._ids.update(note.id for note in notes)

    def nearest(self, query: str, limit: int, scope: Scope) -> list[tuple[str, float]]:
        where, parameters = "", {"query": query, "candidates": max(len(self._ids), 1)}
        if scope.project is not None:
            where = (
                " and (project = :project or is_global = 1)"
                if scope.include_global
                else " and project = :project"
            )
            parameters["project"] = scope.project
        sql = f"select id, score from txtai where similar(:query, :candidates){where}"
        found = self._index.search(sql, limit=limit, parameters=parameters)
        return [(str(row["id"]), float(row["score"])) for row in found]

    def delete(self, ids: Sequence[str]) -> None:
        self._index.delete(list(ids))
        self._ids.difference_update(ids)

    def drop(self) -> None:
        self._index.close()


def _installed(distribution: str) -> bool:
    try:
        version(distribution)
    except PackageNotFoundError:
        return False
    return True


class TxtaiSystem(LibrarySystem):
    """txtai `Embeddings` (numpy backend, content in SQLite), an index per scenario in memory."""

    name = "txtai"
    package = "txtai-minimal" if _installed("txtai-minimal") else "txtai"
    index = "exact cosine (numpy backend, float32); rows scoring 0 or below dropped"
    needs_workdir = False

    def location_label(self) -> str:
        return "in this process, an index per scenario in memory"

    def _connect(self) -> None:
        return None

    def _create(self, client: Any, name: str, workdir: Path) -> Any:
        return TxtaiIndex(self.embedder)
