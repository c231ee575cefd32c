"""R-precision: precision at rank R, where R is the number of relevant documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalkit.metrics.common import dedupe, relevant_ids


def r_precision(retrieved: Sequence[str], qrels: Mapping[str, int]) -> float:
    """Precision of the top R, R = |{d : qrels[d] >= 1}|.

        Rprec = |top_R(retrieved) ∩ relevant| / R

    Divides by R even when fewer than R documents were retrieved. Takes no cutoff: R is the
    query's own. Edge cases: R = 0 → 0.0; nothing retrieved → 0.0.
    Source: trec_eval `Rprec` (https://github.com/usnistgov/trec_eval, m_Rprec.c).
    """
    ranking = dedupe(retrieved)
    wanted = relevant_ids(qrels)
    if not wanted:
        return 0.0
    top = ranking[: len(wanted)]
    return sum(1 for doc in top if doc in wanted) / len(wanted)
