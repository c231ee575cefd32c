"""Tests for evalkit.metrics: hand-computed fixtures, hypothesis laws, and trec_eval as oracle.

The oracle is pytrec_eval (trec_eval 9 behind a Python API) on seeded random runs and graded
qrels; ir_measures is a second check for its "unanswered queries score 0, never dropped"
convention.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping

import ir_measures
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.errors import UsageError
from evalkit.metrics import (
    HARNESS_METRICS,
    METRICS,
    MetricDef,
    MetricSpec,
    QueryScores,
    average_precision_at_k,
    cutoff,
    dedupe,
    hit_rate,
    ndcg_at_k,
    parse_metric,
    parse_metrics,
    precision,
    precision_at_k,
    r_precision,
    recall,
    recall_all_at_k,
    recall_at_k,
    reciprocal_rank,
    reciprocal_rank_at_k,
    relevant_ids,
    score_query,
    success_at_k,
)

LOG2_3 = math.log2(3)

# ---------------------------------------------------------------------------------------------
# Harness metrics (SPEC §3.3), hand-computed
# ---------------------------------------------------------------------------------------------


def test_score_query_dedupes_and_divides_precision_by_what_was_returned() -> None:
    # dedupe(a, x, b, a, y) = (a, x, b, y): 4 returned ids, hits {a, b} = 2, relevant {a, b, c} = 3.
    # recall = 2/3, precision = 2/4, first relevant at rank 1 → mrr = 1, hit = 1.
    scores = score_query(["a", "x", "b", "a", "y"], {"a", "b", "c"})
    assert scores == QueryScores(recall=2 / 3, precision=0.5, mrr=1.0, hit_rate=1.0)


def test_score_query_late_single_hit() -> None:
    # (x, y, b), relevant {b}: recall 1/1, precision 1/3, first relevant at rank 3 → 1/3.
    assert score_query(["x", "y", "b"], ["b"]) == QueryScores(1.0, 1 / 3, 1 / 3, 1.0)


def test_score_query_duplicate_does_not_shift_rank() -> None:
    # (x, x, b) dedupes to (x, b): b is rank 2 (not 3), precision 1/2 (not 1/3).
    assert score_query(["x", "x", "b"], ["b"]) == QueryScores(1.0, 0.5, 0.5, 1.0)


@pytest.mark.parametrize(
    ("retrieved", "relevant"),
    [([], ["a"]), (["a", "b"], []), ([], []), (["x", "y"], ["a"])],
    ids=["nothing-retrieved", "nothing-relevant", "both-empty", "no-relevant-retrieved"],
)
def test_score_query_empty_or_missed_gives_zeros_not_nan(retrieved: list[str], relevant: list[str]) -> None:
    assert score_query(retrieved, relevant) == QueryScores(0.0, 0.0, 0.0, 0.0)


def test_query_scores_field_names_are_the_frame_columns() -> None:
    assert HARNESS_METRICS == ("recall", "precision", "mrr", "hit_rate")


def test_query_scores_is_frozen() -> None:
    scores = score_query(["a"], ["a"])
    with pytest.raises(AttributeError):
        scores.recall = 0.0  # type: ignore[misc]


def test_individual_harness_functions() -> None:
    # dedupe(b, a, b, z) = (b, a, z); relevant {a, q}: hit a at rank 2.
    retrieved, relevant = ["b", "a", "b", "z"], {"a", "q"}
    assert recall(retrieved, relevant) == 1 / 2  # 1 of 2 relevant
    assert precision(retrieved, relevant) == 1 / 3  # 1 of 3 returned
    assert reciprocal_rank(retrieved, relevant) == 1 / 2
    assert hit_rate(retrieved, relevant) == 1.0


@pytest.mark.parametrize("function", [recall, precision, reciprocal_rank, hit_rate, score_query])
def test_bare_string_is_rejected_not_read_as_characters(function: Callable[..., object]) -> None:
    for retrieved, relevant in [("abc", ["a"]), ("abc", []), (["a"], "abc"), ([], "abc")]:
        with pytest.raises(UsageError, match="wrap a single id in a list"):
            function(retrieved, relevant)


AT_K_FUNCTIONS = [
    ndcg_at_k,
    average_precision_at_k,
    recall_at_k,
    precision_at_k,
    recall_all_at_k,
    success_at_k,
    reciprocal_rank_at_k,
]


def test_dedupe_and_cutoff() -> None:
    assert dedupe(["b", "a", "b", "c", "a"]) == ("b", "a", "c")
    # cutoff counts distinct ids: the repeated b does not use up a slot.
    assert cutoff(["b", "b", "a", "c"], 2) == ("b", "a")
    assert cutoff(["b"], 5) == ("b",)


@pytest.mark.parametrize("k", [0, -3, True, 2.0])
def test_cutoff_rejects_non_positive_or_non_integer_k(k: object) -> None:
    with pytest.raises(UsageError, match="positive integer"):
        cutoff(["a"], k)  # type: ignore[arg-type]
    for function in AT_K_FUNCTIONS:
        # Checked before any early return, including when nothing is relevant.
        for qrels in ({"a": 1}, {}):
            with pytest.raises(UsageError, match="positive integer"):
                function(["a"], qrels, k)  # type: ignore[arg-type]


@pytest.mark.parametrize("function", [*AT_K_FUNCTIONS, r_precision])
def test_qrels_metrics_reject_a_bare_string_ranking(function: Callable[..., float]) -> None:
    extra = () if function is r_precision else (5,)
    for qrels in ({"a": 1}, {}):
        with pytest.raises(UsageError, match="wrap a single id in a list"):
            function("abc", qrels, *extra)


def test_relevant_ids_uses_grade_one_and_above() -> None:
    assert relevant_ids({"a": 3, "b": 1, "n": 0, "m": -1}) == {"a", "b"}


# ---------------------------------------------------------------------------------------------
# IR metrics at k, hand-computed on one graded fixture
# ---------------------------------------------------------------------------------------------

# Grades: a=3, b=2, c=1 relevant; n=0 and m=-1 judged non-relevant; x unjudged.
QRELS = {"a": 3, "b": 2, "c": 1, "n": 0, "m": -1}
# The second b repeats rank 1 and is dropped: ranking = (b, x, a, n, m, c), ranks 1..6.
RUN = ["b", "x", "a", "n", "b", "m", "c"]


def test_ndcg_at_k_linear_gain_log2_discount_ideal_from_qrels() -> None:
    # @1: DCG = 2/log2(2) = 2; IDCG = 3/log2(2) = 3 → 2/3.
    assert ndcg_at_k(RUN, QRELS, 1) == pytest.approx(2 / 3, abs=1e-12)
    # @3: gains (2, 0, 3): DCG = 2/1 + 3/log2(4) = 2 + 1.5 = 3.5;
    #     ideal (3, 2, 1): IDCG = 3/1 + 2/log2(3) + 1/log2(4) = 3 + 2/log2(3) + 0.5.
    assert ndcg_at_k(RUN, QRELS, 3) == pytest.approx(3.5 / (3.5 + 2 / LOG2_3), abs=1e-12)
    # @6: gains (2, 0, 3, 0, 0, 1) (m's -1 gains nothing): DCG = 3.5 + 1/log2(7); IDCG as @3.
    expected = (3.5 + 1 / math.log2(7)) / (3.5 + 2 / LOG2_3)
    assert ndcg_at_k(RUN, QRELS, 6) == pytest.approx(expected, abs=1e-12)


def test_ndcg_ideal_counts_relevant_documents_never_retrieved() -> None:
    # Only c (grade 1) retrieved, a (grade 3) missed. @2: DCG = 1; IDCG = 3 + 1/log2(3).
    assert ndcg_at_k(["c"], {"a": 3, "c": 1}, 2) == pytest.approx(1 / (3 + 1 / LOG2_3), abs=1e-12)


def test_average_precision_at_k_divides_by_all_relevant() -> None:
    # Relevant at ranks 1 (b), 3 (a), 6 (c); R = 3.
    # @3: (P@1 + P@3) / 3 = (1/1 + 2/3) / 3 = 5/9.
    assert average_precision_at_k(RUN, QRELS, 3) == pytest.approx(5 / 9, abs=1e-12)
    # @6: (1/1 + 2/3 + 3/6) / 3 = (13/6) / 3 = 13/18.
    assert average_precision_at_k(RUN, QRELS, 6) == pytest.approx(13 / 18, abs=1e-12)


def test_recall_and_precision_at_k() -> None:
    assert recall_at_k(RUN, QRELS, 1) == 1 / 3  # {b} of {a, b, c}
    assert recall_at_k(RUN, QRELS, 3) == 2 / 3  # {b, a}
    assert recall_at_k(RUN, QRELS, 6) == 1.0
    assert precision_at_k(RUN, QRELS, 3) == 2 / 3  # b, a of 3 slots
    # 6 distinct ids returned, 3 relevant, but P@10 divides by 10.
    assert precision_at_k(RUN, QRELS, 10) == 3 / 10


def test_recall_all_at_k_needs_every_relevant_document() -> None:
    assert recall_all_at_k(RUN, QRELS, 3) == 0.0  # c (rank 6) missing
    assert recall_all_at_k(RUN, QRELS, 5) == 0.0  # still missing
    assert recall_all_at_k(RUN, QRELS, 6) == 1.0
    assert recall_all_at_k(RUN, {"n": 0, "m": -1}, 6) == 0.0  # nothing relevant: never vacuous 1


def test_r_precision_uses_the_querys_own_r() -> None:
    # R = 3: top 3 = (b, x, a) → 2/3.
    assert r_precision(RUN, QRELS) == 2 / 3
    # R = 3 but one doc returned: 1/3 (divides by R, not by what was returned).
    assert r_precision(["a"], QRELS) == 1 / 3


def test_success_and_reciprocal_rank_at_k() -> None:
    late = ["x", "n", "a"]  # first relevant at rank 3
    assert success_at_k(late, QRELS, 2) == 0.0
    assert success_at_k(late, QRELS, 3) == 1.0
    assert reciprocal_rank_at_k(late, QRELS, 2) == 0.0
    assert reciprocal_rank_at_k(late, QRELS, 3) == 1 / 3


def test_non_positive_grades_are_not_relevant_for_any_metric() -> None:
    for label in ("ndcg@5", "map@5", "recall@5", "precision@5", "r_precision", "success@5", "mrr"):
        assert parse_metric(label).compute(["n", "m"], QRELS) == 0.0, label


def test_registry_specs_match_the_functions_on_the_fixture() -> None:
    assert parse_metric("ndcg@3").compute(RUN, QRELS) == ndcg_at_k(RUN, QRELS, 3)
    assert parse_metric("map@6").compute(RUN, QRELS) == average_precision_at_k(RUN, QRELS, 6)
    # Uncut precision divides by the 6 distinct ids returned: 3/6; precision@10 by 10.
    assert parse_metric("precision").compute(RUN, QRELS) == 0.5
    assert parse_metric("precision@10").compute(RUN, QRELS) == 0.3
    assert parse_metric("recall").compute(RUN, QRELS) == 1.0
    assert parse_metric("mrr").compute(RUN, QRELS) == 1.0
    assert parse_metric("hit_rate").compute(RUN, QRELS) == 1.0


# ---------------------------------------------------------------------------------------------
# Registry and parsing
# ---------------------------------------------------------------------------------------------


def test_registry_holds_the_documented_metrics() -> None:
    assert list(METRICS) == [
        "ndcg",
        "map",
        "recall",
        "precision",
        "recall_all",
        "r_precision",
        "success",
        "mrr",
        "hit_rate",
    ]
    assert [m.usage for m in METRICS.values()] == [
        "ndcg@k",
        "map@k",
        "recall[@k]",
        "precision[@k]",
        "recall_all@k",
        "r_precision",
        "success@k",
        "mrr[@k]",
        "hit_rate",
    ]


@pytest.mark.parametrize(
    ("text", "name", "k", "label"),
    [
        ("ndcg@10", "ndcg", 10, "ndcg@10"),
        (" NDCG @ 10 ", "ndcg", 10, "ndcg@10"),
        ("map@100", "map", 100, "map@100"),
        ("recall", "recall", None, "recall"),
        ("recall@1", "recall", 1, "recall@1"),
        ("mrr@10", "mrr", 10, "mrr@10"),
        ("r_precision", "r_precision", None, "r_precision"),
        ("hit_rate", "hit_rate", None, "hit_rate"),
    ],
)
def test_parse_metric_reads_name_and_cutoff(text: str, name: str, k: int | None, label: str) -> None:
    spec = parse_metric(text)
    assert (spec.name, spec.k, spec.label) == (name, k, label)


def test_unknown_metric_error_lists_the_valid_names() -> None:
    with pytest.raises(UsageError) as caught:
        parse_metric("ndgc@10")
    message = str(caught.value)
    assert "'ndgc@10'" in message
    for definition in METRICS.values():
        assert definition.usage in message


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("ndcg", "needs a cutoff: write ndcg@k"),
        ("success", "needs a cutoff"),
        ("ndcg@", "missing cutoff after '@'"),
        ("ndcg@0", "invalid cutoff '0'"),
        ("ndcg@-1", "invalid cutoff '-1'"),
        ("ndcg@+5", "invalid cutoff"),
        ("ndcg@05", "invalid cutoff"),
        ("ndcg@1.5", "invalid cutoff"),
        ("ndcg@ten", "invalid cutoff"),
        ("ndcg@10@2", "invalid cutoff"),
        ("r_precision@5", "takes no cutoff"),
        ("hit_rate@5", "takes no cutoff"),
        ("", "unknown metric"),
        ("@10", "unknown metric"),
    ],
)
def test_parse_metric_rejects_bad_text(text: str, match: str) -> None:
    with pytest.raises(UsageError, match=match) as caught:
        parse_metric(text)
    assert "valid metrics: ndcg@k, map@k, recall[@k]" in str(caught.value)


def test_metric_def_needs_a_scorer() -> None:
    with pytest.raises(UsageError, match="defines no scorer"):
        MetricDef("nothing", "computes nothing")


@pytest.mark.parametrize("k", [0, -1, True])
def test_metric_spec_validates_direct_construction(k: int) -> None:
    with pytest.raises(UsageError, match="positive integer"):
        MetricSpec(METRICS["ndcg"], k)


def test_parse_metrics_keeps_order() -> None:
    specs = parse_metrics("ndcg@10, recall@100,mrr")
    assert [s.label for s in specs] == ["ndcg@10", "recall@100", "mrr"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "no metrics given"),
        ("  ", "no metrics given"),
        ("ndcg@10,,mrr", "empty metric at position 2"),
        ("ndcg@10,", "empty metric at position 2"),
        ("ndcg@10,NDCG@10", "listed twice"),
        ("ndcg@10,foo", "unknown metric 'foo'"),
    ],
)
def test_parse_metrics_rejects_bad_lists(text: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        parse_metrics(text)


# ---------------------------------------------------------------------------------------------
# Laws (hypothesis)
# ---------------------------------------------------------------------------------------------

DOC = st.sampled_from([f"d{i}" for i in range(8)])
RANKINGS = st.lists(DOC, max_size=12)
QRELS_ST = st.dictionaries(DOC, st.integers(min_value=-1, max_value=3), max_size=8)
CUTOFFS = st.integers(min_value=1, max_value=15)


@st.composite
def metric_specs(draw: st.DrawFn) -> MetricSpec:
    """Any valid spec: a metric from the registry with a cutoff its rule allows."""
    metric = draw(st.sampled_from(list(METRICS.values())))
    if metric.at_k is None:
        return MetricSpec(metric)
    if metric.full is None:
        return MetricSpec(metric, draw(CUTOFFS))
    return MetricSpec(metric, draw(st.none() | CUTOFFS))


@st.composite
def rankings_with_repeats(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A duplicate-free ranking and the same ranking with repeats of earlier ids inserted."""
    base = draw(st.lists(DOC, unique=True, max_size=8))
    noisy = list(base)
    for _ in range(draw(st.integers(min_value=0, max_value=6)) if base else 0):
        position = draw(st.integers(min_value=1, max_value=len(noisy)))
        noisy.insert(position, draw(st.sampled_from(noisy[:position])))
    return base, noisy


@settings(deadline=None)
@given(spec=metric_specs(), retrieved=RANKINGS, qrels=QRELS_ST)
def test_every_metric_is_in_unit_interval(
    spec: MetricSpec, retrieved: list[str], qrels: dict[str, int]
) -> None:
    value = spec.compute(retrieved, qrels)
    assert 0.0 <= value <= 1.0, spec.label


@settings(deadline=None)
@given(retrieved=RANKINGS, relevant=st.sets(DOC, max_size=8))
def test_query_scores_are_in_unit_interval(retrieved: list[str], relevant: set[str]) -> None:
    scores = score_query(retrieved, relevant)
    for field in HARNESS_METRICS:
        assert 0.0 <= getattr(scores, field) <= 1.0, field


@pytest.mark.parametrize("name", ["recall", "map", "success", "recall_all"])
@settings(deadline=None)
@given(retrieved=RANKINGS, qrels=QRELS_ST)
def test_cumulative_metrics_are_monotone_in_k(name: str, retrieved: list[str], qrels: dict[str, int]) -> None:
    values = [MetricSpec(METRICS[name], k).compute(retrieved, qrels) for k in range(1, len(retrieved) + 3)]
    assert values == sorted(values)


@settings(deadline=None)
@given(spec=metric_specs(), rankings=rankings_with_repeats(), qrels=QRELS_ST)
def test_repeated_ids_do_not_change_any_metric(
    spec: MetricSpec, rankings: tuple[list[str], list[str]], qrels: dict[str, int]
) -> None:
    base, noisy = rankings
    assert spec.compute(noisy, qrels) == spec.compute(base, qrels)
    relevant = relevant_ids(qrels)
    assert score_query(noisy, relevant) == score_query(base, relevant)


@settings(deadline=None)
@given(spec=metric_specs(), retrieved=RANKINGS, qrels=QRELS_ST)
def test_empty_inputs_score_zero(spec: MetricSpec, retrieved: list[str], qrels: dict[str, int]) -> None:
    assert spec.compute([], qrels) == 0.0
    assert spec.compute(retrieved, {}) == 0.0
    non_relevant = {doc: min(grade, 0) for doc, grade in qrels.items()}
    assert spec.compute(retrieved, non_relevant) == 0.0


@settings(deadline=None)
@given(retrieved=RANKINGS, qrels=QRELS_ST)
def test_uncut_metrics_equal_their_cut_form_beyond_the_ranking(
    retrieved: list[str], qrels: dict[str, int]
) -> None:
    relevant = relevant_ids(qrels)
    scores = score_query(retrieved, relevant)
    beyond = len(retrieved) + 1
    assert parse_metric("recall").compute(retrieved, qrels) == scores.recall
    assert parse_metric("precision").compute(retrieved, qrels) == scores.precision
    assert parse_metric("mrr").compute(retrieved, qrels) == scores.mrr
    assert parse_metric("hit_rate").compute(retrieved, qrels) == scores.hit_rate
    assert recall_at_k(retrieved, qrels, beyond) == scores.recall
    assert reciprocal_rank_at_k(retrieved, qrels, beyond) == scores.mrr
    assert success_at_k(retrieved, qrels, beyond) == scores.hit_rate
    # recall_all@k is recall@k thresholded at 1.
    k = max(1, len(retrieved) // 2)
    assert recall_all_at_k(retrieved, qrels, k) == float(recall_at_k(retrieved, qrels, k) == 1.0)


# ---------------------------------------------------------------------------------------------
# Oracle: pytrec_eval (trec_eval) on seeded random runs with graded qrels
# ---------------------------------------------------------------------------------------------

ORACLE_CUTOFFS = (1, 3, 5, 10, 20)
POOL = [f"doc{i:02d}" for i in range(40)]


class Query:
    """One random query: its ranking (with repeats inserted, as a sloppy system might return) and
    its graded qrels (zeros, negatives, and documents the run never retrieves)."""

    def __init__(self, rng: random.Random, qid: str) -> None:
        self.qid = qid
        judged = rng.sample(POOL, rng.randint(0, 10))
        self.qrels = {doc: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for doc in judged}
        self.ranking = rng.sample(POOL, rng.randint(0, 25))  # distinct; unjudged docs included
        self.retrieved = list(self.ranking)
        for position in range(len(self.retrieved), 0, -1):
            if rng.random() < 0.2:
                self.retrieved.insert(position, rng.choice(self.retrieved[:position]))

    def trec_run(self, k: int | None = None) -> dict[str, float]:
        """The ranking for pytrec_eval: distinct descending scores, so no tie-break applies."""
        top = self.ranking if k is None else self.ranking[:k]
        return {doc: float(len(top) - rank) for rank, doc in enumerate(top)}


QUERIES = [Query(random.Random(f"evalkit-metrics-{n}"), f"q{n:03d}") for n in range(300)]


def test_oracle_fixture_covers_the_edge_cases() -> None:
    # Guards against a fixture that would let the oracle tests pass vacuously.
    positive = [q for q in QUERIES if relevant_ids(q.qrels)]
    assert any(not q.ranking for q in QUERIES), "an empty run"
    assert any(not q.qrels for q in QUERIES), "a query with no judgments"
    assert any(q.qrels and not relevant_ids(q.qrels) for q in QUERIES), "only grade <= 0"
    assert any(not relevant_ids(q.qrels) & set(q.ranking) for q in positive), "relevant, none found"
    assert any(set(q.ranking) - set(q.qrels) for q in QUERIES), "unjudged retrieved"
    assert any(len(set(q.qrels.values()) - {0, -1}) >= 2 for q in QUERIES), "graded qrels"
    assert sum(len(q.retrieved) - len(q.ranking) for q in QUERIES) > 100, "repeated ids"
    assert len(positive) > 200


TrecScores = Mapping[str, Mapping[str, float]]
"""qid → trec_eval measure name → value."""


@pytest.fixture(scope="module")
def trec_scores() -> TrecScores:
    """pytrec_eval on every query. `recip_rank_cut_k` is recip_rank of the run truncated at k
    (trec_eval has no cutoff for recip_rank); `success_1000` covers every run (≤ 25 docs)."""
    qrels = {q.qid: q.qrels for q in QUERIES}
    cuts = ",".join(map(str, ORACLE_CUTOFFS))
    measures = {f"ndcg_cut.{cuts}", f"map_cut.{cuts}", f"recall.{cuts}", f"P.{cuts}", f"success.{cuts},1000"}
    measures |= {"Rprec", "recip_rank", "set_P", "set_recall"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=1)
    scores = evaluator.evaluate({q.qid: q.trec_run() for q in QUERIES})
    for k in ORACLE_CUTOFFS:
        truncated = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=1)
        for qid, values in truncated.evaluate({q.qid: q.trec_run(k) for q in QUERIES}).items():
            scores[qid][f"recip_rank_cut_{k}"] = values["recip_rank"]
    return scores


# Our metric (name, or name@k) → its value from trec_eval's per-query measures.
TREC_EVAL_ORACLE: dict[str, Callable[[Mapping[str, float], int | None], float]] = {
    "ndcg@k": lambda m, k: m[f"ndcg_cut_{k}"],
    "map@k": lambda m, k: m[f"map_cut_{k}"],
    "recall@k": lambda m, k: m[f"recall_{k}"],
    "precision@k": lambda m, k: m[f"P_{k}"],
    "success@k": lambda m, k: m[f"success_{k}"],
    "mrr@k": lambda m, k: m[f"recip_rank_cut_{k}"],
    # No trec_eval measure: every relevant doc is in the top k ⇔ recall_k == 1 (n/n is exactly
    # 1.0 in floating point; recall_k is 0 when nothing is relevant, matching our 0.0).
    "recall_all@k": lambda m, k: 1.0 if m[f"recall_{k}"] == 1.0 else 0.0,
    # Harness metrics: set_recall is recall_k with k = len(retrieved); set_P divides by the
    # number retrieved; hit rate is success over the whole run.
    "recall": lambda m, _: m["set_recall"],
    "precision": lambda m, _: m["set_P"],
    "mrr": lambda m, _: m["recip_rank"],
    "hit_rate": lambda m, _: m["success_1000"],
    "r_precision": lambda m, _: m["Rprec"],
}


def _oracle_key(spec: MetricSpec) -> str:
    return spec.name if spec.k is None else f"{spec.name}@k"


ORACLE_SPECS = [
    spec
    for metric in METRICS.values()
    for spec in (
        ([MetricSpec(metric)] if metric.full is not None else [])
        + ([MetricSpec(metric, k) for k in ORACLE_CUTOFFS] if metric.at_k is not None else [])
    )
]


def test_every_registry_metric_has_an_oracle() -> None:
    assert {_oracle_key(spec) for spec in ORACLE_SPECS} == set(TREC_EVAL_ORACLE)


@pytest.mark.parametrize("spec", ORACLE_SPECS, ids=lambda spec: spec.label)
def test_metric_matches_trec_eval(spec: MetricSpec, trec_scores: TrecScores) -> None:
    oracle = TREC_EVAL_ORACLE[_oracle_key(spec)]
    mismatches = []
    for q in QUERIES:
        ours = spec.compute(q.retrieved, q.qrels)
        if q.qid in trec_scores:
            expected = oracle(trec_scores[q.qid], spec.k)
        else:
            # trec_eval drops a query with no judgments at all; ir_measures scores it 0
            # (checked below), and so do we.
            assert not q.qrels, q.qid
            expected = 0.0
        if not math.isclose(ours, expected, rel_tol=0.0, abs_tol=1e-9):
            mismatches.append((q.qid, ours, expected))
    assert not mismatches, f"{spec.label}: {mismatches[:5]}"


def test_trec_eval_scores_queries_with_nothing_relevant_retrieved_zero(trec_scores: TrecScores) -> None:
    # Empty runs and runs without a relevant doc are kept by trec_eval with 0, like ours.
    missed = [q for q in QUERIES if q.qrels and not relevant_ids(q.qrels) & set(q.ranking)]
    assert any(not q.ranking for q in missed)
    for q in missed:
        assert trec_scores[q.qid]["recip_rank"] == 0.0
        assert trec_scores[q.qid]["ndcg_cut_10"] == 0.0
        for spec in ORACLE_SPECS:
            assert spec.compute(q.retrieved, q.qrels) == 0.0, (q.qid, spec.label)


# ir_measures' convention: every query in the qrels is scored, unanswered ones 0, none dropped.
IR_MEASURES = {
    "ndcg@10": ir_measures.nDCG @ 10,
    "map@10": ir_measures.AP @ 10,
    "recall@10": ir_measures.R @ 10,
    "precision@10": ir_measures.P @ 10,
    "success@10": ir_measures.Success @ 10,
    "r_precision": ir_measures.Rprec,
    "mrr": ir_measures.RR,
    "recall": ir_measures.SetR,
    "precision": ir_measures.SetP,
    "hit_rate": ir_measures.Success @ 1000,
}


def test_ir_measures_scores_every_query_and_matches() -> None:
    qrels = {q.qid: q.qrels for q in QUERIES}
    run = {q.qid: q.trec_run() for q in QUERIES}
    by_measure = {str(measure): label for label, measure in IR_MEASURES.items()}
    by_qid = {q.qid: q for q in QUERIES}
    seen: dict[str, set[str]] = {label: set() for label in IR_MEASURES}
    for metric in ir_measures.iter_calc(list(IR_MEASURES.values()), qrels, run):
        label = by_measure[str(metric.measure)]
        query = by_qid[metric.query_id]
        ours = parse_metric(label).compute(query.retrieved, query.qrels)
        assert math.isclose(ours, metric.value, rel_tol=0.0, abs_tol=1e-9), (label, query.qid)
        seen[label].add(metric.query_id)
    all_qids = {q.qid for q in QUERIES}
    for label, qids in seen.items():
        assert qids == all_qids, f"ir_measures dropped queries for {label}: {sorted(all_qids - qids)[:5]}"


def test_pytrec_eval_breaks_score_ties_by_descending_doc_id() -> None:
    # Why the oracle runs use distinct scores: on a tie trec_eval ranks "c" > "b" > "a".
    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"recip_rank"})
    assert evaluator.evaluate({"q": {"a": 1.0, "b": 1.0, "c": 1.0}})["q"]["recip_rank"] == 1 / 3
