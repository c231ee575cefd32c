"""The embedding cache: a path that is not an evalkit cache is refused untouched;
a damaged one is moved aside.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from evalkit.embedders.cache import EmbeddingCache
from evalkit.errors import EmbedderError, StoreError
from evalkit.sqlite import connect
from tests.fault_matrix.common import (
    assert_refused,
    cli,
    run_args,
    snapshot,
)

# --- the embedding cache ---------------------------------------------------------------------------


def _foreign_sqlite(path: Path) -> None:
    conn = connect(path)
    conn.execute("CREATE TABLE customers (name TEXT)")
    conn.execute("INSERT INTO customers VALUES ('ada')")
    conn.commit()
    conn.close()


CACHE_REFUSALS = {
    "directory": (lambda p: p.mkdir(), ("it is a directory, not a file", "embeddings.sqlite3")),
    "named-pipe": (lambda p: os.mkfifo(p), ("it is a named pipe, not a file",)),
    "another-application-database": (
        _foreign_sqlite,
        ("an SQLite database with the tables customers", "not an evalkit embedding cache"),
    ),
    "text-file": (
        lambda p: p.write_text("my notes\n" * 100),
        ("not a readable SQLite database", "left untouched"),
    ),
    "under-a-file": (
        lambda p: p.parent.write_text("x"),
        ("cannot create its directory",),
    ),
}


@pytest.mark.parametrize("case", sorted(CACHE_REFUSALS))
def test_cache_path_that_is_not_an_evalkit_cache_is_refused_untouched(tmp_path: Path, case: str) -> None:
    make, needles = CACHE_REFUSALS[case]
    path = tmp_path / ("blocker/cache.sqlite3" if case == "under-a-file" else "cache.sqlite3")
    make(path)
    before = snapshot(tmp_path)
    with pytest.raises(EmbedderError) as excinfo:
        EmbeddingCache(path)
    message = str(excinfo.value)
    assert str(path) in message and "--cache none" in message and ".." not in message
    for needle in needles:
        assert needle in message, message
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("case", ["directory", "another-application-database", "text-file"])
def test_real_run_with_a_cache_path_that_is_not_a_cache_exits_2(ws: Path, capsys, case: str) -> None:
    make, needles = CACHE_REFUSALS[case]
    make(ws / "cache.sqlite3")
    before = snapshot(ws)
    code, out, err = cli(capsys, *run_args("--embedder", "real", "--cache", "cache.sqlite3"))
    assert_refused(code, err, "cannot use the embedding cache cache.sqlite3", "--cache none", *needles)
    assert out == "" and ".." not in err
    assert snapshot(ws) == before


@pytest.mark.parametrize("damage", ["truncated", "another-schema-version"])
def test_damaged_evalkit_cache_is_moved_aside_with_a_warning(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "cache.sqlite3"
    with EmbeddingCache(path) as cache:
        cache.put("id", "p", [f"text {i}" for i in range(3000)], [[0.5] * 8] * 3000)
    if damage == "truncated":
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 2)
    else:
        conn = connect(path)
        conn.execute("PRAGMA user_version = 7")
        conn.commit()
        conn.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with EmbeddingCache(path) as cache:
            found = cache.get("id", "p", [f"text {i}" for i in range(3000)], 8)
    assert "damaged" in str(caught[0].message) and str(path) in str(caught[0].message)
    assert len(list(tmp_path.glob("cache.sqlite3.corrupt-*"))) == 1
    assert found.count(None) == 3000


def test_sqlite_open_failure_names_the_path_once_punctuated(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as excinfo:
        connect(tmp_path / "missing" / "store.sqlite3")
    message = str(excinfo.value)
    assert "store.sqlite3" in message and "its folder exists and is writable" in message
    assert ".." not in message and "pip install" not in message
