"""Is a query's result decided by ties? Equal ranking scores are ordered by the system's
tie-break, which may be arbitrary (a vector store's hits tied at similarity 0.0 come back in any
order): a relevant id in a tie, or a tie across the top_k cut, can move in or out of the top_k on
a rerun, and the metrics with it.

`tie_record` judges one search response: two hits tie when they have the same `standing` (a
system ranks current rows before contradicted and superseded ones whatever their score) and
tying ranking scores (`evalkit.records.ranking_score` — the recency-combined score, else the
relevance, else the vector similarity — compared by `evalkit.records.scores_tie`). A tie group is
a run of consecutive hits, in rank order, that tie with their neighbour. The query is *decided by
ties* (`TieRecord.decided`) when

- the row the top_k cut left out ties with the last hit returned (`at_cut`, as the system says
  in `SearchResponse.cut_tied`; None when it does not say), or
- a relevant id sits in a tie group (`relevant` lists them, in rank order).

A tie is not instability: the reference store breaks its ties deterministically (fusion keeps
vector order, then BM25 order). Whether a system's tie-break is stable is what
`evalkit run --repeat N` measures (`evalkit.harness.repeats`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from evalkit.records import Hit, ranking_score, scores_tie
from evalkit.validation import FrozenModel


class TieRecord(FrozenModel):
    """Whether one query's result is decided by ties (see the module docstring): `at_cut` — the
    row below the top_k cut ties with the last hit (None: the system does not say); `relevant` —
    the relevant ids that sit in a tie group, in rank order."""

    at_cut: bool | None
    relevant: list[str]

    @property
    def decided(self) -> bool:
        """The result is decided by ties: a tie across the cut or around a relevant id."""
        return bool(self.at_cut) or bool(self.relevant)


def tie_groups(hits: Sequence[Hit]) -> list[list[Hit]]:
    """The runs of two or more consecutive hits (in the given rank order) that tie with their
    neighbour: the same standing and tying ranking scores. Hits without a ranking score tie
    with nothing."""
    groups: list[list[Hit]] = []
    current: list[Hit] = []
    for hit in hits:
        if current and _tie(current[-1], hit):
            current.append(hit)
            continue
        if len(current) > 1:
            groups.append(current)
        current = [hit]
    if len(current) > 1:
        groups.append(current)
    return groups


def tie_record(hits: Sequence[Hit], relevant: Collection[str], cut_tied: bool | None) -> TieRecord | None:
    """The ties of one response: `hits` in rank order, the query's `relevant` ids and what the
    system said about its cut (`SearchResponse.cut_tied`). None when nothing can be judged:
    there are hits, none carries a ranking score, and the system says nothing about its cut."""
    scored = any(ranking_score(h) is not None for h in hits)
    if hits and not scored and cut_tied is None:
        return None
    wanted = set(relevant)
    tied = [h.id for group in tie_groups(hits) for h in group if h.id in wanted]
    return TieRecord(at_cut=cut_tied, relevant=list(dict.fromkeys(tied)))


def _tie(first: Hit, second: Hit) -> bool:
    return first.standing == second.standing and scores_tie(ranking_score(first), ranking_score(second))
