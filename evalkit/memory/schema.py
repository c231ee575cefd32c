"""DDL of a memory store file (SPEC §1.1). SQL building only; `store.py` executes it."""

from __future__ import annotations

_TOKENIZE_CLAUSES: dict[str, str] = {
    "unicode61": "unicode61",
    "porter": "porter unicode61",
    "trigram": "trigram",
}
"""The FTS5 `tokenize` clause of each `evalkit.memory.options.TOKENIZERS` name."""


def vector_table_sql(dim: int, chunk_size: int | None = None) -> str:
    """The vec0 table `thoughts_vec` for `dim`-dimensional vectors with cosine distance, in chunks
    of `chunk_size` vectors (a multiple of 8; None = sqlite-vec's default, 1024). A KNN query and
    the first insert touch a whole chunk (dim × chunk_size floats), whatever the row count."""
    chunk = "" if chunk_size is None else f", chunk_size={chunk_size}"
    return f"""CREATE VIRTUAL TABLE IF NOT EXISTS thoughts_vec USING vec0(
            embedding float[{dim}] distance_metric=cosine{chunk}
        )"""


def schema_sql(dim: int, tokenizer: str, vector_chunk: int | None = None) -> list[str]:
    """Statements creating a store for `dim`-dimensional vectors and the given FTS5 tokenizer key.

    Thoughts live in `thoughts` (integer rowid shared with the FTS5 and vec0 tables); `thoughts_fts`
    is an external-content FTS5 index kept in sync by triggers; `thoughts_vec` is a vec0 table with
    cosine distance (chunks of `vector_chunk` vectors, see `vector_table_sql`); `edges` is unique
    on (source, target, type) with foreign keys to thoughts.
    """
    return [
        """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS thoughts (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            content TEXT NOT NULL,
            project TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('active', 'draft', 'archived')),
            created_at TEXT NOT NULL,
            is_cluster INTEGER NOT NULL,
            is_global INTEGER NOT NULL,
            importance REAL NOT NULL
        )""",
        f"""CREATE VIRTUAL TABLE IF NOT EXISTS thoughts_fts USING fts5(
            content, content='thoughts', content_rowid='rowid', tokenize='{_TOKENIZE_CLAUSES[tokenizer]}'
        )""",
        """CREATE TRIGGER IF NOT EXISTS thoughts_ai AFTER INSERT ON thoughts BEGIN
            INSERT INTO thoughts_fts(rowid, content) VALUES (new.rowid, new.content);
        END""",
        """CREATE TRIGGER IF NOT EXISTS thoughts_ad AFTER DELETE ON thoughts BEGIN
            INSERT INTO thoughts_fts(thoughts_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
        END""",
        """CREATE TRIGGER IF NOT EXISTS thoughts_au AFTER UPDATE OF content ON thoughts BEGIN
            INSERT INTO thoughts_fts(thoughts_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
            INSERT INTO thoughts_fts(rowid, content) VALUES (new.rowid, new.content);
        END""",
        vector_table_sql(dim, vector_chunk),
        """CREATE TABLE IF NOT EXISTS edges (
            source TEXT NOT NULL REFERENCES thoughts(id),
            target TEXT NOT NULL REFERENCES thoughts(id),
            type TEXT NOT NULL,
            PRIMARY KEY (source, target, type)
        )""",
        """CREATE INDEX IF NOT EXISTS edges_by_target ON edges (target, type)""",
    ]
