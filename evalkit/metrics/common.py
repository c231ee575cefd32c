"""Input normalisation shared by every metric: dedupe a ranking, cut it at k, read relevance.

Conventions (the same as trec_eval with its default `-l 1`, see
https://github.com/usnistgov/trec_eval):

- A ranking is a sequence of document ids, best first. Repeated ids are collapsed to their
  first occurrence, so a system that returns the same row twice is neither rewarded nor
  punished for it.
- Qrels map a document id to an integer grade. A document is *relevant* when its grade is at
  least `RELEVANCE_LEVEL` (1); grades of 0 or below and unjudged documents are non-relevant.
- A cutoff `k` is a positive integer; a ranking shorter than k is used as it is.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from evalkit.errors import UsageError

RELEVANCE_LEVEL = 1
"""Lowest grade that counts as relevant for binary metrics (trec_eval's `relevance_level`)."""


def dedupe(retrieved: Sequence[str]) -> tuple[str, ...]:
    """Return `retrieved` without repeats, keeping each id's first (best) position.

    Raises `UsageError` when given a bare string, which is a sequence of characters and never a
    ranking of ids.
    """
    if isinstance(retrieved, str):
        raise UsageError(
            f"retrieved must be a sequence of document ids, got the string {retrieved!r}; "
            "wrap a single id in a list"
        )
    return tuple(dict.fromkeys(retrieved))


def cutoff(retrieved: Sequence[str], k: int) -> tuple[str, ...]:
    """Return the first `k` distinct ids of `retrieved` (all of them when fewer than k).

    Raises `UsageError` when k is not a positive integer.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError(f"cutoff k must be a positive integer, got {k!r}; use e.g. k=10")
    return dedupe(retrieved)[:k]


def relevant_set(relevant: Collection[str]) -> frozenset[str]:
    """Return the relevant ids as a set. Raises `UsageError` for a bare string (see `dedupe`)."""
    if isinstance(relevant, str):
        raise UsageError(
            f"relevant must be a collection of document ids, got the string {relevant!r}; "
            "wrap a single id in a list"
        )
    return frozenset(relevant)


def relevant_ids(qrels: Mapping[str, int]) -> frozenset[str]:
    """Return the ids whose grade is at least `RELEVANCE_LEVEL`."""
    return frozenset(doc for doc, grade in qrels.items() if grade >= RELEVANCE_LEVEL)


def judgements(relevant: Sequence[str], grades: Mapping[str, int]) -> dict[str, int]:
    """The qrels of a labelled query: every id of `relevant` at grade 1, then `grades` (which
    override, and may add ids at grade 0 or below: judged non-relevant)."""
    return {**dict.fromkeys(relevant, 1), **grades}
