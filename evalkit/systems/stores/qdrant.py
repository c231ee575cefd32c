"""Qdrant as the system under test: `--system qdrant`, qdrant-client's local mode in memory (no
server). Needs the `qdrant` extra.

Points get integer ids (their seeding position) with the thought's id, project and is_global in
the payload; collections use the cosine distance; the project filter is a payload filter. What
is shared by every store is in `evalkit.systems.stores.common`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models

from evalkit.systems.stores.common import Collection, Row, Scope, StoreSystem


class QdrantCollection:
    """One scenario's Qdrant collection."""

    def __init__(self, client: QdrantClient, name: str, dim: int) -> None:
        self._client = client
        self._name = name
        client.create_collection(
            name, vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE)
        )

    def insert(self, rows: Sequence[Row]) -> None:
        points = [
            models.PointStruct(
                id=row.key,
                vector=row.vector,
                payload={"evalkit_id": row.id, "project": row.project, "is_global": row.is_global},
            )
            for row in rows
        ]
        self._client.upsert(self._name, points=points)

    def nearest(self, vector: list[float], limit: int, scope: Scope) -> list[tuple[str, float]]:
        found = self._client.query_points(
            self._name, query=vector, limit=limit, query_filter=_filter(scope), with_payload=["evalkit_id"]
        )
        return [(str((point.payload or {})["evalkit_id"]), point.score) for point in found.points]

    def drop(self) -> None:
        self._client.delete_collection(self._name)


def _filter(scope: Scope) -> models.Filter | None:
    if scope.project is None:
        return None
    conditions: list[Any] = [
        models.FieldCondition(key="project", match=models.MatchValue(value=scope.project))
    ]
    if scope.include_global:
        conditions.append(models.FieldCondition(key="is_global", match=models.MatchValue(value=True)))
    return models.Filter(should=conditions)


class QdrantSystem(StoreSystem):
    """Qdrant (`qdrant-client`) in local mode, in memory: each process has its own."""

    name = "qdrant"
    package = "qdrant-client"

    def location_label(self) -> str:
        return "in this process, in memory (local mode)"

    def _connect(self) -> QdrantClient:
        return QdrantClient(location=":memory:")

    def _create(self, client: Any, name: str, workdir: Path) -> Collection:
        return QdrantCollection(client, name, self.embedder.dim)

    def _disconnect(self, client: Any) -> None:
        client.close()
