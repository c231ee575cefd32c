"""Stale-fact rate: how much of what came back is superseded or deleted."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from evalkit.metrics.common import dedupe


def stale_fact_rate(retrieved: Sequence[str], stale: Collection[str]) -> float:
    """Share of the returned ids that are stale: superseded (the target of a `replaces` edge whose
    source is in memory) or deleted by an earlier step of the scenario.

        stale_fact_rate = |dedupe(retrieved) ∩ stale| / |dedupe(retrieved)|

    Lower is better. Edge cases: nothing returned → 0.0 (nothing stale came back). The caller
    scores it only for queries whose memory holds stale ids (otherwise it is 0 by construction).
    """
    ranking = dedupe(retrieved)
    if not ranking:
        return 0.0
    wanted = frozenset(stale)
    return sum(1 for doc in ranking if doc in wanted) / len(ranking)
