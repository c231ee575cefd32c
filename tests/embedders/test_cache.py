"""Tests for evalkit.embedders.cache: hits and misses, keys, persistence, damage recovery,
degraded operation and two processes writing one file at once."""

from __future__ import annotations

import hashlib
import multiprocessing
import pickle
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import platformdirs
import pytest

from evalkit.embedders import HashingEmbedder, Vectors
from evalkit.embedders.cache import (
    ENV_VAR,
    CachedEmbedder,
    CacheStats,
    EmbeddingCache,
    default_cache_path,
    text_key,
)
from evalkit.errors import EmbedderError
from evalkit.harness.executors import ProcessExecutor
from evalkit.sqlite import connect


class CountingEmbedder:
    """HashingEmbedder that records every text it is asked to encode."""

    def __init__(self, dim: int = 64) -> None:
        self._inner = HashingEmbedder(dim)
        self.query_calls: list[str] = []
        self.passage_calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def identity(self) -> str:
        return self._inner.identity

    def embed_query(self, text: str) -> Vectors:
        self.query_calls.append(text)
        return self._inner.embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        self.passage_calls.append(list(texts))
        return self._inner.embed_passages(texts)


class PrefixedEmbedder(CountingEmbedder):
    """An embedder that declares its prefixes, as SentenceTransformerEmbedder does."""

    def __init__(self, name: str, query_prefix: str, passage_prefix: str) -> None:
        super().__init__()
        self._name = name
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix

    @property
    def identity(self) -> str:
        return f"{self._name} {self.query_prefix!r} {self.passage_prefix!r}"

    def embed_query(self, text: str) -> Vectors:
        return super().embed_query(self.query_prefix + text)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return super().embed_passages([self.passage_prefix + t for t in texts])


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    with EmbeddingCache(tmp_path / "cache.sqlite3") as opened:
        yield opened


def test_second_call_encodes_nothing(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    texts = ["alpha beta gamma", "delta epsilon zeta"]
    first = cached.embed_passages(texts)
    second = cached.embed_passages(texts)
    assert inner.passage_calls == [texts]
    assert cached.stats == CacheStats(hits=2, misses=2)
    expected = HashingEmbedder(64).embed_passages(texts)
    assert first.dtype == np.float32 and second.dtype == np.float32
    assert np.array_equal(first, expected)
    assert np.array_equal(second, expected)


def test_only_distinct_misses_are_encoded_in_one_batch(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    cached.embed_passages(["known text"])
    result = cached.embed_passages(["known text", "new one", "other new", "new one"])
    assert inner.passage_calls == [["known text"], ["new one", "other new"]]
    assert cached.stats == CacheStats(hits=1, misses=4)
    expected = HashingEmbedder(64).embed_passages(["known text", "new one", "other new", "new one"])
    assert np.array_equal(result, expected)
    assert len(cache) == 3


def test_empty_batch_touches_neither_cache_nor_model(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    result = cached.embed_passages([])
    assert result.shape == (0, 64) and result.dtype == np.float32
    assert inner.passage_calls == []
    assert cached.stats == CacheStats(hits=0, misses=0)


def test_queries_are_cached(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    first = cached.embed_query("where is the config file")
    second = cached.embed_query("where is the config file")
    assert inner.query_calls == ["where is the config file"]
    assert cached.stats == CacheStats(hits=1, misses=1)
    assert first.shape == (64,)
    assert np.array_equal(first, second)
    assert np.array_equal(first, HashingEmbedder(64).embed_query("where is the config file"))


def test_embedder_without_prefixes_keys_queries_apart_from_passages(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    cached.embed_passages(["same words"])
    cached.embed_query("same words")
    assert inner.query_calls == ["same words"]
    assert cached.stats == CacheStats(hits=0, misses=2)


def test_equal_prefixes_let_a_query_reuse_a_cached_passage(cache: EmbeddingCache) -> None:
    inner = PrefixedEmbedder("minilm", "", "")
    cached = CachedEmbedder(inner, cache)
    cached.embed_passages(["same words"])
    vector = cached.embed_query("same words")
    assert inner.query_calls == []
    assert cached.stats == CacheStats(hits=1, misses=1)
    assert np.array_equal(vector, HashingEmbedder(64).embed_query("same words"))


def test_different_prefixes_are_different_keys(cache: EmbeddingCache) -> None:
    inner = PrefixedEmbedder("e5", "query: ", "passage: ")
    cached = CachedEmbedder(inner, cache)
    cached.embed_passages(["same words"])
    vector = cached.embed_query("same words")
    assert inner.query_calls == ["query: same words"]
    assert cached.stats == CacheStats(hits=0, misses=2)
    assert np.array_equal(vector, HashingEmbedder(64).embed_query("query: same words"))


def test_same_text_with_another_model_is_a_miss(cache: EmbeddingCache) -> None:
    first = CachedEmbedder(PrefixedEmbedder("model-a", "", ""), cache)
    second_inner = PrefixedEmbedder("model-b", "", "")
    second = CachedEmbedder(second_inner, cache)
    first.embed_passages(["shared sentence"])
    second.embed_passages(["shared sentence"])
    assert second_inner.passage_calls == [["shared sentence"]]
    assert second.stats == CacheStats(hits=0, misses=1)
    assert len(cache) == 2


def test_vectors_persist_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with EmbeddingCache(path) as cache:
        CachedEmbedder(CountingEmbedder(), cache).embed_passages(["kept between runs"])
    inner = CountingEmbedder()
    with EmbeddingCache(path) as cache:
        cached = CachedEmbedder(inner, cache)
        cached.embed_passages(["kept between runs"])
    assert inner.passage_calls == []
    assert cached.stats == CacheStats(hits=1, misses=0)


def test_a_pickled_copy_reads_and_writes_the_same_file_as_the_original(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with EmbeddingCache(path) as cache:
        original = CachedEmbedder(CountingEmbedder(), cache)
        original.embed_passages(["stored before pickling"])
        copy = pickle.loads(pickle.dumps(original))
        assert (copy.cache.path, copy.identity, copy.dim) == (path, original.identity, original.dim)
        copy.embed_passages(["stored before pickling", "stored by the copy"])
        assert copy.inner.passage_calls[-1] == ["stored by the copy"]
        assert copy.stats == CacheStats(hits=1, misses=2)  # counts on from the pickled (0, 1)
        original.embed_passages(["stored by the copy"])
        assert original.inner.passage_calls == [["stored before pickling"]]
        copy.cache.close()


def test_unpickling_never_opens_the_file_and_the_first_lookup_does(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with EmbeddingCache(path) as cache:
        shipped = pickle.dumps(cache)
    path.unlink()
    path.mkdir()  # the file became unusable between pickling and the worker's first lookup
    copy = pickle.loads(shipped)
    with pytest.raises(EmbedderError, match="not a file"):
        copy.get("identity", "<passage>", ["text"], 4)
    copy.close()  # nothing was opened: nothing to close


def _encode_in_worker(job: tuple[CachedEmbedder, list[str]]) -> CacheStats:
    embedder, texts = job
    embedder.embed_passages(texts)
    return embedder.stats


def test_copies_on_worker_processes_share_the_file(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "cache.sqlite3") as cache:
        cached = CachedEmbedder(HashingEmbedder(64), cache)  # pickled with its connection open
        jobs = [(cached, [f"worker {n} text {i}" for i in range(5)]) for n in (1, 2)]
        assert list(ProcessExecutor(2).map(_encode_in_worker, jobs)) == [CacheStats(0, 5)] * 2
        assert len(cache) == 10
        assert list(ProcessExecutor(2).map(_encode_in_worker, jobs)) == [CacheStats(5, 0)] * 2
        texts = [text for _, batch in jobs for text in batch]
        assert np.array_equal(cached.embed_passages(texts), HashingEmbedder(64).embed_passages(texts))
        assert cached.stats == CacheStats(hits=10, misses=0)


def test_rows_hold_sha256_keys_and_little_endian_float32(cache: EmbeddingCache) -> None:
    CachedEmbedder(CountingEmbedder(), cache).embed_passages(["abc"])
    conn = connect(cache.path)
    rows = conn.execute("SELECT identity, prefix, text_sha256, vector FROM embeddings").fetchall()
    conn.close()
    vector = HashingEmbedder(64).embed_query("abc")
    assert rows == [("hashing-fnv1a-64", "<passage>", text_key("abc"), vector.astype("<f4").tobytes())]


def test_text_key_is_sha256_of_utf8() -> None:
    assert text_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert text_key("é") == hashlib.sha256("é".encode()).hexdigest()
    assert len(text_key("lone \ud800 surrogate")) == 64


def test_stored_vector_of_another_dimension_is_a_miss_and_is_replaced(cache: EmbeddingCache) -> None:
    cache.put("model", "", ["text"], np.ones((1, 8), dtype=np.float32))
    assert cache.get("model", "", ["text"], 4) == [None]
    cache.put("model", "", ["text"], np.full((1, 4), 0.5, dtype=np.float32))
    (vector,) = cache.get("model", "", ["text"], 4)
    assert vector is not None and np.array_equal(vector, np.full(4, 0.5, dtype=np.float32))


def test_existing_row_of_right_length_is_kept(cache: EmbeddingCache) -> None:
    cache.put("model", "", ["text"], np.full((1, 4), 0.5, dtype=np.float32))
    cache.put("model", "", ["text"], np.full((1, 4), 0.25, dtype=np.float32))
    (vector,) = cache.get("model", "", ["text"], 4)
    assert vector is not None and np.array_equal(vector, np.full(4, 0.5, dtype=np.float32))


def test_default_path_is_user_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert default_cache_path() == Path(platformdirs.user_cache_dir("evalkit")) / "embeddings.sqlite3"


def test_env_var_overrides_default_and_argument_overrides_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "from-env" / "cache.sqlite3"))
    assert default_cache_path() == tmp_path / "from-env" / "cache.sqlite3"
    with EmbeddingCache() as cache:
        assert cache.path == tmp_path / "from-env" / "cache.sqlite3"
    assert (tmp_path / "from-env" / "cache.sqlite3").is_file()
    with EmbeddingCache(tmp_path / "arg.sqlite3") as cache:
        assert cache.path == tmp_path / "arg.sqlite3"


def _assert_rebuilt(path: Path, caught: list[warnings.WarningMessage]) -> EmbeddingCache:
    """The damaged file is announced, moved aside, and a working empty cache took its place."""
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and str(path) in messages[0] and "damaged" in messages[0]
    moved = sorted(path.parent.glob(f"{path.name}.corrupt-*"))
    assert moved and str(moved[0]) in messages[0]
    cache = EmbeddingCache(path)
    assert len(cache) == 0
    cached = CachedEmbedder(CountingEmbedder(), cache)
    cached.embed_passages(["after the rebuild"])
    cached.embed_passages(["after the rebuild"])
    assert cached.stats == CacheStats(hits=1, misses=1)
    return cache


def _open_catching(path: Path) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        EmbeddingCache(path).close()
    return caught


def _assert_refused_untouched(path: Path, content: bytes, reason: str) -> None:
    """Not an evalkit cache: refused with the fix, the file left as it was, nothing moved."""
    with pytest.raises(EmbedderError) as excinfo:
        EmbeddingCache(path)
    message = str(excinfo.value)
    assert str(path) in message and reason in message and "not an evalkit embedding cache" in message
    assert "left untouched" in message and "--cache none" in message and ".." not in message
    assert path.read_bytes() == content
    assert list(path.parent.glob(f"{path.name}.corrupt-*")) == []


def test_garbage_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not a database " * 200)
    _assert_refused_untouched(path, b"this is not a database " * 200, "not a readable SQLite database")


def test_damaged_file_still_open_elsewhere_is_moved_with_its_wal(tmp_path: Path) -> None:
    """Another process still holds an old-schema cache and its live WAL: the WAL must move with
    it, or the new cache would replay foreign frames."""
    path = tmp_path / "cache.sqlite3"
    EmbeddingCache(path).close()
    other = connect(path)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("PRAGMA user_version = 99")
    other.execute("CREATE TABLE notes (body TEXT)")
    other.execute("INSERT INTO notes VALUES ('kept')")
    other.commit()
    assert Path(f"{path}-wal").stat().st_size > 0
    caught = _open_catching(path)
    _assert_rebuilt(path, caught).close()
    assert len(list(tmp_path.glob("cache.sqlite3.corrupt-*-wal"))) == 1
    assert other.execute("SELECT body FROM notes").fetchall() == [("kept",)]
    other.close()


def test_truncated_file_is_rebuilt_when_read_and_the_batch_re_encoded(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    texts = [f"sentence number {i}" for i in range(3000)]
    with EmbeddingCache(path) as cache:
        CachedEmbedder(CountingEmbedder(dim=384), cache).embed_passages(texts)
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    inner = CountingEmbedder(dim=384)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = EmbeddingCache(path)
        vectors = CachedEmbedder(inner, cache).embed_passages(texts)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and str(path) in messages[0] and "damaged" in messages[0]
    assert len(list(tmp_path.glob("cache.sqlite3.corrupt-*"))) == 1
    assert inner.passage_calls == [texts]
    assert np.array_equal(vectors, HashingEmbedder(384).embed_passages(texts))
    assert len(cache) == 3000
    cache.close()


def test_database_of_another_application_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    conn = connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    _assert_refused_untouched(path, path.read_bytes(), "an SQLite database with the tables notes")


def test_cache_of_another_schema_version_is_rebuilt_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    EmbeddingCache(path).close()
    conn = connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    caught = _open_catching(path)
    _assert_rebuilt(path, caught).close()


def test_directory_as_cache_path_raises_embedder_error_with_fix(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError) as excinfo:
        EmbeddingCache(tmp_path)
    message = str(excinfo.value)
    assert str(tmp_path) in message and ENV_VAR in message and "cache=False" in message


def test_cache_under_a_file_raises_embedder_error_with_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(EmbedderError, match="cannot create its directory"):
        EmbeddingCache(blocker / "cache.sqlite3")


def test_write_blocked_by_another_writer_warns_and_still_returns_vectors(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with EmbeddingCache(path, timeout=0.01) as cache:
        other = connect(path)
        other.execute("BEGIN IMMEDIATE")
        cached = CachedEmbedder(CountingEmbedder(), cache)
        with pytest.warns(RuntimeWarning, match="write failed"):
            vectors = cached.embed_passages(["blocked write"])
        other.rollback()
        other.close()
        assert np.array_equal(vectors, HashingEmbedder(64).embed_passages(["blocked write"]))
        assert len(cache) == 0
        cached.embed_passages(["blocked write"])
        assert len(cache) == 1


def test_table_dropped_mid_run_degrades_to_uncached_with_warnings(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with EmbeddingCache(path) as cache:
        inner = CountingEmbedder()
        cached = CachedEmbedder(inner, cache)
        cached.embed_passages(["before the drop"])
        other = connect(path)
        other.execute("DROP TABLE embeddings")
        other.commit()
        other.close()
        with pytest.warns(RuntimeWarning) as caught:
            vectors = cached.embed_passages(["before the drop"])
        with pytest.warns(RuntimeWarning, match="count failed"):
            assert len(cache) == 0
    messages = [str(w.message) for w in caught]
    assert any("lookup failed" in m for m in messages) and any("write failed" in m for m in messages)
    assert inner.passage_calls == [["before the drop"], ["before the drop"]]
    assert np.array_equal(vectors, HashingEmbedder(64).embed_passages(["before the drop"]))


def _write_many(path: str, worker: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    """Child process: open the (possibly not yet existing) cache and write shared and own texts in
    many small batches; any cache warning is an error."""
    warnings.simplefilter("error")
    barrier.wait()
    with EmbeddingCache(path) as cache:
        cached = CachedEmbedder(HashingEmbedder(64), cache)
        for batch in range(30):
            texts = [f"shared text {batch} {i}" for i in range(10)]
            texts += [f"worker {worker} text {batch} {i}" for i in range(10)]
            cached.embed_passages(texts)
            cached.embed_query(f"shared query {batch}")


def test_two_processes_writing_same_and_different_keys(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [context.Process(target=_write_many, args=(str(path), n, barrier)) for n in (1, 2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [process.exitcode for process in workers] == [0, 0]
    assert list(tmp_path.glob("*.corrupt-*")) == []
    with EmbeddingCache(path) as cache:
        assert len(cache) == 30 * 10 + 2 * 30 * 10 + 30
        texts = [f"shared text {b} {i}" for b in range(30) for i in range(10)]
        texts += [f"worker {w} text {b} {i}" for w in (1, 2) for b in range(30) for i in range(10)]
        found = [v for v in cache.get("hashing-fnv1a-64", "<passage>", texts, 64) if v is not None]
        assert len(found) == len(texts)
        assert np.array_equal(np.stack(found), HashingEmbedder(64).embed_passages(texts))
    conn = connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
