"""The built-in memory-library systems (evalkit.systems.libraries): langgraph, langgraph-sqlite,
langgraph-postgres, mem0, txtai.

Every library runs for real and offline, with evalkit's hashing embedder plugged into it:
LangGraph's InMemoryStore, its SqliteStore on evalkit's SQLite driver, its PostgresStore on a
private PostgreSQL from the `pgserver` wheel (started and stopped by the system), mem0 with
infer=False on an in-memory Qdrant, txtai's numpy index. The upstream quirks each system handles
(or surfaces) are shown on the library itself, then on the system.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import sys
from datetime import UTC, datetime
from typing import Any, ClassVar

import numpy as np
import pytest

import evalkit
from evalkit import Thought
from evalkit.embedders import HashingEmbedder
from evalkit.errors import AdapterError, UsageError
from evalkit.harness.executors import make_executor
from evalkit.systems.base import OpenContext, SearchOptions
from evalkit.systems.libraries import LIBRARIES, common
from evalkit.systems.libraries.common import LibrarySystem
from evalkit.systems.resolve import resolve_system
from tests.shared import cli, cli_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)
STORE_LIKE = ["langgraph", "langgraph-sqlite", "langgraph-postgres", "mem0"]
"""The library systems whose metrics on the built-in suite are exactly the vector stores'
(exact cosine over the run's embedder, the same filters and tie rule)."""


@pytest.fixture(params=sorted(LIBRARIES))
def spec(request: pytest.FixtureRequest) -> str:
    return request.param


def _system(spec: str) -> LibrarySystem:
    system = resolve_system(spec, evalkit.ReferenceSystem)
    assert isinstance(system, LibrarySystem)
    return system


def _search(memory: Any, query: str, top_k: int = 5, **options: Any) -> list[str]:
    settings = {"project": None, "min_relevance": None, "recency_weight": 0.0, "recency_half_life_days": 30.0}
    response = memory.search(query, SearchOptions(top_k=top_k, now=NOW, **{**settings, **options}))
    assert [hit.rank for hit in response.hits] == list(range(1, len(response.hits) + 1))
    assert all(hit.similarity is not None for hit in response.hits)
    return response.ids


def _rankings(run: Any) -> list[tuple[str, int, list[str], dict[str, float], list[float | None]]]:
    return [
        (s.name, q.index, q.retrieved, q.metrics, [h.similarity for h in q.hits])
        for s in run.result.scenarios
        for q in s.queries
    ]


def test_every_library_runs_the_built_in_suite_twice_with_identical_results(spec):
    first, second = (evalkit.run_eval(system=spec, thresholds=None) for _ in range(2))
    assert _rankings(first) == _rankings(second)
    assert first.result.overall == second.result.overall
    assert first.result.overall.metrics["recall"] > 0.9
    # the capabilities it declares: filters, deletion and update; nothing the suite's other scenarios need
    assert sorted(first.result.not_applicable) == [
        "contradiction",
        "contradiction-flagged",
        "explicit-fact-gated",
        "no-match",
        "recency",
        "recency-gentle",
        "supersession",
        "supersession-history",
    ]
    assert first.result.provenance.system["library"].startswith(f"{_system(spec).package} ")
    assert first.result.provenance.system["embedder"] == HashingEmbedder().identity
    if spec in STORE_LIKE:  # the same ranking as a vector store (similarities: to float32 precision)
        qdrant = _rankings(evalkit.run_eval(system="qdrant", thresholds=None))
        assert [r[:4] for r in _rankings(first)] == [r[:4] for r in qdrant]


def test_a_library_records_its_own_baseline_passes_it_and_fails_when_broken(
    spec, tmp_path, capsys, monkeypatch
):
    own = ["--thresholds", str(tmp_path / "own.json"), "--out", str(tmp_path / "r.json"), "--history", "none"]
    assert cli_record(capsys, "run", "--system", spec, *own)[0] == 0
    code, out, _ = cli(capsys, "run", "--system", spec, *own, "--require-baseline")
    assert code == 0, out
    assert "Verdict: PASS" in out
    top_hits = common.top_hits

    def best_hit_lost(*args: Any) -> Any:
        response = top_hits(*args)
        hits = tuple(dataclasses.replace(hit, rank=hit.rank - 1) for hit in response.hits[1:])
        return dataclasses.replace(response, hits=hits)

    monkeypatch.setattr(common, "top_hits", best_hit_lost)
    code, out, _ = cli(capsys, "run", "--system", spec, *own, "--require-baseline")
    assert code == 1, out
    assert "[metric] overall: recall" in out and "Verdict: FAIL" in out


def test_libraries_rank_ties_later_seeded_first_whatever_the_cut(spec, tmp_path):
    system = _system(spec)
    twins = [Thought(f"t{i}", "the same words every time") for i in range(6)]
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("other", "something unrelated entirely"), *twins])
        assert _search(memory, "the same words every time", top_k=2) == ["t5", "t4"]
        assert _search(memory, "the same words every time", top_k=6) == ["t5", "t4", "t3", "t2", "t1", "t0"]
    system.close()


def test_libraries_filter_by_project_and_global_thoughts(spec, tmp_path):
    system = _system(spec)
    thoughts = [
        Thought("a1", "deploy the billing service", project="alpha"),
        Thought("b1", "deploy the billing service today", project="beta"),
        Thought("g1", "deploy checklist for every service", project="beta", is_global=True),
    ]
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts(thoughts)
        assert set(_search(memory, "deploy billing")) == {"a1", "b1", "g1"}
        assert _search(memory, "deploy billing", project="alpha") == ["a1"]
        assert set(_search(memory, "deploy billing", project="alpha", include_global=True)) == {"a1", "g1"}
        assert _search(memory, "deploy billing", project="gamma") == []
    system.close()


def test_libraries_delete_and_update_through_the_library(spec, tmp_path):
    system = _system(spec)
    assert {"deletion", "update"} <= system.capabilities
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts(
            [
                Thought("port", "the orders API listens on port 8443"),
                Thought("x", "weather report for tomorrow"),
            ]
        )
        assert _search(memory, "orders API port", top_k=1) == ["port"]
        memory.update_thought("port", content="the cafeteria serves tomato soup on fridays")
        assert _search(memory, "tomato soup fridays", top_k=1) == ["port"]
        memory.update_thought("port", status="archived")  # content kept, still found
        assert _search(memory, "tomato soup fridays", top_k=1) == ["port"]
        memory.delete_thoughts(["port"])
        assert "port" not in _search(memory, "tomato soup fridays")
        assert _search(memory, "weather report tomorrow") == ["x"]
    system.close()


def test_scenarios_are_isolated_and_emptied_when_they_close(spec, tmp_path):
    system = _system(spec)
    with system.open(OpenContext(tmp_path)) as first, system.open(OpenContext(tmp_path)) as second:
        first.add_thoughts([Thought("mine", "a canary only the first scenario holds")])
        second.add_thoughts([Thought("yours", "something else entirely")])
        assert _search(first, "a canary only the first scenario holds") == ["mine"]
        assert _search(second, "a canary only the first scenario holds") in ([], ["yours"])
    with pytest.raises(RuntimeError, match="boom"), system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("x", "a thought")])
        assert _items(system) in (1, None)
        raise RuntimeError("boom")
    assert _items(system) in (0, None)
    system.close()


def _items(system: LibrarySystem) -> int | None:
    """How many items the system's shared store holds, every scenario's; None for txtai, whose
    scenarios each have an index of their own (and nothing shared)."""
    if system.name == "txtai":
        assert system._client is None
        return None
    if system.name == "mem0":
        return system._client.vector_store.client.count("evalkit").count
    return len(system._client.search(("evalkit",), limit=1000))


def test_a_library_pickles_without_its_client_and_the_copy_searches(spec, tmp_path):
    system = _system(spec)
    with system.open(OpenContext(tmp_path / "a")):
        pass  # the original is connected now
    copy = pickle.loads(pickle.dumps(system))
    assert copy._client is None
    with copy.open(OpenContext(tmp_path / "b")) as memory:
        memory.add_thoughts([Thought("x", "pickled stores still search"), Thought("y", "nothing alike")])
        assert _search(memory, "pickled stores search", top_k=1) == ["x"]
    copy.close()
    system.close()


def test_workers_give_the_serial_report(spec):
    serial = evalkit.run_eval(system=spec, thresholds=None)
    workers = make_executor("processes", 2)
    assert _rankings(evalkit.run_eval(system=spec, thresholds=None, executor=workers)) == _rankings(serial)


def test_the_cli_runs_a_library_offline_and_names_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, out, _ = cli(
        capsys, "run", "--system", "langgraph", "--out", str(tmp_path / "r.json"), "--history", "none"
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["provenance"]["system"]["library"].startswith("langgraph ")
    assert report["provenance"]["system"]["location"] == "in this process, in memory (InMemoryStore)"
    assert "system langgraph" in out and code == 0  # NOT GATED: the built-in baselines are the reference's


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_a_missing_extra_says_which_one_to_install(library, monkeypatch):
    module, _ = LIBRARIES[library]
    hidden = {
        "langgraph": "langgraph.store.memory",
        "langgraph-sqlite": "langgraph.store.sqlite",
        "langgraph-postgres": "langgraph.store.postgres",
        "mem0": "mem0",
        "txtai": "txtai",
    }
    monkeypatch.setitem(sys.modules, hidden[library], None)
    monkeypatch.delitem(sys.modules, f"evalkit.systems.{module}", raising=False)
    install = rf"pip install 'evalkit-memory\[{library}\]'"
    with pytest.raises(UsageError, match=rf"needs the '{library}' extra .*{install}"):
        resolve_system(library, evalkit.ReferenceSystem)


# --- LangGraph's quirks: on the library, then on the system ------------------------------------------


def test_langgraph_namespaces_match_as_prefixes_and_the_system_refuses_a_leak(tmp_path):
    from langgraph.store.memory import InMemoryStore

    from evalkit.systems.libraries.langgraph import index_config

    store = InMemoryStore(index=index_config(HashingEmbedder()))  # type: ignore[arg-type]
    store.put(("users", "a"), "k", {"content": "a note of user a"})
    store.put(("users", "a", "b"), "k", {"content": "a note of user a/b"})
    found = store.search(("users", "a"), query="a note")
    assert {tuple(item.namespace) for item in found} == {("users", "a"), ("users", "a", "b")}  # upstream
    system = _system("langgraph")
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("mine", "a note of this scenario")])
        (namespace,) = system._client.list_namespaces(prefix=("evalkit",))
        system._client.put((*namespace, "below"), "theirs", {"content": "a note"})
        with pytest.raises(AdapterError, match=r"returned item 'theirs' of namespace .*not isolated"):
            _search(memory, "a note", top_k=1)
        system._client.delete((*namespace, "below"), "theirs")
    system.close()


def test_langgraph_in_memory_store_pads_with_unscored_items_which_are_no_hits(tmp_path):
    from langgraph.store.memory import InMemoryStore

    from evalkit.systems.libraries.langgraph import LangGraphNamespace, index_config

    store = InMemoryStore(index=index_config(HashingEmbedder()))  # type: ignore[arg-type]
    store.put(("ns",), "indexed", {"content": "an indexed note"})
    store.put(("ns",), "unindexed", {"content": "a note put without an index"}, index=False)
    assert [(i.key, i.score is None) for i in store.search(("ns",), query="note", limit=5)] == [
        ("indexed", False),
        ("unindexed", True),
    ]  # upstream: asked for more than it holds vectors for, it pads with score None
    namespace = LangGraphNamespace(store, "x", "langgraph")
    store.put(("evalkit", "x"), "unindexed", {"content": "put without an index"}, index=False)
    namespace.put([common.Note("n", 0, "an indexed note", "default", False, "active")])
    scope = common.Scope(None, False)
    assert namespace.nearest("note", 5, scope) == [("n", pytest.approx(0.7071067811865475))]


def test_langgraph_in_memory_store_fails_a_batch_putting_one_text_twice_and_the_system_splits_it(tmp_path):
    from langgraph.store.base import PutOp
    from langgraph.store.memory import InMemoryStore

    from evalkit.systems.libraries.langgraph import index_config

    store = InMemoryStore(index=index_config(HashingEmbedder()))  # type: ignore[arg-type]
    twice = [PutOp(("ns",), key, {"content": "one text"}) for key in ("a", "b")]
    with pytest.raises(
        ValueError, match=r"Number of embeddings \(1\) does not match number of indices \(2\)"
    ):
        store.batch(twice)  # upstream: one embedding per distinct text, one index per item
    system = _system("langgraph")
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("a", "one text"), Thought("b", "one text"), Thought("c", "another")])
        assert _search(memory, "one text", top_k=2) == ["b", "a"]
    system.close()


def test_langgraph_sqlite_store_ignores_fields_and_the_system_sets_text_fields(tmp_path):
    from langgraph.store.sqlite import SqliteStore

    from evalkit.sqlite import connect
    from evalkit.systems.libraries.langgraph import EmbedderEmbeddings

    embedded: list[str] = []

    class Recording(EmbedderEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            embedded.extend(texts)
            return super().embed_documents(texts)

    embeddings = Recording(HashingEmbedder())
    conn = connect(":memory:")
    conn.isolation_level = None
    config = {"dims": embeddings.embedder.dim, "embed": embeddings, "fields": ["content"]}
    store = SqliteStore(conn, index=config)  # type: ignore[arg-type]
    store.put(("ns",), "k", {"content": "the note", "project": "alpha"})
    assert embedded == ['{"content": "the note", "project": "alpha"}']  # upstream #8808: the whole item
    conn.close()
    system = _system("langgraph-sqlite")
    seen: list[str] = []
    with system.open(OpenContext(tmp_path)) as memory:
        recording = system._client.embeddings
        original = recording.embed_documents
        recording.embed_documents = lambda texts: seen.extend(texts) or original(texts)
        memory.add_thoughts([Thought("n", "the note", project="alpha")])
    assert seen == ["the note"]
    system.close()


# --- mem0 and txtai: rows they never return -------------------------------------------------------


class Axes:
    """An embedder of three texts onto two axes: north · south = -1, north · east = 0."""

    dim = 2
    identity = "test-axes"
    VECTORS: ClassVar[dict[str, list[float]]] = {
        "north": [0.0, 1.0],
        "south": [0.0, -1.0],
        "east": [1.0, 0.0],
    }

    def embed_query(self, text: str) -> Any:
        return np.asarray(self.VECTORS[text], dtype=np.float32)

    def embed_passages(self, texts: Any) -> Any:
        return np.asarray([self.VECTORS[t] for t in texts], dtype=np.float32)


@pytest.mark.parametrize(
    ("library", "returned"),
    [
        ("langgraph", ["north", "east", "south"]),  # every row, by similarity 1, 0, -1
        ("mem0", ["north", "east"]),  # mem0's threshold is at least 0: similarity -1 is dropped
        ("txtai", ["north"]),  # txtai keeps scores above 0 only: 0 and -1 are dropped
    ],
)
def test_mem0_drops_negative_similarities_and_txtai_every_one_not_above_zero(library, returned, tmp_path):
    system = resolve_system(library, evalkit.ReferenceSystem, embedder=Axes)
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought(text, text) for text in ("north", "south", "east")])
        assert _search(memory, "north", top_k=3) == returned
    system.close()


def test_mem0_maps_its_own_ids_back_and_records_its_scoring_parts(tmp_path):
    system = _system("mem0")
    scoring = system.describe()["scoring"]
    assert scoring["bm25"] == "off: fastembed not installed"  # the extra installs neither
    assert scoring["entity_boost"] == "off: spaCy not installed"
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("port", "the orders API listens on port 8443")])
        (mem0_id,) = system._client.get_all(filters={"run_id": memory._library._run_id})["results"]
        assert mem0_id["id"] != "port" and mem0_id["metadata"]["evalkit_id"] == "port"
        assert _search(memory, "orders API port") == ["port"]
    system.close()


def test_mem0_refuses_a_memory_of_another_run(tmp_path):
    system = _system("mem0")
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("mine", "a note")])
        run = memory._library
        run._run_id, own = "someone-else", run._run_id
        system._client.add([{"role": "user", "content": "a note"}], run_id="someone-else", infer=False)
        run._run_id = own
        original = system._client.search

        def leaky(query: str, *, filters: dict[str, Any], **options: Any) -> Any:
            return original(query, filters={**filters, "run_id": "someone-else"}, **options)

        system._client.search = leaky
        with pytest.raises(
            AdapterError, match=r"returned memory .* of run 'someone-else': scenarios are not"
        ):
            _search(memory, "a note")
        system._client.search = original
        system._client.delete_all(run_id="someone-else")
    system.close()


def test_langgraph_postgres_takes_an_hnsw_index_which_ranks_the_suite_as_the_flat_one_up_to_zero_ties():
    hnsw = _system("langgraph-postgres:hnsw")
    try:
        store = hnsw._connect()
        with store.conn.cursor() as cursor:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexdef ILIKE '%USING hnsw%'")
            assert cursor.fetchall(), "no HNSW index made"
        store.conn.close()
        run = evalkit.run_eval(system=hnsw, thresholds=None, gated=False).result
    finally:
        hnsw.close()
    flat = evalkit.run_eval(system="langgraph-postgres", thresholds=None, gated=False).result
    assert run.provenance.system["index"].startswith("approximate cosine (pgvector HNSW")
    assert flat.provenance.system["index"].startswith("exact cosine")
    assert run.overall == flat.overall  # the approximate index may pick other rows among those tied at 0
    for ours, theirs in zip(run.scenarios, flat.scenarios, strict=True):
        for q, r in zip(ours.queries, theirs.queries, strict=True):
            kept = [h.id for h in q.hits if h.similarity]
            assert kept == [h.id for h in r.hits if h.similarity], (ours.name, q.index)


def test_langgraph_postgres_refuses_an_unknown_index_kind():
    with pytest.raises(UsageError, match=r"the index kind is one of flat, hnsw"):
        _system("langgraph-postgres:ivf")
