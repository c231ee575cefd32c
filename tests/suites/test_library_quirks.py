"""The `library-quirks` pack: each scenario run on the reference store and on the library systems
its quirk concerns, and on an adapter that has the quirk, with the outcome each must give."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from evalkit import run_eval
from evalkit.embedders import HashingEmbedder
from evalkit.suites.packs import PACKS
from evalkit.systems.libraries.langgraph import LangGraphNamespace, LangGraphSystem
from evalkit.systems.libraries.langgraph_sqlite import LangGraphSqliteSystem
from evalkit.systems.libraries.mem0 import Mem0System
from evalkit.systems.stores.common import Scope

PACK = PACKS / "library-quirks"
LIBRARIES = ["langgraph", "langgraph-sqlite", "mem0", "txtai"]


def _scenario(system: Any, name: str) -> Any:
    (scenario,) = run_eval(datasets=PACK, system=system, scenarios=[name], thresholds=None).result.scenarios
    return scenario


def test_a_keyword_only_identifier_is_found_by_the_hybrid_reference_and_missed_by_every_library():
    reference = _scenario("reference", "keyword-only-identifier")
    assert reference.status == "pass"
    assert reference.queries[0].retrieved[0] == "koi-rack-b7"  # found by its keyword alone
    assert reference.queries[0].hits[0].similarity == 0.0  # the embedder sees nothing in common
    for library in LIBRARIES:
        scenario = _scenario(library, "keyword-only-identifier")
        assert scenario.status == "fail", library
        assert "koi-rack-b7" not in scenario.queries[0].retrieved, library
        assert scenario.queries[0].metrics["recall"] == 0.0, library
    scoring = Mem0System(embedder=HashingEmbedder()).describe()["scoring"]
    assert scoring["bm25"] == "off: fastembed not installed"  # mem0's keyword leg is off


class FieldsOnlySqlite(LangGraphSqliteSystem):
    """`SqliteStore` indexed as LangGraph's docs write it, `fields` only: the store ignores it
    (langchain-ai/langgraph#8808) and embeds each whole item."""

    def _connect(self) -> Any:
        from langgraph.store.sqlite import SqliteStore

        from evalkit.sqlite import connect
        from evalkit.systems.libraries.langgraph import index_config

        conn = connect(":memory:")
        conn.isolation_level = None
        config = {k: v for k, v in index_config(self.embedder).items() if k != "text_fields"}
        store = SqliteStore(conn, index=config)  # type: ignore[arg-type]
        store.setup()
        return store


def test_words_only_in_a_project_name_leak_from_a_sqlite_store_that_embeds_whole_items():
    assert _scenario("reference", "words-only-in-the-project-name").status == "pass"
    for library in LIBRARIES:  # evalkit's systems embed the text alone (text_fields for SqliteStore)
        assert _scenario(library, "words-only-in-the-project-name").status == "pass", library
    quirky = _scenario(FieldsOnlySqlite(embedder=HashingEmbedder()), "words-only-in-the-project-name")
    assert quirky.status == "fail"
    (query,) = quirky.queries
    assert query.retrieved[:2] == ["wpn-review-date", "wpn-mugs"]  # found by its project's name
    assert query.behaviour["contamination"] > 0


class ProjectNamespaces(LangGraphNamespace):
    """A LangGraph adapter as LangGraph's docs suggest one: each project a namespace of its own,
    path by path (`acme/billing` → `(…, "acme", "billing")`), searched by its namespace."""

    def _at(self, project: str) -> tuple[str, ...]:
        return (*self._namespace, *project.split("/"))

    def put(self, notes: Sequence[Any]) -> None:
        for note in notes:
            self._store.put(self._at(note.project), note.id, {"content": note.content, **note.metadata()})
        self._keys.update(note.id for note in notes)

    def nearest(self, query: str, limit: int, scope: Scope) -> list[tuple[str, float]]:
        where = self._namespace if scope.project is None else self._at(scope.project)
        return [(item.key, item.score) for item in self._store.search(where, query=query, limit=limit)]

    def drop(self) -> None:
        for namespace in self._store.list_namespaces(prefix=self._namespace):
            for item in self._store.search(namespace, limit=1000):
                self._store.delete(namespace, item.key)


class ProjectNamespacesSystem(LangGraphSystem):
    def _create(self, client: Any, name: str, workdir: Any) -> Any:
        return ProjectNamespaces(client, name, self.name)


def test_a_nested_project_stays_out_unless_projects_are_namespaces_matched_as_prefixes():
    assert _scenario("reference", "nested-project").status == "pass"
    for library in LIBRARIES:  # a project is a field compared for equality, never a namespace
        assert _scenario(library, "nested-project").status == "pass", library
    quirky = _scenario(ProjectNamespacesSystem(embedder=HashingEmbedder()), "nested-project")
    assert quirky.status == "fail"
    assert quirky.queries[0].retrieved == ["np-acme-sla", "np-billing-sla"]  # acme/billing is under acme


def test_rows_of_similarity_zero_are_returned_by_all_but_txtai():
    for system in ["reference", "langgraph", "langgraph-sqlite", "mem0"]:
        (query,) = _scenario(system, "unrelated-notes-in-scope").queries
        assert query.retrieved[0] == "uns-firing" and len(query.retrieved) == 3, system
        assert [hit.similarity for hit in query.hits][1:] == [0.0, 0.0], system
        assert query.metrics["precision"] == pytest.approx(1 / 3), system
    (query,) = _scenario("txtai", "unrelated-notes-in-scope").queries
    assert query.retrieved == ["uns-firing"]  # txtai keeps scores above 0 only
    assert query.metrics["precision"] == 1.0


def test_no_deterministic_scenario_can_show_mem0_dropping_negative_similarities():
    """Why the pack has no scenario for it: at an even dimension a slot's sign is fixed by its
    parity, so no two texts have a negative similarity: here, every pair of the built-in suite's
    and the packs' thoughts and queries."""
    from evalkit.scenarios import load_suite
    from tests.shared import DATASETS

    texts: set[str] = set()
    for folder in [DATASETS, *sorted(p for p in PACKS.iterdir() if p.is_dir())]:
        suite = load_suite(folder)
        texts.update(t.content for t in suite.distractors)
        for scenario in suite.scenarios:
            texts.update(t.content for t in scenario.thoughts)
            texts.update(q.query for q in scenario.queries)
    assert len(texts) > 400
    vectors = HashingEmbedder().embed_passages(sorted(texts))
    assert (vectors @ vectors.T).min() >= 0.0
    odd = HashingEmbedder(3).embed_passages(sorted(texts))
    assert (odd @ odd.T).min() < 0.0  # an odd dimension has no such rule


@pytest.mark.parametrize("system", ["reference", *LIBRARIES, "langgraph-postgres"])
def test_the_pack_runs_on_each_library_with_the_statuses_the_quirks_give(system):
    run = run_eval(datasets=PACK, system=system, thresholds=None)
    statuses = {s.name: s.status for s in run.result.scenarios}
    keyword = "pass" if system == "reference" else "fail"
    assert statuses == {
        "keyword-only-identifier": keyword,
        "nested-project": "pass",
        "words-only-in-the-project-name": "pass",
        "unrelated-notes-in-scope": "pass",
    }
