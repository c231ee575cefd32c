"""Seeding and storage of the reference store (SPEC §1.1, §1.2): layout, validation, atomicity."""

from __future__ import annotations

import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from evalkit.embedders import HashingEmbedder
from evalkit.errors import StoreError
from evalkit.memory import IN_MEMORY, MemoryStore, StoreOptions
from evalkit.records import Edge, Thought
from evalkit.sqlite import Connection, connect


@pytest.fixture(params=["durable", "throwaway", "in-memory"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[MemoryStore]:
    """Every store test runs on a durable store, a throw-away file (durable=False) and an
    in-memory store."""
    path = IN_MEMORY if request.param == "in-memory" else tmp_path / "store.sqlite3"
    with MemoryStore(path, HashingEmbedder(dim=8), durable=request.param == "durable") as s:
        yield s


@contextmanager
def committed(store: MemoryStore) -> Iterator[Connection]:
    """What the store has committed, read through a connection of its own (a file store) or
    through the store's connection (an in-memory store has no other)."""
    if str(store.path) == IN_MEMORY:
        yield store._conn
        return
    conn = connect(store.path)
    try:
        yield conn
    finally:
        conn.close()


def table_count(store: MemoryStore, table: str) -> int:
    with committed(store) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


# ---------------------------------------------------------------- layout


def test_vectors_are_stored_as_little_endian_float32_blobs(store: MemoryStore) -> None:
    store.add_thought("a", "the deploy server listens on port 8080")
    with committed(store) as conn:
        (blob,) = conn.execute("SELECT embedding FROM thoughts_vec WHERE rowid = 1").fetchone()
    assert len(blob) == 8 * 4
    expected = HashingEmbedder(dim=8).embed_passages(["the deploy server listens on port 8080"])[0]
    np.testing.assert_array_equal(np.frombuffer(blob, dtype="<f4"), expected)


def test_vec0_table_uses_cosine_distance(store: MemoryStore) -> None:
    with committed(store) as conn:
        (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'thoughts_vec'").fetchone()
    assert "distance_metric=cosine" in sql
    assert "float[8]" in sql


def test_fts_index_follows_the_thoughts_table(store: MemoryStore) -> None:
    store.add_thoughts([Thought("a", "alpha words"), Thought("b", "beta words")])
    with committed(store) as conn:
        rows = conn.execute("SELECT rowid FROM thoughts_fts WHERE thoughts_fts MATCH 'beta'").fetchall()
    assert rows == [(2,)]


def test_explicit_embedding_is_stored_as_given(store: MemoryStore) -> None:
    vector = [0.5, -0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0]
    store.add_thought("a", "text that would embed differently", embedding=vector)
    with committed(store) as conn:
        (blob,) = conn.execute("SELECT embedding FROM thoughts_vec").fetchone()
    assert np.frombuffer(blob, dtype="<f4").tolist() == vector


def test_zero_vector_thought_is_not_put_in_the_vector_index(store: MemoryStore) -> None:
    store.add_thoughts([Thought("tokenless", "OK"), Thought("worded", "several real words")])
    assert store.count() == 2
    assert table_count(store, "thoughts_vec") == 1


def test_fields_and_defaults_are_stored(store: MemoryStore) -> None:
    before = datetime.now(UTC)
    store.add_thought("a", "alpha")
    store.add_thought(
        "b",
        "beta",
        project="proj",
        status="draft",
        created_at=datetime(2025, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=2))),
        is_cluster=True,
        is_global=True,
        importance=0.25,
    )
    store.add_thought("c", "gamma", created_at=datetime(2025, 3, 1, 12, 0))
    with committed(store) as conn:
        rows = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT id, project, status, created_at, is_cluster, is_global, importance FROM thoughts"
            )
        }
    project, status, created, cluster, is_global, importance = rows["a"]
    assert (project, status, cluster, is_global, importance) == ("default", "active", 0, 0, 1.0)
    assert before <= datetime.fromisoformat(created) <= datetime.now(UTC)
    assert rows["b"] == ("proj", "draft", "2025-03-01T10:00:00+00:00", 1, 1, 0.25)
    assert rows["c"][2] == "2025-03-01T12:00:00+00:00"  # naive means UTC


def test_add_thoughts_returns_count_and_accepts_a_generator(store: MemoryStore) -> None:
    assert store.add_thoughts(Thought(f"t{i}", f"thought number {i}") for i in range(2500)) == 2500
    assert store.count() == 2500
    assert table_count(store, "thoughts_vec") == 2500


def test_reopening_a_store_keeps_its_thoughts(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with MemoryStore(path, HashingEmbedder(dim=8)) as s:
        s.add_thought("a", "alpha words")
    with MemoryStore(path, HashingEmbedder(dim=8)) as s:
        assert s.count() == 1
        assert s.search("alpha", retrieval="bm25").ids == ["a"]


def test_reopening_with_another_dimension_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    MemoryStore(path, HashingEmbedder(dim=8)).close()
    with pytest.raises(StoreError, match=r"8-dimensional vectors.*makes 16; use a new store file"):
        MemoryStore(path, HashingEmbedder(dim=16))


def test_unknown_tokenizer_is_an_error(tmp_path: Path) -> None:
    unknown = "unknown tokenizer 'snowball'; use one of: unicode61, porter, trigram"
    with pytest.raises(StoreError, match=unknown):
        MemoryStore(tmp_path / "s.sqlite3", options=StoreOptions(tokenizer="snowball"))


def test_unopenable_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open SQLite database"):
        MemoryStore(tmp_path / "missing-dir" / "s.sqlite3")


@pytest.mark.parametrize(("durable", "journal", "synchronous"), [(True, "wal", 1), (False, "memory", 0)])
def test_a_throwaway_store_skips_only_durability(
    tmp_path: Path, durable: bool, journal: str, synchronous: int
) -> None:
    path = tmp_path / "s.sqlite3"
    with MemoryStore(path, HashingEmbedder(dim=8), durable=durable) as s:
        s.add_thoughts([Thought("a", "the deploy port is 8080"), Thought("b", "the cache ttl")])
        assert s._conn.execute("PRAGMA journal_mode").fetchone()[0] == journal
        assert s._conn.execute("PRAGMA synchronous").fetchone()[0] == synchronous
        ids = s.search("deploy port", min_relevance=0).ids
    assert ids == ["a", "b"]
    assert path.is_file()  # still one file at `path`, readable after close
    with MemoryStore(path, HashingEmbedder(dim=8)) as reopened:
        assert reopened.count() == 2


def test_an_in_memory_store_has_the_schema_and_settings_its_ddl_gives(tmp_path: Path) -> None:
    """The schema copied from the template equals the one the DDL creates in a throw-away file."""
    listing = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
    for options in (StoreOptions(), StoreOptions(tokenizer="porter")):
        with (
            MemoryStore(tmp_path / f"{options.tokenizer}.sqlite3", HashingEmbedder(dim=8), options=options,
                        durable=False) as on_disk,
            MemoryStore(IN_MEMORY, HashingEmbedder(dim=8), options=options) as in_memory,
        ):  # fmt: skip
            assert in_memory._conn.execute(listing).fetchall() == on_disk._conn.execute(listing).fetchall()
            assert in_memory._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            assert in_memory._conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()[0] == "8"


def test_in_memory_stores_are_independent_and_open_in_any_thread() -> None:
    """Each in-memory store is its own database; threads (a server's) get templates of their own."""

    def seeded_search(n: int) -> list[str]:
        with MemoryStore(IN_MEMORY, HashingEmbedder(dim=8)) as s:
            s.add_thoughts(Thought(f"t{i}", f"deploy note {i}") for i in range(n))
            return s.search("deploy note", top_k=10, min_relevance=0).ids

    with ThreadPoolExecutor(max_workers=2) as pool:
        in_threads = list(pool.map(seeded_search, [1, 2, 3, 4]))
    assert in_threads == [seeded_search(n) for n in (1, 2, 3, 4)]
    assert [len(ids) for ids in in_threads] == [1, 2, 3, 4]


def test_close_twice_is_safe(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path / "s.sqlite3")
    s.close()
    s.close()


# ---------------------------------------------------------------- thought validation


def test_duplicate_id_in_one_call_is_an_error(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match="duplicate thought id 'a' in one add_thoughts call"):
        store.add_thoughts([Thought("a", "one"), Thought("a", "two")])


def test_id_already_stored_is_an_error(store: MemoryStore) -> None:
    store.add_thought("a", "one")
    with pytest.raises(StoreError, match="already stored: a; ids must be unique"):
        store.add_thought("a", "two")


def test_wrong_embedding_dimension_is_an_error(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match=r"thought 'a': embedding has shape \(3,\), expected \(8,\)"):
        store.add_thought("a", "one", embedding=[1.0, 0.0, 0.0])


def test_non_numeric_embedding_is_an_error(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match="thought 'a': embedding must be a sequence of numbers"):
        store.add_thought("a", "one", embedding=["x"] * 8)  # type: ignore[list-item]


def test_non_finite_embedding_is_an_error(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match="thought 'a': embedding contains NaN or infinite values"):
        store.add_thought("a", "one", embedding=[math.nan] + [0.0] * 7)


@pytest.mark.parametrize(
    ("thought", "message"),
    [
        (Thought("", "x"), "thought id must be a non-empty string"),
        (Thought(7, "x"), "thought id must be a string, got int"),  # type: ignore[arg-type]
        (Thought("a", None), "content of thought 'a' must be a string"),  # type: ignore[arg-type]
        (Thought("a", "x", project=None), "project of thought 'a' must be a string"),  # type: ignore[arg-type]
        (
            Thought("a", "bad \ud800 text"),
            "content of thought 'a' holds a character that is not valid Unicode",
        ),
        (Thought("a", "x", status="deleted"), "unknown status of thought 'a': 'deleted'; use one of: active"),
        (Thought("a", "x", importance=1.5), "thought 'a': importance 1.5 is outside"),
        (Thought("a", "x", importance=math.nan), "thought 'a': importance nan is outside"),
        (Thought("a", "x", created_at="2025-01-01"), "created_at must be a datetime"),  # type: ignore[arg-type]
    ],
)
def test_invalid_thought_is_an_error_naming_it(store: MemoryStore, thought: Thought, message: str) -> None:
    with pytest.raises(StoreError, match=message.replace("(", r"\(")):
        store.add_thoughts([thought])
    assert store.count() == 0


def test_failed_add_thoughts_stores_nothing_across_batches(store: MemoryStore) -> None:
    store.add_thought("existing", "already here")
    batch = [Thought(f"t{i}", f"thought number {i}") for i in range(1500)]
    batch.append(Thought("existing", "a clash after more than one seeding batch"))
    with pytest.raises(StoreError, match="already stored: existing"):
        store.add_thoughts(batch)
    assert store.count() == 1
    assert table_count(store, "thoughts_fts") == 1
    assert table_count(store, "thoughts_vec") == 1
    assert store.search("thought number", retrieval="bm25", min_relevance=0).ids == []


def test_failed_add_thoughts_with_bad_embedding_late_in_batch_stores_nothing(store: MemoryStore) -> None:
    batch = [Thought(f"t{i}", f"thought {i}") for i in range(5)] + [Thought("bad", "x", embedding=(1.0,))]
    with pytest.raises(StoreError, match="thought 'bad': embedding has shape"):
        store.add_thoughts(batch)
    assert store.count() == 0
    assert table_count(store, "thoughts_vec") == 0


# ---------------------------------------------------------------- edges


@pytest.fixture
def seeded(store: MemoryStore) -> MemoryStore:
    store.add_thoughts([Thought("a", "alpha"), Thought("b", "beta"), Thought("c", "gamma")])
    return store


def test_edges_are_stored(seeded: MemoryStore) -> None:
    seeded.add_edges([Edge("b", "a", "replaces"), Edge("a", "c", "contradicts")])
    seeded.add_edge("a", "b")
    assert table_count(seeded, "edges") == 3


def test_unknown_edge_type_is_an_error(seeded: MemoryStore) -> None:
    with pytest.raises(
        StoreError, match="unknown edge type for 'a' -> 'b': 'supersedes'; use one of: related"
    ):
        seeded.add_edge("a", "b", "supersedes")


def test_edge_to_missing_thought_is_an_error(seeded: MemoryStore) -> None:
    with pytest.raises(StoreError, match="edge 'a' -\\[related\\]-> 'zzz': no thought with id 'zzz'"):
        seeded.add_edge("a", "zzz")


def test_edge_from_missing_thought_is_an_error(seeded: MemoryStore) -> None:
    with pytest.raises(StoreError, match="no thought with id 'ghost'"):
        seeded.add_edge("ghost", "a", "replaces")


def test_self_loop_edge_is_an_error(seeded: MemoryStore) -> None:
    with pytest.raises(StoreError, match="edge contradicts from 'a' to itself"):
        seeded.add_edge("a", "a", "contradicts")


def test_edge_already_stored_is_an_error(seeded: MemoryStore) -> None:
    seeded.add_edge("b", "a", "replaces")
    with pytest.raises(StoreError, match="edge 'b' -\\[replaces\\]-> 'a' is already stored"):
        seeded.add_edge("b", "a", "replaces")
    seeded.add_edge("b", "a", "related")  # another type between the same ends is a different edge


def test_duplicate_edge_in_one_call_is_an_error(seeded: MemoryStore) -> None:
    with pytest.raises(StoreError, match="duplicate edge 'a' -\\[supports\\]-> 'b' in one add_edges call"):
        seeded.add_edges([Edge("a", "b", "supports"), Edge("a", "b", "supports")])


def test_failed_add_edges_stores_nothing(seeded: MemoryStore) -> None:
    with pytest.raises(StoreError, match="no thought with id 'missing'"):
        seeded.add_edges([Edge("a", "b", "related"), Edge("a", "missing", "related")])
    assert table_count(seeded, "edges") == 0


@pytest.mark.parametrize("batches", [[40], [40, 24], [40, 30], [150], [10, 10, 60, 200]])
def test_a_throwaway_store_ranks_ties_exactly_like_a_durable_one(tmp_path: Path, batches: list[int]) -> None:
    """Throw-away stores (files and in-memory) keep vectors in small vec0 chunks until they outgrow
    one, then switch to the default chunk: vec0's tie order (later inserted first) must never
    differ from a durable store's, before or after the switch. Five distinct vectors repeated
    make many exact ties."""
    rng = np.random.default_rng(7)
    base = rng.normal(size=(5, 8))
    total = sum(batches)
    vectors = [tuple(base[i % 5]) for i in range(total)]
    rankings = []
    for path, durable in (
        (tmp_path / "durable.sqlite3", True),
        (tmp_path / "t.sqlite3", False),
        (IN_MEMORY, False),
    ):
        with MemoryStore(path, HashingEmbedder(dim=8), durable=durable) as s:
            start = 0
            for size in batches:
                s.add_thoughts(
                    Thought(f"t{i}", f"note {i}", embedding=vectors[i]) for i in range(start, start + size)
                )
                start += size
            rankings.append(
                [s.search("", query_embedding=base[q], retrieval="vector", top_k=total, min_relevance=0).ids
                 for q in range(5)]
            )  # fmt: skip
    assert rankings[0] == rankings[1] == rankings[2]
    assert all(len(ids) == total for ids in rankings[0])


def test_a_throwaway_store_outgrowing_its_small_chunks_switches_to_the_default(tmp_path: Path) -> None:
    def ddl(store: MemoryStore) -> str:
        return store._conn.execute("SELECT sql FROM sqlite_master WHERE name = 'thoughts_vec'").fetchone()[0]

    with MemoryStore(tmp_path / "s.sqlite3", HashingEmbedder(dim=8), durable=False) as s:
        s.add_thoughts(Thought(f"a{i}", f"alpha note {i}") for i in range(64))
        assert "chunk_size=64" in ddl(s)
        s.add_thoughts([Thought("b", "beta note")])
        assert "chunk_size" not in ddl(s)
        assert table_count(s, "thoughts_vec") == 65
        assert s.search("beta", retrieval="vector", min_relevance=0).ids[0] == "b"


# ---------------------------------------------------------------- watch (evalkit serve's inline calls)


def test_a_watch_that_says_overdue_stops_the_running_statement_and_none_stops_watching(
    store: MemoryStore,
) -> None:
    from evalkit.sqlite import OperationalError

    store.add_thoughts([Thought(id=f"t{i}", content=f"note {i} about caching") for i in range(40)])
    now = datetime(2026, 1, 1, tzinfo=UTC)
    caching, note = (store.search(query, top_k=5, now=now) for query in ("caching", "note about"))
    asked: list[int] = []
    store.watch(lambda: bool(asked.append(1)))  # asked, never overdue: the same results
    assert store.search("caching", top_k=5, now=now) == caching  # (the last ranking is note's)
    assert asked
    store.watch(lambda: True)
    with pytest.raises(OperationalError, match="interrupted"):
        store.search("note about", top_k=5, now=now)
    store.watch(None)
    assert store.search("note about", top_k=5, now=now) == note
