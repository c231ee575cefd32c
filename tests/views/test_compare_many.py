"""evalkit.views.compare_many: N runs side by side against a baseline run, paired t-tests with the
Holm correction (hand-computed on small runs; scipy.stats as the oracle for the t-test)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy import stats

from evalkit import EvalRun, UsageError
from evalkit.cli import main
from evalkit.views.compare_many import MULTI_COMPARISON_COLUMNS, compare_many, holm, paired_t_pvalue
from evalkit.views.console import render_many
from tests.factories import a_pass, a_run, scenario
from tests.views.test_compare import A, B, _q


def test_holm_adjusts_step_down_and_keeps_the_input_order() -> None:
    # sorted .01, .02, .04 (m = 3): .03, .04, .04 (monotone); NaN stays out of m
    assert holm([0.04, 0.01, float("nan"), 0.02]) == pytest.approx(
        [0.04, 0.03, float("nan"), 0.04], nan_ok=True
    )
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_the_paired_t_test_is_scipys_with_the_degenerate_cases_named() -> None:
    a, b = [0.5, 0.5, 0.0, 1.0], [0.5, 1.0, 0.5, 0.0]
    assert paired_t_pvalue(a, b) == pytest.approx(stats.ttest_rel(b, a).pvalue)
    assert paired_t_pvalue(a, a) == 1.0  # nothing moved
    assert paired_t_pvalue([0.0, 0.0], [1.0, 1.0]) == 0.0  # every query moved by the same amount
    assert math.isnan(paired_t_pvalue([1.0], [0.0]))  # one pair cannot be tested


def test_every_run_against_the_baseline_overall_and_per_category() -> None:
    c = EvalRun(a_run(a_pass(
        scenario("s1", "explicit-fact", [_q(0, ["r1", "r2", "x"]), _q(1, ["r1", "r2", "x"]),
                                         _q(2, ["r1", "r2", "x"])]),
        scenario("s2", "multi-hop", [_q(0, ["r1", "r2", "x"])]),
    )))  # fmt: skip
    many = compare_many([A, B, c])
    table = many.table
    assert list(table.columns) == list(MULTI_COMPARISON_COLUMNS)
    assert many.names == ("A", "B", "C") and many.baseline == "A"
    assert list(dict.fromkeys(table["scope"])) == ["overall", "explicit-fact", "multi-hop"]
    rows = table.set_index(["run", "scope", "metric"])
    # recall A: s1 .5 .5 0, s2 1 → overall .5; C: all 1 → Δ +.5; explicit-fact A .3333 → C 1
    assert rows.loc[("C", "overall", "recall"), "delta"] == pytest.approx(0.5)
    assert rows.loc[("C", "explicit-fact", "recall"), "mean"] == 1.0
    assert rows.loc[("C", "explicit-fact", "recall"), "queries"] == 3
    expected = stats.ttest_rel([1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.0, 1.0]).pvalue
    assert rows.loc[("C", "overall", "recall"), "p_value"] == pytest.approx(expected)
    assert math.isnan(rows.loc[("C", "multi-hop", "recall"), "p_value"])  # one query: not tested
    assert (
        math.isnan(rows.loc[("A", "overall", "recall"), "p_value"])
        and rows.loc[("A", "overall", "recall"), "delta"] == 0
    )
    family = table[table["run"] == "C"]
    assert list(family["p_holm"].fillna(-1)) == pytest.approx(
        [p if p == p else -1 for p in holm(list(family["p_value"]))]
    )
    assert not table["significant"][table["p_holm"].isna()].any()
    text = render_many(many)
    assert text.startswith(
        "Runs side by side (ungated pass; Δ against A; * = Holm-adjusted paired t-test p < 0.05"
    )
    assert "C: system reference · mode deterministic · top_k 5 · gate no gated pass" in text


def test_a_chosen_baseline_and_bad_input() -> None:
    assert compare_many([A, B], baseline=1).baseline == "B"
    with pytest.raises(UsageError, match="compare at least two runs"):
        compare_many([A])
    with pytest.raises(UsageError, match="baseline run 2 is not one of the 2 runs"):
        compare_many([A, B], baseline=2)


def test_compare_command_names_both_runs_diffs_rankings_and_sets_every_run_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = A.save(tmp_path / "a.json"), B.save(tmp_path / "b.json")
    c = A.save(tmp_path / "c.json")
    assert main(["compare", str(a), str(b), str(c), "--baseline", "2", "--changes", "1"]) == 0
    out = capsys.readouterr().out
    assert f"A = {a}: system reference · mode deterministic · top_k 5 · gate no gated pass · suite " in out
    assert f"B = {b}: system reference" in out
    assert "Ranking changes: 3 queries, largest first" in out and "… and 2 more queries" in out
    assert "Runs side by side (ungated pass; Δ against B;" in out
    assert main(["compare", str(a), str(b), "--baseline", "3"]) == 2
