"""Mutation testing of the deterministic gate: does the built-in suite catch real search bugs?

A mutation is a named, documented variant of the reference store's `SearchPipeline` that models
one realistic bug a developer could ship (a flag ignored, a sign flipped, a leg left off). The
mechanism is explicit: `Mutation.build()` returns a `SearchPipeline`, and the suite runs on
`ReferenceSystem(embedder, pipeline=...)` exactly as `evalkit run` runs it — nothing is patched.
`run_mutants` runs the suite once per mutation; a mutation is *caught* when that run has at
least one gating regression (an assertion error or a metric below its threshold). The control
is a rewrite that must not change any result: it is caught only if the gate raises false alarms.

Decisions where the issue is silent:
- Mutation testing needs metric gating: `run_mutants` refuses (UsageError) when the thresholds
  file has no `deterministic` entry recorded at the requested top_k, because a run without it
  would quietly test assertions only.
- The report-only gated pass is skipped: it never produces regressions, so it cannot catch
  anything and would only double the cost.
- Each run is independent (its own temporary stores), so runs execute on a small thread pool:
  the time goes to SQLite file I/O, not Python.
- Both directions of the include_global flag are catalogued (`include-global-ignored`: globals
  leak into a search that did not ask; `include-global-dropped`: they never join one that did),
  and the gate is tested through queries that pin `min_relevance`, which the gating pass honours.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from evalkit.api import DEFAULT_DATASETS, DEFAULT_THRESHOLDS
from evalkit.datasets import load_suite
from evalkit.embedders.factory import DETERMINISTIC_DIM, embedder_provenance
from evalkit.embedders.hashing import HashingEmbedder
from evalkit.errors import UsageError
from evalkit.evaluate import check_top_k, evaluate
from evalkit.memory.pipeline import (
    DEFAULT_PIPELINE,
    RRF_K,
    Candidate,
    RowFilter,
    SearchPipeline,
    apply_standing,
    fuse_rrf,
    recency_decay,
)
from evalkit.results import Regression
from evalkit.system import ReferenceSystem
from evalkit.thresholds import load_thresholds

MODE = "deterministic"
"""Mutants always run on the deterministic embedder: identical on every machine, no model."""

CAUGHT_BY_MESSAGES = 3
"""How many regression messages `caught_by` quotes (the most specific first, see `MutantOutcome`)."""

MAX_WORKERS = 8
"""Suite runs in flight at once by default (each is I/O bound on its own temporary stores)."""

MUTANT_COLUMNS: tuple[str, ...] = ("mutation", "description", "control", "caught", "caught_by", "regressions")
"""One row per mutation run, in catalogue order. `control`: a no-op that must NOT be caught.
`caught`: the run had at least one gating regression. `caught_by`: the first few regression
messages ("; "-joined, "(+N more)" when there are more). `regressions`: how many there were."""


@dataclass(frozen=True)
class Mutation:
    """One catalogued fault. `description` states the realistic bug it models; `build()` returns
    the variant pipeline; `control` marks a change that must leave every result unchanged."""

    name: str
    description: str
    build: Callable[[], SearchPipeline]
    control: bool = False


# ----------------------------------------------------------------------------- the faulty steps


def _standing_suppress_as_flag(
    rows: Sequence[Candidate],
    superseded_by: Mapping[str, tuple[str, ...]],
    contradicted_by: Mapping[str, tuple[str, ...]],
    supersession: str,
    contradiction: str,
) -> tuple[Candidate, ...]:
    """Bug: the mode check misspells "suppress", so suppress behaves like flag (kept, ranked last)."""
    mode = "flag" if supersession == "suppress" else supersession
    return apply_standing(rows, superseded_by, contradicted_by, mode, contradiction)


def _standing_suppress_contradicted(
    rows: Sequence[Candidate],
    superseded_by: Mapping[str, tuple[str, ...]],
    contradicted_by: Mapping[str, tuple[str, ...]],
    supersession: str,
    contradiction: str,
) -> tuple[Candidate, ...]:
    """Bug: suppress drops every row that is not current (`standing != "current"`), so
    contradicted rows vanish too, although only superseded ones may be dropped."""
    rows = apply_standing(rows, superseded_by, contradicted_by, supersession, contradiction)
    if supersession != "suppress":
        return rows
    return tuple(c for c in rows if c.standing == "current")


def _standing_partition_reversed(
    rows: Sequence[Candidate],
    superseded_by: Mapping[str, tuple[str, ...]],
    contradicted_by: Mapping[str, tuple[str, ...]],
    supersession: str,
    contradiction: str,
) -> tuple[Candidate, ...]:
    """Bug: the standing partition's order table is inverted (superseded < contradicted < current)."""
    order = {"superseded": 0, "contradicted": 1, "current": 2}
    rows = apply_standing(rows, superseded_by, contradicted_by, supersession, contradiction)
    return tuple(sorted(rows, key=lambda c: order[c.standing]))


def _filter_ignoring_project(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: the project argument is not passed on, so every project is searched."""
    return RowFilter(None, include_global, status)


def _filter_always_global(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: the include_global flag is ignored and global thoughts always join a project search."""
    return RowFilter(project, True, status)


def _filter_without_clusters(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: a "hide cluster summaries" filter is left on by default, so no cluster thought is
    ever returned."""
    return RowFilter(project, include_global, status, include_clusters=False)


def _fuse_unnormalised(
    vector: Sequence[Candidate], bm25: Sequence[Candidate], budget: int, rrf_k: int = RRF_K
) -> tuple[Candidate, ...]:
    """Bug: relevance is the raw RRF score (about 0.03 at best) instead of rrf / (legs / (k+1))."""
    return tuple(replace(c, relevance=c.rrf_score or 0.0) for c in fuse_rrf(vector, bm25, budget, rrf_k))


def _recency_sign_flipped(
    rows: Sequence[Candidate], weight: float, half_life_days: float, now: datetime
) -> tuple[Candidate, ...]:
    """Bug: final = relevance − weight·decay, so the freshest rows are pushed down, not up."""
    if weight <= 0.0:
        return tuple(rows)
    out = []
    for c in rows:
        decay = recency_decay((now - c.created_at).total_seconds() / 86400.0, half_life_days)
        out.append(replace(c, recency_score=decay, final_score=c.relevance - weight * decay))
    out.sort(key=lambda c: c.final_score or 0.0, reverse=True)
    return tuple(out)


def _budget_without_over_fetch(top_k: int, suppress: bool, gated: bool) -> int:
    """Bug: the candidate budget is always top_k, so rows removed by suppression (or a gate) are
    not back-filled."""
    return top_k


def _fuse_rrf_fsum(
    vector: Sequence[Candidate], bm25: Sequence[Candidate], budget: int, rrf_k: int = RRF_K
) -> tuple[Candidate, ...]:
    """Control: RRF rewritten over an id → ranks table with `math.fsum`, relevance as the mean of
    (k+1)/(k+rank) over the non-empty legs. Algebraically identical to `fuse_rrf` (same order,
    same ties, scores equal up to float rounding)."""
    merged: dict[str, Candidate] = {}
    ranks: dict[str, list[int]] = {}
    for cand in vector:
        merged[cand.id] = cand
        ranks[cand.id] = [cand.vector_rank or 0]
    for cand in bm25:
        prior = merged.get(cand.id)
        merged[cand.id] = (
            cand if prior is None else replace(prior, bm25_score=cand.bm25_score, bm25_rank=cand.bm25_rank)
        )
        ranks.setdefault(cand.id, []).append(cand.bm25_rank or 0)
    legs = sum(1 for leg in (vector, bm25) if leg)
    rrf = {i: math.fsum(1.0 / (rrf_k + r) for r in rs) for i, rs in ranks.items()}
    relevance = {i: math.fsum((rrf_k + 1) / (rrf_k + r) for r in rs) / legs for i, rs in ranks.items()}
    ordered = sorted(merged, key=lambda i: -rrf[i])[:budget]
    return tuple(replace(merged[i], rrf_score=rrf[i], relevance=relevance[i]) for i in ordered)


def _filter_never_global(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: the include_global flag is not passed on, so global thoughts never join a project search."""
    return RowFilter(project, False, status)


def _gate_vector_only(
    rows: Sequence[Candidate], min_relevance: float
) -> tuple[tuple[Candidate, ...], int, int]:
    """Bug: the relevance gate keeps only vector hits with similarity >= min_relevance, so BM25
    matches with a low similarity are dropped although they are strong."""
    if min_relevance <= 0.0:
        return tuple(rows), 0, 0
    kept = tuple(c for c in rows if c.similarity is not None and c.similarity >= min_relevance)
    return kept, len(rows), len(rows) - len(kept)


# ----------------------------------------------------------------------------- the catalogue


_CATALOGUE: tuple[Mutation, ...] = (
    Mutation(
        "supersession-not-suppressed",
        "supersession=suppress behaves like flag: superseded rows stay in the results (ranked last)",
        lambda: replace(DEFAULT_PIPELINE, standing=_standing_suppress_as_flag),
    ),
    Mutation(
        "contradicted-rows-suppressed",
        "suppress drops every non-current row, so contradicted rows vanish instead of being flagged",
        lambda: replace(DEFAULT_PIPELINE, standing=_standing_suppress_contradicted),
    ),
    Mutation(
        "superseded-ranked-first",
        "the standing partition is reversed (superseded < contradicted < current); under the agent's "
        "suppress mode this shows as contradicted rows ranked above current ones",
        lambda: replace(DEFAULT_PIPELINE, standing=_standing_partition_reversed),
    ),
    Mutation(
        "project-filter-ignored",
        "the project filter is dropped: a project-scoped search returns every project's thoughts",
        lambda: replace(DEFAULT_PIPELINE, row_filter=_filter_ignoring_project),
    ),
    Mutation(
        "include-global-ignored",
        "include_global is ignored: global thoughts of other projects leak into every project search",
        lambda: replace(DEFAULT_PIPELINE, row_filter=_filter_always_global),
    ),
    Mutation(
        "include-global-dropped",
        "include_global is not passed on: global thoughts never join a project search that asks for them",
        lambda: replace(DEFAULT_PIPELINE, row_filter=_filter_never_global),
    ),
    Mutation(
        "bm25-leg-off",
        "the BM25 leg is switched off: hybrid search is vector-only",
        lambda: replace(DEFAULT_PIPELINE, use_bm25=False),
    ),
    Mutation(
        "vector-leg-off",
        "the vector leg is switched off: hybrid search is BM25-only",
        lambda: replace(DEFAULT_PIPELINE, use_vector=False),
    ),
    Mutation(
        "rrf-constant-1",
        "the RRF constant is 1 instead of 60: one leg's top hit dominates and relevance collapses with rank",
        lambda: replace(DEFAULT_PIPELINE, rrf_k=1),
    ),
    Mutation(
        "relevance-not-normalised",
        "relevance is the raw RRF score instead of rrf / (legs / 61), so any recency weight swamps it",
        lambda: replace(DEFAULT_PIPELINE, fuse=_fuse_unnormalised),
    ),
    Mutation(
        "stopwords-not-removed",
        "the stopword list is empty: BM25 matches every note that shares 'the', 'is', 'what', ...",
        lambda: replace(DEFAULT_PIPELINE, stopwords=frozenset()),
    ),
    Mutation(
        "recency-decay-sign-flipped",
        "final = relevance - weight * decay: recency pushes fresh rows down instead of up",
        lambda: replace(DEFAULT_PIPELINE, recency=_recency_sign_flipped),
    ),
    Mutation(
        "over-fetch-removed",
        "the candidate budget is top_k even under suppress, so suppressed rows are not back-filled",
        lambda: replace(DEFAULT_PIPELINE, budget=_budget_without_over_fetch),
    ),
    Mutation(
        "gate-drops-bm25-hits",
        "the relevance gate keeps only vector hits above the floor, dropping strong BM25 matches",
        lambda: replace(DEFAULT_PIPELINE, gate=_gate_vector_only),
    ),
    Mutation(
        "cluster-thought-never-returned",
        "cluster thoughts are filtered out of both legs, so a consolidated summary is never found",
        lambda: replace(DEFAULT_PIPELINE, row_filter=_filter_without_clusters),
    ),
    Mutation(
        "control-rrf-rewritten",
        "no-op control: RRF re-implemented with an id -> ranks table and math.fsum (same results)",
        lambda: replace(DEFAULT_PIPELINE, fuse=_fuse_rrf_fsum),
        control=True,
    ),
)

MUTATIONS: Mapping[str, Mutation] = MappingProxyType({m.name: m for m in _CATALOGUE})
"""Every catalogued mutation by name, in catalogue order (the control last)."""


# ----------------------------------------------------------------------------- running


def _specificity(regression: Regression) -> int:
    """Sort key: assertion errors, then category metrics, then missing categories, then overall."""
    if regression.kind == "assertion":
        return 0
    if regression.kind == "metric" and regression.category is not None:
        return 1
    return 2 if regression.kind == "present" else 3


@dataclass(frozen=True)
class MutantOutcome:
    """The suite run of one mutation: its gating regressions (none = the mutation escaped),
    most specific first — a scenario's assertion, then a category metric, then the overall mean —
    so the first messages say best what caught it."""

    mutation: Mutation
    regressions: tuple[Regression, ...]

    @classmethod
    def from_regressions(cls, mutation: Mutation, regressions: Sequence[Regression]) -> MutantOutcome:
        """The outcome with `regressions` put in the documented order (stable within a kind)."""
        return cls(mutation, tuple(sorted(regressions, key=_specificity)))

    @property
    def caught(self) -> bool:
        return bool(self.regressions)

    @property
    def expected(self) -> bool:
        """Caught for a real mutation, not caught for the control."""
        return self.caught != self.mutation.control


@dataclass(frozen=True)
class MutantsResult:
    """Every mutation's outcome, in catalogue order."""

    outcomes: tuple[MutantOutcome, ...]

    @property
    def ok(self) -> bool:
        """True when every mutation was caught and no control was (exit code 0)."""
        return all(o.expected for o in self.outcomes)

    @property
    def table(self) -> pd.DataFrame:
        """One row per mutation with the columns of MUTANT_COLUMNS."""
        rows = [
            {
                "mutation": o.mutation.name,
                "description": o.mutation.description,
                "control": o.mutation.control,
                "caught": o.caught,
                "caught_by": _caught_by(o.regressions),
                "regressions": len(o.regressions),
            }
            for o in self.outcomes
        ]
        return pd.DataFrame(rows, columns=list(MUTANT_COLUMNS))


def _caught_by(regressions: Sequence[Regression]) -> str:
    quoted = "; ".join(r.message for r in regressions[:CAUGHT_BY_MESSAGES])
    more = len(regressions) - CAUGHT_BY_MESSAGES
    return f"{quoted} (+{more} more)" if more > 0 else quoted


def select_mutations(names: Sequence[str] | None = None) -> tuple[Mutation, ...]:
    """The named mutations in the order given (duplicates dropped), or the whole catalogue for
    None. An unknown name raises UsageError listing the valid ones."""
    if names is None:
        return _CATALOGUE
    unknown = [n for n in names if n not in MUTATIONS]
    if unknown:
        raise UsageError(
            f"unknown mutation(s): {', '.join(unknown)}; valid mutations: {', '.join(MUTATIONS)}"
        )
    return tuple(MUTATIONS[n] for n in dict.fromkeys(names))


def _require_baseline(thresholds: Path, top_k: int) -> None:
    entry = (load_thresholds(thresholds) or {}).get(MODE)
    if entry is None or entry.top_k != top_k:
        raise UsageError(
            f"mutation testing needs a {MODE!r} baseline recorded at top_k={top_k} in {thresholds} "
            f"(without it only assertions would gate); record one with "
            f"`evalkit run --top-k {top_k} --update-baseline`"
        )


def run_mutants(
    names: Sequence[str] | None = None,
    datasets: str | Path = DEFAULT_DATASETS,
    thresholds: str | Path = DEFAULT_THRESHOLDS,
    top_k: int = 5,
    workers: int | None = None,
) -> MutantsResult:
    """Run the scenario suite in `datasets` once per mutation (all, or those `names` selects) on
    the deterministic embedder, gated on `thresholds` exactly as `evalkit run` gates.

    `workers`: suite runs in flight at once (default min(MAX_WORKERS, number of mutations)).
    Raises UsageError for an unknown mutation name, a bad top_k or workers, or a thresholds file
    without a deterministic baseline at `top_k`; DatasetError / ThresholdsError on bad input.
    """
    selected = select_mutations(names)
    check_top_k(top_k)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"workers must be a positive integer, got {workers!r}")
    _require_baseline(Path(thresholds), top_k)
    suite = load_suite(datasets)
    embedder = HashingEmbedder(DETERMINISTIC_DIM)
    info = embedder_provenance(embedder)

    def run_one(mutation: Mutation) -> MutantOutcome:
        report = evaluate(
            suite,
            ReferenceSystem(embedder, pipeline=mutation.build()),
            mode=MODE,
            embedder_info=info,
            top_k=top_k,
            gated=False,
            thresholds=thresholds,
            progress=False,
        )
        return MutantOutcome.from_regressions(mutation, report.regressions)

    with ThreadPoolExecutor(max_workers=workers or min(MAX_WORKERS, len(selected))) as pool:
        return MutantsResult(tuple(pool.map(run_one, selected)))
