"""evalkit.compare_runs and `evalkit compare`: per-query and per-scenario deltas, status flips,
first-relevant-rank moves and the paired permutation test, on hand-built runs; the comparison
notebook rendered by `evalkit report --notebook compare_runs`."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalkit import EvalRun, UsageError, compare_runs
from evalkit.cli import main
from evalkit.harness.results import QueryResult
from evalkit.views.compare import first_relevant_rank, rank_move
from evalkit.views.tables import comparison_metrics, comparison_queries, comparison_scenarios
from tests.factories import a_pass, a_run, scenario
from tests.shared import ROOT


def _q(index: int, retrieved: list[str], errors: tuple[str, ...] = ()) -> QueryResult:
    """Relevant ids r1, r2; metrics computed by hand from `retrieved` in each test's comment."""
    relevant = {"r1", "r2"}
    hits = [i for i in retrieved if i in relevant]
    first = next((rank for rank, i in enumerate(retrieved, 1) if i in relevant), None)
    return QueryResult(
        index=index, query=f"q{index}", top_k=3, relevant=["r1", "r2"], retrieved=retrieved, hits=[],
        metrics={"recall": len(hits) / 2, "precision": len(hits) / len(retrieved) if retrieved else 0.0,
                 "mrr": 1 / first if first else 0.0, "hit_rate": 1.0 if hits else 0.0},
        check_errors=list(errors),
    )  # fmt: skip


# A: s1 q0 [r1, x, y] (recall .5, rank 1), q1 [x, r1, y] (.5, rank 2), q2 [x, y, z] (0, none)
#    s2 q0 [r1, r2, x] (1, rank 1); s2 passes
# B: s1 q0 [r1, x, y] (same), q1 [r1, r2, x] (1, rank 1: up 1), q2 [r2, x, y] (.5, rank 1: found)
#    s2 q0 [x, y, z] (0, lost) and fails a forbid
FORBID = ("forbid: 'x' was retrieved at rank 1",)
A = EvalRun(
    a_run(a_pass(
        scenario("s1", "explicit-fact", [_q(0, ["r1", "x", "y"]), _q(1, ["x", "r1", "y"]),
                                         _q(2, ["x", "y", "z"])]),
        scenario("s2", "multi-hop", [_q(0, ["r1", "r2", "x"])]),
    ))
)  # fmt: skip
B = EvalRun(
    a_run(a_pass(
        scenario("s1", "explicit-fact", [_q(0, ["r1", "x", "y"]), _q(1, ["r1", "r2", "x"]),
                                         _q(2, ["r2", "x", "y"])]),
        scenario("s2", "multi-hop", [_q(0, ["x", "y", "z"], errors=FORBID)]),
    ))
)  # fmt: skip


def test_first_relevant_rank_and_its_moves() -> None:
    assert first_relevant_rank(["x", "r", "y"], ["r"]) == 2.0
    assert math.isnan(first_relevant_rank(["x"], ["r"]))
    nan = float("nan")
    assert [rank_move(2, 1), rank_move(1, 3), rank_move(2, 2), rank_move(nan, 1), rank_move(1, nan)] == [
        "up 1", "down 2", "same", "found", "lost",
    ]  # fmt: skip
    assert rank_move(nan, nan) == ""


def test_compare_runs_pairs_queries_and_computes_deltas_by_hand() -> None:
    comparison = compare_runs(A, B)
    queries = comparison.queries.set_index(["scenario", "query_number"])
    assert list(queries["recall_delta"]) == [0.0, 0.5, 0.5, -1.0]
    assert list(queries["rank_move"]) == ["same", "up 1", "found", "lost"]
    assert list(queries["passed_b"]) == [True, True, True, False]
    metrics = comparison.metrics.set_index("metric")
    # recall A: (.5 + .5 + 0 + 1)/4 = .5; B: (.5 + 1 + .5 + 0)/4 = .5; differences [0, .5, .5, -1]
    assert (metrics.loc["recall", "mean_a"], metrics.loc["recall", "mean_b"]) == (0.5, 0.5)
    # 2^3 sign patterns of the non-zero differences [.5, .5, -1]: |mean| >= 0 for all → p = 1
    assert metrics.loc["recall", "p_value"] == pytest.approx(1.0)
    # hit rate differences [0, 0, +1, -1]: |mean| >= 0 always → p = 1; MRR [0, .5, 1, -1]:
    # |sum| >= 0.5 for sign patterns (±.5, ±1, ±1) except those summing to ±0.5 … computed exactly below
    signs = [(s1, s2, s3) for s1 in (1, -1) for s2 in (1, -1) for s3 in (1, -1)]
    extreme = sum(abs(0.5 * s1 + 1 * s2 - 1 * s3) >= 0.5 - 1e-12 for s1, s2, s3 in signs)
    assert metrics.loc["mrr", "p_value"] == pytest.approx(extreme / 8)
    scenarios = comparison.scenarios.set_index("scenario")
    assert scenarios["flipped"].to_dict() == {"s1": False, "s2": True}
    assert (scenarios.loc["s2", "status_a"], scenarios.loc["s2", "status_b"]) == ("pass", "fail")
    assert (comparison.only_a, comparison.only_b) == (0, 0)


def test_compare_runs_needs_the_pass_and_shared_queries() -> None:
    with pytest.raises(UsageError, match="run A has no gated pass"):
        compare_runs(A, B, pass_name="gated")
    other = EvalRun(a_run(a_pass(scenario("s9", "explicit-fact", [_q(0, ["r1"])]))))
    with pytest.raises(UsageError, match="share no query"):
        compare_runs(A, other)


def test_comparison_tables_show_flips_and_changed_queries() -> None:
    comparison = compare_runs(A, B)
    assert comparison_scenarios(comparison).caption == "Per scenario: 1 status flip; Δ = B − A"
    changed = comparison_queries(comparison).data
    assert list(changed["move"]) == ["up 1", "found", "lost"]  # s1 q0 did not change
    assert list(comparison_metrics(comparison).data["metric"]) == ["recall", "precision", "mrr", "hit_rate"]


def test_compare_command_prints_tests_flips_and_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = A.save(tmp_path / "a.json"), B.save(tmp_path / "b.json")
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "paired queries: 4 (4 counted); only in A: 0; only in B: 0" in out
    assert "Scenario status flips: 1\n  s2: pass → fail" in out
    assert "Queries that changed: 3" in out
    assert main(["compare", str(a), str(tmp_path / "missing.json")]) == 2


def test_report_renders_the_comparison_notebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    a, b = A.save(tmp_path / "a.json"), B.save(tmp_path / "b.json")
    argv = ["report", "--notebook", "compare_runs", "-p", "report_a", str(a), "-p", "report_b", str(b)]
    assert main([*argv, "--out-dir", str(tmp_path / "out"), "--no-progress"]) == 0
    html = (tmp_path / "out" / "compare_runs.html").read_text(encoding="utf-8")
    assert "Run B vs run A, ungated pass" in html
    assert "Per scenario: 1 status flip" in html
    assert "Queries that changed: 3 of 4" in html
    assert "The runs compared" in html and "no gated pass" in html  # both runs named with their identity
    assert "Ranking changes: 3 queries, largest first" in html and "x! 3→1" in html
    assert "Runs side by side, ungated pass: Δ against run A" in html
