"""Hit rate / success: did anything relevant come back at all."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from evalkit.metrics.common import cutoff, dedupe, relevant_ids, relevant_set


def hit_rate(retrieved: Sequence[str], relevant: Collection[str]) -> float:
    """1.0 if any relevant id was retrieved, else 0.0 (SPEC §3.3 "hit").

        hit = [dedupe(retrieved) ∩ relevant ≠ ∅]

    Edge cases: empty inputs → 0.0. Averaged over queries this is the hit rate.
    Source: trec_eval `success` over the whole ranking (https://github.com/usnistgov/trec_eval,
    m_success.c).
    """
    ranking = dedupe(retrieved)
    wanted = relevant_set(relevant)
    return 1.0 if any(doc in wanted for doc in ranking) else 0.0


def success_at_k(retrieved: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """1.0 if a relevant document (grade >= 1) is among the top k, else 0.0.

        success@k = [top_k(retrieved) ∩ R ≠ ∅]

    Edge cases: nothing retrieved or nothing relevant → 0.0. Monotone non-decreasing in k.
    Source: trec_eval `success_k` (m_success.c).
    """
    return hit_rate(cutoff(retrieved, k), relevant_ids(qrels))
