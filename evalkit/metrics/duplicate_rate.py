"""Duplicate rate@k: how much of the top k repeats content already shown above it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from evalkit.metrics.common import cutoff

_SPACE = re.compile(r"\s+")


def content_key(text: str) -> str:
    """The form two contents are compared in: case-folded, whitespace runs collapsed, trimmed
    (so "Port 8080." and "port  8080." are the same content; a paraphrase is not)."""
    return _SPACE.sub(" ", text.casefold()).strip()


def duplicate_rate_at_k(retrieved: Sequence[str], contents: Mapping[str, str], k: int) -> float:
    """Share of the top k hits whose content (`content_key`) equals that of a hit ranked above.

        duplicate_rate@k = |{i ≤ k : content(i) = content(j) for some j < i}| / |top_k|

    Lower is better: near-identical memories filling top-k leave less room for other facts.
    Edge cases: nothing returned → 0.0; an id without known content counts as unique.
    """
    ranking = cutoff(retrieved, k)
    if not ranking:
        return 0.0
    seen: set[str] = set()
    repeats = 0
    for doc in ranking:
        text = contents.get(doc)
        if text is None:
            continue
        key = content_key(text)
        repeats += key in seen
        seen.add(key)
    return repeats / len(ranking)
