"""`MemoryStore.search` end to end (SPEC §1.3), on exact geometric fixtures.

Thoughts carry explicit unit embeddings in 4 dimensions and queries pass `query_embedding=Q`, so
every similarity is known by construction: `at(s)` has cosine `s` with Q. Thoughts given the zero
vector are not in the vector index, so they reach a search through BM25 only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evalkit.embedders import HashingEmbedder
from evalkit.errors import StoreError
from evalkit.memory import DEFAULT_MIN_RELEVANCE, IN_MEMORY, VECTOR_FLOOR, MemoryStore
from evalkit.records import Edge, Hit, SearchResponse, Thought
from tests.shared import FTS_SYNTAX

DIM = 4
Q = (1.0, 0.0, 0.0, 0.0)
ZERO = (0.0,) * DIM
NOW = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)
UNGATED: dict[str, Any] = {"min_relevance": 0, "query_embedding": Q, "now": NOW}


def at(similarity: float) -> tuple[float, ...]:
    """A unit vector whose cosine with Q is `similarity`."""
    return (similarity, math.sqrt(1.0 - similarity**2), 0.0, 0.0)


def thought(id: str, similarity: float | None, content: str | None = None, **fields: Any) -> Thought:
    """A thought at `similarity` from Q (None = zero vector, BM25 only), created at NOW by default."""
    return Thought(
        id=id,
        content=content if content is not None else f"filler text for {id}",
        embedding=ZERO if similarity is None else at(similarity),
        created_at=fields.pop("created_at", NOW),
        **fields,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "store.sqlite3", HashingEmbedder(dim=DIM)) as s:
        yield s


def by_id(response: SearchResponse) -> dict[str, Hit]:
    return {h.id: h for h in response.hits}


# ---------------------------------------------------------------- option clamping


@pytest.mark.parametrize("top_k", [0, -4])
def test_top_k_below_one_is_clamped_to_one(store: MemoryStore, top_k: int) -> None:
    store.add_thoughts([thought("a", 0.9), thought("b", 0.8), thought("c", 0.7)])
    assert store.search("", top_k=top_k, retrieval="vector", **UNGATED).ids == ["a"]


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path_factory.mktemp("big") / "s.sqlite3", HashingEmbedder(dim=DIM)) as s:
        s.add_thoughts(thought(f"t{i:04d}", 0.999 - i / 2000) for i in range(1005))
        yield s


def test_top_k_above_1000_is_clamped_to_1000(big_store: MemoryStore) -> None:
    response = big_store.search("", top_k=5000, retrieval="vector", **UNGATED)
    assert len(response.hits) == 1000
    assert response.hits[-1].id == "t0999"


def test_recency_weight_above_one_is_clamped_to_one(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.8, created_at=NOW - timedelta(days=30))])
    (hit,) = store.search("", retrieval="vector", recency_weight=7.0, **UNGATED).hits
    assert hit.recency_score == pytest.approx(0.5)
    assert hit.final_score == pytest.approx(0.8 + 1.0 * 0.5, abs=1e-6)


def test_negative_recency_weight_is_clamped_to_zero(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.8)])
    (hit,) = store.search("", retrieval="vector", recency_weight=-2.0, **UNGATED).hits
    assert hit.recency_score is None
    assert hit.final_score is None


@pytest.mark.parametrize(
    ("half_life", "age_days"),
    [(0.0, 30.0), (-3.0, 30.0), (0.25, 1.0), (10_000.0, 3650.0), (7.0, 7.0)],
)
def test_half_life_non_positive_means_30_and_is_clamped_to_1_3650(
    store: MemoryStore, half_life: float, age_days: float
) -> None:
    # Each case places the thought exactly one effective half-life in the past.
    store.add_thoughts([thought("a", 0.8, created_at=NOW - timedelta(days=age_days))])
    (hit,) = store.search(
        "", retrieval="vector", recency_weight=1.0, recency_half_life_days=half_life, **UNGATED
    ).hits
    assert hit.recency_score == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("given_value", "resolved"), [(None, DEFAULT_MIN_RELEVANCE), (3.0, 1.0), (-1.0, 0.0), (0.25, 0.25)]
)
def test_min_relevance_resolution_and_clamp(
    store: MemoryStore, given_value: float | None, resolved: float
) -> None:
    store.add_thoughts([thought("a", 0.8)])
    response = store.search("", retrieval="vector", min_relevance=given_value, query_embedding=Q)
    assert DEFAULT_MIN_RELEVANCE == 0.4
    assert response.min_relevance == resolved


@pytest.mark.parametrize("option", ["top_k", "recency_weight", "recency_half_life_days", "min_relevance"])
def test_nan_option_is_an_error_not_a_silent_clamp(store: MemoryStore, option: str) -> None:
    with pytest.raises(StoreError, match=f"search option {option} must be a number, got nan"):
        options: dict[str, Any] = {option: math.nan}
        store.search("x", **options)


def test_numpy_scalar_options_are_numbers(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.8), thought("b", 0.7)])
    options: dict[str, Any] = {"top_k": np.int64(1), "min_relevance": np.float32(0.5)}
    response = store.search("", retrieval="vector", query_embedding=Q, **options)
    assert response.ids == ["a"]
    assert response.min_relevance == pytest.approx(0.5)


# ---------------------------------------------------------------- step 1: over-fetch


def test_suppress_overfetch_backfills_top_k_after_dropping_superseded(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.9), thought("b", 0.8), thought("c", 0.7), thought("d", 0.6)])
    store.add_edge("d", "a", "replaces")
    # K = 4·2 = 8 rows fetched; "a" is dropped and "c" back-fills the second slot.
    assert store.search("", top_k=2, retrieval="vector", supersession="suppress", **UNGATED).ids == ["b", "c"]
    # Flag fetches K = top_k = 2 and keeps the superseded row, last.
    assert store.search("", top_k=2, retrieval="vector", supersession="flag", **UNGATED).ids == ["b", "a"]


def test_gate_overfetch_backfills_top_k_and_counts_candidates(store: MemoryStore) -> None:
    store.add_thoughts(
        [
            thought("x", 0.3),
            thought("y", 0.2),
            thought("w", 0.15),
            thought("v", 0.1),
            thought("z", -0.9, content="kiwi"),
        ]
    )
    # K = 4: vector leg [x, y, w, v] (z is 5th), BM25 [z]; fused [x, z, y, w] (x and z tie at 1/61).
    response = store.search("kiwi", top_k=1, min_relevance=0.5, query_embedding=Q, now=NOW)
    assert response.ids == ["z"]
    assert (response.candidates, response.filtered_out) == (4, 3)
    assert response.dropped_ids == ("x", "y", "w")


# ---------------------------------------------------------------- step 2: vector leg


@pytest.fixture
def crowded(store: MemoryStore) -> MemoryStore:
    """Nine 'other' rows nearest to Q, then 'near' (10th overall, project mine), 'far' (11th)."""
    store.add_thoughts(thought(f"o{i}", 0.99 - i / 100, project="other") for i in range(9))
    store.add_thoughts([thought("near", 0.5, project="mine"), thought("far", 0.1, project="remote")])
    return store


def test_vector_pool_is_taken_over_all_rows_before_filters(crowded: MemoryStore) -> None:
    # top_k 1, no suppress or gate: K = 1, pool = 10 nearest of ALL rows, then the project filter.
    assert crowded.search("", top_k=1, project="mine", retrieval="vector", **UNGATED).ids == ["near"]
    assert crowded.search("", top_k=1, project="remote", retrieval="vector", **UNGATED).ids == []
    # top_k 2: K = 2, pool = 20 reaches the 11th row.
    assert crowded.search("", top_k=2, project="remote", retrieval="vector", **UNGATED).ids == ["far"]


def test_vector_leg_keeps_only_first_k_filtered_rows(store: MemoryStore) -> None:
    store.add_thoughts([thought("r1", 0.9, content="apple"), thought("r2", 0.8, content="kiwi")])
    # K = 1: the vector leg keeps r1 only, so r2 is BM25-only and ties r1 at 1/61; r1 wins the tie.
    assert store.search("kiwi", top_k=1, **UNGATED).ids == ["r1"]
    # K = 2: r2 is in both legs (1/62 + 1/61) and overtakes r1 (1/61).
    assert store.search("kiwi", top_k=2, **UNGATED).ids == ["r2", "r1"]


def test_equal_distances_keep_vec0_order_later_inserted_first(store: MemoryStore) -> None:
    store.add_thoughts([thought("first", 0.7), thought("second", 0.7), thought("third", 0.7)])
    assert store.search("", retrieval="vector", **UNGATED).ids == ["third", "second", "first"]


def test_similarity_is_one_minus_cosine_distance(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.6), thought("b", -0.25)])
    hits = by_id(store.search("", retrieval="vector", **UNGATED))
    assert hits["a"].similarity == pytest.approx(0.6, abs=1e-6)
    assert hits["a"].distance == pytest.approx(0.4, abs=1e-6)
    assert hits["b"].similarity == pytest.approx(-0.25, abs=1e-6)


def test_zero_vector_query_gives_no_vector_rows(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.6)])
    assert store.search("", retrieval="vector", min_relevance=0, query_embedding=ZERO).ids == []


def test_query_is_embedded_by_the_store_embedder_without_query_embedding(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "s.sqlite3", HashingEmbedder(dim=64)) as s:
        s.add_thoughts([Thought("port", "Deploy: server, PORT!"), Thought("cake", "Chocolate cake recipe")])
        hit = s.search("deploy server port", retrieval="vector", min_relevance=0).hits[0]
    assert hit.id == "port"
    assert hit.similarity == pytest.approx(1.0, abs=1e-6)  # identical token set, identical vector


def test_zero_vector_thought_is_found_by_bm25_only(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", None, content="kiwi"), thought("b", 0.5)])
    (hit,) = [h for h in store.search("kiwi", **UNGATED).hits if h.id == "a"]
    assert hit.match_source == ("bm25",)
    assert hit.similarity is None


# ---------------------------------------------------------------- step 3: BM25 leg


def test_stopword_only_query_matches_nothing_in_bm25(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.5, content="what is the answer to this")])
    assert store.search("what is the", retrieval="bm25", **UNGATED).ids == []


def test_hybrid_with_stopword_only_query_is_vector_only(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.9, content="the"), thought("b", 0.5, content="the")])
    hits = store.search("the", **UNGATED).hits
    assert [h.match_source for h in hits] == [("vector",), ("vector",)]
    # One non-empty leg: relevance = 61/(60 + rank).
    assert [h.relevance for h in hits] == pytest.approx([1.0, 61 / 62])


def test_fts5_syntax_in_query_is_plain_text(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", None, content="kiwi orchard"), thought("b", None, content="near water")])
    assert store.search('"kiwi*" AND (NOT', retrieval="bm25", **UNGATED).ids == ["a"]
    assert store.search("NEAR(water", retrieval="bm25", **UNGATED).ids == []  # one term "NEARwater"


def test_bm25_score_is_negated_bm25_and_ranks_best_first(store: MemoryStore) -> None:
    store.add_thoughts(
        [
            thought("long", None, content="kiwi with many other words around it in a long sentence"),
            thought("short", None, content="kiwi kiwi"),
        ]
    )
    hits = store.search("kiwi", retrieval="bm25", **UNGATED).hits
    assert [h.id for h in hits] == ["short", "long"]
    assert hits[0].bm25_score is not None and hits[1].bm25_score is not None
    assert hits[0].bm25_score > hits[1].bm25_score > 0


def test_bm25_ties_keep_insertion_order(store: MemoryStore) -> None:
    store.add_thoughts([thought("first", None, content="kiwi"), thought("second", None, content="kiwi")])
    assert store.search("kiwi", retrieval="bm25", **UNGATED).ids == ["first", "second"]


# ---------------------------------------------------------------- step 4: fusion


def test_hybrid_rrf_scores_and_relevance_hand_computed(store: MemoryStore) -> None:
    store.add_thoughts(
        [thought("a", 1.0), thought("b", 0.8), thought("c", 0.6, content="zebra"), thought("d", 0.4)]
    )
    response = store.search("zebra", top_k=4, **UNGATED)
    # vector ranks a1 b2 c3 d4; BM25 ranks c1.
    assert response.ids == ["c", "a", "b", "d"]
    hits = by_id(response)
    assert hits["c"].rrf_score == pytest.approx(1 / 63 + 1 / 61)
    assert hits["c"].relevance == pytest.approx((1 / 63 + 1 / 61) * 61 / 2)
    assert hits["a"].relevance == pytest.approx(0.5)
    assert hits["b"].relevance == pytest.approx(61 / 62 / 2)
    assert hits["d"].relevance == pytest.approx(61 / 64 / 2)
    assert hits["c"].match_source == ("vector", "bm25")
    assert hits["a"].match_source == ("vector",)
    assert [h.rank for h in response.hits] == [1, 2, 3, 4]


def test_hybrid_ties_keep_vector_order_then_bm25_only_ids(store: MemoryStore) -> None:
    store.add_thoughts(
        [
            thought("a", 1.0, content="apple"),
            thought("b", 0.5, content="banana"),
            thought("z1", None, content="kiwi"),
            thought("z2", None, content="kiwi"),
        ]
    )
    # a (vector 1) ties z1 (BM25 1) at 1/61; b (vector 2) ties z2 (BM25 2) at 1/62.
    assert store.search("kiwi", **UNGATED).ids == ["a", "z1", "b", "z2"]


def test_first_in_both_legs_has_relevance_one(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.9, content="kiwi"), thought("b", 0.5, content="kiwi pie")])
    assert store.search("kiwi", **UNGATED).hits[0].relevance == pytest.approx(1.0)


# ---------------------------------------------------------------- single-leg modes


def test_vector_mode_relevance_is_similarity(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.9, content="kiwi"), thought("b", 0.3)])
    hits = store.search("kiwi", retrieval="vector", **UNGATED).hits
    assert [h.relevance for h in hits] == pytest.approx([0.9, 0.3], abs=1e-6)
    assert [h.rrf_score for h in hits] == pytest.approx([1 / 61, 1 / 62])
    assert all(h.match_source == ("vector",) and h.bm25_score is None for h in hits)


def test_bm25_mode_relevance_is_normalised_rank(store: MemoryStore) -> None:
    store.add_thoughts(
        [
            thought("a", 0.9, content="kiwi kiwi"),
            thought("b", 0.8, content="kiwi and more words"),
            thought("c", 0.7),
        ]
    )
    hits = store.search("kiwi", retrieval="bm25", **UNGATED).hits
    assert [h.id for h in hits] == ["a", "b"]
    assert [h.relevance for h in hits] == pytest.approx([1.0, 61 / 62])
    assert [h.rrf_score for h in hits] == pytest.approx([1 / 61, 1 / 62])
    assert all(h.match_source == ("bm25",) and h.similarity is None and h.distance is None for h in hits)


# ---------------------------------------------------------------- step 5: recency


def test_recency_decay_one_at_age_zero_and_half_at_one_half_life(store: MemoryStore) -> None:
    store.add_thoughts([thought("old", 0.9, created_at=NOW - timedelta(days=30)), thought("new", 0.6)])
    response = store.search("", retrieval="vector", recency_weight=1.0, recency_half_life_days=30, **UNGATED)
    # final: old 0.9 + 0.5 = 1.4, new 0.6 + 1.0 = 1.6, so the re-sort puts new first.
    assert response.ids == ["new", "old"]
    hits = by_id(response)
    assert hits["new"].recency_score == pytest.approx(1.0)
    assert hits["old"].recency_score == pytest.approx(0.5)
    assert hits["new"].final_score == pytest.approx(1.6, abs=1e-6)
    assert hits["old"].final_score == pytest.approx(1.4, abs=1e-6)


def test_recency_weight_zero_leaves_fields_absent_and_order_unchanged(store: MemoryStore) -> None:
    store.add_thoughts([thought("old", 0.9, created_at=NOW - timedelta(days=300)), thought("new", 0.6)])
    response = store.search("", retrieval="vector", recency_weight=0.0, **UNGATED)
    assert response.ids == ["old", "new"]
    assert all(h.recency_score is None and h.final_score is None for h in response.hits)


def test_recency_final_adds_weighted_decay_to_relevance(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.8, created_at=NOW - timedelta(days=60))])
    (hit,) = store.search(
        "", retrieval="vector", recency_weight=0.5, recency_half_life_days=30, **UNGATED
    ).hits
    assert hit.final_score == pytest.approx(0.8 + 0.5 * 0.25, abs=1e-6)


# ---------------------------------------------------------------- step 6: standing


@pytest.fixture
def standing_store(store: MemoryStore) -> MemoryStore:
    store.add_thoughts(
        [
            thought("old", 0.95),
            thought("left", 0.9),
            thought("both", 0.85),
            thought("plain", 0.7),
            thought("right", 0.6),
            thought("new", 0.5),
            thought("newer", 0.3),
            thought("rival", 0.2),
        ]
    )
    store.add_edges(
        [
            Edge("new", "old", "replaces"),
            Edge("left", "right", "contradicts"),
            Edge("newer", "both", "replaces"),
            Edge("rival", "both", "contradicts"),
            Edge("plain", "new", "related"),
        ]
    )
    return store


def test_flag_partitions_current_contradicted_superseded_stably(standing_store: MemoryStore) -> None:
    response = standing_store.search("", retrieval="vector", **UNGATED)
    assert response.ids == ["plain", "new", "newer", "left", "right", "rival", "old", "both"]
    assert [h.standing for h in response.hits] == ["current"] * 3 + ["contradicted"] * 3 + ["superseded"] * 2


def test_standing_lists_and_symmetric_contradiction(standing_store: MemoryStore) -> None:
    hits = by_id(standing_store.search("", retrieval="vector", **UNGATED))
    assert hits["old"].superseded_by == ("new",)
    assert hits["new"].superseded_by == ()  # replaces is directed
    assert hits["left"].contradicted_by == ("right",)
    assert hits["right"].contradicted_by == ("left",)  # contradicts is symmetric
    assert hits["rival"].contradicted_by == ("both",)
    assert hits["both"].standing == "superseded"
    assert (hits["both"].superseded_by, hits["both"].contradicted_by) == (("newer",), ("rival",))
    assert hits["plain"].standing == "current"  # other edge types do not touch standing


def test_suppress_drops_superseded_rows_only(standing_store: MemoryStore) -> None:
    response = standing_store.search("", retrieval="vector", supersession="suppress", **UNGATED)
    assert response.ids == ["plain", "new", "newer", "left", "right", "rival"]


def test_standing_off_keeps_rank_order_and_no_annotation(standing_store: MemoryStore) -> None:
    response = standing_store.search(
        "", retrieval="vector", supersession="off", contradiction="off", **UNGATED
    )
    assert response.ids == ["old", "left", "both", "plain", "right", "new", "newer", "rival"]
    assert all(
        h.standing == "current" and not h.superseded_by and not h.contradicted_by for h in response.hits
    )


def test_several_superseders_are_listed_sorted(store: MemoryStore) -> None:
    store.add_thoughts([thought("x", 0.9), thought("v3", 0.1), thought("v2", 0.2)])
    store.add_edges([Edge("v3", "x", "replaces"), Edge("v2", "x", "replaces")])
    assert by_id(store.search("", retrieval="vector", **UNGATED))["x"].superseded_by == ("v2", "v3")


def test_standing_uses_a_fixed_number_of_queries_whatever_the_hit_count(store: MemoryStore) -> None:
    store.add_thoughts(thought(f"t{i}", 0.9 - i / 100) for i in range(30))
    store.add_edges(
        Edge(f"t{i}", f"t{i + 1}", "replaces" if i % 2 else "contradicts") for i in range(0, 28, 2)
    )
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    store.search("", top_k=2, retrieval="vector", **UNGATED)
    few = len(statements)
    statements.clear()
    store.search("", top_k=30, retrieval="vector", **UNGATED)
    assert len(statements) == few


# ---------------------------------------------------------------- steps 7-8: confidence and gate


def test_low_confidence_for_vector_only_hits_below_the_floor(store: MemoryStore) -> None:
    store.add_thoughts([thought("high", 0.95), thought("low", 0.85), thought("lexical", 0.1, content="kiwi")])
    hits = by_id(store.search("kiwi", **UNGATED))
    assert VECTOR_FLOOR == 0.9
    assert hits["high"].low_confidence is False
    assert hits["low"].low_confidence is True
    assert hits["lexical"].low_confidence is False  # a BM25 match is strong at any similarity


def test_gate_keeps_bm25_hits_below_floor_and_vector_hits_at_or_above_it(store: MemoryStore) -> None:
    store.add_thoughts(
        [
            thought("above", 0.6),
            thought("below", 0.3),
            thought("lexical", 0.1, content="kiwi"),
            thought("zero", None),
        ]
    )
    response = store.search("kiwi", min_relevance=0.5, query_embedding=Q, now=NOW)
    assert sorted(response.ids) == ["above", "lexical"]
    assert (response.candidates, response.filtered_out) == (3, 1)
    assert response.dropped_ids == ("below",)
    assert response.min_relevance == 0.5


def test_default_gate_is_0_4(store: MemoryStore) -> None:
    store.add_thoughts([thought("above", 0.45), thought("below", 0.35)])
    response = store.search("", retrieval="vector", query_embedding=Q)
    assert response.ids == ["above"]
    assert (response.candidates, response.filtered_out, response.min_relevance) == (2, 1, 0.4)


def test_no_gate_counts_nothing(store: MemoryStore) -> None:
    store.add_thoughts([thought("a", 0.1), thought("b", 0.05)])
    response = store.search("", retrieval="vector", **UNGATED)
    assert response.ids == ["a", "b"]
    assert (response.candidates, response.filtered_out, response.dropped_ids) == (0, 0, ())


# ---------------------------------------------------------------- filters


@pytest.fixture
def projects(store: MemoryStore) -> MemoryStore:
    store.add_thoughts(
        [
            thought("alpha-1", 0.9, content="kiwi", project="alpha"),
            thought("beta-1", 0.8, content="kiwi", project="beta"),
            thought("global-1", 0.7, content="kiwi", project="gamma", is_global=True),
            thought("alpha-draft", 0.6, content="kiwi", project="alpha", status="draft"),
        ]
    )
    return store


@pytest.mark.parametrize("retrieval", ["hybrid", "bm25", "vector"])
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, {"alpha-1", "beta-1", "global-1", "alpha-draft"}),
        ({"project": "alpha"}, {"alpha-1", "alpha-draft"}),
        ({"project": "alpha", "include_global": True}, {"alpha-1", "alpha-draft", "global-1"}),
        ({"include_global": True}, {"alpha-1", "beta-1", "global-1", "alpha-draft"}),
        ({"status": "draft"}, {"alpha-draft"}),
        ({"project": "beta", "status": "active"}, {"beta-1"}),
        ({"project": "nowhere"}, set()),
    ],
)
def test_project_global_and_status_filters_apply_to_every_leg(
    projects: MemoryStore, retrieval: str, filters: dict[str, Any], expected: set[str]
) -> None:
    assert set(projects.search("kiwi", retrieval=retrieval, **filters, **UNGATED).ids) == expected


# ---------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"retrieval": "fuzzy"}, "unknown retrieval mode 'fuzzy'; use one of: hybrid, bm25, vector"),
        ({"supersession": "hide"}, "unknown supersession mode 'hide'; use one of: suppress, flag, off"),
        ({"contradiction": "drop"}, "unknown contradiction mode 'drop'; use one of: flag, off"),
        ({"status": "deleted"}, "unknown status filter 'deleted'; use one of: active, draft, archived"),
        ({"query_embedding": (1.0, 0.0)}, r"query_embedding: embedding has shape \(2,\), expected \(4,\)"),
        (
            {"query_embedding": (math.inf, 0.0, 0.0, 0.0)},
            "query_embedding: embedding contains NaN or infinite",
        ),
    ],
)
def test_bad_search_argument_is_a_store_error(
    store: MemoryStore, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        store.search("kiwi", **kwargs)


# ---------------------------------------------------------------- hostile input


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path_factory.mktemp("hostile") / "s.sqlite3", HashingEmbedder(dim=32)) as s:
        s.add_thoughts(
            [
                Thought("port", "The deploy server listens on port 8080"),
                Thought("near", 'NEAR(the "river") AND OR NOT -x ^y *z'),
                Thought("emoji", "party 🎉 time with café naïve"),
                Thought("new", "the deploy server now listens on port 9090"),
                Thought("tokenless", "?!"),
            ]
        )
        s.add_edges([Edge("new", "port", "replaces"), Edge("emoji", "near", "contradicts")])
        yield s


ANY_CHAR = st.characters(exclude_categories=())  # surrogates and control characters included


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(ANY_CHAR, max_size=60),
        st.lists(st.one_of(FTS_SYNTAX, st.text(ANY_CHAR, max_size=8), st.just("port")), max_size=15).map(
            " ".join
        ),
    ),
    top_k=st.integers(min_value=-2, max_value=20),
)
@example(text="x" * 10_000, top_k=5)
@example(text="(" * 10_000, top_k=5)
@example(text="NEAR( " * 2_000, top_k=5)
@example(text="🎉" * 10_000, top_k=5)
@example(text=" ".join(f"w{i}" for i in range(2_000)), top_k=5)
@example(text="port\x00 \x00server", top_k=5)
@example(text='"unbalanced (quote AND OR NOT ^* -', top_k=5)
@example(text="\ud800 lone surrogate \udfff", top_k=5)
def test_search_never_raises_for_any_query_text(hostile_store: MemoryStore, text: str, top_k: int) -> None:
    for retrieval in ("hybrid", "bm25", "vector"):
        for options in ({"min_relevance": 0, "supersession": "flag"}, {"supersession": "suppress"}):
            response = hostile_store.search(text, top_k=top_k, retrieval=retrieval, **options)
            assert len(response.hits) <= max(1, top_k)
            assert [h.rank for h in response.hits] == list(range(1, len(response.hits) + 1))
            assert all(math.isfinite(h.relevance) for h in response.hits)


# ---------------------------------------------------------------- the last ranking, reused

AGENT: dict[str, Any] = {"supersession": "suppress", "top_k": 3, "now": NOW}
"""How the runner asks both passes: the same candidate budget (4·top_k) with and without a gate."""

NOTES = [
    Thought("port", "the deploy server listens on port 8080", created_at=NOW),
    Thought("notes", "deploy notes for the staging server", created_at=NOW),
    Thought("lunch", "the canteen serves lunch at noon", created_at=NOW),
]


@pytest.fixture
def ranked_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The queries each `MemoryStore._ranked` call ranked (steps 1–6 actually run)."""
    calls: list[str] = []
    original = MemoryStore._ranked

    def spy(self: MemoryStore, query: str, *args: Any) -> Any:
        calls.append(query)
        return original(self, query, *args)

    monkeypatch.setattr(MemoryStore, "_ranked", spy)
    return calls


def test_a_gated_search_after_an_ungated_one_reuses_its_ranking_and_answers_as_a_fresh_store(
    ranked_calls: list[str],
) -> None:
    with MemoryStore(IN_MEMORY) as warm, MemoryStore(IN_MEMORY) as fresh:
        warm.add_thoughts(NOTES)
        fresh.add_thoughts(NOTES)
        warm.search("deploy server port", min_relevance=0, **AGENT)
        gated = warm.search("deploy server port", min_relevance=0.4, **AGENT)
        assert ranked_calls == ["deploy server port"]
        assert gated == fresh.search("deploy server port", min_relevance=0.4, **AGENT)
        assert gated.gate_candidates and gated.min_relevance == 0.4


def test_a_ranking_is_not_reused_across_other_inputs(ranked_calls: list[str]) -> None:
    """Another query, budget (top_k), filter, clock or standing mode ranks again; so does an
    explicit query embedding, which is never remembered."""
    with MemoryStore(IN_MEMORY) as store:
        store.add_thoughts(NOTES)
        store.search("deploy", min_relevance=0, **AGENT)
        for change in (
            {"top_k": 4},
            {"project": "other"},
            {"now": NOW + timedelta(days=1)},
            {"supersession": "flag"},
        ):
            store.search("deploy", **{**AGENT, "min_relevance": 0, **change})
        store.search("server", min_relevance=0, **AGENT)
        vector = HashingEmbedder().embed_query("server")
        store.search("server", min_relevance=0, query_embedding=vector, **AGENT)
        store.search("server", min_relevance=0, query_embedding=vector, **AGENT)
    assert ranked_calls == ["deploy"] * 5 + ["server"] * 3


def test_a_write_between_two_searches_is_seen(ranked_calls: list[str]) -> None:
    with MemoryStore(IN_MEMORY) as store:
        store.add_thoughts(NOTES)
        assert "moved" not in store.search("deploy port", min_relevance=0, **AGENT).ids
        store.add_thoughts([Thought("moved", "the deploy port moved to 9090", created_at=NOW)])
        assert "moved" in store.search("deploy port", min_relevance=0, **AGENT).ids
        store.add_edges([Edge("moved", "port", "replaces")])
        assert "port" not in store.search("deploy port", min_relevance=0, **AGENT).ids
    assert len(ranked_calls) == 3


def test_a_commit_by_another_connection_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    with MemoryStore(path) as reader, MemoryStore(path) as writer:
        writer.add_thoughts(NOTES[:1])
        assert reader.search("deploy", min_relevance=0, **AGENT).ids == ["port"]
        writer.add_thoughts(NOTES[1:])
        assert reader.search("deploy", min_relevance=0, **AGENT).ids[:2] == ["notes", "port"]


# ---------------------------------------------------------------- ties at the top_k cut


def test_cut_tied_says_whether_the_first_row_cut_ties_with_the_last_kept(store: MemoryStore) -> None:
    # vector mode: relevance = similarity, so b and c tie at 0.8 across a top_k 2 cut
    store.add_thoughts([thought("a", 0.9), thought("b", 0.8), thought("c", 0.8), thought("d", 0.5)])
    vector = {"retrieval": "vector", "supersession": "suppress", **UNGATED}
    assert store.search("", top_k=2, **vector).cut_tied is True
    assert store.search("", top_k=1, **vector).cut_tied is False
    assert store.search("", top_k=3, **vector).cut_tied is False
    assert store.search("", top_k=4, **vector).cut_tied is False  # nothing was cut
