"""All-relevant recall: did the top k hold *every* relevant document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalkit.metrics.common import cutoff, relevant_ids


def recall_all_at_k(retrieved: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """1.0 if every relevant document (grade >= 1) is among the top k, else 0.0.

        recall_all@k = [R ⊆ top_k(retrieved)],  R = {d : qrels[d] >= 1}, R ≠ ∅

    The strict counterpart of recall@k for multi-hop questions, where an answer needs all of its
    evidence: recall_all@k = 1 exactly when recall@k = 1. Edge cases: no relevant document → 0.0
    (never a vacuous 1); k smaller than |R| → 0.0. Monotone non-decreasing in k.
    Source: no trec_eval or ir_measures counterpart; defined here as [recall@k = 1], the
    "every supporting passage retrieved" criterion of multi-hop QA retrieval evaluation.
    """
    top = cutoff(retrieved, k)
    wanted = relevant_ids(qrels)
    return 1.0 if wanted and wanted.issubset(top) else 0.0
