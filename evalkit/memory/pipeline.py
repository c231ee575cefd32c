"""The ranking steps of one search (SPEC §1.3 steps 1, 4–9) as pure functions over candidates.

The store runs the two retrieval legs in SQL and hands their rows here. Each step takes and
returns tuples of immutable `Candidate`s and never reorders except where the SPEC says so; every
sort is stable. `SearchPipeline` bundles the step functions and constants, so a variant
pipeline (e.g. a deliberately broken one for mutation testing) is an explicit value, not a patch.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from evalkit.memory.fts_query import build_fts_query
from evalkit.records import MAX_TOP_K

RRF_K = 60
"""Reciprocal-rank-fusion constant: score = Σ 1/(RRF_K + rank)."""


@dataclass(frozen=True, slots=True)
class RowFilter:
    """Which rows both legs may return: `project` None = every project, else `project = p`
    plus global thoughts when `include_global`; `status` None = any; clusters unless excluded."""

    project: str | None
    include_global: bool
    status: str | None
    include_clusters: bool = True

    def sql(self, alias: str = "t") -> tuple[str, list[object]]:
        """A WHERE fragment over table alias `alias` and its parameters ("1" when unfiltered)."""
        clauses: list[str] = []
        params: list[object] = []
        if self.project is not None:
            clauses.append(
                f"({alias}.project = ?" + (f" OR {alias}.is_global = 1)" if self.include_global else ")")
            )
            params.append(self.project)
        if self.status is not None:
            clauses.append(f"{alias}.status = ?")
            params.append(self.status)
        if not self.include_clusters:
            clauses.append(f"{alias}.is_cluster = 0")
        return (" AND ".join(clauses) or "1"), params


class Candidate(NamedTuple):
    """One row on its way through the pipeline. Leg fields are None when that leg missed it.

    Immutable; a step makes a changed copy with `c._replace(field=value)`. A NamedTuple rather
    than a frozen dataclass because every search builds and copies a few dozen of them: a frozen
    dataclass sets each of its 17 fields through `object.__setattr__`, four times slower.
    """

    rowid: int
    id: str
    content: str
    project: str
    created_at: datetime
    is_cluster: bool
    similarity: float | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    bm25_rank: int | None = None
    rrf_score: float | None = None
    relevance: float = 0.0
    recency_score: float | None = None
    final_score: float | None = None
    standing: str = "current"
    superseded_by: tuple[str, ...] = ()
    contradicted_by: tuple[str, ...] = ()

    @property
    def match_source(self) -> tuple[str, ...]:
        """The legs that returned this row, in the order ("vector", "bm25")."""
        return tuple(
            leg for leg, rank in (("vector", self.vector_rank), ("bm25", self.bm25_rank)) if rank is not None
        )


def candidate_budget(top_k: int, suppress: bool, gated: bool) -> int:
    """K: top_k, or min(MAX_TOP_K, 4·top_k) when suppression or a gate may remove rows to back-fill."""
    return min(MAX_TOP_K, 4 * top_k) if (suppress or gated) else top_k


def vector_pool(budget: int) -> int:
    """How many nearest rows each leg fetches before filtering: min(MAX_TOP_K, 10·K)."""
    return min(MAX_TOP_K, 10 * budget)


def fuse_rrf(
    vector: Sequence[Candidate], bm25: Sequence[Candidate], budget: int, rrf_k: int = RRF_K
) -> tuple[Candidate, ...]:
    """Reciprocal rank fusion of the legs, keeping `budget` rows.

    rrf(id) = Σ over legs 1/(rrf_k + rank), ranks 1-based. Ties keep vector order, then BM25-only
    ids in BM25 order (stable sort). relevance = rrf / (non-empty legs / (rrf_k + 1)), so 1.0
    means first in every leg that returned anything. Works for a single leg too.
    """
    legs = sum(1 for leg in (vector, bm25) if leg)
    merged: dict[str, tuple[Candidate, Candidate | None]] = {cand.id: (cand, None) for cand in vector}
    for cand in bm25:  # a row both legs returned: its vector candidate, and the BM25 one
        merged[cand.id] = (merged[cand.id][0], cand) if cand.id in merged else (cand, None)
    scored = [
        (
            sum(1.0 / (rrf_k + rank) for rank in (c.vector_rank, (also or c).bm25_rank) if rank is not None),
            c,
            also,
        )
        for c, also in merged.values()
    ]
    scored.sort(key=lambda entry: entry[0], reverse=True)
    return tuple(  # one copy per kept row, with every field it gains
        c._replace(
            bm25_score=(also or c).bm25_score,
            bm25_rank=(also or c).bm25_rank,
            rrf_score=rrf,
            relevance=rrf * (rrf_k + 1) / legs,
        )
        for rrf, c, also in scored[:budget]
    )


def similarity_relevance(
    vector: Sequence[Candidate], budget: int, rrf_k: int = RRF_K
) -> tuple[Candidate, ...]:
    """Vector-only mode: relevance = similarity, order = the vector leg's, rrf of the one leg."""
    return tuple(
        c._replace(rrf_score=1.0 / (rrf_k + (c.vector_rank or 0)), relevance=c.similarity or 0.0)
        for c in vector[:budget]
    )


def recency_decay(age_days: float, half_life_days: float) -> float:
    """0.5 ** (age / half_life); ages below zero (future timestamps) count as 0 → 1.0."""
    return 0.5 ** (max(0.0, age_days) / half_life_days)


def apply_recency(
    rows: Sequence[Candidate],
    weight: float,
    half_life_days: float,
    now: datetime,
    combine: Callable[[float, float], float] = operator.add,
) -> tuple[Candidate, ...]:
    """final = combine(relevance, weight·decay) — relevance + weight·decay — then a stable re-sort
    by final; weight 0 → rows unchanged."""
    if weight <= 0.0:
        return tuple(rows)
    out = []
    for c in rows:
        decay = recency_decay((now - c.created_at).total_seconds() / 86400.0, half_life_days)
        out.append(c._replace(recency_score=decay, final_score=combine(c.relevance, weight * decay)))
    out.sort(key=lambda c: c.final_score or 0.0, reverse=True)
    return tuple(out)


STANDING_ORDER: Mapping[str, int] = {"current": 0, "contradicted": 1, "superseded": 2}
"""The standing partition: current rows first, then contradicted, then superseded."""


def apply_standing(
    rows: Sequence[Candidate],
    superseded_by: Mapping[str, tuple[str, ...]],
    contradicted_by: Mapping[str, tuple[str, ...]],
    supersession: str,
    contradiction: str,
    order: Mapping[str, int] = STANDING_ORDER,
) -> tuple[Candidate, ...]:
    """Annotate standing, drop superseded rows under `suppress`, partition by `order` (current <
    contradicted < superseded; stable). `off` modes leave that signal out entirely; contradicted
    rows are never dropped."""
    out = []
    for c in rows:
        sup = superseded_by.get(c.id, ()) if supersession != "off" else ()
        con = contradicted_by.get(c.id, ()) if contradiction != "off" else ()
        standing = "superseded" if sup else "contradicted" if con else "current"
        if standing == "superseded" and supersession == "suppress":
            continue
        unchanged = (standing, sup, con) == (c.standing, c.superseded_by, c.contradicted_by)
        out.append(c if unchanged else c._replace(standing=standing, superseded_by=sup, contradicted_by=con))
    out.sort(key=lambda c: order[c.standing])
    return tuple(out)


def strong_match(bm25: bool, similarity: float | None, floor: float) -> bool:
    """The reference store's confidence and gate rule (SPEC §1.3 steps 7–8), the one place it is
    written: a row is strong under `floor` when BM25 matched it (`bm25`) or the vector leg did
    with `similarity` >= floor (None: the vector leg did not return it)."""
    return bm25 or (similarity is not None and similarity >= floor)


def is_strong(c: Candidate, floor: float) -> bool:
    """Strong: BM25 matched it, or the vector leg did with similarity >= floor (`strong_match`)."""
    return strong_match(c.bm25_rank is not None, c.similarity, floor)


def apply_gate(
    rows: Sequence[Candidate], min_relevance: float, strong: Callable[[Candidate, float], bool] = is_strong
) -> tuple[tuple[Candidate, ...], int, int]:
    """Keep rows `strong` under floor = min_relevance. Returns (kept, candidates, filtered_out);
    min_relevance 0 means no gate: (rows, 0, 0)."""
    if min_relevance <= 0.0:
        return tuple(rows), 0, 0
    kept = tuple(c for c in rows if strong(c, min_relevance))
    return kept, len(rows), len(rows) - len(kept)


@dataclass(frozen=True)
class SearchPipeline:
    """The tunable parts of search. `DEFAULT_PIPELINE` is the SPEC; any other value is a variant.

    `row_filter` builds the project/status filter both legs apply; `use_vector`/`use_bm25` switch
    legs off; `pool` sizes both legs' fetch from K; `fts_query` turns the query text, the stopwords
    and the store's query syntax into the FTS5 MATCH expression (None = no BM25 rows); `fuse` ranks
    hybrid and bm25 results,
    `vector_relevance` ranks vector-mode results; `strong` decides confidence (step 7, called with
    VECTOR_FLOOR) while `gate` applies step 8. Every callable must keep the contract of the default
    it replaces.

    Three switches say how the store keeps its indexes in step with what search reads (each True
    in the SPEC; a mutation turns one off): `filter_before_cut` — each leg applies the project /
    status filter before it keeps its best rows (False: the leg keeps its best K rows of every
    project, then filters them, so a filtered search returns too little); `purge_on_delete` —
    a delete removes the thought's row, FTS5 row and vector (False: only its vector and edges go,
    its text stays searchable by BM25); `reembed_on_update` — an update of the content
    replaces the vector too (False: the text is re-indexed, the old vector kept).
    """

    rrf_k: int = RRF_K
    use_vector: bool = True
    use_bm25: bool = True
    row_filter: Callable[[str | None, bool, str | None], RowFilter] = RowFilter
    budget: Callable[[int, bool, bool], int] = candidate_budget
    pool: Callable[[int], int] = vector_pool
    fts_query: Callable[[str, frozenset[str], str], str | None] = build_fts_query
    fuse: Callable[[Sequence[Candidate], Sequence[Candidate], int, int], tuple[Candidate, ...]] = fuse_rrf
    vector_relevance: Callable[[Sequence[Candidate], int, int], tuple[Candidate, ...]] = similarity_relevance
    recency: Callable[[Sequence[Candidate], float, float, datetime], tuple[Candidate, ...]] = apply_recency
    standing: Callable[
        [Sequence[Candidate], Mapping[str, tuple[str, ...]], Mapping[str, tuple[str, ...]], str, str],
        tuple[Candidate, ...],
    ] = apply_standing
    strong: Callable[[Candidate, float], bool] = is_strong
    gate: Callable[[Sequence[Candidate], float], tuple[tuple[Candidate, ...], int, int]] = apply_gate
    filter_before_cut: bool = True
    purge_on_delete: bool = True
    reembed_on_update: bool = True


DEFAULT_PIPELINE = SearchPipeline()
