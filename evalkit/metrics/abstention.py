"""Abstention on no-match queries: when nothing in memory answers, does the system say so?
(Thresholds that silently return nothing are the opposite failure: mcp-memory-service#487.)"""

from __future__ import annotations

from collections.abc import Sequence


def abstained(low_confidence: Sequence[bool | None]) -> float:
    """1.0 when the system abstained on a query that has no answer in memory — it returned no
    hit, or flagged every hit it returned as low-confidence — else 0.0.

    Averaged over a suite's no-match queries (`no_relevant` or `expect_no_strong_match`) this is
    the abstention rate; higher is better. A hit without confidence information (None) is not an
    abstention: a system that cannot say "weak" has not abstained.
    """
    return 1.0 if all(flag is True for flag in low_confidence) else 0.0
