"""The reference memory store: SQLite + FTS5 + sqlite-vec with SynaptoMind's search semantics.

One store is one SQLite file (SPEC §1.1), or, for a throw-away store, one in-memory SQLite
database with the same schema (`IN_MEMORY`; the runner's scenario stores). Seeding embeds
thoughts in batches and writes them in a single transaction; `search` runs the vector and BM25
legs in SQL and the ranking steps of `evalkit.memory.pipeline` in Python (SPEC §1.3). Decisions
where the SPEC is silent:

- An empty or token-less query embeds to the zero vector; cosine is undefined there, so the
  vector leg returns nothing. A thought whose vector is zero (content with no token, or an
  explicit zero embedding) is not put in the vec0 index at all: sqlite-vec would give it a NULL
  distance and rank it among real neighbours, taking a slot of the KNN pool. Such a thought is
  found by BM25 only.
- BM25 ties are broken by insertion order (earlier first); vector ties keep vec0's order
  (later inserted first).
- Timestamps are stored as ISO-8601 UTC; a naive datetime is taken to be UTC.
- Edges from a thought to itself are rejected.
- Search options that are not numbers (NaN included) raise StoreError rather than being clamped:
  a NaN `min_relevance` would otherwise silently switch the gate off.
- Text that SQLite cannot store (lone UTF-16 surrogates) is a StoreError when seeding; in a query
  it is deleted by the FTS5 query builder, so `search` still never raises for any query text.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from itertools import islice
from numbers import Real
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from evalkit.embedders import Embedder, HashingEmbedder
from evalkit.errors import StoreError
from evalkit.memory.fts_query import STOPWORD_LISTS
from evalkit.memory.in_memory import blank_database
from evalkit.memory.options import DEFAULT_STORE_OPTIONS, RETRIEVAL_MODES, StoreOptions
from evalkit.memory.pipeline import DEFAULT_PIPELINE, Candidate, RowFilter, SearchPipeline
from evalkit.memory.schema import schema_sql, vector_table_sql
from evalkit.records import (
    DEFAULT_HALF_LIFE_DAYS,
    EDGE_TYPES,
    MAX_TOP_K,
    STATUSES,
    Edge,
    GateCandidate,
    Hit,
    SearchResponse,
    Thought,
    scores_tie,
)
from evalkit.sqlite import connect

DEFAULT_MIN_RELEVANCE = 0.4
"""The relevance gate the service applies when a caller passes min_relevance=None."""

VECTOR_FLOOR = 0.9
"""A vector-only hit below this similarity is `low_confidence`."""

SUPERSESSION_MODES = ("suppress", "flag", "off")
CONTRADICTION_MODES = ("flag", "off")

IN_MEMORY = ":memory:"
"""The `path` of a store kept in memory only (SQLite's name for it)."""

_SEED_BATCH = 1024

WATCH_STEPS = 1000
"""SQLite virtual-machine steps between two checks of a `MemoryStore.watch` function (a few
microseconds of work: a search asks about fifty times, and the checks cost nothing measurable)."""

THROWAWAY_VECTOR_CHUNK = 64
"""vec0 chunk size of a throw-away store until it holds more vectors than that. sqlite-vec's
default chunk (1024 vectors) makes a small store's first insert and every KNN query touch 1.5 MB
(at 384 dimensions): most of the cost of a scenario. A store whose vectors fit in one chunk
ranks exactly as with the default chunk; one that outgrows it is rebuilt with the default chunk
(see `MemoryStore._fit_vector_chunk`), because ties are ordered differently across chunks."""

_CHUNK_SIZE = re.compile(r"chunk_size=(\d+)")


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise StoreError(f"unknown {name} {value!r}; use one of: {', '.join(allowed)}")
    return value


def _number(name: str, value: object) -> float:
    """`value` as a float, or StoreError when it is not a number (NaN included)."""
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value):
        raise StoreError(f"search option {name} must be a number, got {value!r}")
    return float(value)


def _text(what: str, value: object) -> str:
    """`value` when it is a string SQLite can store (valid UTF-8), else StoreError."""
    if not isinstance(value, str):
        raise StoreError(f"{what} must be a string, got {type(value).__name__} {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(
            f"{what} holds a character that is not valid Unicode ({exc.reason} at index {exc.start}); "
            "remove lone surrogates from the text"
        ) from None
    return value


class MemoryStore:
    """A file-backed memory store. Use as a context manager or call `close()`.

    `embedder` embeds passages and queries (default: `HashingEmbedder(384)`); the vector
    dimension follows it. `options` are the store's settings (default retrieval, BM25 tokenizer,
    query syntax; see `StoreOptions`). `pipeline` selects the ranking steps (default: the SPEC's;
    a variant such as a mutation replaces or wraps steps).
    `durable` False makes a throw-away store: the rollback journal is kept in memory and nothing
    is fsynced (`journal_mode=MEMORY`, `synchronous=OFF`). Transactions still commit or roll back
    as a whole while the process lives, and the file is still written at `path`, but a crash or
    power loss can leave it corrupt — for stores deleted after use, such as the runner's
    per-scenario stores. A new throw-away store also keeps its vectors in small chunks while they
    fit in one (`THROWAWAY_VECTOR_CHUNK`). Results are identical either way; the default is a
    durable WAL store.
    `path` ":memory:" (`IN_MEMORY`) is a throw-away store without a file, whatever `durable`
    says: its schema is copied from a template (`blank_database`), much faster than creating it,
    and it is gone when closed. It ranks exactly as a file store does.
    Reopening an existing file with an embedder of another dimension is a StoreError.
    """

    def __init__(
        self,
        path: str | Path,
        embedder: Embedder | None = None,
        *,
        options: StoreOptions = DEFAULT_STORE_OPTIONS,
        pipeline: SearchPipeline = DEFAULT_PIPELINE,
        durable: bool = True,
    ) -> None:
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.options = options
        self.pipeline = pipeline
        self.path = Path(path)
        self._last_ranking: tuple[tuple[Any, ...], tuple[Candidate, ...]] | None = None
        in_memory = str(path) == IN_MEMORY
        chunk = THROWAWAY_VECTOR_CHUNK if in_memory or not durable else None
        if in_memory:
            self._conn = blank_database(self.embedder.dim, options.tokenizer, chunk)
        else:
            self._conn = connect(path)
        try:
            self._conn.execute("PRAGMA foreign_keys = ON")
            if not in_memory:  # a file: new or reopened, its schema made sure of
                self._conn.execute(f"PRAGMA journal_mode = {'WAL' if durable else 'MEMORY'}")
                self._conn.execute(f"PRAGMA synchronous = {'NORMAL' if durable else 'OFF'}")
                with self._conn:
                    for statement in schema_sql(self.embedder.dim, options.tokenizer, chunk):
                        self._conn.execute(statement)
            with self._conn:
                self._conn.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('dim', ?)", (str(self.embedder.dim),)
                )
            stored_dim = int(self._conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()[0])
            if stored_dim != self.embedder.dim:
                raise StoreError(
                    f"store {path} holds {stored_dim}-dimensional vectors but the embedder "
                    f"{self.embedder.identity} makes {self.embedder.dim}; use a new store file"
                )
        except BaseException:
            self._conn.close()
            raise

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; safe to call twice."""
        self._conn.close()

    def interrupt(self) -> None:
        """Abort the SQL statement running on this store, from any thread (SQLite's
        `interrupt`): the call running it raises. For a server's per-request deadline."""
        self._conn.interrupt()

    def watch(self, overdue: Callable[[], bool] | None) -> None:
        """Abort a running SQL statement once `overdue()` returns True: SQLite calls it every
        `WATCH_STEPS` steps of every statement, on the thread running the statement, and the
        statement (so the store call) then raises the driver's OperationalError ("interrupted").
        For a caller that cannot interrupt from another thread because it runs the store's calls
        itself, such as `evalkit serve` on its event loop (its deadline and shutdown are
        `overdue`; being Python code, it also lets the thread's signal handlers run during a long
        statement). None stops watching. Work between statements (embedding, fusion) is not cut."""
        self._conn.set_progress_handler(overdue, WATCH_STEPS if overdue is not None else 0)

    def count(self) -> int:
        """Number of stored thoughts."""
        return int(self._conn.execute("SELECT count(*) FROM thoughts").fetchone()[0])

    # ------------------------------------------------------------------ seeding

    def add_thought(
        self,
        id: str,
        content: str,
        *,
        project: str = "default",
        status: str = "active",
        created_at: datetime | None = None,
        is_cluster: bool = False,
        is_global: bool = False,
        importance: float = 1.0,
        embedding: Sequence[float] | None = None,
    ) -> None:
        """Store one thought; see `add_thoughts` for validation and errors."""
        self.add_thoughts(
            [
                Thought(
                    id=id,
                    content=content,
                    project=project,
                    status=status,
                    created_at=created_at,
                    is_cluster=is_cluster,
                    is_global=is_global,
                    importance=importance,
                    embedding=None if embedding is None else tuple(embedding),
                )
            ]
        )

    def add_thoughts(self, thoughts: Iterable[Thought]) -> int:
        """Store thoughts in one transaction, embedding those without an embedding in batches.

        All or nothing: a duplicate id (in the batch or the store), an empty id, text fields that
        are not strings SQLite can store, a bad status, a created_at that is not a datetime, an
        importance outside [0, 1], or an embedding that is not numeric, of the wrong dimension or
        with non-finite values raises StoreError and stores none of them (nor any earlier batch
        of the same call). Returns the number stored.
        """
        self._last_ranking = None
        now = datetime.now(UTC)
        seen: set[str] = set()
        stored = 0
        iterator = iter(thoughts)
        with self._conn:
            while batch := list(islice(iterator, _SEED_BATCH)):
                self._check_new(batch, seen)
                vectors = self._vectors_for(batch)
                first_rowid = self._next_rowid()
                rows = [
                    (
                        first_rowid + i,
                        t.id,
                        t.content,
                        t.project,
                        t.status,
                        _utc(t.created_at or now).isoformat(),
                        int(t.is_cluster),
                        int(t.is_global),
                        float(t.importance),
                    )
                    for i, t in enumerate(batch)
                ]
                self._conn.executemany("INSERT INTO thoughts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                blobs = [
                    (first_rowid + i, vectors[i].astype("<f4").tobytes())
                    for i in range(len(batch))
                    if vectors[i].any()
                ]
                self._fit_vector_chunk(len(blobs))
                self._conn.executemany("INSERT INTO thoughts_vec(rowid, embedding) VALUES (?, ?)", blobs)
                stored += len(batch)
        return stored

    def _fit_vector_chunk(self, adding: int) -> None:
        """Before `adding` more vectors: a vec0 table with a chunk size of its own (a throw-away
        store's) that would outgrow one chunk is rebuilt with sqlite-vec's default chunk, its
        vectors re-inserted in rowid (= insertion) order, inside the caller's transaction. From
        then on the store is laid out, and ranks ties, exactly like a default store."""
        ddl = self._conn.execute("SELECT sql FROM sqlite_master WHERE name = 'thoughts_vec'").fetchone()[0]
        chunk = _CHUNK_SIZE.search(ddl)
        if chunk is None:
            return
        (count,) = self._conn.execute("SELECT count(*) FROM thoughts_vec").fetchone()
        if count + adding <= int(chunk[1]):
            return
        held = self._conn.execute("SELECT rowid, embedding FROM thoughts_vec ORDER BY rowid").fetchall()
        self._conn.execute("DROP TABLE thoughts_vec")
        self._conn.execute(vector_table_sql(self.embedder.dim))
        self._conn.executemany("INSERT INTO thoughts_vec(rowid, embedding) VALUES (?, ?)", held)

    def _next_rowid(self) -> int:
        return int(self._conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM thoughts").fetchone()[0])

    def _check_new(self, batch: Sequence[Thought], seen: set[str]) -> None:
        for t in batch:
            if not _text("thought id", t.id):
                raise StoreError("thought id must be a non-empty string, got ''")
            _text(f"content of thought {t.id!r}", t.content)
            _text(f"project of thought {t.id!r}", t.project)
            if t.id in seen:
                raise StoreError(
                    f"duplicate thought id {t.id!r} in one add_thoughts call; ids must be unique"
                )
            seen.add(t.id)
            _choice(f"status of thought {t.id!r}:", t.status, STATUSES)
            if t.created_at is not None and not isinstance(t.created_at, datetime):
                raise StoreError(
                    f"thought {t.id!r}: created_at must be a datetime or None, got {t.created_at!r}"
                )
            if isinstance(t.importance, bool) or not isinstance(t.importance, Real):
                raise StoreError(
                    f"thought {t.id!r}: importance must be a number in [0, 1], got {t.importance!r}"
                )
            if not 0.0 <= t.importance <= 1.0:
                raise StoreError(f"thought {t.id!r}: importance {t.importance} is outside [0, 1]")
        existing = self._existing_ids([t.id for t in batch])
        if existing:
            raise StoreError(
                f"thought id(s) already stored: {', '.join(sorted(existing))}; ids must be unique per store"
            )

    def _existing_ids(self, ids: Sequence[str]) -> set[str]:
        rows = self._conn.execute(
            "SELECT id FROM thoughts WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),)
        )
        return {r[0] for r in rows}

    def _vectors_for(self, batch: Sequence[Thought]) -> np.ndarray:
        dim = self.embedder.dim
        vectors = np.zeros((len(batch), dim), dtype=np.float32)
        missing = [i for i, t in enumerate(batch) if t.embedding is None]
        if missing:
            vectors[missing] = self.embedder.embed_passages([batch[i].content for i in missing])
        for i, t in enumerate(batch):
            if t.embedding is not None:
                vectors[i] = self._checked_vector(t.embedding, f"thought {t.id!r}")
        return vectors

    def _checked_vector(self, values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
        try:
            vec = np.asarray(values, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"{what}: embedding must be a sequence of numbers ({exc})") from None
        if vec.shape != (self.embedder.dim,):
            raise StoreError(f"{what}: embedding has shape {vec.shape}, expected ({self.embedder.dim},)")
        if not np.all(np.isfinite(vec)):
            raise StoreError(f"{what}: embedding contains NaN or infinite values")
        return vec

    def add_edge(self, source: str, target: str, type: str = "related") -> None:
        """Link two stored thoughts; see `add_edges`."""
        self.add_edges([Edge(source, target, type)])

    def add_edges(self, edges: Iterable[Edge]) -> None:
        """Store edges in one transaction. Unknown edge types, unknown ids, self loops and an
        edge given twice or already stored (same source, target, type) raise StoreError; nothing
        is stored then."""
        batch = list(edges)
        seen: set[tuple[str, str, str]] = set()
        for e in batch:
            _choice(f"edge type for {e.source!r} -> {e.target!r}:", e.type, EDGE_TYPES)
            if e.source == e.target:
                raise StoreError(f"edge {e.type} from {e.source!r} to itself; an edge needs two thoughts")
            key = (e.source, e.target, e.type)
            if key in seen:
                raise StoreError(
                    f"duplicate edge {e.source!r} -[{e.type}]-> {e.target!r} in one add_edges call"
                )
            seen.add(key)
        known = self._existing_ids([i for e in batch for i in (e.source, e.target)])
        for e in batch:
            for end in (e.source, e.target):
                if end not in known:
                    raise StoreError(
                        f"edge {e.source!r} -[{e.type}]-> {e.target!r}: no thought with id {end!r}"
                    )
        stored = self._conn.execute(
            "SELECT source, target, type FROM edges WHERE source IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted({e.source for e in batch})),),
        )
        for source, target, type_ in stored:
            if (source, target, type_) in seen:
                raise StoreError(
                    f"edge {source!r} -[{type_}]-> {target!r} is already stored; edges are unique"
                )
        self._last_ranking = None
        with self._conn:
            self._conn.executemany(
                "INSERT INTO edges(source, target, type) VALUES (?, ?, ?)",
                [(e.source, e.target, e.type) for e in batch],
            )

    # ------------------------------------------------------------------ operations

    def delete_thoughts(self, ids: Iterable[str]) -> int:
        """Forget the thoughts `ids` in one transaction: their rows, their FTS5 rows (the delete
        trigger), their vectors and every edge touching them (so a thought a deleted one
        superseded is current again). An id not stored (or given twice) raises StoreError and
        nothing is deleted. Returns the number deleted."""
        wanted = list(ids)
        repeated = sorted({i for i in wanted if wanted.count(i) > 1})
        if repeated:
            raise StoreError(f"thought id(s) given twice to delete: {', '.join(repeated)}")
        rowids = dict(
            self._conn.execute(
                "SELECT id, rowid FROM thoughts WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted),),
            ).fetchall()
        )
        missing = [i for i in wanted if i not in rowids]
        if missing:
            raise StoreError(f"cannot delete thought id(s) not stored: {', '.join(map(repr, missing))}")
        self._last_ranking = None
        listed = json.dumps(wanted)
        with self._conn:
            self._conn.execute(
                "DELETE FROM edges WHERE source IN (SELECT value FROM json_each(?1)) "
                "OR target IN (SELECT value FROM json_each(?1))",
                (listed,),
            )
            self._conn.execute(
                "DELETE FROM thoughts_vec WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(list(rowids.values())),),
            )
            if self.pipeline.purge_on_delete:
                self._conn.execute(
                    "DELETE FROM thoughts WHERE id IN (SELECT value FROM json_each(?))", (listed,)
                )
        return len(wanted)

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> None:
        """Replace thought `id`'s content and/or status (None = unchanged) in one transaction.
        New content is re-indexed for BM25 (the update trigger) and re-embedded (its vector
        replaced; a content without tokens leaves no vector, as when seeding). An id not stored,
        a bad status or content SQLite cannot store raises StoreError."""
        row = self._conn.execute("SELECT rowid FROM thoughts WHERE id = ?", (id,)).fetchone()
        if row is None:
            raise StoreError(f"cannot update thought {id!r}: it is not stored")
        if status is not None:
            _choice(f"status of thought {id!r}:", status, STATUSES)
        if content is not None:
            _text(f"content of thought {id!r}", content)
        rowid = int(row[0])
        self._last_ranking = None
        with self._conn:
            if status is not None:
                self._conn.execute("UPDATE thoughts SET status = ? WHERE rowid = ?", (status, rowid))
            if content is None:
                return
            self._conn.execute("UPDATE thoughts SET content = ? WHERE rowid = ?", (content, rowid))
            if not self.pipeline.reembed_on_update:
                return
            vector = np.asarray(self.embedder.embed_passages([content])[0], dtype=np.float32)
            self._conn.execute("DELETE FROM thoughts_vec WHERE rowid = ?", (rowid,))
            if vector.any():
                self._fit_vector_chunk(1)
                self._conn.execute(
                    "INSERT INTO thoughts_vec(rowid, embedding) VALUES (?, ?)",
                    (rowid, vector.astype("<f4").tobytes()),
                )

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        project: str | None = None,
        include_global: bool = False,
        status: str | None = None,
        retrieval: str | None = None,
        supersession: str = "flag",
        contradiction: str = "flag",
        recency_weight: float = 0.0,
        recency_half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
        min_relevance: float | None = None,
        query_embedding: Sequence[float] | np.ndarray | None = None,
        now: datetime | None = None,
    ) -> SearchResponse:
        """Run one query through the SPEC §1.3 pipeline. Never raises for any query text.

        `retrieval` None = the store's `options.retrieval`. Numeric options are clamped (top_k to
        [1, MAX_TOP_K], recency weight to [0, 1], half-life to
        [1, 3650] with non-positive → DEFAULT_HALF_LIFE_DAYS (30), min_relevance to [0, 1] with
        None → DEFAULT_MIN_RELEVANCE);
        unknown mode strings, an unknown status, numeric options that are not numbers (NaN
        included) and a `query_embedding` of the wrong shape or with non-finite values raise
        StoreError.

        The ranking before the gate (steps 1–6) of the last search by text is kept until the
        store changes (here or, for a file, by another connection): a search repeating it with
        another `min_relevance` and the same candidate budget — the gated pass after the
        ungated one, under supersession "suppress" — only applies the gate (and measures less).
        """
        pipe = self.pipeline
        retrieval = _choice("retrieval mode", retrieval or self.options.retrieval, RETRIEVAL_MODES)
        _choice("supersession mode", supersession, SUPERSESSION_MODES)
        _choice("contradiction mode", contradiction, CONTRADICTION_MODES)
        if status is not None:
            _choice("status filter", status, STATUSES)
        top_k = int(_clamp(_number("top_k", top_k), 1, MAX_TOP_K))
        weight = _clamp(_number("recency_weight", recency_weight), 0.0, 1.0)
        half_life = _number("recency_half_life_days", recency_half_life_days)
        half_life = DEFAULT_HALF_LIFE_DAYS if half_life <= 0 else _clamp(half_life, 1.0, 3650.0)
        gate = (
            DEFAULT_MIN_RELEVANCE
            if min_relevance is None
            else _clamp(_number("min_relevance", min_relevance), 0.0, 1.0)
        )
        budget = pipe.budget(top_k, supersession == "suppress", gate > 0.0)
        row_filter = pipe.row_filter(project, include_global, status)
        moment = _utc(now or datetime.now(UTC))
        ranking = (retrieval, budget, row_filter, weight, half_life, moment, supersession, contradiction)
        key = (pipe, self.options, self.embedder, query, ranking, self._data_version())
        if query_embedding is None and self._last_ranking is not None and self._last_ranking[0] == key:
            rows = self._last_ranking[1]
        else:
            rows = self._ranked(query, query_embedding, *ranking)
            if query_embedding is None:
                self._last_ranking = (key, rows)
        kept, candidates, filtered_out = pipe.gate(rows, gate)
        kept_ids = {c.id for c in kept}
        return SearchResponse(
            hits=tuple(
                _hit(rank, c, low_confidence=not pipe.strong(c, VECTOR_FLOOR))
                for rank, c in enumerate(kept[:top_k], start=1)
            ),
            candidates=candidates,
            filtered_out=filtered_out,
            min_relevance=gate,
            dropped_ids=tuple(c.id for c in rows if c.id not in kept_ids),
            gate_candidates=tuple(GateCandidate(c.id, c.bm25_rank is not None, c.similarity) for c in rows)
            if gate > 0.0
            else (),
            cut_tied=_cut_tied(kept, top_k),
        )

    def _data_version(self) -> int:
        """SQLite's counter of commits by other connections to this database (PRAGMA data_version)."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _ranked(
        self,
        query: str,
        query_embedding: Sequence[float] | np.ndarray | None,
        retrieval: str,
        budget: int,
        row_filter: RowFilter,
        weight: float,
        half_life: float,
        now: datetime,
        supersession: str,
        contradiction: str,
    ) -> tuple[Candidate, ...]:
        """SPEC §1.3 steps 1–6 (the legs, fusion, recency and standing): every row the gate then
        judges, in order. The query is embedded here (`query_embedding` None) when the vector
        leg runs."""
        pipe = self.pipeline
        vector: list[Candidate] = []
        if retrieval != "bm25" and pipe.use_vector:
            qvec = (
                self._checked_vector(query_embedding, "query_embedding")
                if query_embedding is not None
                else self.embedder.embed_query(query)
            )
            vector = self._vector_leg(qvec, budget, row_filter)
        bm25: list[Candidate] = []
        if retrieval != "vector" and pipe.use_bm25:
            bm25 = self._bm25_leg(query, budget, row_filter)
        if retrieval == "vector":
            rows = pipe.vector_relevance(vector, budget, pipe.rrf_k)
        else:
            rows = pipe.fuse(vector, bm25, budget, pipe.rrf_k)
        rows = pipe.recency(rows, weight, half_life, now)
        superseded_by, contradicted_by = self._standing_maps([c.id for c in rows])
        return pipe.standing(rows, superseded_by, contradicted_by, supersession, contradiction)

    def _vector_leg(self, qvec: np.ndarray, budget: int, row_filter: RowFilter) -> list[Candidate]:
        """KNN over all rows for the pool, then filters, keeping the first `budget` in vec0 order."""
        if not np.any(qvec):
            return []
        fetched = self.pipeline.pool(budget) if self.pipeline.filter_before_cut else budget
        knn = self._conn.execute(
            "SELECT rowid, distance FROM thoughts_vec WHERE embedding MATCH ? AND k = ?",
            (np.asarray(qvec, dtype="<f4").tobytes(), fetched),
        ).fetchall()
        if not knn:
            return []
        where, params = row_filter.sql("t")
        rows = {
            r[0]: r
            for r in self._conn.execute(
                "SELECT t.rowid, t.id, t.content, t.project, t.created_at, t.is_cluster FROM thoughts t "
                f"WHERE t.rowid IN (SELECT value FROM json_each(?)) AND {where}",
                [json.dumps([rowid for rowid, _ in knn]), *params],
            )
        }
        out: list[Candidate] = []
        for rowid, distance in knn:
            if rowid in rows:
                out.append(_candidate(rows[rowid], similarity=1.0 - distance, vector_rank=len(out) + 1))
                if len(out) == budget:
                    break
        return out

    def _bm25_leg(self, query: str, budget: int, row_filter: RowFilter) -> list[Candidate]:
        """The best pool(`budget`) FTS5 matches passing the filters, score = -bm25()."""
        match = self.pipeline.fts_query(
            query, STOPWORD_LISTS[self.options.stopwords], self.options.query_syntax
        )
        if match is None:
            return []
        where, params = row_filter.sql("t")
        if self.pipeline.filter_before_cut:
            sql = (
                "SELECT t.rowid, t.id, t.content, t.project, t.created_at, t.is_cluster, -bm25(thoughts_fts) "
                "FROM thoughts_fts JOIN thoughts t ON t.rowid = thoughts_fts.rowid "
                f"WHERE thoughts_fts MATCH ? AND {where} ORDER BY bm25(thoughts_fts), t.rowid LIMIT ?"
            )
            arguments = [match, *params, self.pipeline.pool(budget)]
        else:  # the best `budget` rows of every project, then the filter
            sql = (
                "SELECT t.rowid, t.id, t.content, t.project, t.created_at, t.is_cluster, b.score FROM ("
                "SELECT t.rowid AS rowid, -bm25(thoughts_fts) AS score FROM thoughts_fts "
                "JOIN thoughts t ON t.rowid = thoughts_fts.rowid WHERE thoughts_fts MATCH ? "
                "ORDER BY bm25(thoughts_fts), t.rowid LIMIT ?"
                f") b JOIN thoughts t ON t.rowid = b.rowid WHERE {where} ORDER BY -b.score, t.rowid"
            )
            arguments = [match, budget, *params]
        rows = self._conn.execute(sql, arguments).fetchall()
        return [_candidate(r, bm25_score=float(r[6]), bm25_rank=i) for i, r in enumerate(rows, start=1)]

    def _standing_maps(
        self, ids: Sequence[str]
    ) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        """(superseded_by, contradicted_by) for `ids`, in one query; lists sorted by id."""
        if not ids:
            return {}, {}
        superseded: defaultdict[str, set[str]] = defaultdict(set)
        contradicted: defaultdict[str, set[str]] = defaultdict(set)
        for type_, this, other in self._conn.execute(
            "SELECT type, target, source FROM edges WHERE type = 'replaces' "
            "AND target IN (SELECT value FROM json_each(?1)) "
            "UNION ALL SELECT type, source, target FROM edges WHERE type = 'contradicts' "
            "AND source != target AND source IN (SELECT value FROM json_each(?1)) "
            "UNION ALL SELECT type, target, source FROM edges WHERE type = 'contradicts' "
            "AND source != target AND target IN (SELECT value FROM json_each(?1))",
            (json.dumps(list(ids)),),
        ):
            (superseded if type_ == "replaces" else contradicted)[this].add(other)
        return (
            {k: tuple(sorted(v)) for k, v in superseded.items()},
            {k: tuple(sorted(v)) for k, v in contradicted.items()},
        )


def _cut_tied(kept: Sequence[Candidate], top_k: int) -> bool:
    """Whether the first row below the top_k cut ranks level with the last row kept: the same
    standing and a tying score (the recency-combined score when recency ran, else relevance,
    which orders the fused rows). False when no row was cut."""
    if len(kept) <= top_k:
        return False
    last, below = kept[top_k - 1], kept[top_k]
    score = lambda c: c.relevance if c.final_score is None else c.final_score  # noqa: E731
    return last.standing == below.standing and scores_tie(score(last), score(below))


def _hit(rank: int, c: Candidate, *, low_confidence: bool) -> Hit:
    return Hit(
        id=c.id,
        content=c.content,
        project=c.project,
        rank=rank,
        similarity=c.similarity,
        distance=None if c.similarity is None else 1.0 - c.similarity,
        match_source=c.match_source,  # type: ignore[arg-type]
        rrf_score=c.rrf_score,
        bm25_score=c.bm25_score,
        relevance=c.relevance,
        low_confidence=low_confidence,
        standing=c.standing,  # type: ignore[arg-type]
        superseded_by=c.superseded_by,
        contradicted_by=c.contradicted_by,
        recency_score=c.recency_score,
        final_score=c.final_score,
    )


def _candidate(row: Sequence[Any], **legs: Any) -> Candidate:
    return Candidate(
        rowid=row[0],
        id=row[1],
        content=row[2],
        project=row[3],
        created_at=datetime.fromisoformat(row[4]),
        is_cluster=bool(row[5]),
        **legs,
    )
