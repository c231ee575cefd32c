"""nDCG: graded, position-discounted gain normalised by the best possible ranking."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from evalkit.metrics.common import cutoff


def _dcg(gains: Iterable[int]) -> float:
    """Σ gain_i / log2(i + 1) over 1-based positions i, skipping non-positive gains."""
    return sum(gain / math.log2(position + 1) for position, gain in enumerate(gains, start=1) if gain > 0)


def ndcg_at_k(retrieved: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Normalised discounted cumulative gain of the top k, with linear gains.

        DCG@k  = Σ_{i=1..k} g(d_i) / log2(i + 1),  g(d) = max(qrels.get(d, 0), 0)
        IDCG@k = DCG@k of the qrels' positive grades sorted descending
        nDCG@k = DCG@k / IDCG@k

    The ideal ranking comes from the qrels, not from what was retrieved, so relevant documents
    the system missed lower the score. Unjudged, zero and negative grades gain nothing.
    Edge cases: no positive grade in the qrels (IDCG = 0) → 0.0; nothing retrieved → 0.0.
    Source: Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
    ACM TOIS 20(4), 2002; identical to trec_eval `ndcg_cut_k` (https://github.com/usnistgov/trec_eval,
    m_ndcg_cut.c), not to the exponential-gain variant of Burges et al. 2005.
    """
    top = cutoff(retrieved, k)
    ideal_dcg = _dcg(sorted((grade for grade in qrels.values() if grade > 0), reverse=True)[:k])
    if ideal_dcg == 0.0:
        return 0.0
    return _dcg(qrels.get(doc, 0) for doc in top) / ideal_dcg
