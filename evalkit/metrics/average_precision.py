"""Average precision truncated at a cutoff (averaged by callers into MAP@k)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalkit.metrics.common import cutoff, relevant_ids


def average_precision_at_k(retrieved: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Average precision over the top k, normalised by *all* relevant documents.

        AP@k = (1 / |R|) Σ_{i ≤ k, d_i ∈ R} P@i,  R = {d : qrels[d] >= 1}

    Relevant documents missing from the top k contribute 0, so AP@k = 1 needs every relevant
    document ranked above every non-relevant one within the first k (and |R| ≤ k).
    Edge cases: no relevant document → 0.0; nothing retrieved → 0.0. Monotone non-decreasing in k.
    Source: Buckley & Voorhees, "Evaluating evaluation measure stability", SIGIR 2000;
    identical to trec_eval `map_cut_k` (https://github.com/usnistgov/trec_eval, m_map_cut.c).
    """
    top = cutoff(retrieved, k)
    wanted = relevant_ids(qrels)
    if not wanted:
        return 0.0
    found = 0
    total = 0.0
    for rank, doc in enumerate(top, start=1):
        if doc in wanted:
            found += 1
            total += found / rank
    return total / len(wanted)
