"""Precision: the share of the retrieved documents that are relevant."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from evalkit.metrics.common import cutoff, dedupe, relevant_ids, relevant_set


def precision(retrieved: Sequence[str], relevant: Collection[str]) -> float:
    """Precision over what the system returned (SPEC §3.3), *not* over a cutoff.

        precision = |dedupe(retrieved) ∩ relevant| / |dedupe(retrieved)|

    A system that returns 2 rows, 1 relevant, scores 0.5 whatever top_k was asked.
    Edge cases: nothing retrieved → 0.0; no relevant ids → 0.0. Never NaN.
    Source: trec_eval `set_P` (https://github.com/usnistgov/trec_eval, m_set_P.c).
    """
    ranking = dedupe(retrieved)
    wanted = relevant_set(relevant)
    if not ranking:
        return 0.0
    hits = sum(1 for doc in ranking if doc in wanted)
    return hits / len(ranking)


def precision_at_k(retrieved: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Precision at cutoff k, dividing by k even when fewer than k documents were retrieved.

        P@k = |top_k(retrieved) ∩ R| / k,  R = {d : qrels[d] >= 1}

    Missing positions count as non-relevant, so a 2-row answer with 1 hit has P@10 = 0.1 (use
    `precision` for the share of what was returned). Edge cases: nothing retrieved or nothing
    relevant → 0.0. Source: trec_eval `P_k` (m_P.c).
    """
    top = cutoff(retrieved, k)
    wanted = relevant_ids(qrels)
    return sum(1 for doc in top if doc in wanted) / k
