"""Reciprocal rank: 1 / the rank of the first relevant document (averaged by callers into MRR)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from evalkit.metrics.common import cutoff, dedupe, relevant_ids, relevant_set


def reciprocal_rank(retrieved: Sequence[str], relevant: Collection[str]) -> float:
    """Reciprocal rank of the first relevant id in the deduplicated ranking (SPEC §3.3 "MRR").

        RR = 1 / min{rank(d) : d ∈ dedupe(retrieved) ∩ relevant},  ranks 1-based

    Edge cases: no relevant id retrieved (including empty inputs) → 0.0.
    Source: Voorhees, "The TREC-8 Question Answering Track Report", TREC 1999; trec_eval
    `recip_rank` (https://github.com/usnistgov/trec_eval, m_recip_rank.c).
    """
    ranking = dedupe(retrieved)
    wanted = relevant_set(relevant)
    for rank, doc in enumerate(ranking, start=1):
        if doc in wanted:
            return 1.0 / rank
    return 0.0


def reciprocal_rank_at_k(retrieved: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Reciprocal rank with only the top k considered (MRR@k per query).

        RR@k = RR(top_k(retrieved)), relevant = {d : qrels[d] >= 1}

    A first relevant document below rank k scores 0.0. Source: the MS MARCO MRR@10 convention;
    equals trec_eval `recip_rank` run on the ranking truncated to k.
    """
    return reciprocal_rank(cutoff(retrieved, k), relevant_ids(qrels))
