"""Chroma as the system under test: `--system chroma`, chromadb in this process. Needs the
`chroma` extra.

Each scenario opens a persistent client on its own working directory (removed by the runner)
with one collection, made with `embedding_function=None` (evalkit embeds) and the cosine space;
the project filter is a `where` clause on the rows' metadata. Chroma's anonymized telemetry is
switched off. Why not the in-memory `EphemeralClient`: chromadb keeps one ephemeral system per
process, and a worker forked (`--workers`) from a process that used it inherits that system and
hangs on its first call; a client per scenario directory shares nothing (about 0.1 s per
scenario). chromadb's Rust runtime itself does not survive a fork either: a process forked from
one that had already used chromadb hangs in its first `add`, so such a process raises
AdapterError instead (`fork_safe = False`; `--workers` never forks from the caller: its workers
start from the forkserver, which has not used chromadb, and work after a serial run too).
What is shared by every store is in `evalkit.systems.stores.common`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chromadb
from chromadb.config import Settings

from evalkit.systems.stores.common import Collection, Row, Scope, WorkdirStoreSystem


class ChromaCollection:
    """One scenario's Chroma client and collection."""

    def __init__(self, workdir: Path, name: str) -> None:
        self._client: Any = chromadb.PersistentClient(
            path=str(workdir / "chroma"), settings=Settings(anonymized_telemetry=False)
        )
        self._name = name
        self._collection: Any = self._client.create_collection(
            name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

    def insert(self, rows: Sequence[Row]) -> None:
        self._collection.add(
            ids=[row.id for row in rows],
            embeddings=[row.vector for row in rows],
            metadatas=[{"project": row.project, "is_global": row.is_global} for row in rows],
        )

    def nearest(self, vector: list[float], limit: int, scope: Scope) -> list[tuple[str, float]]:
        found = self._collection.query(
            query_embeddings=[vector], n_results=limit, where=_where(scope), include=["distances"]
        )
        distances = found["distances"] or [[]]  # asked for, so always there
        return [(id_, 1.0 - distance) for id_, distance in zip(found["ids"][0], distances[0], strict=True)]

    def names(self) -> list[str]:
        """The collections the scenario's client holds (for tests)."""
        return [c.name for c in self._client.list_collections()]

    def drop(self) -> None:
        try:
            self._client.delete_collection(self._name)
        finally:
            self._client.close()


def _where(scope: Scope) -> dict[str, Any] | None:
    if scope.project is None:
        return None
    if scope.include_global:
        return {"$or": [{"project": scope.project}, {"is_global": True}]}
    return {"project": scope.project}


class ChromaSystem(WorkdirStoreSystem):
    """Chroma (`chromadb`), a client per scenario in its working directory."""

    name = "chroma"
    package = "chromadb"

    def _create(self, client: Any, name: str, workdir: Path) -> Collection:
        return ChromaCollection(workdir, name)
