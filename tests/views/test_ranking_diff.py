"""evalkit.views.ranking_diff: ids entered, left and moved per query, biggest change first,
relevant and forbidden ids marked — on the hand-built runs of test_compare."""

from __future__ import annotations

import pytest

from evalkit import UsageError
from evalkit.views.console import render_ranking_diff
from evalkit.views.ranking_diff import RANKING_DIFF_COLUMNS, ranking_diff
from tests.factories import a_pass, a_run, scenario
from tests.views.test_compare import A, B, _q


def test_entered_left_and_moved_ids_are_marked_and_sorted_by_the_size_of_the_change() -> None:
    diff = ranking_diff(A, B)
    assert list(diff.columns) == list(RANKING_DIFF_COLUMNS)
    # s2#1: [r1, r2, x] → [x, y, z]: y, z entered, r1, r2 left, x moved 3→1 (2 steps): 6
    # s1#2: [x, r1, y] → [r1, r2, x]: r2 entered, y left, r1 2→1, x 1→3: 1 + 1 + 1 + 2 = 5
    # s1#3: [x, y, z] → [r2, x, y]: r2 entered, z left, x 1→2, y 2→3: 4
    assert list(zip(diff["query_id"], diff["change"], strict=True)) == [("s2#1", 6), ("s1#2", 5), ("s1#3", 4)]
    first = diff.iloc[0]
    assert first["entered"] == ["y", "z"] and first["left"] == ["r1+", "r2+"]
    assert first["moved"] == ["x! 3→1"]  # B's forbid named x: forbidden
    assert (first["relevant_left"], first["relevant_entered"], first["forbidden_entered"]) == (2, 0, 0)
    second = diff.iloc[1]
    assert second["moved"] == ["x 1→3", "r1+ 2→1"]  # biggest move first
    assert "s1#1" not in set(diff["query_id"])  # the same ranking is no change


def test_a_forbidden_id_that_enters_is_counted() -> None:
    before = a_run(a_pass(scenario("s", "explicit-fact", [_q(0, ["r1", "a", "b"])])))
    after = a_run(
        a_pass(
            scenario(
                "s", "explicit-fact", [_q(0, ["bad", "r1", "a"], ("forbid: 'bad' was retrieved at rank 1",))]
            )
        )
    )
    from evalkit import EvalRun

    row = ranking_diff(EvalRun(before), EvalRun(after)).iloc[0]
    assert row["entered"] == ["bad!"] and row["forbidden_entered"] == 1 and row["left"] == ["b"]
    assert row["moved"] == ["r1+ 1→2", "a 2→3"]


def test_the_console_prints_the_largest_changes_and_how_many_more() -> None:
    text = render_ranking_diff(ranking_diff(A, B), limit=1)
    assert text.startswith("Ranking changes: 3 queries, largest first (+ relevant, ! forbidden)")
    assert "  s2#1 (change 6): q0\n    entered: y, z\n    left: r1+, r2+\n    moved: x! 3→1" in text
    assert text.endswith("… and 2 more queries")
    assert render_ranking_diff(ranking_diff(A, A)).startswith("Ranking changes: none")


def test_a_run_without_the_pass_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="run A has no gated pass"):
        ranking_diff(A, B, pass_name="gated")
