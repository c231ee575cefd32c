"""The harness's per-query scores (SPEC §3.3) as one record."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields

from evalkit.metrics.hit_rate import hit_rate
from evalkit.metrics.precision import precision
from evalkit.metrics.recall import recall
from evalkit.metrics.reciprocal_rank import reciprocal_rank


@dataclass(frozen=True, slots=True)
class QueryScores:
    """Recall, precision, reciprocal rank and hit of one query, each in [0, 1].

    The field names are the per-query DataFrame's column names; `mrr` holds the query's
    reciprocal rank, which becomes MRR once a caller averages it.
    """

    recall: float
    precision: float
    mrr: float
    hit_rate: float

    def as_dict(self) -> dict[str, float]:
        """Metric name → value, in `HARNESS_METRICS` order (what `dataclasses.asdict` gives,
        without its deep copy: this runs for every query of every pass)."""
        return {name: getattr(self, name) for name in HARNESS_METRICS}


HARNESS_METRICS: tuple[str, ...] = tuple(field.name for field in fields(QueryScores))
"""The harness metrics of SPEC §3.3, in order: the `QueryScores` field names, which are also the
metric keys of every query, aggregate, baseline and frame (benchmarks add `name@k` metrics)."""


def score_query(retrieved: Sequence[str], relevant: Collection[str]) -> QueryScores:
    """Score one query's returned ids against its relevant ids (SPEC §3.3).

    Retrieved ids are deduplicated keeping first occurrences; precision divides by what was
    returned, not by top_k. Empty `relevant` or empty `retrieved` give all zeros, never NaN.
    Aggregation (means per scenario, category, overall) is the caller's job.
    """
    return QueryScores(
        recall=recall(retrieved, relevant),
        precision=precision(retrieved, relevant),
        mrr=reciprocal_rank(retrieved, relevant),
        hit_rate=hit_rate(retrieved, relevant),
    )
