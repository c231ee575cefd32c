"""The harness's per-query scores (SPEC §3.3) as one record, one field per harness metric."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import make_dataclass
from typing import TYPE_CHECKING

from evalkit.metrics.registry import HARNESS, HARNESS_METRICS

_SCORERS = tuple(harness.score for harness in HARNESS.values())


def _as_dict(self: QueryScores) -> dict[str, float]:
    """Metric name → value, in `HARNESS_METRICS` order (what `dataclasses.asdict` gives, without
    its deep copy: this runs for every query of every pass)."""
    return {name: getattr(self, name) for name in HARNESS_METRICS}


_DOC = """The harness metrics of one query, each in [0, 1]: one float field per `HARNESS_METRICS`
name, in that order (recall, precision, mrr, hit_rate for the shipped registry), frozen.

The field names are the per-query DataFrame's column names; `mrr` holds the query's reciprocal
rank, which becomes MRR once a caller averages it. The class is built from the registry
(`dataclasses.make_dataclass`), so a harness metric registered in `metrics.registry` is a field."""

if TYPE_CHECKING:

    class QueryScores:
        """(What the type checker sees: the fields come from the registry at import time.)"""

        def __init__(self, *scores: float, **named: float) -> None: ...

        def __getattr__(self, name: str) -> float: ...

        def as_dict(self) -> dict[str, float]: ...

else:
    QueryScores = make_dataclass(
        "QueryScores",
        [(name, float) for name in HARNESS_METRICS],
        namespace={"__doc__": _DOC, "as_dict": _as_dict},
        frozen=True,
        slots=True,
    )
    QueryScores.__module__ = __name__  # pickles by reference, as a class written out would


def score_query(retrieved: Sequence[str], relevant: Collection[str]) -> QueryScores:
    """Score one query's returned ids against its relevant ids (SPEC §3.3): every harness metric.

    Retrieved ids are deduplicated keeping first occurrences; precision divides by what was
    returned, not by top_k. Empty `relevant` or empty `retrieved` give all zeros, never NaN.
    Aggregation (means per scenario, category, overall) is the caller's job.
    """
    return QueryScores(*(score(retrieved, relevant) for score in _SCORERS))
