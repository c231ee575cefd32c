"""A persistent embedding cache (one SQLite file) and the `CachedEmbedder` that uses it.

Location: the `path` argument, else the `EVALKIT_EMBED_CACHE` environment variable, else
`platformdirs.user_cache_dir("evalkit")/embeddings.sqlite3`.

Key: (embedder identity, prefix applied, sha256 of the text as UTF-8 hex) → little-endian float32
blob. "Prefix applied" is the literal prefix for embedders that declare `query_prefix` /
`passage_prefix` (so with equal prefixes a query reuses a cached passage vector), and the role
(`<query>` / `<passage>`) for embedders that do not. The identity must change whenever the vectors
would: a local model directory whose weights are replaced in place keeps its identity, so clear
the cache (delete the file) after retraining into the same directory.

Concurrency: several processes may share one file. WAL journal, a busy timeout, one short
`BEGIN IMMEDIATE` transaction per write (after encoding, never around it), and inserts that keep
an existing row of the right length (`ON CONFLICT ... DO UPDATE ... WHERE` the stored blob has a
different length, which heals a row left by a model of another dimension).

Damage: only a file recognised as an evalkit cache is ever moved. It is one when its SQLite
header carries evalkit's application id (set on creation) or the cache's schema version, or
when it holds an `embeddings` table. Such a file that has another schema version, or reports
corruption (SQLITE_CORRUPT, SQLITE_NOTADB) when opened or read — a truncated file, say — is
renamed to `<name>.corrupt-<time>-<pid>` (with its -wal/-shm) and replaced by an empty cache,
with a RuntimeWarning naming both files; the failed lookup or write is retried once on the new
file. Anything else at the path — a directory, a file that is not SQLite, another application's
SQLite database — is refused with an EmbedderError and left untouched (a typo in `--cache` must
never move the user's database).
Any other failure of a lookup or write (disk full, a lock held past the timeout) warns and is
treated as a miss / skipped: the cache never stops a run. A process that still has the old file
open keeps using it until it closes; its writes to it are lost, which costs only re-encoding.

Workers: an `EmbeddingCache` (and so a `CachedEmbedder`) can be pickled, to ship a real-mode run
to worker processes or Ray. The copy carries the path and the timeout, never the connection: it
opens its own connection to the same file on its first lookup or write (a file that has become
unusable in between raises EmbedderError there, in the worker). On Ray across machines, each
machine has its own file at that path unless the path is on a shared file system.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np
import platformdirs

from evalkit.embedders.base import Embedder, Vectors
from evalkit.errors import EmbedderError, StoreError
from evalkit.files import file_kind
from evalkit.sqlite import Connection, DatabaseError, connect

ENV_VAR = "EVALKIT_EMBED_CACHE"
SCHEMA_VERSION = 2
APPLICATION_ID = 0x65766B63
"""SQLite `application_id` of cache files evalkit creates ("evkc"); files made before it was
set are recognised by their schema version or their `embeddings` table."""
_SQLITE_MAGIC = b"SQLite format 3\x00"
_COLUMNS = ["identity", "prefix", "text_sha256", "vector"]
_CREATE = """
CREATE TABLE embeddings (
    identity TEXT NOT NULL,
    prefix TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (identity, prefix, text_sha256)
)
"""
_SELECT = (
    "SELECT text_sha256, vector FROM embeddings WHERE identity = ? AND prefix = ? "
    "AND text_sha256 IN (SELECT value FROM json_each(?))"
)
_UPSERT = (
    "INSERT INTO embeddings (identity, prefix, text_sha256, vector) VALUES (?, ?, ?, ?) "
    "ON CONFLICT DO UPDATE SET vector = excluded.vector "
    "WHERE length(embeddings.vector) != length(excluded.vector)"
)
_T = TypeVar("_T")
_P = TypeVar("_P")
_SQLITE_BUSY = 5  # SQLite primary result codes
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def default_cache_path() -> Path:
    """`$EVALKIT_EMBED_CACHE` if set and non-empty, else the per-user cache directory's file."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return Path(platformdirs.user_cache_dir("evalkit")) / "embeddings.sqlite3"


def text_key(text: str) -> str:
    """sha256 hex of the text's UTF-8 bytes (lone surrogates are kept, never an error)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class _Damaged(Exception):
    """Internal: the cache file is an evalkit cache, but not a healthy one."""


class _Foreign(Exception):
    """Internal: the file is readable SQLite but not an evalkit cache (its tables are listed)."""


class EmbeddingCache:
    """The SQLite-backed vector store behind `CachedEmbedder` (see the module docstring).

    `timeout` is the busy timeout in seconds for waiting on other writers. Raises EmbedderError
    when the file cannot be created or opened at all (bad directory, permissions): at construction,
    so a bad path fails before a run starts. A pickled copy reopens the file lazily (see the module
    docstring).
    """

    def __init__(self, path: str | Path | None = None, *, timeout: float = 30.0) -> None:
        self._path = Path(path) if path is not None else default_cache_path()
        self._timeout = timeout
        self._conn: Connection | None = self._open()

    def __getstate__(self) -> tuple[Path, float]:
        """The path and the timeout: a connection belongs to the process that opened it."""
        return self._path, self._timeout

    def __setstate__(self, state: tuple[Path, float]) -> None:
        self._path, self._timeout = state
        self._conn = None  # opened by the first lookup or write (`_guarded`)

    @property
    def path(self) -> Path:
        return self._path

    def get(self, identity: str, prefix: str, texts: Sequence[str], dim: int) -> list[Vectors | None]:
        """The cached vector for each text (None for a miss), in one query. A stored blob whose
        length is not `dim` float32 values counts as a miss."""
        if not texts:
            return []
        keys = [text_key(t) for t in texts]
        params = (identity, prefix, json.dumps(sorted(set(keys))))
        rows = self._guarded("lookup", "encoding the batch without the cache", _select, params)
        found = {key: blob for key, blob in rows or [] if len(blob) == 4 * dim}
        return [np.frombuffer(found[k], dtype="<f4").astype(np.float32) if k in found else None for k in keys]

    def put(self, identity: str, prefix: str, texts: Sequence[str], vectors: Vectors) -> None:
        """Store one vector per text in one short transaction (existing rows are kept)."""
        rows = [
            (identity, prefix, text_key(t), np.asarray(v, dtype="<f4").tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        if rows:
            self._guarded("write", f"{len(rows)} vectors were not cached", _write, rows)

    def __len__(self) -> int:
        """Number of stored vectors (0, with a warning, when the file cannot be read)."""
        return self._guarded("count", "reporting 0", _count, ()) or 0

    def close(self) -> None:
        """Close the connection (a copy that never opened one has nothing to close)."""
        if self._conn is not None:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _guarded(self, what: str, fallback: str, op: Callable[[Connection, _P], _T], params: _P) -> _T | None:
        """`op(connection, params)`, opening the connection first in a pickled copy (EmbedderError
        if the file cannot be opened). On damage the file is moved aside and `op` retried once on a
        fresh cache; any other database error (or a second failure) warns and returns None."""
        if self._conn is None:
            self._conn = self._open()
        for attempt in (1, 2):
            try:
                return op(self._conn, params)
            except DatabaseError as exc:
                if self._conn.in_transaction:
                    self._conn.rollback()
                if attempt == 2 or not _is_damage(exc) or not _looks_like_cache(self._path):
                    self._warn(f"{what} failed ({exc}); {fallback}")
                    return None
                self._conn.close()
                self._discard(self._opened_inode, str(exc))
                self._conn = self._open()
        return None

    def _open(self) -> Connection:
        """Connect and check the schema; a damaged evalkit cache is moved aside once and replaced,
        anything else at the path is refused (see the module docstring)."""
        if self._path.exists() and not self._path.is_file():
            kind = file_kind(self._path.stat().st_mode)
            example = self._path / "embeddings.sqlite3" if self._path.is_dir() else "a file path"
            raise EmbedderError(
                self._unusable(f"it is {kind}, not a file; give a file path such as {example}")
            )
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbedderError(self._unusable(f"cannot create its directory ({exc})")) from None
        for _attempt in range(2):
            inode = _inode(self._path)
            try:
                conn = connect(self._path, timeout=self._timeout)
            except StoreError as exc:
                raise EmbedderError(self._unusable(str(exc))) from None
            try:
                _prepare(conn, self._timeout)
            except _Foreign as exc:
                conn.close()
                raise EmbedderError(
                    self._foreign(f"it is an SQLite database with the tables {exc}")
                ) from None
            except (DatabaseError, _Damaged) as exc:
                conn.close()
                if not _is_damage(exc):
                    raise EmbedderError(self._unusable(str(exc))) from None
                if not _looks_like_cache(self._path):
                    raise EmbedderError(
                        self._foreign(f"it is not a readable SQLite database ({exc})")
                    ) from None
                self._discard(inode, str(exc))
                continue
            self._opened_inode = _inode(self._path)
            return conn
        raise EmbedderError(self._unusable("a freshly created cache file was damaged again"))

    def _discard(self, inode: int | None, reason: str) -> None:
        """Move the damaged file (and its -wal/-shm: a stale WAL must never be replayed into the
        new file) aside, unless another process already replaced it since we opened `inode`."""
        if _inode(self._path) != inode:
            return
        stamp = time.strftime("%Y%m%dT%H%M%S")
        target = self._path.with_name(f"{self._path.name}.corrupt-{stamp}-{os.getpid()}")
        os.replace(self._path, target)
        for suffix in ("-wal", "-shm"):
            sidecar = Path(f"{self._path}{suffix}")
            if sidecar.exists():
                os.replace(sidecar, Path(f"{target}{suffix}"))
        warnings.warn(
            f"embedding cache {self._path} is damaged ({reason}); moved it to {target} and started an "
            "empty cache (vectors will be re-encoded once)",
            RuntimeWarning,
            stacklevel=2,
        )

    def _warn(self, message: str) -> None:
        warnings.warn(f"embedding cache {self._path}: {message}", RuntimeWarning, stacklevel=2)

    def _unusable(self, reason: str) -> str:
        return (
            f"cannot use the embedding cache {self._path}: {reason.rstrip('.')}. Point --cache (or "
            f"{ENV_VAR}, or the cache argument) at a writable file, or run without the cache "
            "(--cache none / use_cache=False)."
        )

    def _foreign(self, reason: str) -> str:
        return self._unusable(
            f"{reason}, not an evalkit embedding cache, so it was left untouched; if that path was a "
            "typo, fix it, and if it is a damaged cache, delete it"
        )


def _select(conn: Connection, params: tuple[str, str, str]) -> list[tuple[str, bytes]]:
    return conn.execute(_SELECT, params).fetchall()


def _write(conn: Connection, rows: list[tuple[str, str, str, bytes]]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(_UPSERT, rows)
    conn.commit()


def _count(conn: Connection, params: tuple[()]) -> int:
    return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def _looks_like_cache(path: Path) -> bool:
    """Whether the SQLite header of `path` marks an evalkit cache: evalkit's application id, or
    (files made before it was set) the cache's schema version as user_version."""
    try:
        with path.open("rb") as handle:
            header = handle.read(72)
    except OSError:
        return False
    if len(header) < 72 or not header.startswith(_SQLITE_MAGIC):
        return False
    user_version, application_id = int.from_bytes(header[60:64], "big"), int.from_bytes(header[68:72], "big")
    return application_id == APPLICATION_ID or user_version == SCHEMA_VERSION


def _is_damage(exc: Exception) -> bool:
    if isinstance(exc, _Damaged):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def _enable_wal(conn: Connection, timeout: float) -> None:
    """Switch to WAL, retrying on SQLITE_BUSY: SQLite does not call the busy handler for this
    pragma, so two processes creating the same new file would otherwise see "database is locked"."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except DatabaseError as exc:
            busy = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == _SQLITE_BUSY
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _tables(conn: Connection) -> list[str]:
    return sorted(row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))


def _application_id(conn: Connection) -> int:
    return int(conn.execute("PRAGMA application_id").fetchone()[0])


def _prepare(conn: Connection, timeout: float) -> None:
    """WAL mode, then create the schema or check it (under a write lock, so two processes creating
    the same new file do not race). No full integrity check: it would read the whole file on every
    open; damage in pages this check does not read surfaces when a lookup or write reads them.
    A database of another application (tables, but neither an `embeddings` table nor evalkit's
    application id) raises _Foreign before anything, WAL mode included, changes the file."""
    tables = _tables(conn)
    if tables and "embeddings" not in tables and _application_id(conn) != APPLICATION_ID:
        raise _Foreign(", ".join(tables))
    _enable_wal(conn, timeout)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = _tables(conn)
        if version == 0 and not tables:
            conn.execute(_CREATE)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        else:
            columns = [row[1] for row in conn.execute("PRAGMA table_info(embeddings)")]
            if version != SCHEMA_VERSION or columns != _COLUMNS:
                raise _Damaged(f"unexpected schema: user_version {version}, tables {tables}")
        conn.commit()
    finally:
        if conn.in_transaction:
            conn.rollback()


@runtime_checkable
class _Prefixed(Protocol):
    @property
    def query_prefix(self) -> str: ...

    @property
    def passage_prefix(self) -> str: ...


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counts of requested texts served from the cache (`hits`) or not found there (`misses`).
    A text repeated within one call counts once per occurrence but is encoded once."""

    hits: int
    misses: int


class CachedEmbedder:
    """An Embedder that serves vectors from `cache` and encodes only what is missing.

    Per call: one lookup for all texts, one batched call to the inner embedder for the distinct
    missing texts, one write transaction for them. Same `dim` and `identity` as `inner`.
    It pickles when `inner` does (the cache reopens its file in the copy); `stats` count the calls
    made through one object, so a copy shipped to a worker counts on from the counts it was
    pickled with, and the original does not see the copy's calls.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self._inner = inner
        self._cache = cache
        if isinstance(inner, _Prefixed):
            self._query_key, self._passage_key = inner.query_prefix, inner.passage_prefix
        else:
            self._query_key, self._passage_key = "<query>", "<passage>"
        self._hits = 0
        self._misses = 0

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def identity(self) -> str:
        return self._inner.identity

    @property
    def inner(self) -> Embedder:
        return self._inner

    @property
    def cache(self) -> EmbeddingCache:
        return self._cache

    @property
    def stats(self) -> CacheStats:
        return CacheStats(hits=self._hits, misses=self._misses)

    def embed_query(self, text: str) -> Vectors:
        def encode(texts: list[str]) -> Vectors:
            return self._inner.embed_query(texts[0])[None, :]

        return self._cached([text], self._query_key, encode)[0]

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._cached(texts, self._passage_key, self._inner.embed_passages)

    def _cached(self, texts: Sequence[str], prefix: str, encode: Callable[[list[str]], Vectors]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        found = self._cache.get(self.identity, prefix, texts, self.dim)
        for i, (text, vector) in enumerate(zip(texts, found, strict=True)):
            if vector is None:
                missing.setdefault(text, []).append(i)
            else:
                out[i] = vector
        n_missing = sum(len(positions) for positions in missing.values())
        self._hits += len(texts) - n_missing
        self._misses += n_missing
        if missing:
            fresh = np.asarray(encode(list(missing)), dtype=np.float32)
            for vector, positions in zip(fresh, missing.values(), strict=True):
                out[positions] = vector
            self._cache.put(self.identity, prefix, list(missing), fresh)
        return out
