"""The hard assertions of SPEC §3.4, each failing and passing, and the statuses they imply."""

from __future__ import annotations

from evalkit.harness.checks import check_query, scenario_status
from evalkit.records import Hit
from evalkit.scenarios.model import QuerySpec, RankBefore


def hit(
    id: str, rank: int, *, low_confidence: bool | None = False, source: tuple[str, ...] = ("bm25",)
) -> Hit:
    return Hit(
        id=id,
        content="",
        project="default",
        rank=rank,
        similarity=0.1,
        distance=0.9,
        match_source=source,
        rrf_score=None,
        bm25_score=None,
        relevance=0.5,
        low_confidence=low_confidence,
    )


def test_forbid_fails_when_forbidden_id_is_retrieved():
    q = QuerySpec(query="q", relevant=["new"], forbid=["old"])
    assert check_query(q, [hit("new", 1), hit("old", 2)], set()) == ["forbid: 'old' was retrieved at rank 2"]


def test_forbid_passes_when_forbidden_id_is_absent():
    q = QuerySpec(query="q", relevant=["new"], forbid=["old"])
    assert check_query(q, [hit("new", 1), hit("x", 2)], set()) == []


def test_no_relevant_fails_on_each_own_thought_but_not_on_distractors():
    q = QuerySpec(query="q", no_relevant=True)
    errors = check_query(q, [hit("own1", 1), hit("distractor", 2), hit("own2", 3)], {"own1", "own2"})
    assert errors == [
        "no_relevant: the scenario's own thought 'own1' was retrieved at rank 1",
        "no_relevant: the scenario's own thought 'own2' was retrieved at rank 3",
    ]
    assert check_query(q, [hit("distractor", 1)], {"own1"}) == []


def test_expect_no_strong_match_fails_on_strong_hits_and_missing_confidence():
    q = QuerySpec(query="q", no_relevant=True, expect_no_strong_match=True)
    hits = [
        hit("a", 1, low_confidence=True),
        hit("b", 2, low_confidence=False),
        hit("c", 3, low_confidence=None),
    ]
    errors = check_query(q, hits, set())
    assert len(errors) == 2
    assert errors[0].startswith("expect_no_strong_match: 'b' at rank 2 is a strong match (matched by bm25")
    assert errors[1] == "expect_no_strong_match: 'c' at rank 3 has no confidence signal"


def test_expect_no_strong_match_passes_when_every_hit_is_low_confidence():
    q = QuerySpec(query="q", no_relevant=True, expect_no_strong_match=True)
    assert check_query(q, [hit("a", 1, low_confidence=True), hit("b", 2, low_confidence=True)], set()) == []


def test_rank_before_requires_before_retrieved_and_above_after():
    q = QuerySpec(query="q", relevant=["fresh"], rank_before=RankBefore(before="fresh", after="stale"))
    assert check_query(q, [hit("fresh", 1), hit("stale", 2)], set()) == []
    assert check_query(q, [hit("fresh", 1)], set()) == []  # after missing is fine
    assert check_query(q, [hit("stale", 1), hit("fresh", 2)], set()) == [
        "rank_before: 'fresh' (rank 2) ranks below 'stale' (rank 1)"
    ]
    assert check_query(q, [hit("stale", 1)], set()) == [
        "rank_before: 'fresh' was not retrieved (expected above 'stale')"
    ]


def test_errors_come_in_the_specified_order():
    q = QuerySpec(
        query="q",
        no_relevant=True,
        expect_no_strong_match=True,
        forbid=["own"],
        rank_before=RankBefore(before="missing", after="own"),
    )
    errors = check_query(q, [hit("own", 1)], {"own"})
    assert [e.split(":")[0] for e in errors] == [
        "forbid",
        "no_relevant",
        "expect_no_strong_match",
        "rank_before",
    ]


def test_statuses():
    assert scenario_status("pass", False) == "pass"
    assert scenario_status("pass", True) == "fail"
    assert scenario_status("xfail", True) == "xfail"
    assert scenario_status("xfail", False) == "xpass"
