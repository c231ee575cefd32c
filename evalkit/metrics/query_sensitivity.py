"""Query sensitivity: does a query's ranking depend on the query at all? A degenerate system
("same results for every query", trusty-tools#4836) scores 0."""

from __future__ import annotations

from collections.abc import Sequence


def query_sensitivity(rankings: Sequence[tuple[str, Sequence[str]]]) -> list[float | None]:
    """Per query of one scenario (its text and its ranking, in order): 1.0 when no query of another
    text got the identical ranking, else 0.0; None when the scenario has fewer than two distinct
    query texts (nothing to compare). Queries of the same text (asked again after a step) are
    not compared with each other.

    Higher is better; a system returning one ranking whatever it is asked scores 0 on every
    query, one that returns nothing at all too (empty rankings are identical).
    """
    texts = {text for text, _ in rankings}
    if len(texts) < 2:
        return [None] * len(rankings)
    scores: list[float | None] = []
    for i, (text, ranking) in enumerate(rankings):
        same = any(
            other_text != text and tuple(other) == tuple(ranking)
            for j, (other_text, other) in enumerate(rankings)
            if j != i
        )
        scores.append(0.0 if same else 1.0)
    return scores
