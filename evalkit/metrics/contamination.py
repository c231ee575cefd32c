"""Contamination: the share of returned hits that must not have been returned (MemoryGym's
contamination penalty, as a rate)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from evalkit.metrics.common import dedupe


def contamination(retrieved: Sequence[str], forbidden: Collection[str]) -> float:
    """Share of the returned ids that the query forbids (`forbid`).

        contamination = |dedupe(retrieved) ∩ forbid| / |dedupe(retrieved)|

    Lower is better. Edge cases: nothing returned → 0.0. The caller scores it only for queries
    with a `forbid` list (otherwise it is 0 by construction).
    """
    ranking = dedupe(retrieved)
    if not ranking:
        return 0.0
    wanted = frozenset(forbidden)
    return sum(1 for doc in ranking if doc in wanted) / len(ranking)
