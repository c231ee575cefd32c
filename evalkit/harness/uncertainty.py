"""How sure is a mean over a handful of queries? Confidence intervals that do not collapse to a
point, the smallest drop a suite can detect, and paired tests over per-query scores (scipy.stats),
seeded where they resample so every report is reproducible.

Each takes plain sequences of per-query values (one metric, one scope) and returns plain
numbers; callers choose the scopes (overall, per category) and the metrics. A category of 1–8
queries moves by 0.125–1.0 when one query changes, so a fixed margin cannot tell a regression
from chance: the interval, the p-value and the detectable drop say how much chance there is.

Intervals (`mean_interval`), by what the values are:
- **a rate** (a metric whose per-query values are 0 or 1, `HarnessMetric.rate`: hit rate): the
  **Wilson score interval** (`wilson_interval`, `scipy.stats.binomtest(...).proportion_ci`,
  method "wilson"). It never collapses: 2 hits of 2 give [0.342, 1.000] at 95 %, 8 of 8
  [0.676, 1.000]. Wilson rather than Clopper–Pearson: Clopper–Pearson guarantees its coverage
  by being wider than needed (2 of 2: [0.158, 1.000]); Wilson's coverage is close to the nominal
  level on average, and it is what the power and the tests below are read against.
- **a mean of scores in [0, 1]** (recall, precision, MRR): the percentile bootstrap
  (`bootstrap_ci`) when the scope has at least `small_sample` queries and they do not all agree;
  otherwise the **bounded Wilson interval** (`bounded_wilson_interval`): Wilson's score interval
  with the mean in place of the proportion. A score in [0, 1] with mean μ has variance at most
  μ(1 − μ) — the variance of a 0/1 score with that mean — so this interval is conservative for
  any such score, equals the Wilson interval on 0/1 values, and does not collapse when every
  query scored 1.0 (the percentile bootstrap gives [1, 1] there, and is unreliable below about
  ten queries). The method used is recorded with each interval.

Too few queries to judge (`queries_to_judge`): with fewer than 6 paired queries no two-sided test
at 95 % can tell a drop from chance, even if every query got worse — the exact sign test's
smallest p-value is 2/2^n (5 queries: 0.0625), and the paired permutation test and McNemar's
exact test are no better there. Such scopes are marked "too few queries to judge".

Power (`min_detectable_drop`): the smallest drop of a scope's mean recall that a two-sided paired
test at 95 % could detect at all: `queries_to_judge` queries must get worse with none getting
better (then the exact sign test, the paired permutation test and McNemar's test all give
p = 2/2^m ≤ 0.05), and a query can lose no less than one of its relevant ids (1/|relevant|).
So it is the sum of the 6 smallest such steps over the queries that have recall to lose, divided
by the scope's query count: a smaller drop can never be significant, whatever the test.

Paired tests: `paired_permutation_pvalue` for means, `mcnemar_exact_pvalue` for rates (the exact
binomial test on the discordant pairs).

scipy.stats is imported inside the functions: it costs about 0.7 s to import, and every
`evalkit` command (and `import evalkit.views`) would pay it for these defaults alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

DEFAULT_RESAMPLES = 9999
"""Bootstrap resamples and permutations (scipy's default; exact when there are fewer)."""

DEFAULT_LEVEL = 0.95
"""Confidence level of the bootstrap intervals."""

DEFAULT_SEED = 0
"""Seed of the random generator: the same run gives the same intervals and p-values."""

SMALL_SAMPLE = 10
"""Scopes with fewer queries than this are flagged `small_sample`: their intervals are wide and
the percentile bootstrap is itself unreliable there (`mean_interval` uses the bounded Wilson
interval instead)."""

IntervalMethod = Literal["wilson", "bootstrap", "wilson-bounded", "none"]
"""How an interval was computed (`mean_interval`); "none": no query, no interval."""


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float]:
    """The percentile bootstrap confidence interval of the mean of `values`
    (`scipy.stats.bootstrap`, `method="percentile"`, `resamples` resamples, seeded).

    Percentile rather than BCa: per-query scores are discrete (hit rate is 0 or 1) and BCa is
    undefined when every resample agrees. Edge cases: fewer than two values → (nan, nan) (no
    interval exists); identical values → (v, v). Example: [0, 0, 0, 1] at 95 % gives (0.0, 0.75):
    a resample's mean is 0 with probability (3/4)^4 ≈ 0.32 and at least 0.75 with probability ≈ 0.051.
    """
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return math.nan, math.nan
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    from scipy import stats

    result = stats.bootstrap(
        (data,),
        np.mean,
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def paired_permutation_pvalue(
    before: Sequence[float],
    after: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> float:
    """Two-sided p-value that `after` and `before` (paired: the same queries, in the same order)
    have the same mean, by a paired permutation test on the mean difference
    (`scipy.stats.permutation_test`, `permutation_type="samples"`: each pair's two values are
    swapped or not). Exact when 2^n <= `resamples`, else `resamples` random sign patterns, seeded.

    Edge cases: no pairs, or every difference zero → 1.0; sequences of different lengths are a
    ValueError (a caller's bug, not user input). Example: differences [1, 1, 1] give 0.25 — of
    the 8 sign patterns, only all-plus and all-minus reach |mean| >= 1.
    """
    first, second = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if first.shape != second.shape:
        raise ValueError(f"paired samples differ in length: {len(first)} vs {len(second)}")
    if len(first) == 0 or np.all(first == second):
        return 1.0
    from scipy import stats

    result = stats.permutation_test(
        (first, second),
        lambda x, y: np.mean(y - x),
        permutation_type="samples",
        n_resamples=resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(min(1.0, result.pvalue))


def queries_to_judge(level: float = DEFAULT_LEVEL) -> int:
    """The fewest paired queries for which a two-sided exact test at `level` can reject at all:
    the smallest m with 2 · 0.5^m <= 1 − level (6 at 95 %: 2/64 = 0.031, while 5 give 0.0625;
    5 at 90 %, 8 at 99 %). A scope with fewer queries is "too few queries to judge"."""
    m = 1
    while 2 * 0.5**m > (1.0 - level) + 1e-12:
        m += 1
    return m


def wilson_interval(successes: int, trials: int, *, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """The Wilson score interval of a proportion `successes`/`trials` at `level`
    (`scipy.stats.binomtest(...).proportion_ci(method="wilson")`). No trials → (nan, nan).
    Example: 2 of 2 at 95 % gives (0.342, 1.0)."""
    if trials == 0:
        return math.nan, math.nan
    from scipy import stats

    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def bounded_wilson_interval(mean: float, count: int, *, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Wilson's score interval with `mean` (of `count` scores in [0, 1]) in place of the
    proportion: conservative for any score in [0, 1] (see the module docstring), equal to
    `wilson_interval` when the scores are 0 or 1. No scores → (nan, nan). Example: a mean of 1.0
    over 2 queries gives (0.342, 1.0), like 2 hits of 2."""
    if count == 0:
        return math.nan, math.nan
    from scipy import stats

    z = float(stats.norm.ppf(1.0 - (1.0 - level) / 2.0))
    p = min(1.0, max(0.0, mean))
    shrink = 1.0 + z * z / count
    centre = (p + z * z / (2 * count)) / shrink
    half = z / shrink * math.sqrt(p * (1 - p) / count + z * z / (4 * count * count))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(
    values: Sequence[float],
    *,
    rate: bool,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    small_sample: int = SMALL_SAMPLE,
) -> tuple[float, float, IntervalMethod]:
    """(low, high, method): the interval of the mean of `values` at `level`, by the rule of the
    module docstring — `rate` (values 0 or 1): "wilson"; else "bootstrap" with at least
    `small_sample` values that are not all equal, "wilson-bounded" otherwise. No values →
    (nan, nan, "none")."""
    data = [float(v) for v in values]
    if not data:
        return math.nan, math.nan, "none"
    if rate:
        return (*wilson_interval(round(sum(data)), len(data), level=level), "wilson")
    if len(data) >= small_sample and len(set(data)) > 1:
        return (*bootstrap_ci(data, resamples=resamples, level=level, seed=seed), "bootstrap")
    return (*bounded_wilson_interval(sum(data) / len(data), len(data), level=level), "wilson-bounded")


def min_detectable_drop(steps: Sequence[float], queries: int, *, level: float = DEFAULT_LEVEL) -> float:
    """The smallest drop of a mean over `queries` queries that a two-sided paired test at `level`
    could detect (see the module docstring): the sum of the `queries_to_judge(level)` smallest
    `steps` (each the least a query that can get worse would lose: 1/|relevant| for recall)
    divided by `queries`; nan when fewer queries than that can get worse (no drop is detectable).
    Example: 41 queries of which 30 have recall to lose, each by at least 1/2 → 6 · 0.5 / 41 = 0.073."""
    needed = queries_to_judge(level)
    if queries == 0 or len(steps) < needed:
        return math.nan
    return sum(sorted(steps)[:needed]) / queries


def mcnemar_exact_pvalue(before: Sequence[float], after: Sequence[float]) -> float:
    """Two-sided p-value of McNemar's exact test on paired 0/1 outcomes (the same queries, in the
    same order): the exact binomial test (`scipy.stats.binomtest`, p = 0.5) of the pairs that
    went 1 → 0 among all discordant pairs. No discordant pair → 1.0; sequences of different
    lengths are a ValueError. Example: 6 queries lost their hit and none gained one → 2/64 =
    0.03125; 3 lost and 1 gained → 0.625."""
    if len(before) != len(after):
        raise ValueError(f"paired samples differ in length: {len(before)} vs {len(after)}")
    lost = sum(1 for b, a in zip(before, after, strict=True) if b >= 0.5 > a)
    gained = sum(1 for b, a in zip(before, after, strict=True) if a >= 0.5 > b)
    if lost + gained == 0:
        return 1.0
    from scipy import stats

    return float(min(1.0, stats.binomtest(lost, lost + gained, 0.5, alternative="two-sided").pvalue))
