"""evalkit.systems.base: what a system is given when it opens (the run's embedder) and what its
declarations change (`own_embedder` names the run's mode and keys its baseline)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

import pytest

from evalkit import MemorySystem, ReferenceSystem, ScenarioMemory, SearchResponse, record_baseline, run_eval
from evalkit.embedders import HashingEmbedder
from evalkit.errors import SystemOutputError, UsageError
from evalkit.records import Hit
from evalkit.systems.base import SearchRequest
from evalkit.systems.capabilities import ALL_CAPABILITIES
from tests.shared import DATASETS
from tests.systems_fixtures import Wrapping


class _Nearest(ScenarioMemory):
    """Cosine search over the vectors of the embedder it is given."""

    def __init__(self, embedder) -> None:
        self.embedder, self.rows = embedder, {}

    def add_thoughts(self, thoughts) -> None:
        vectors = self.embedder.embed_passages([t.content for t in thoughts])
        self.rows.update({t.id: v for t, v in zip(thoughts, vectors, strict=True)})

    def search(self, query, options) -> SearchResponse:
        asked = self.embedder.embed_query(query)
        scored = sorted(self.rows, key=lambda id_: (-float(self.rows[id_] @ asked), id_))
        return SearchResponse(hits=tuple(Hit(id=id_) for id_ in scored[: options.top_k]))


class _RunEmbedding(MemorySystem):
    """Searches with the run's embedder (`context.embedder`), recording which one it was given."""

    name = "run-embedding"
    capabilities = frozenset()

    def __init__(self) -> None:
        self.given: list[object] = []

    @contextmanager
    def open(self, context):
        self.given.append(context.embedder)
        yield _Nearest(context.embedder)


class _OwnEmbedding(_RunEmbedding):
    """The same search, with an embedder of its own that it declares."""

    name = "own-embedding"
    own_embedder = "hashing-64 (its own)"

    @contextmanager
    def open(self, context):
        yield _Nearest(HashingEmbedder(64))


def _run(system, **options):
    return run_eval(datasets=DATASETS, system=system, progress=False, **options)


def test_a_system_opens_with_the_runs_embedder_built_once_for_every_scenario():
    system = _RunEmbedding()
    run = _run(system, thresholds=None, gated=False)
    assert len(system.given) == len(run.result.scenarios) - len(run.not_applicable) > 1
    assert len({id(embedder) for embedder in system.given}) == 1
    assert system.given[0].identity == HashingEmbedder().identity  # the deterministic mode's
    assert run.result.mode == "deterministic" and run.result.provenance.declaration.embedder is None


def test_a_system_declaring_its_own_embedder_runs_in_mode_system_with_a_baseline_of_its_own(tmp_path):
    thresholds = tmp_path / "thresholds.json"
    first = _run(_OwnEmbedding(), thresholds=thresholds, gated=False)
    assert first.result.mode == "system"
    assert first.result.provenance.declaration.embedder == "hashing-64 (its own)"
    assert first.result.outcome.value == "NOT COMPARED"
    record_baseline(first, thresholds)
    assert '"system@5"' in thresholds.read_text(encoding="utf-8")
    again = _run(_OwnEmbedding(), thresholds=thresholds, gated=False)
    assert again.result.outcome.value == "PASS"


def test_asking_a_self_embedding_system_for_the_real_embedder_is_refused():
    with pytest.raises(
        UsageError, match=r"embeds by itself \(hashing-64 \(its own\)\).*drop --embedder real"
    ):
        _run(_OwnEmbedding(), thresholds=None, mode="real")


def test_search_many_by_default_asks_search_for_each_request_in_order():
    class Echo(ScenarioMemory):
        def search(self, query, options):
            return SearchResponse(hits=(Hit(id=f"{query}@{options.top_k}"),))

    from datetime import UTC, datetime

    from evalkit import SearchOptions

    now = datetime(2026, 1, 1, tzinfo=UTC)
    asked = [
        SearchRequest("a", SearchOptions(top_k=1, now=now)),
        SearchRequest("b", SearchOptions(top_k=2, now=now)),
    ]
    assert [r.ids for r in Echo().search_many(asked)] == [["a@1"], ["b@2"]]


class _OwnIds(Wrapping):
    """The reference store's memory answering with ids of its own and each hit's content."""

    def __init__(self, memory: ScenarioMemory, stray: bool) -> None:
        super().__init__(memory)
        self.stray, self.contents = stray, {}

    def add_thoughts(self, thoughts) -> None:
        super().add_thoughts(thoughts)
        self.contents.update({t.id: t.content for t in thoughts})

    def search(self, query, options) -> SearchResponse:
        response = self.memory.search(query, options)
        hits = [replace(h, id=f"own-{n}", content=self.contents[h.id]) for n, h in enumerate(response.hits)]
        if self.stray and hits:
            hits[-1] = replace(hits[-1], content="a note nobody seeded")
        return replace(response, hits=tuple(hits), dropped_ids=(), gate_candidates=())


class _ContentSystem(ReferenceSystem):
    """The reference store as a system that makes its own ids and declares `hits_by = "content"`."""

    name = "own-ids"
    capabilities = ALL_CAPABILITIES - {"deletion", "update", "regate"}
    hits_by = "content"
    stray = False

    @contextmanager
    def open(self, context):
        with super().open(context) as memory:
            yield _OwnIds(memory, self.stray)


def test_hits_matched_by_content_score_as_the_ids_they_name():
    reference = _run(ReferenceSystem(), thresholds=None, gated=False).result
    by_content = _run(_ContentSystem(), thresholds=None, gated=False).result
    assert by_content.provenance.declaration.hits_by == "content"
    assert [[q.retrieved for q in s.queries] for s in by_content.scenarios] == [
        [q.retrieved for q in s.queries] for s in reference.scenarios
    ]
    assert by_content.overall == reference.overall


def test_a_hit_whose_content_matches_no_seeded_thought_is_named():
    class Stray(_ContentSystem):
        stray = True

    with pytest.raises(SystemOutputError, match=r"has content 'a note nobody seeded', which matches no"):
        _run(Stray(), thresholds=None, gated=False)
