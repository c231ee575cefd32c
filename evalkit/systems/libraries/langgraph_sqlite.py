"""LangGraph's `SqliteStore` as the system under test: `--system langgraph-sqlite`, on evalkit's
SQLite driver (`evalkit.sqlite.connect`: sqlean with sqlite-vec, whose vector functions the
store's index needs; the stdlib `sqlite3` of many Python builds cannot load them), one in-memory
database per process. Needs the `langgraph-sqlite` extra.

Namespaces, items and filters are `evalkit.systems.libraries.langgraph`'s; the index config sets
`text_fields` beside `fields`, since `SqliteStore` reads only the former (langchain-ai/langgraph#8808).
Its similarity is sqlite-vec's `1 - vec_distance_cosine`, in float32.
"""

from __future__ import annotations

from typing import Any

from langgraph.store.sqlite import SqliteStore

from evalkit.sqlite import connect
from evalkit.systems.libraries.langgraph import LangGraphSystem, index_config


class LangGraphSqliteSystem(LangGraphSystem):
    """LangGraph's `SqliteStore` on an in-memory SQLite database, one per process."""

    name = "langgraph-sqlite"
    package = "langgraph-checkpoint-sqlite"
    index = "exact cosine (sqlite-vec, float32)"

    def location_label(self) -> str:
        return "in this process, an in-memory SQLite database (evalkit's driver)"

    def _connect(self) -> SqliteStore:
        conn = connect(":memory:")
        conn.isolation_level = None  # the store runs its own BEGIN/COMMIT
        store = SqliteStore(conn, index=index_config(self.embedder))  # type: ignore[arg-type]
        store.setup()
        return store

    def _disconnect(self, client: Any) -> None:
        client.conn.close()
