"""evalkit.harness.uncertainty (seeded bootstrap intervals, paired permutation test) with answers
computed by hand, and the interval frame and table built on them."""

from __future__ import annotations

import math

import pytest

from evalkit import EvalRun
from evalkit.harness.uncertainty import bootstrap_ci, paired_permutation_pvalue
from evalkit.views.tables import interval_table
from tests.factories import a_pass, a_run, query, scenario


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
    assert math.isnan(recall.loc["multi-hop", "ci_low"])
    assert recall["small_sample"].to_dict() == {"overall": False, "explicit-fact": False, "multi-hop": True}


def test_interval_table_shows_mean_and_interval_per_metric() -> None:
    table = interval_table(_four_queries_run(), small_sample=4, seed=7).data
    assert table.loc["explicit-fact", ("recall", "95% CI")] == "[0.250, 1.000]"
    assert table.loc["multi-hop", ("recall", "95% CI")] == "n/a (1 query)"
    assert table.loc["multi-hop", ("", "small sample")] == "yes"
    assert table.loc["overall", ("recall", "mean")] == pytest.approx(0.7)
