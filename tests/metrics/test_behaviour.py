"""The behaviour metrics: hand-computed values of each kernel, and the registry's rule of when
each applies to a query."""

from __future__ import annotations

import pytest

from evalkit.errors import UsageError
from evalkit.metrics.abstention import abstained
from evalkit.metrics.contamination import contamination
from evalkit.metrics.duplicate_rate import content_key, duplicate_rate_at_k
from evalkit.metrics.query_sensitivity import query_sensitivity
from evalkit.metrics.registry import (
    BEHAVIOUR,
    BEHAVIOUR_METRICS,
    BehaviourMetric,
    QueryEvidence,
    score_behaviour,
)
from evalkit.metrics.stale_rate import stale_fact_rate


def test_stale_fact_rate_and_contamination_are_shares_of_what_came_back():
    assert stale_fact_rate(["a", "old", "b", "old"], {"old", "gone"}) == 1 / 3
    assert stale_fact_rate([], {"old"}) == 0.0
    assert contamination(["x", "f1", "f2", "y"], {"f1", "f2"}) == 0.5
    assert contamination([], {"f"}) == 0.0


def test_duplicate_rate_counts_hits_repeating_a_content_above_them_within_k():
    contents = {"a": "Port 8080.", "b": "port  8080.", "c": "Port 9090.", "d": "Port 8080."}
    assert content_key("  Port\t8080. ") == "port 8080."
    assert duplicate_rate_at_k(["a", "b", "c", "d"], contents, 4) == 0.5
    assert duplicate_rate_at_k(["a", "c", "b"], contents, 2) == 0.0  # the copy is below the cut
    assert duplicate_rate_at_k(["a", "unknown"], contents, 5) == 0.0
    assert duplicate_rate_at_k([], contents, 5) == 0.0


def test_query_sensitivity_is_zero_for_a_system_that_ignores_the_query():
    same = [("q1", ["a", "b"]), ("q2", ["a", "b"]), ("q3", ["a", "b"])]
    assert query_sensitivity(same) == [0.0, 0.0, 0.0]
    mixed = [("q1", ["a", "b"]), ("q2", ["b", "a"]), ("q3", ["a", "b"])]
    assert query_sensitivity(mixed) == [0.0, 1.0, 0.0]
    # the same text asked again after a step is not compared with itself
    assert query_sensitivity([("q", ["a"]), ("q", ["a"]), ("r", ["b"])]) == [1.0, 1.0, 1.0]
    assert query_sensitivity([("q", ["a"]), ("q", ["b"])]) == [None, None]


def test_abstention_needs_no_hit_or_only_low_confidence_ones():
    assert abstained([]) == 1.0
    assert abstained([True, True]) == 1.0
    assert abstained([True, False]) == 0.0
    assert abstained([None]) == 0.0  # no confidence signal is no abstention


def _evidence(**changes: object) -> QueryEvidence:
    base: dict[str, object] = dict(
        retrieved=("a", "b"), low_confidence=(True, True), contents={"a": "x", "b": "y"},
        forbidden=frozenset(), stale=frozenset(), no_match=False, top_k=5,
    )  # fmt: skip
    return QueryEvidence(**{**base, **changes})  # type: ignore[arg-type]


def test_each_metric_applies_only_where_its_evidence_exists():
    assert score_behaviour(_evidence()) == {"duplicate_rate": 0.0}
    scored = score_behaviour(_evidence(forbidden=frozenset({"b"}), stale=frozenset({"a"}), no_match=True))
    assert scored == {"stale_fact_rate": 0.5, "contamination": 0.5, "duplicate_rate": 0.0, "abstention": 1.0}
    assert list(scored) == [m for m in BEHAVIOUR_METRICS if m in scored]  # registry order
    assert BEHAVIOUR["query_sensitivity"].score is None  # scored per scenario by the harness
    assert [m for m in BEHAVIOUR_METRICS if BEHAVIOUR[m].lower_is_better] == [
        "stale_fact_rate", "contamination", "duplicate_rate",
    ]  # fmt: skip


def test_a_behaviour_metric_says_what_0_and_1_mean_or_is_refused():
    assert all(BEHAVIOUR[m].zero_means.strip() and BEHAVIOUR[m].one_means.strip() for m in BEHAVIOUR_METRICS)
    assert BEHAVIOUR["contamination"].zero_means == "no forbidden id came back"
    with pytest.raises(TypeError, match="zero_means"):
        BehaviourMetric("echo", "echo", "share of hits echoing the query", True)  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"'echo' leaves one_means blank: say what a score of 0 and of 1"):
        BehaviourMetric("echo", "echo", "share of hits echoing the query", True, "no hit echoes it", " ")
