"""Blank in-memory store databases, copied from a schema template instead of built by DDL.

Creating a store's schema (tables, FTS5 index, triggers, vec0 table) executes a dozen statements,
about 1.3 ms; copying the pages of an already-built blank database with SQLite's backup API takes
about a tenth of that. A run of many small scenarios opens one throw-away store per scenario, so
`blank_database` keeps one template per schema and copies it.
"""

from __future__ import annotations

import os
import threading

from evalkit.memory.schema import schema_sql
from evalkit.sqlite import Connection, connect

_templates = threading.local()
_Key = tuple[int, int, str, int | None]  # (process id, dim, tokenizer, vector chunk)


def blank_database(dim: int, tokenizer: str, vector_chunk: int | None) -> Connection:
    """A new ":memory:" connection (sqlite-vec loaded) holding the empty schema of
    `schema_sql(dim, tokenizer, vector_chunk)`, byte for byte what executing that DDL gives.

    Templates are kept per thread and per process: an SQLite connection must not be used from
    another thread (the driver refuses) nor across a fork (SQLite's rule), and worker processes
    and server threads open stores too. Connection-level settings (PRAGMAs such as foreign_keys)
    are not part of the copy; the caller sets them.
    """
    key = (os.getpid(), dim, tokenizer, vector_chunk)
    templates: dict[_Key, Connection] = _templates.__dict__.setdefault("by_key", {})
    template = templates.get(key)
    if template is None:
        template = connect(":memory:")
        with template:
            for statement in schema_sql(dim, tokenizer, vector_chunk):
                template.execute(statement)
        templates[key] = template
    conn = connect(":memory:")
    template.backup(conn)
    return conn
