"""Recall: the share of the relevant documents that were retrieved."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from evalkit.metrics.common import cutoff, dedupe, relevant_ids, relevant_set


def recall(retrieved: Sequence[str], relevant: Collection[str]) -> float:
    """Recall over everything the system returned (SPEC §3.3).

        recall = |dedupe(retrieved) ∩ relevant| / |relevant|

    Edge cases: no relevant ids → 0.0; nothing retrieved → 0.0. Never NaN.
    Source: trec_eval `set_recall` (https://github.com/usnistgov/trec_eval, m_set_recall.c).
    """
    ranking = dedupe(retrieved)
    wanted = relevant_set(relevant)
    if not wanted:
        return 0.0
    hits = sum(1 for doc in ranking if doc in wanted)
    return hits / len(wanted)


def recall_at_k(retrieved: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Recall of the top k: `recall(cutoff(retrieved, k), relevant_ids(qrels))`.

        recall@k = |top_k(retrieved) ∩ R| / |R|,  R = {d : qrels[d] >= 1}

    Edge cases: no relevant document → 0.0; fewer than k retrieved → the whole list counts.
    Monotone non-decreasing in k. Source: trec_eval `recall_k` (m_recall.c).
    """
    return recall(cutoff(retrieved, k), relevant_ids(qrels))
