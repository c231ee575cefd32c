"""How sure is a mean over a handful of queries? Bootstrap confidence intervals and a paired
permutation test over per-query scores (scipy.stats), seeded so every report is reproducible.

Both take plain sequences of per-query values (one metric, one scope) and return plain numbers;
callers choose the scopes (overall, per category) and the metrics. A category of 1–8 queries moves
by 0.125–1.0 when one query changes, so a fixed margin cannot tell a regression from chance: the
interval and the p-value say how much chance there is.

scipy.stats is imported inside the two functions: it costs about 0.7 s to import, and every
`evalkit` command (and `import evalkit.views`) would pay it for these defaults alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

DEFAULT_RESAMPLES = 9999
"""Bootstrap resamples and permutations (scipy's default; exact when there are fewer)."""

DEFAULT_LEVEL = 0.95
"""Confidence level of the bootstrap intervals."""

DEFAULT_SEED = 0
"""Seed of the random generator: the same run gives the same intervals and p-values."""

SMALL_SAMPLE = 10
"""Scopes with fewer queries than this are flagged `small_sample`: their intervals are wide and
the percentile bootstrap is itself unreliable there."""


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
