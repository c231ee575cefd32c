"""The built-in vector-store systems (evalkit.systems.stores): chroma, qdrant, lancedb, pgvector.

Every store runs for real: chromadb in memory, qdrant-client's local mode, LanceDB in a temporary
directory, and PostgreSQL with pgvector from the `pgserver` wheel on a Unix socket that the
`postgres` fixture starts and stops (plain `--system pgvector` starts one of its own).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit import Thought
from evalkit.embedders import HashingEmbedder
from evalkit.errors import AdapterError, UsageError
from evalkit.harness.executors import make_executor
from evalkit.systems.base import OpenContext, SearchOptions
from evalkit.systems.resolve import resolve_system
from evalkit.systems.stores import STORES, common
from evalkit.systems.stores.common import StoreSystem
from tests.shared import cli

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A PostgreSQL server with pgvector on a Unix socket in a temporary directory, for the
    module; its URL. Stopped and deleted afterwards. (Not under pytest's tmp_path: run as root,
    pgserver runs PostgreSQL as its own user, who cannot enter pytest's private folders.)"""
    import pgserver

    server = pgserver.get_server(tempfile.mkdtemp(prefix="evalkit-test-pg-"), cleanup_mode="delete")
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()


@pytest.fixture(params=sorted(STORES))
def spec(request: pytest.FixtureRequest, postgres: str) -> str:
    """Each store's spec (pgvector at the module's server)."""
    return f"pgvector:{postgres}" if request.param == "pgvector" else request.param


def _system(spec: str) -> StoreSystem:
    system = resolve_system(spec, evalkit.ReferenceSystem)
    assert isinstance(system, StoreSystem)
    return system


def _search(memory: Any, query: str, top_k: int = 5, **options: Any) -> list[str]:
    settings = {"project": None, "min_relevance": None, "recency_weight": 0.0, "recency_half_life_days": 30.0}
    response = memory.search(query, SearchOptions(top_k=top_k, now=NOW, **{**settings, **options}))
    assert [hit.rank for hit in response.hits] == list(range(1, len(response.hits) + 1))
    return response.ids


def _collections(system: StoreSystem, workdir: Path) -> list[str]:
    """The evalkit collections (tables) the store holds right now for scenarios in `workdir`."""
    if system.name == "chroma":
        import chromadb
        from chromadb.config import Settings

        client = chromadb.PersistentClient(
            path=str(workdir / "chroma"), settings=Settings(anonymized_telemetry=False)
        )
        try:
            names = [c.name for c in client.list_collections()]
        finally:
            client.close()
    elif system.name == "lancedb":
        import lancedb

        names = list(lancedb.connect(workdir / "lancedb").table_names())
    elif system.name == "qdrant":
        names = [c.name for c in system._client.get_collections().collections]
    else:
        names = [r[0] for r in system._client.execute("SELECT tablename FROM pg_tables").fetchall()]
    return [name for name in names if name.startswith("evalkit_")]


def test_every_store_runs_the_built_in_suite_twice_with_identical_metrics(spec):
    first, second = (evalkit.run_eval(system=spec, thresholds=None) for _ in range(2))
    assert first.result.overall == second.result.overall
    assert [s.metrics for s in first.result.scenarios] == [s.metrics for s in second.result.scenarios]
    assert first.result.overall.metrics["recall"] > 0.9
    # the capabilities it declares: a project filter and global thoughts, nothing else
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
    assert first.result.provenance.embedder is not None  # the run's embedder, recorded
    assert first.result.provenance.system["ties"] == "later-seeded first"


def test_the_four_stores_rank_the_built_in_suite_alike_with_the_same_ties(postgres):
    """pgvector returned two rows of one true similarity (multi-hop query 3) 2e-8 apart, beyond
    the harness's 1e-9: compared at float32 precision, every store gives every query the same
    ranking, metrics and ties."""

    def rankings(spec: str) -> list[tuple[str, int, list[str], dict[str, Any], dict[str, Any]]]:
        report = evalkit.run_eval(system=spec, thresholds=None).result
        return [
            (s.name, q.index, q.retrieved, q.metrics, q.ties.model_dump() if q.ties else {})
            for s in report.scenarios
            for q in s.queries
        ]

    qdrant = rankings("qdrant")
    for spec in ("chroma", "lancedb", f"pgvector:{postgres}"):
        assert rankings(spec) == qdrant, spec
    assert sum(bool(ties and (ties["at_cut"] or ties["relevant"])) for *_, ties in qdrant) == 6


def test_similarities_a_few_float32_units_apart_tie_and_report_one_value():
    keys = {"early": 0, "late": 1, "other": 2}
    found = [("early", 0.39218300580978394), ("late", 0.3921829859), ("other", 0.25)]
    assert common.ranked(found, keys, "pgvector") == [
        ("late", 0.39218300580978394),
        ("early", 0.39218300580978394),
        ("other", 0.25),
    ]
    apart = [("early", 0.5), ("late", 0.5 - 2 * common.FLOAT32_TIE)]
    assert [id_ for id_, _ in common.ranked(apart, keys, "pgvector")] == ["early", "late"]


def test_stores_rank_ties_later_seeded_first_whatever_the_cut(spec, tmp_path):
    system = _system(spec)
    twins = [Thought(f"t{i}", "the same words every time") for i in range(6)]
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("other", "something unrelated entirely"), *twins])
        assert _search(memory, "the same words every time", top_k=2) == ["t5", "t4"]
        assert _search(memory, "the same words every time", top_k=6) == ["t5", "t4", "t3", "t2", "t1", "t0"]
    system.close()


def test_stores_filter_by_project_and_global_thoughts(spec, tmp_path):
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


def test_a_scenarios_collection_is_removed_when_it_closes(spec, tmp_path):
    system = _system(spec)
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("x", "a thought")])
        assert len(_collections(system, tmp_path)) == 1
    assert _collections(system, tmp_path) == []
    with pytest.raises(RuntimeError, match="boom"), system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("x", "a thought")])
        raise RuntimeError("boom")
    assert _collections(system, tmp_path) == []
    system.close()


def test_a_duplicate_id_is_an_adapter_error(spec, tmp_path):
    system = _system(spec)
    with (
        system.open(OpenContext(tmp_path)) as memory,
        pytest.raises(AdapterError, match="thought id 'x' added twice"),
    ):
        memory.add_thoughts([Thought("x", "one"), Thought("x", "two")])
    system.close()


def test_a_store_pickles_without_its_client_and_the_copy_searches(spec, tmp_path):
    system = _system(spec)
    with system.open(OpenContext(tmp_path / "a")):
        pass  # the original is connected now
    copy = pickle.loads(pickle.dumps(system))
    assert copy._client is None
    (tmp_path / "b").mkdir()
    with copy.open(OpenContext(tmp_path / "b")) as memory:
        memory.add_thoughts([Thought("x", "pickled stores still search"), Thought("y", "nothing alike")])
        assert _search(memory, "pickled stores search", top_k=1) == ["x"]
    copy.close()
    system.close()


def test_workers_give_the_serial_report(spec):
    """Also for chroma and LanceDB, used in this process already by the serial run: a worker
    forked from here would hang or crash in them, but workers start from the forkserver."""
    serial = evalkit.run_eval(system=spec, thresholds=None)
    workers = make_executor("processes", 2)
    assert (
        evalkit.run_eval(system=spec, thresholds=None, executor=workers).result.overall
        == serial.result.overall
    )


@pytest.mark.parametrize("store", ["chroma", "lancedb"])
def test_a_fork_unsafe_store_refuses_a_process_forked_from_one_that_used_it(store, tmp_path, monkeypatch):
    """What the process executor no longer does, user code still can (a fork of its own): in such
    a child the map of the first users names the parent (set here, so that no test forks)."""
    monkeypatch.setitem(common._FIRST_USED_IN, store, os.getpid() + 1)
    system = _system(store)
    refused = pytest.raises(AdapterError, match="forked from a process that had already used")
    with refused, system.open(OpenContext(tmp_path)):
        pass
    system.close()


@pytest.mark.parametrize("store", ["chroma", "lancedb"])
def test_fork_unsafe_stores_on_workers_from_a_fresh_process_give_the_serial_report(store, tmp_path):
    command = [sys.executable, "-m", "evalkit", "run", "--history", "none", "--system", store]
    for name, extra in (("serial", []), ("workers", ["--workers", "2"])):
        subprocess.run(
            [*command, *extra, "--out", str(tmp_path / f"{name}.json")], capture_output=True, timeout=600
        )
    serial, workers = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("serial", "workers"))
    assert workers["overall"] == serial["overall"]
    assert workers["scenarios"] == serial["scenarios"]


def test_plain_pgvector_starts_and_stops_a_private_server(tmp_path):
    system = _system("pgvector")
    assert system.describe()["location"] == "private PostgreSQL (pgserver), Unix socket"
    url = system.url()
    assert "host=" in url  # a Unix socket, no TCP port
    with system.open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("x", "private server")])
        assert _search(memory, "private server") == ["x"]
    system.close()
    import psycopg

    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)


def test_the_cli_runs_a_store_and_names_the_embedder(capsys, tmp_path):
    code, out, _ = cli(
        capsys, "run", "--system", "qdrant", "--out", str(tmp_path / "r.json"), "--history", "none"
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["provenance"]["config"]["system"] == "qdrant"
    assert report["provenance"]["system"]["store"].startswith("qdrant-client ")
    assert report["provenance"]["embedder"]["identity"] == HashingEmbedder().identity
    assert "system qdrant" in out and "not_applicable" in out
    assert code in (0, 1)  # the built-in thresholds are the reference store's


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("qdrant:/some/dir", r"runs in this process and takes no location; use plain 'qdrant'"),
        ("chroma:/some/dir", r"takes no location; use plain 'chroma'"),
        ("pgvector:/some/dir", r"give a database URL, pgvector:postgresql://"),
    ],
)
def test_bad_store_locations_are_usage_errors(spec, message):
    with pytest.raises(UsageError, match=message):
        resolve_system(spec, evalkit.ReferenceSystem)


def test_an_unreachable_database_is_an_adapter_error_without_the_password(tmp_path):
    system = _system(f"pgvector:postgresql://me:secret@/db?host={tmp_path}&connect_timeout=2")
    with pytest.raises(AdapterError, match=r"cannot connect to postgresql://me:\*\*\*@/db") as caught:
        system.open(OpenContext(tmp_path)).__enter__()
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize("store", sorted(STORES))
def test_a_missing_extra_says_which_one_to_install(store, monkeypatch):
    module, _ = STORES[store]
    library = {"chroma": "chromadb", "qdrant": "qdrant_client", "lancedb": "lancedb", "pgvector": "psycopg"}
    monkeypatch.setitem(sys.modules, library[store], None)
    monkeypatch.delitem(sys.modules, f"evalkit.systems.{module}", raising=False)
    if store == "lancedb":  # its module checks with find_spec, which a None entry does not fool
        monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    install = rf"pip install 'evalkit-memory\[{store}\]'"
    with pytest.raises(UsageError, match=rf"needs the '{store}' extra .*{install}"):
        resolve_system(store, evalkit.ReferenceSystem)


def test_describe_records_the_store_version_and_embedder():
    described = _system("chroma").describe()
    assert described["store"].startswith("chromadb ")
    assert described["embedder"] == HashingEmbedder().identity
    assert described["similarity"] == "cosine"
