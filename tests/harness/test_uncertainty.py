"""evalkit.harness.uncertainty (seeded bootstrap intervals, Wilson and bounded Wilson intervals,
"too few queries to judge", the detectable drop, the paired permutation test and McNemar's exact
test) with answers computed by hand, and the interval and power frames and table built on them."""

from __future__ import annotations

import math

import pytest

from evalkit import EvalRun, run_eval
from evalkit.harness.uncertainty import (
    bootstrap_ci,
    bounded_wilson_interval,
    mcnemar_exact_pvalue,
    mean_interval,
    min_detectable_drop,
    paired_permutation_pvalue,
    queries_to_judge,
    wilson_interval,
)
from evalkit.views.tables import interval_table
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS


def test_bootstrap_interval_of_a_tiny_sample_by_hand() -> None:
    # Means of resamples of [0, 0, 0, 1] (n = 4): P(0) = (3/4)^4 = 0.316; P(>= 0.5) = 0.262;
    # P(>= 0.75) = 4·(1/4)^3·(3/4) + (1/4)^4 = 0.051; P(1) = 0.004.
    assert bootstrap_ci([0, 0, 0, 1], seed=7) == (0.0, 0.75)  # 2.5th and 97.5th percentiles
    assert bootstrap_ci([0, 0, 0, 1], level=0.5, seed=7) == (0.0, 0.5)  # 25th and 75th
    # [0, 1]: resample means 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4
    assert bootstrap_ci([0, 1], seed=7) == (0.0, 1.0)
    assert bootstrap_ci([0, 1], level=0.4, seed=7) == (0.5, 0.5)


def test_bootstrap_is_seeded_and_handles_degenerate_samples() -> None:
    values = [0.2, 0.9, 0.4, 0.7, 0.1]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3, resamples=500) != bootstrap_ci(values, seed=4, resamples=500)
    low, high = bootstrap_ci(values)
    assert 0.1 <= low < sum(values) / 5 < high <= 0.9
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert all(math.isnan(v) for v in bootstrap_ci([0.5]))
    assert all(math.isnan(v) for v in bootstrap_ci([]))


@pytest.mark.parametrize(
    ("before", "after", "p"),
    [
        ([0, 0, 0], [1, 1, 1], 2 / 8),  # only all-plus and all-minus of 8 sign patterns reach |mean| 1
        ([0] * 5, [1] * 5, 2 / 32),
        ([0, 0, 0, 0], [1, 1, 1, 0], 4 / 16),  # |mean| >= 3/4 needs the three ones to agree in sign
        ([0, 1], [1, 0], 1.0),
        ([0.5, 0.5], [0.5, 0.5], 1.0),
        ([], [], 1.0),
    ],
)
def test_paired_permutation_test_known_answers(before: list[float], after: list[float], p: float) -> None:
    assert paired_permutation_pvalue(before, after) == pytest.approx(p)


def test_paired_permutation_test_rejects_unpaired_samples() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        paired_permutation_pvalue([1, 2], [1])


def _four_queries_run() -> EvalRun:
    # explicit-fact: recall 1, 1, 0, 1 → mean 0.75; multi-hop: one query (recall 0.5)
    facts = scenario(
        "facts", "explicit-fact", [query(i, recall=r) for i, r in enumerate([1.0, 1.0, 0.0, 1.0])]
    )
    return EvalRun(a_run(a_pass(facts, scenario("chain", "multi-hop", [query(0, recall=0.5)]))))


def test_interval_frame_per_scope_with_small_sample_flags() -> None:
    frame = _four_queries_run().confidence_intervals(small_sample=4, seed=7)
    recall = frame[frame["metric"] == "recall"].set_index("name")
    assert list(recall.index) == ["overall", "explicit-fact", "multi-hop"]
    assert recall.loc["overall", "mean"] == pytest.approx(3.5 / 5)
    assert (recall.loc["explicit-fact", "ci_low"], recall.loc["explicit-fact", "ci_high"]) == (0.25, 1.0)
    assert recall.loc["explicit-fact", "method"] == "bootstrap"
    # one query (recall 0.5): no bootstrap; the bounded Wilson interval 0.5 ± 1.96/4.84·√(0.25 + 0.96)
    low, high = recall.loc["multi-hop", "ci_low"], recall.loc["multi-hop", "ci_high"]
    assert (low, high) == pytest.approx((0.0546, 0.9454), abs=1e-4)
    assert recall.loc["multi-hop", "method"] == "wilson-bounded"
    assert recall["small_sample"].to_dict() == {"overall": False, "explicit-fact": False, "multi-hop": True}
    assert recall["too_few"].to_dict() == {"overall": True, "explicit-fact": True, "multi-hop": True}
    hits = frame[frame["metric"] == "hit_rate"].set_index("name")
    assert set(hits["method"]) == {"wilson"}


def test_interval_table_shows_mean_and_interval_per_metric() -> None:
    table = interval_table(_four_queries_run(), small_sample=4, seed=7).data
    assert table.loc["explicit-fact", ("recall", "95% CI")] == "[0.250, 1.000]"
    assert table.loc["multi-hop", ("recall", "95% CI")] == "[0.055, 0.945]"
    assert table.loc["multi-hop", ("", "small sample")] == "yes"
    assert table.loc["multi-hop", ("", "judge")] == "too few queries to judge"
    assert table.loc["overall", ("recall", "mean")] == pytest.approx(0.7)


def test_queries_to_judge_is_the_fewest_queries_an_exact_test_can_reject_with() -> None:
    # 2 / 2^m <= 1 - level: 5 queries give 0.0625 > 0.05, 6 give 0.03125
    assert [queries_to_judge(level) for level in (0.9, 0.95, 0.99)] == [5, 6, 8]


def test_wilson_intervals_never_collapse_to_a_point() -> None:
    assert wilson_interval(2, 2) == pytest.approx((0.3424, 1.0), abs=1e-4)
    assert wilson_interval(8, 8) == pytest.approx((0.6756, 1.0), abs=1e-4)
    assert wilson_interval(0, 3) == pytest.approx((0.0, 0.5615), abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    # the bounded interval is Wilson's on 0/1 scores, and stays an interval on any [0, 1] mean
    assert bounded_wilson_interval(3 / 8, 8) == pytest.approx(wilson_interval(3, 8))
    assert bounded_wilson_interval(1.0, 2) == pytest.approx(wilson_interval(2, 2))
    low, high = bounded_wilson_interval(0.9, 5)
    assert 0 < low < 0.9 < high <= 1


def test_mean_interval_picks_its_method_by_what_the_values_are() -> None:
    assert mean_interval([1, 1], rate=True)[2] == "wilson"
    assert mean_interval([1.0] * 20, rate=False)[2] == "wilson-bounded"  # the bootstrap would give [1, 1]
    low, high, method = mean_interval([1.0] * 20, rate=False)
    assert method == "wilson-bounded" and low == pytest.approx(0.8389, abs=1e-4) and high == 1.0
    assert mean_interval([0.0, 0.5, 1.0] * 4, rate=False, seed=3)[2] == "bootstrap"
    assert mean_interval([0.0, 0.5, 1.0], rate=False)[2] == "wilson-bounded"  # below small_sample
    assert mean_interval([], rate=False)[2] == "none"


def test_min_detectable_drop_by_hand() -> None:
    # 41 queries, 30 can lose recall: 20 by at least 1/2, 10 by at least 1 → 6 · 0.5 / 41
    assert min_detectable_drop([0.5] * 20 + [1.0] * 10, 41) == pytest.approx(3 / 41)
    assert min_detectable_drop([1.0, 0.25, 0.5, 1.0, 1.0, 1.0, 1.0], 8) == pytest.approx(4.75 / 8)
    assert math.isnan(min_detectable_drop([1.0] * 5, 8))  # only 5 can get worse: nothing detectable
    assert math.isnan(min_detectable_drop([], 0))


@pytest.mark.parametrize(
    ("before", "after", "p"),
    [
        ([1] * 6, [0] * 6, 2 / 64),  # six lost, none gained: 2 · 0.5^6
        ([1] * 5, [0] * 5, 2 / 32),
        ([1, 1, 1, 0], [0, 0, 0, 1], 0.625),  # 3 of 4 discordant one way: 2 · (1 + 4) / 16
        ([1, 0, 1], [1, 0, 1], 1.0),  # no discordant pair
        ([1, 1, 0, 0], [1, 0, 1, 0], 1.0),
    ],
)
def test_mcnemar_exact_known_answers(before: list[float], after: list[float], p: float) -> None:
    assert mcnemar_exact_pvalue(before, after) == pytest.approx(p)


def test_mcnemar_rejects_unpaired_samples() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar_exact_pvalue([1, 0], [1])


def test_power_frame_per_scope() -> None:
    frame = _four_queries_run().power().set_index("name")
    # explicit-fact: 3 of 4 queries have recall to lose (one relevant id each): fewer than 6 can get worse
    assert (frame.loc["explicit-fact", "queries"], frame.loc["explicit-fact", "can_drop"]) == (4, 3)
    assert math.isnan(frame.loc["explicit-fact", "detectable_drop"])
    assert frame["too_few"].all() and set(frame["needed"]) == {6}


def test_power_frame_of_the_builtin_suite() -> None:
    frame = run_eval(datasets=DATASETS, thresholds=None, gated=False).power()
    overall = frame[(frame["pass"] == "ungated") & (frame["scope"] == "overall")].iloc[0]
    assert overall["queries"] == 41 and not overall["too_few"]
    assert 0 < overall["detectable_drop"] < 0.2
    few = frame[(frame["pass"] == "ungated") & frame["too_few"]]["name"].tolist()
    assert few == ["consolidation", "contradiction", "multi-hop", "supersession"]


def test_power_rows_group_as_pandas_groups_the_queries_frame() -> None:
    """`power_rows` reads the run's rows without pandas; the oracle groups the queries frame."""
    from evalkit.views.intervals import power_rows

    run = run_eval(datasets=DATASETS, thresholds=None)
    queries = run.queries
    counted = queries[queries["counted"]]
    expected = []
    for pass_name, in_pass in counted.groupby("pass", sort=False):
        groups = [
            ("overall", "overall", in_pass),
            *(("category", c, g) for c, g in in_pass.groupby("category", sort=False)),
        ]
        for scope, name, group in groups:
            steps = [
                1.0 / n for n, r in zip(group["n_relevant"], group["recall"], strict=True) if n > 0 and r > 0
            ]
            expected.append(
                (pass_name, scope, name, len(group), len(steps), min_detectable_drop(steps, len(group)))
            )
    rows = power_rows(run.query_rows)
    got = [
        (r["pass"], r["scope"], r["name"], r["queries"], r["can_drop"], r["detectable_drop"]) for r in rows
    ]
    assert len(got) == len(expected) > 2 and {r[0] for r in got} == {"ungated", "gated"}
    for ours, theirs in zip(got, expected, strict=True):
        assert ours[:5] == theirs[:5]
        assert ours[5] == theirs[5] or (math.isnan(ours[5]) and math.isnan(theirs[5]))


def test_scenario_counts_sum_the_queries_frame() -> None:
    run = run_eval(datasets=DATASETS, thresholds=None)
    queries = run.queries.assign(errors=run.queries["check_errors"].map(len))
    columns = ["errors", "candidates", "dropped_rows", "relevant_dropped", "relevant_lost"]
    expected = queries.groupby(["pass", "scenario"], sort=False)[columns].sum().to_dict("index")
    assert run.scenario_counts == {key: {c: int(v) for c, v in row.items()} for key, row in expected.items()}
    assert any(row["relevant_lost"] for row in run.scenario_counts.values())
