"""Which queries are decided by ties (`evalkit.harness.ties`): hand-built hits."""

from __future__ import annotations

from evalkit.harness.ties import tie_groups, tie_record
from evalkit.records import Hit, ranking_score, scores_tie


def test_ranking_score_is_the_final_then_relevance_then_similarity_score():
    assert ranking_score(Hit(id="a", relevance=0.5, final_score=0.7, similarity=0.1)) == 0.7
    assert ranking_score(Hit(id="a", relevance=0.5, similarity=0.1)) == 0.5
    assert ranking_score(Hit(id="a", similarity=0.1)) == 0.1
    assert ranking_score(Hit(id="a")) is None


def test_scores_tie_within_a_relative_tolerance_and_never_for_none():
    assert scores_tie(1 / 61 + 1 / 63, 1 / 63 + 1 / 61)
    assert scores_tie(0.0, 0.0) and scores_tie(0.3, 0.3 + 1e-12)
    assert not scores_tie(0.3, 0.3001) and not scores_tie(None, None) and not scores_tie(0.1, None)


def test_tie_groups_are_runs_of_equal_score_and_standing():
    hits = [
        Hit(id="a", relevance=0.9),
        Hit(id="b", relevance=0.5),
        Hit(id="c", relevance=0.5),
        Hit(id="d", relevance=0.5, standing="contradicted"),  # another partition: no tie with c
        Hit(id="e", relevance=0.2, standing="contradicted"),
        Hit(id="f", relevance=0.2, standing="contradicted"),
    ]
    assert [[h.id for h in g] for g in tie_groups(hits)] == [["b", "c"], ["e", "f"]]


def test_a_relevant_id_in_a_tie_or_a_tie_at_the_cut_decides_the_result():
    hits = [Hit(id="a", relevance=0.9), Hit(id="b", relevance=0.5), Hit(id="c", relevance=0.5)]
    record = tie_record(hits, {"c", "a"}, cut_tied=False)
    assert record is not None and record.relevant == ["c"] and record.decided
    untied = tie_record(hits, {"a"}, cut_tied=False)
    assert untied is not None and untied.relevant == [] and not untied.decided
    at_cut = tie_record(hits, {"a"}, cut_tied=True)
    assert at_cut is not None and at_cut.decided
    unknown = tie_record(hits, {"a"}, cut_tied=None)
    assert unknown is not None and unknown.at_cut is None and not unknown.decided


def test_nothing_is_judged_for_hits_without_scores_from_a_silent_system():
    assert tie_record([Hit(id="a"), Hit(id="b")], {"a"}, cut_tied=None) is None
    empty = tie_record([], {"a"}, cut_tied=False)
    assert empty is not None and not empty.decided
