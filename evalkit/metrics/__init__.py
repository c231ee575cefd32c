"""Per-query retrieval metrics: pure functions, one concept per module; callers aggregate.

- Harness metrics (SPEC §3.3) on a relevant-id set: `recall`, `precision`, `reciprocal_rank`,
  `hit_rate`, bundled by `score_query` into a `QueryScores` record.
- IR metrics at a cutoff on graded qrels (doc id → grade; relevant = grade >= 1), matching
  trec_eval: `ndcg_at_k`, `average_precision_at_k`, `recall_at_k`, `precision_at_k`,
  `recall_all_at_k`, `r_precision`, `success_at_k`, `reciprocal_rank_at_k`.
- A registry of them by name: `parse_metric("ndcg@10").compute(retrieved, qrels)`; the harness
  metrics are the registered ones with a `HarnessMetric` role (`HARNESS`, `HARNESS_METRICS`).

Every function deduplicates `retrieved` (first occurrence wins) and returns a float in [0, 1];
empty inputs give 0.0, never NaN.
"""

from evalkit.metrics.average_precision import average_precision_at_k
from evalkit.metrics.common import RELEVANCE_LEVEL, cutoff, dedupe, judgements, relevant_ids
from evalkit.metrics.hit_rate import hit_rate, success_at_k
from evalkit.metrics.ndcg import ndcg_at_k
from evalkit.metrics.precision import precision, precision_at_k
from evalkit.metrics.query_scores import QueryScores, score_query
from evalkit.metrics.r_precision import r_precision
from evalkit.metrics.recall import recall, recall_at_k
from evalkit.metrics.recall_all import recall_all_at_k
from evalkit.metrics.reciprocal_rank import reciprocal_rank, reciprocal_rank_at_k
from evalkit.metrics.registry import (
    HARNESS,
    HARNESS_METRICS,
    METRICS,
    CutScorer,
    HarnessMetric,
    MetricDef,
    MetricSpec,
    Scorer,
    SetScorer,
    parse_metric,
    parse_metrics,
)

__all__ = [
    "HARNESS",
    "HARNESS_METRICS",
    "METRICS",
    "RELEVANCE_LEVEL",
    "CutScorer",
    "HarnessMetric",
    "MetricDef",
    "MetricSpec",
    "QueryScores",
    "Scorer",
    "SetScorer",
    "average_precision_at_k",
    "cutoff",
    "dedupe",
    "hit_rate",
    "judgements",
    "ndcg_at_k",
    "parse_metric",
    "parse_metrics",
    "precision",
    "precision_at_k",
    "r_precision",
    "recall",
    "recall_all_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "reciprocal_rank_at_k",
    "relevant_ids",
    "score_query",
    "success_at_k",
]
