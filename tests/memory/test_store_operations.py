"""Deletion and update in the reference store: a deleted thought leaves every index (FTS5, vec0,
edges), an update re-embeds and re-indexes; the pipeline switches that turn either off."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evalkit.errors import StoreError
from evalkit.memory import DEFAULT_PIPELINE, IN_MEMORY, MemoryStore
from evalkit.records import Edge, Thought


def _store(**pipeline: bool) -> MemoryStore:
    store = MemoryStore(IN_MEMORY, pipeline=replace(DEFAULT_PIPELINE, **pipeline))
    store.add_thoughts(
        [
            Thought("old", "The billing service listens on port 8080"),
            Thought("new", "The billing service listens on port 9090"),
            Thought("other", "Deploys happen every Tuesday afternoon"),
        ]
    )
    store.add_edges([Edge("new", "old", "replaces")])
    return store


def _rows(store: MemoryStore, table: str) -> int:
    return int(store._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_delete_removes_the_row_its_fts5_row_its_vector_and_its_edges():
    with _store() as store:
        assert store.delete_thoughts(["new"]) == 1
        assert (_rows(store, "thoughts"), _rows(store, "thoughts_vec"), _rows(store, "edges")) == (2, 2, 0)
        assert (
            store._conn.execute(
                "SELECT count(*) FROM thoughts_fts WHERE thoughts_fts MATCH '9090'"
            ).fetchone()[0]
            == 0
        )
        hits = store.search("billing port 9090", top_k=5, min_relevance=0, supersession="suppress").hits
        assert [h.id for h in hits][:1] == ["old"]  # no longer superseded: its replacement is gone
        assert "new" not in [h.id for h in hits]


def test_delete_refuses_unknown_or_repeated_ids_and_deletes_nothing():
    with _store() as store:
        with pytest.raises(StoreError, match=r"not stored: 'nope'"):
            store.delete_thoughts(["old", "nope"])
        with pytest.raises(StoreError, match="given twice"):
            store.delete_thoughts(["old", "old"])
        assert store.count() == 3


def test_a_delete_that_keeps_the_text_leaves_the_thought_findable_by_bm25_only():
    with _store(purge_on_delete=False) as store:
        store.delete_thoughts(["new"])
        hits = {h.id: h.match_source for h in store.search("9090", top_k=5, min_relevance=0).hits}
        assert hits["new"] == ("bm25",)


def test_update_reindexes_the_text_and_reembeds_the_content():
    with _store() as store:
        query = "Deploys happen every Tuesday afternoon"
        before = store.search(query, top_k=1, min_relevance=0).hits[0]
        store.update_thought("other", content="Releases ship on Friday mornings")
        hits = {h.id: h for h in store.search(query, top_k=3, min_relevance=0).hits}
        assert before.id == "other" and before.similarity == pytest.approx(1.0, abs=1e-5)
        assert hits["other"].match_source == ("vector",) and hits["other"].similarity < 0.5
        after = {h.id: h for h in store.search("Friday releases ship", top_k=3, min_relevance=0).hits}
        assert after["other"].match_source == ("vector", "bm25")
        assert after["other"].similarity > 0.5
        assert (_rows(store, "thoughts"), _rows(store, "thoughts_vec")) == (3, 3)


def test_update_that_keeps_the_old_vector_ranks_by_the_old_meaning():
    with _store(reembed_on_update=False) as store:
        store.update_thought("other", content="Releases ship on Friday mornings")
        hit = next(
            h
            for h in store.search("Deploys happen every Tuesday afternoon", top_k=3, min_relevance=0).hits
            if h.id == "other"
        )
        assert hit.match_source == ("vector",) and hit.similarity == pytest.approx(1.0, abs=1e-5)


def test_update_of_the_status_only_and_bad_updates():
    with _store() as store:
        store.update_thought("other", status="archived")
        assert (
            store._conn.execute("SELECT status FROM thoughts WHERE id = 'other'").fetchone()[0] == "archived"
        )
        with pytest.raises(StoreError, match="not stored"):
            store.update_thought("nope", content="x")
        with pytest.raises(StoreError, match="status"):
            store.update_thought("other", status="gone")


def test_a_filter_after_the_cut_returns_too_little_of_a_small_project():
    thoughts = [Thought(f"big-{i}", f"cache eviction policy note {i}", project="big") for i in range(60)]
    thoughts.append(Thought("small", "cache eviction policy for the small project", project="small"))
    for pipeline, expected in (({}, ["small"]), ({"filter_before_cut": False}, [])):
        with MemoryStore(IN_MEMORY, pipeline=replace(DEFAULT_PIPELINE, **pipeline)) as store:
            store.add_thoughts(thoughts)
            hits = store.search("cache eviction policy", top_k=5, project="small", min_relevance=0).hits
            assert [h.id for h in hits] == expected
