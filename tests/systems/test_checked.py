"""Adapter mistakes get clear errors naming the system, the method, the field and the fix
(evalkit.systems.checked); hits beyond top_k are cut with a warning and never scored."""

from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import replace

import pytest

from evalkit import Hit, MemorySystem, ScenarioMemory, SearchResponse, run_eval
from evalkit.errors import AdapterError, AdapterWarning, MemorySystemError, UsageError
from evalkit.records import GateCandidate
from evalkit.systems.checked import checked_response
from tests.shared import DATASETS
from tests.systems_fixtures import RewritingSystem, ids_only, with_first_hit

SEEDED = {"a", "b", "c"}


def _run(system, **options):
    return run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=system, thresholds=None, **options)


def test_open_that_returns_no_context_manager_is_named():
    class NoContext(MemorySystem):
        name = "plain"

        def open(self, context):
            return object()

    with pytest.raises(
        AdapterError, match=r"system 'plain': open\(context\) returned object, not a context manager"
    ):
        _run(NoContext())


def test_a_memory_that_is_not_a_scenario_memory_is_named():
    class NoMethods(RewritingSystem):
        def open(self, context):
            return nullcontext(object())

    with pytest.raises(
        AdapterError, match=r"yielded by open\(\) \(object\) is not an evalkit.ScenarioMemory"
    ):
        _run(NoMethods())


def test_a_system_that_is_not_a_memory_system_is_told_to_subclass_it():
    class DuckTyped:
        name = "duck"

        def open(self, context):
            raise AssertionError("never opened")

    with pytest.raises(
        UsageError, match=r"the system is DuckTyped, not a memory system: subclass evalkit.MemorySystem"
    ):
        _run(DuckTyped())


def test_a_memory_without_search_fails_at_its_first_search_naming_what_to_define():
    """The base class's `search` says what to define; a memory lacking a method that a declared
    capability needs (`add_edges` for supersession) is refused when it opens."""

    class Seeding(ScenarioMemory):
        def add_thoughts(self, thoughts):
            pass

    class NoSearch(MemorySystem):
        capabilities = frozenset()

        def open(self, context):
            return nullcontext(Seeding())

    with pytest.raises(MemorySystemError, match=r"Seeding must define search\(self, query, options\)"):
        _run(NoSearch())


def test_search_returning_a_list_is_named():
    with pytest.raises(
        AdapterError,
        match=r"system 'rewriting': search\(\) for scenario 'explicit-fact', query 1 \('Which port .*'\) "
        r"returned list; return evalkit.SearchResponse",
    ):
        _run(RewritingSystem(lambda response: list(response.hits)))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "never-seeded"}, r"hit 1: id 'never-seeded' was never added to this memory"),
        ({"similarity": math.nan}, r"returned similarity nan; a memory system must return finite scores"),
        ({"relevance": math.inf}, r"returned relevance inf"),
        ({"bm25_score": "high"}, r"`bm25_score` must be a number or None"),
        ({"match_source": ("keyword",)}, r"`match_source` \('keyword',\) may hold only vector, bm25"),
        ({"standing": "stale"}, r"`standing` 'stale' must be one of current, contradicted, superseded"),
        ({"rank": 7}, r"hit ranks \[7, 2, 3, 4, 5\] must be 1, 2, …, n"),
    ],
)
def test_bad_hit_fields_are_errors(changes, message):
    with pytest.raises(AdapterError, match=message):
        _run(RewritingSystem(lambda response: with_first_hit(response, **changes)))


def test_duplicate_ids_are_errors():
    def duplicate(response):
        return replace(response, hits=(response.hits[0], response.hits[0]))

    with pytest.raises(AdapterError, match=r"hit 2: id '[^']+' is returned twice"):
        _run(RewritingSystem(duplicate))


def test_hits_beyond_top_k_are_cut_with_a_warning_and_not_scored():
    hits = tuple(Hit(id=i) for i in ("a", "b", "c"))
    with pytest.warns(AdapterWarning, match=r"returned 3 hits for top_k=2; the 1 beyond top_k were cut"):
        checked = checked_response("sys", SearchResponse(hits=hits), 2, SEEDED)
    assert [(h.id, h.rank) for h in checked.hits] == [("a", 1), ("b", 2)]


def test_overlong_responses_in_a_run_are_scored_on_top_k_only():
    reference = _run(None, top_k=3)
    with pytest.warns(AdapterWarning, match="beyond top_k were cut"):
        padded = _run(RewritingSystem(extra=2), top_k=3)
    assert padded.result.overall == reference.result.overall
    assert all(len(q.retrieved) <= 3 for s in padded.result.scenarios for q in s.queries)


def test_a_system_returning_only_ids_is_scored_like_the_reference():
    reference = _run(None, gated=False)
    bare = _run(RewritingSystem(ids_only), gated=False)
    assert bare.result.overall == reference.result.overall
    hit = bare.result.scenarios[0].queries[0].hits[0]
    assert (hit.rank, hit.similarity, hit.relevance, hit.low_confidence, hit.match_source) == (
        1,
        None,
        None,
        None,
        [],
    )


def test_negative_counts_and_unknown_dropped_ids_are_errors():
    with pytest.raises(AdapterError, match=r"`candidates` must be a non-negative int"):
        checked_response("sys", SearchResponse(candidates=-1), 5, SEEDED)
    with pytest.raises(AdapterError, match=r"`dropped_ids` names ids never added to this memory: \['zzz'\]"):
        checked_response("sys", SearchResponse(dropped_ids=("zzz",)), 5, SEEDED)
    with pytest.raises(AdapterError, match=r"`min_relevance` must be the finite gate value"):
        checked_response("sys", SearchResponse(min_relevance=math.nan), 5, SEEDED)


def test_gate_candidates_are_checked_like_hit_signals():
    def candidates(*rows):
        return SearchResponse(gate_candidates=tuple(GateCandidate(*row) for row in rows))

    checked_response("sys", candidates((sorted(SEEDED)[0], True, None)), 5, SEEDED)
    with pytest.raises(AdapterError, match=r"gate candidate 1 \('zzz'\) was never added"):
        checked_response("sys", candidates(("zzz", True, 0.5)), 5, SEEDED)
    with pytest.raises(AdapterError, match=r"gate candidate 1 \('.+'\) returned similarity nan"):
        checked_response("sys", candidates((sorted(SEEDED)[0], False, math.nan)), 5, SEEDED)
    with pytest.raises(AdapterError, match=r"`similarity` must be a number or None, got 'high'"):
        checked_response("sys", candidates((sorted(SEEDED)[0], False, "high")), 5, SEEDED)


class _Batching(MemorySystem):
    """The reference store with a `search_many` (one call for a shard's searches), optionally
    dropping its last response; `open` takes the scenario's name."""

    name = "batching"

    def __init__(self, drop_last: bool = False) -> None:
        from evalkit import ReferenceSystem

        self._reference, self._drop_last = ReferenceSystem(), drop_last
        self.batches: list[int] = []
        self.scenarios: list[str | None] = []

    def describe(self):
        return {"system": self.name}

    def open(self, context):
        from contextlib import contextmanager

        self.scenarios.append(context.scenario)

        @contextmanager
        def opened():
            with self._reference.open(context) as memory:
                outer = self

                class Memory(ScenarioMemory):
                    def add_thoughts(self, thoughts):
                        memory.add_thoughts(thoughts)

                    def add_edges(self, edges):
                        memory.add_edges(edges)

                    def search(self, query, options):
                        return memory.search(query, options)

                    def search_many(self, requests):
                        outer.batches.append(len(requests))
                        answers = [memory.search(r.query, r.options) for r in requests]
                        return answers[:-1] if outer._drop_last else answers

                yield Memory()

        return opened()


def test_search_many_answers_a_shard_in_one_call_with_the_one_by_one_numbers():
    system = _Batching()
    batched, plain = _run(system).result, _run(None).result
    assert system.batches == [10]  # 5 queries × 2 passes of explicit-fact, in one call
    assert system.scenarios == ["explicit-fact"]
    assert batched.scenarios == plain.scenarios


def test_search_many_returning_too_few_responses_is_named():
    with pytest.raises(AdapterError, match=r"search_many\(\) returned 9 responses for 10 searches; it must "):
        _run(_Batching(drop_last=True))


def test_the_responses_of_search_many_are_checked_like_single_searches():
    class Ghostly(_Batching):
        def open(self, context):
            from contextlib import contextmanager

            opened = super().open(context)

            @contextmanager
            def ghostly():
                with opened as memory:
                    many = memory.search_many

                    def haunted(requests):
                        first, *rest = many(requests)
                        return [with_first_hit(first, id="ghost"), *rest]

                    memory.search_many = haunted
                    yield memory

            return ghostly()

    with pytest.raises(AdapterError, match=r"scenario 'explicit-fact', query 1 .*id 'ghost' was never added"):
        _run(Ghostly())


def test_a_memory_lacking_the_method_of_a_declared_capability_is_refused_when_it_opens():
    class Seeding(ScenarioMemory):
        def add_thoughts(self, thoughts):
            pass

    class ClaimsSupersession(MemorySystem):
        capabilities = frozenset({"supersession"})

        def open(self, context):
            return nullcontext(Seeding())

    with pytest.raises(
        AdapterError, match=r"declares the 'supersession' capability, but its memory \(Seeding\)"
    ):
        _run(ClaimsSupersession())
