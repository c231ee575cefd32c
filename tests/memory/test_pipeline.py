"""The pure ranking steps of SPEC §1.3 (evalkit.memory.pipeline), on hand-built candidates."""

from __future__ import annotations

import math
from dataclasses import fields
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.memory import DEFAULT_PIPELINE, RRF_K, Candidate, RowFilter, SearchPipeline
from evalkit.memory.pipeline import (
    apply_gate,
    apply_recency,
    apply_standing,
    candidate_budget,
    fuse_rrf,
    is_strong,
    recency_decay,
    similarity_relevance,
    vector_pool,
)

NOW = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)


def cand(
    id: str,
    *,
    vector_rank: int | None = None,
    bm25_rank: int | None = None,
    similarity: float | None = None,
    relevance: float = 0.0,
    age_days: float = 0.0,
) -> Candidate:
    return Candidate(
        rowid=0,
        id=id,
        content=f"content of {id}",
        project="default",
        created_at=NOW - timedelta(days=age_days),
        is_cluster=False,
        similarity=similarity,
        bm25_score=None if bm25_rank is None else 10.0 / bm25_rank,
        vector_rank=vector_rank,
        bm25_rank=bm25_rank,
        relevance=relevance,
    )


def vec(*ids: str) -> list[Candidate]:
    return [cand(i, vector_rank=r, similarity=1.0 - r / 10) for r, i in enumerate(ids, start=1)]


def bm(*ids: str) -> list[Candidate]:
    return [cand(i, bm25_rank=r) for r, i in enumerate(ids, start=1)]


def ids(rows: tuple[Candidate, ...]) -> list[str]:
    return [c.id for c in rows]


# ---------------------------------------------------------------- step 1: budget, pool


@pytest.mark.parametrize(
    ("top_k", "suppress", "gated", "expected"),
    [
        (10, False, False, 10),
        (10, True, False, 40),
        (10, False, True, 40),
        (10, True, True, 40),
        (250, True, False, 1000),
        (1000, False, True, 1000),
        (1000, False, False, 1000),
    ],
)
def test_candidate_budget_overfetches_four_times_under_suppress_or_gate(
    top_k: int, suppress: bool, gated: bool, expected: int
) -> None:
    assert candidate_budget(top_k, suppress, gated) == expected


@pytest.mark.parametrize(("budget", "expected"), [(1, 10), (40, 400), (100, 1000), (101, 1000), (1000, 1000)])
def test_vector_pool_is_ten_times_budget_capped_at_1000(budget: int, expected: int) -> None:
    assert vector_pool(budget) == expected


# ---------------------------------------------------------------- step 4: fusion


def test_rrf_scores_sum_reciprocal_ranks_with_k_60() -> None:
    fused = fuse_rrf(vec("a", "b", "c"), bm("c", "d", "a"), budget=10)
    scores = {c.id: c.rrf_score for c in fused}
    assert scores == {
        "a": pytest.approx(1 / 61 + 1 / 63),
        "b": pytest.approx(1 / 62),
        "c": pytest.approx(1 / 63 + 1 / 61),
        "d": pytest.approx(1 / 62),
    }
    assert RRF_K == 60


def test_rrf_ties_keep_vector_order_then_bm25_only_ids() -> None:
    # a and c tie (1/61 + 1/63): a is earlier in the vector leg. b and d tie (1/62): b is a vector
    # row, d is BM25-only, so b comes first.
    fused = fuse_rrf(vec("a", "b", "c"), bm("c", "d", "a"), budget=10)
    assert ids(fused) == ["a", "c", "b", "d"]


def test_rrf_ties_among_bm25_only_ids_keep_bm25_order() -> None:
    fused = fuse_rrf(vec("a", "b"), bm("y", "x"), budget=10)
    assert ids(fused) == ["a", "y", "b", "x"]


def test_relevance_divides_rrf_by_non_empty_legs_over_61() -> None:
    fused = {c.id: c for c in fuse_rrf(vec("a", "b", "c"), bm("c", "d", "a"), budget=10)}
    assert fused["a"].relevance == pytest.approx((1 / 61 + 1 / 63) * 61 / 2)
    assert fused["b"].relevance == pytest.approx(61 / 62 / 2)
    assert fused["d"].relevance == pytest.approx(61 / 62 / 2)


def test_relevance_is_one_for_first_in_every_leg() -> None:
    fused = fuse_rrf(vec("a", "b"), bm("a", "b"), budget=10)
    assert fused[0].relevance == pytest.approx(1.0)


def test_relevance_with_one_empty_leg_counts_one_leg() -> None:
    fused = fuse_rrf([], bm("x", "y", "z"), budget=10)
    assert [c.relevance for c in fused] == pytest.approx([1.0, 61 / 62, 61 / 63])
    assert [c.rrf_score for c in fused] == pytest.approx([1 / 61, 1 / 62, 1 / 63])


def test_fusion_keeps_budget_rows() -> None:
    assert ids(fuse_rrf(vec("a", "b", "c"), bm("d", "e"), budget=3)) == ["a", "d", "b"]


def test_fusion_merges_both_legs_signals_on_one_row() -> None:
    (row,) = (c for c in fuse_rrf(vec("a", "b"), bm("b"), budget=10) if c.id == "b")
    assert row.vector_rank == 2
    assert row.bm25_rank == 1
    assert row.similarity == pytest.approx(0.8)
    assert row.bm25_score == pytest.approx(10.0)
    assert row.match_source == ("vector", "bm25")


def test_fusion_of_two_empty_legs_is_empty() -> None:
    assert fuse_rrf([], [], budget=10) == ()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
    st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
    st.integers(min_value=1, max_value=12),
)
def test_fusion_is_sorted_unique_and_bounded(v: list[str], b: list[str], budget: int) -> None:
    fused = fuse_rrf(vec(*v), bm(*b), budget)
    assert len(fused) == min(budget, len(set(v) | set(b)))
    assert len(set(ids(fused))) == len(fused)
    scores = [c.rrf_score or 0.0 for c in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < c.relevance <= 1.0 + 1e-12 for c in fused)


# ---------------------------------------------------------------- single-leg vector mode


def test_vector_mode_relevance_is_similarity_in_leg_order() -> None:
    rows = similarity_relevance(vec("a", "b", "c"), budget=2)
    assert ids(rows) == ["a", "b"]
    assert [c.relevance for c in rows] == pytest.approx([0.9, 0.8])
    assert [c.rrf_score for c in rows] == pytest.approx([1 / 61, 1 / 62])


# ---------------------------------------------------------------- step 5: recency


@pytest.mark.parametrize(
    ("age", "half_life", "expected"),
    [(0.0, 30.0, 1.0), (30.0, 30.0, 0.5), (60.0, 30.0, 0.25), (1.0, 1.0, 0.5), (15.0, 30.0, math.sqrt(0.5))],
)
def test_recency_decay_halves_every_half_life(age: float, half_life: float, expected: float) -> None:
    assert recency_decay(age, half_life) == pytest.approx(expected)


def test_recency_decay_of_future_timestamp_is_one() -> None:
    assert recency_decay(-5.0, 30.0) == 1.0


def test_recency_weight_zero_leaves_rows_and_fields_untouched() -> None:
    rows = (cand("a", relevance=0.5, age_days=100), cand("b", relevance=0.9, age_days=0))
    out = apply_recency(rows, 0.0, 30.0, NOW)
    assert out == rows
    assert all(c.recency_score is None and c.final_score is None for c in out)


def test_recency_final_is_relevance_plus_weighted_decay_and_resorts() -> None:
    rows = (cand("old", relevance=1.0, age_days=60), cand("new", relevance=0.9, age_days=0))
    out = apply_recency(rows, 0.5, 30.0, NOW)
    assert ids(out) == ["new", "old"]
    assert [c.recency_score for c in out] == pytest.approx([1.0, 0.25])
    assert [c.final_score for c in out] == pytest.approx([0.9 + 0.5, 1.0 + 0.125])


def test_recency_resort_is_stable_for_equal_final_scores() -> None:
    rows = (cand("x", relevance=0.5, age_days=30), cand("y", relevance=0.5, age_days=30))
    assert ids(apply_recency(rows, 1.0, 30.0, NOW)) == ["x", "y"]


# ---------------------------------------------------------------- step 6: standing

SUPERSEDED = {"old": ("new",), "both": ("newer",)}
CONTRADICTED = {"left": ("right",), "right": ("left",), "both": ("rival",)}


def test_standing_precedence_superseded_over_contradicted_over_current() -> None:
    out = {
        c.id: c
        for c in apply_standing(vec("old", "left", "both", "plain"), SUPERSEDED, CONTRADICTED, "flag", "flag")
    }
    assert out["old"].standing == "superseded"
    assert out["left"].standing == "contradicted"
    assert out["plain"].standing == "current"
    assert out["both"].standing == "superseded"
    assert out["both"].superseded_by == ("newer",)
    assert out["both"].contradicted_by == ("rival",)


def test_standing_partitions_current_then_contradicted_then_superseded_stably() -> None:
    rows = vec("old", "left", "p1", "both", "right", "p2")
    out = apply_standing(rows, SUPERSEDED, CONTRADICTED, "flag", "flag")
    assert ids(out) == ["p1", "p2", "left", "right", "old", "both"]


def test_suppress_drops_superseded_rows_only() -> None:
    out = apply_standing(vec("old", "left", "both", "plain"), SUPERSEDED, CONTRADICTED, "suppress", "flag")
    assert ids(out) == ["plain", "left"]


def test_supersession_off_ignores_replaces_edges() -> None:
    out = {c.id: c for c in apply_standing(vec("old", "both"), SUPERSEDED, CONTRADICTED, "off", "flag")}
    assert out["old"].standing == "current"
    assert out["old"].superseded_by == ()
    assert out["both"].standing == "contradicted"


def test_contradiction_off_ignores_contradicts_edges() -> None:
    out = {c.id: c for c in apply_standing(vec("left", "both"), SUPERSEDED, CONTRADICTED, "flag", "off")}
    assert out["left"].standing == "current"
    assert out["left"].contradicted_by == ()
    assert out["both"].contradicted_by == ()


# ---------------------------------------------------------------- steps 7-8: confidence and gate


def test_strong_when_bm25_matched_whatever_the_similarity() -> None:
    row = cand("a", vector_rank=1, bm25_rank=3, similarity=0.01)
    assert is_strong(row, 0.9)


def test_vector_only_strong_iff_similarity_reaches_floor() -> None:
    assert is_strong(cand("a", vector_rank=1, similarity=0.9), 0.9)
    assert not is_strong(cand("a", vector_rank=1, similarity=0.8999), 0.9)


def test_gate_zero_keeps_everything_and_counts_nothing() -> None:
    rows = tuple(vec("a", "b"))
    assert apply_gate(rows, 0.0) == (rows, 0, 0)


def test_gate_keeps_bm25_hits_and_vector_hits_at_or_above_floor() -> None:
    rows = (
        cand("weak-vector", vector_rank=1, similarity=0.3),
        cand("bm25-low-sim", vector_rank=2, bm25_rank=1, similarity=0.1),
        cand("strong-vector", vector_rank=3, similarity=0.5),
        cand("bm25-only", bm25_rank=2),
    )
    kept, candidates, filtered_out = apply_gate(rows, 0.5)
    assert ids(kept) == ["bm25-low-sim", "strong-vector", "bm25-only"]
    assert (candidates, filtered_out) == (4, 1)


# ---------------------------------------------------------------- filters and the bundle


def test_row_filter_sql_for_each_option() -> None:
    assert RowFilter(None, False, None).sql() == ("1", [])
    assert RowFilter(None, True, None).sql() == ("1", [])
    assert RowFilter("p", False, None).sql() == ("(t.project = ?)", ["p"])
    assert RowFilter("p", True, "draft").sql("x") == (
        "(x.project = ? OR x.is_global = 1) AND x.status = ?",
        ["p", "draft"],
    )
    assert RowFilter(None, False, None, include_clusters=False).sql() == ("t.is_cluster = 0", [])


def test_default_pipeline_is_the_spec_steps() -> None:
    pipe = SearchPipeline()
    assert pipe == DEFAULT_PIPELINE
    assert {f.name for f in fields(SearchPipeline)} == {
        "rrf_k",
        "use_vector",
        "use_bm25",
        "row_filter",
        "budget",
        "pool",
        "fts_query",
        "fuse",
        "vector_relevance",
        "recency",
        "standing",
        "strong",
        "gate",
        "filter_before_cut",
        "purge_on_delete",
        "reembed_on_update",
    }
    assert (pipe.filter_before_cut, pipe.purge_on_delete, pipe.reembed_on_update) == (True, True, True)
    assert (pipe.budget, pipe.pool, pipe.fuse, pipe.vector_relevance) == (
        candidate_budget,
        vector_pool,
        fuse_rrf,
        similarity_relevance,
    )
    assert (pipe.recency, pipe.standing, pipe.strong, pipe.gate) == (
        apply_recency,
        apply_standing,
        is_strong,
        apply_gate,
    )
