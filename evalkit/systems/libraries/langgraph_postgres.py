"""LangGraph's `PostgresStore` as the system under test: `--system langgraph-postgres`, on a
private PostgreSQL with pgvector started from the `pgserver` wheel (the one plain `--system
pgvector` starts: a temporary directory, a Unix socket, stopped and deleted when the run ends).
Needs the `langgraph-postgres` extra.

Namespaces, items and filters are `evalkit.systems.libraries.langgraph`'s; the store's tables
are made by its own `setup()` with a flat index (`ann_index_config` kind `flat`: an exact scan by
pgvector's `<=>`, as `--system pgvector` does), or with `--system langgraph-postgres:hnsw` the
HNSW index LangGraph makes by default (approximate: pgvector's defaults, m 16, ef_construction 64,
ef_search 40 candidates before the namespace filter). Workers share the
server and its tables: the owner starts the server and makes the tables before the system is
first pickled, so that no two workers run the store's migrations at once.
"""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row

from evalkit.embedders import Embedder
from evalkit.errors import AdapterError, UsageError
from evalkit.systems.libraries.langgraph import LangGraphSystem, index_config
from evalkit.systems.stores.pgvector import PgvectorSystem

INDEXES = {
    "flat": "exact cosine (pgvector <=>, flat)",
    "hnsw": "approximate cosine (pgvector HNSW, m 16, ef_construction 64, ef_search 40)",
}
"""The index kinds `--system langgraph-postgres[:KIND]` takes → how the report names the search."""


class LangGraphPostgresSystem(LangGraphSystem):
    """LangGraph's `PostgresStore` on a private PostgreSQL, a connection per process; `location`
    is the index kind (`INDEXES`; None: flat)."""

    name = "langgraph-postgres"
    package = "langgraph-checkpoint-postgres"
    location_form = "flat|hnsw"

    def __init__(self, location: str | None = None, embedder: Embedder | None = None) -> None:
        if location is not None and location not in INDEXES:
            raise UsageError(
                f"system 'langgraph-postgres:{location}': the index kind is one of {', '.join(INDEXES)} "
                "(e.g. langgraph-postgres:hnsw)"
            )
        super().__init__(location, embedder)
        self.kind = location or "flat"
        self.index = INDEXES[self.kind]
        self._postgres = PgvectorSystem(None, self.embedder)  # its private server, started on first use

    def location_label(self) -> str:
        return self._postgres.location_label()

    def _connect(self) -> PostgresStore:
        try:
            conn = psycopg.connect(
                self._postgres.url(), autocommit=True, prepare_threshold=0, row_factory=dict_row
            )
        except psycopg.Error as exc:
            raise AdapterError(
                f"system {self.name!r}: cannot connect to {self.location_label()}: {exc}"
            ) from exc
        config = {**index_config(self.embedder), "ann_index_config": {"kind": self.kind}}
        store = PostgresStore(conn, index=config)  # type: ignore[arg-type]
        store.setup()
        return store

    def _disconnect(self, client: Any) -> None:
        client.conn.close()

    def close(self) -> None:
        """Close this process's connection, and stop the private server if this process started it."""
        super().close()
        self._postgres.close()

    def __getstate__(self) -> dict[str, Any]:
        """The server started and the store's tables made (by connecting) before a copy exists."""
        if self._client is None:
            self._client = self._connect()
        return super().__getstate__()
