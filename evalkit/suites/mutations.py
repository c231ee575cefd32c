"""Mutation testing of the deterministic gate: does the built-in suite catch real search bugs?

A mutation is a named, documented variant of the reference store's `SearchPipeline` that models
one realistic bug a developer could ship (a flag ignored, a sign flipped, a leg left off). Each
variant changes a parameter of a default step or wraps it (`functools.partial`, a small wrapper
around the default) — no step body is copied. The suite runs on `ReferenceSystem(embedder,
pipeline=...)` through the one evaluation path (`evaluate`), exactly as `evalkit run` runs it;
nothing is patched. A mutation is *caught* when its run has at least one regression (an
assertion error or a metric below its threshold). The control is an independent rewrite that
must not change any result: it is caught only if the gate raises false alarms.

Decisions where the issue is silent:
- The baseline check does not need a recorded baseline: when the thresholds file holds no
  deterministic baseline of the reference store on this suite at the config's top_k, the
  mutants are checked against the suite's unmutated run (recorded as `evalkit baseline record` would
  record it, into a temporary file: the user's file is never written), so a new suite — an
  `evalkit init` project — is measured at once; `DetectionPower.checked_against` says what was
  used. (Before, `run_mutants` refused without a recorded baseline: a run without the baseline
  check would quietly test assertions only.)
- Each mutation carries a `hint`: what a suite needs to catch it, shown for an escaped mutation
  in the verdict (`evalkit run --mutants report`) and saved in the report.
- Mutants always run in deterministic mode (identical on every machine, no model) and skip the
  report-only gated pass: it never produces regressions, so it could not catch anything.
- The unit of work is a mutation (one whole suite run): an executor runs them serially, on local
  processes (`workers`) or on Ray, in catalogue order either way.
- Both directions of the include_global flag are catalogued (`include-global-ignored`: globals
  leak into a search that did not ask; `include-global-dropped`: they never join one that did),
  and the gate is tested through queries that pin `min_relevance`, which every pass honours.
"""

from __future__ import annotations

import math
import operator
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType

from evalkit.embedders.factory import DETERMINISTIC_DIM, EmbedderInfo, embedder_provenance
from evalkit.embedders.hashing import HashingEmbedder
from evalkit.errors import UsageError
from evalkit.harness.baselines import averages_nothing, record_baseline
from evalkit.harness.config import RunConfig
from evalkit.harness.evaluate import evaluate
from evalkit.harness.executors import Executor, make_executor
from evalkit.harness.results import DetectionPower, MutationOutcome, Regression
from evalkit.memory.fts_query import build_fts_query
from evalkit.memory.pipeline import (
    DEFAULT_PIPELINE,
    RRF_K,
    STANDING_ORDER,
    Candidate,
    RowFilter,
    SearchPipeline,
    apply_gate,
    apply_recency,
    apply_standing,
    candidate_budget,
    fuse_rrf,
)
from evalkit.scenarios import Suite
from evalkit.systems import ReferenceSystem

__all__ = [
    "MUTATIONS",
    "PACK_MUTATIONS",
    "MutantRunner",
    "Mutation",
    "checked_settings",
    "most_specific_first",
    "mutant_config",
    "run_mutants",
    "select_mutations",
]

MODE = "deterministic"
"""Mutants always run on the deterministic embedder: identical on every machine, no model."""


@dataclass(frozen=True)
class Mutation:
    """One catalogued fault. `description` states the realistic bug it models; `changes` are the
    `SearchPipeline` fields it replaces (a parameter, or a step wrapped around the default);
    `control` marks a change that must leave every result unchanged; `hint` says what a suite
    needs to catch it (shown for an escaped mutation, or for the control's false alarm); `pack`
    names the scenario pack (`evalkit.suites.packs`) written to catch it, None for the mutations
    the built-in suite catches."""

    name: str
    description: str
    changes: Mapping[str, object]
    control: bool = False
    hint: str = ""
    pack: str | None = None

    def build(self) -> SearchPipeline:
        """The variant pipeline: the SPEC's with `changes` applied."""
        return replace(DEFAULT_PIPELINE, **self.changes)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the faulty steps


def _suppress_as_flag(
    rows: Sequence[Candidate],
    superseded_by: Mapping[str, tuple[str, ...]],
    contradicted_by: Mapping[str, tuple[str, ...]],
    supersession: str,
    contradiction: str,
) -> tuple[Candidate, ...]:
    """Bug: the mode check misspells "suppress", so suppress behaves like flag (kept, ranked last)."""
    mode = "flag" if supersession == "suppress" else supersession
    return apply_standing(rows, superseded_by, contradicted_by, mode, contradiction)


def _suppress_every_non_current(
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


_REVERSED_STANDING_ORDER = {standing: -rank for standing, rank in STANDING_ORDER.items()}
"""Bug: the standing partition's order table is inverted (superseded < contradicted < current)."""


def _filter_ignoring_project(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: the project argument is not passed on, so every project is searched."""
    return RowFilter(None, include_global, status)


def _filter_always_global(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: the include_global flag is ignored and global thoughts always join a project search."""
    return RowFilter(project, True, status)


def _filter_never_global(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: the include_global flag is not passed on, so global thoughts never join a project search."""
    return RowFilter(project, False, status)


def _filter_without_clusters(project: str | None, include_global: bool, status: str | None) -> RowFilter:
    """Bug: a "hide cluster summaries" filter is left on by default, so no cluster thought is
    ever returned."""
    return RowFilter(project, include_global, status, include_clusters=False)


def _fuse_unnormalised(
    vector: Sequence[Candidate], bm25: Sequence[Candidate], budget: int, rrf_k: int = RRF_K
) -> tuple[Candidate, ...]:
    """Bug: relevance is the raw RRF score (about 0.03 at best) instead of rrf / (legs / (k+1))."""
    return tuple(c._replace(relevance=c.rrf_score or 0.0) for c in fuse_rrf(vector, bm25, budget, rrf_k))


def _budget_without_over_fetch(top_k: int, suppress: bool, gated: bool) -> int:
    """Bug: the candidate budget ignores suppression and the gate, so rows they remove are not
    back-filled."""
    return candidate_budget(top_k, suppress=False, gated=False)


def _fts_query_without_stopwords(text: str, stopwords: frozenset[str], syntax: str) -> str | None:
    """Bug: the stopword list is not passed on, so every word of the query is searched."""
    return build_fts_query(text, frozenset(), syntax)


def _strong_if_similar(c: Candidate, floor: float) -> bool:
    """Bug: only the vector leg's similarity counts as strong; BM25 matches are ignored."""
    return c.similarity is not None and c.similarity >= floor


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
            cand if prior is None else prior._replace(bm25_score=cand.bm25_score, bm25_rank=cand.bm25_rank)
        )
        ranks.setdefault(cand.id, []).append(cand.bm25_rank or 0)
    legs = sum(1 for leg in (vector, bm25) if leg)
    rrf = {i: math.fsum(1.0 / (rrf_k + r) for r in rs) for i, rs in ranks.items()}
    relevance = {i: math.fsum((rrf_k + 1) / (rrf_k + r) for r in rs) / legs for i, rs in ranks.items()}
    ordered = sorted(merged, key=lambda i: -rrf[i])[:budget]
    return tuple(merged[i]._replace(rrf_score=rrf[i], relevance=relevance[i]) for i in ordered)


# ----------------------------------------------------------------------------- the catalogue


_CATALOGUE: tuple[Mutation, ...] = (
    Mutation(
        "supersession-not-suppressed",
        "supersession=suppress behaves like flag: superseded rows stay in the results (ranked last)",
        {"standing": _suppress_as_flag},
        hint=(
            "superseded rows are kept and rank last, after every current row: forbid the superseded id in a"
            " query whose scope holds fewer than top_k current thoughts (a project of its own, as the "
            "built-in supersession-history does), so that last place is inside top_k"
        ),
    ),
    Mutation(
        "contradicted-rows-suppressed",
        "suppress drops every non-current row, so contradicted rows vanish instead of being flagged",
        {"standing": _suppress_every_non_current},
        hint=(
            "contradicted rows vanish: list a contradicted thought (the target of a `contradicts` edge) as "
            "relevant, so that losing it costs recall"
        ),
    ),
    Mutation(
        "superseded-ranked-first",
        "the standing partition is reversed (superseded < contradicted < current); under the agent's "
        "suppress mode this shows as contradicted rows ranked above current ones",
        {"standing": partial(apply_standing, order=_REVERSED_STANDING_ORDER)},
        hint=(
            "contradicted rows outrank current ones: add a rank_before that puts the current thought above "
            "the contradicted one it disputes"
        ),
    ),
    Mutation(
        "project-filter-ignored",
        "the project filter is dropped: a project-scoped search returns every project's thoughts",
        {"row_filter": _filter_ignoring_project},
        hint=(
            "other projects leak into a project search: ask a query with `project:` and forbid a thought of"
            " another project that matches the query word for word"
        ),
    ),
    Mutation(
        "include-global-ignored",
        "include_global is ignored: global thoughts of other projects leak into every project search",
        {"row_filter": _filter_always_global},
        hint=(
            "global thoughts leak into a project search that did not ask for them: forbid a global thought "
            "(is_global: true) of another project in a query with `project:` and no include_global"
        ),
    ),
    Mutation(
        "include-global-dropped",
        "include_global is not passed on: global thoughts never join a project search that asks for them",
        {"row_filter": _filter_never_global},
        hint=(
            "global thoughts never join a search that asks for them: add a query with `project:` and "
            "include_global: true whose relevant thought is a global thought of another project"
        ),
    ),
    Mutation(
        "bm25-leg-off",
        "the BM25 leg is switched off: hybrid search is vector-only",
        {"use_bm25": False},
        hint=(
            "the word match is gone: add queries that only an exact word (a name, a code, an identifier) "
            "links to their relevant thought, among distractors that share the query's other words"
        ),
    ),
    Mutation(
        "vector-leg-off",
        "the vector leg is switched off: hybrid search is BM25-only",
        {"use_vector": False},
        hint=(
            "only exact words match: add queries whose relevant thought shares few of their words "
            "(paraphrases, multi-hop questions), so that word match alone loses recall"
        ),
    ),
    Mutation(
        "rrf-constant-1",
        "the RRF constant is 1 instead of 60: one leg's top hit dominates and relevance collapses with rank",
        {"rrf_k": 1},
        hint=(
            "one leg's top hit dominates the fusion: add queries where the two legs disagree on the first "
            "hit, with a rank_before (or enough queries that MRR falls)"
        ),
    ),
    Mutation(
        "relevance-not-normalised",
        "relevance is the raw RRF score instead of rrf / (legs / 61), so any recency weight swamps it",
        {"fuse": _fuse_unnormalised},
        hint=(
            "raw RRF relevance is swamped by any recency weight: add a query with recency_weight whose best"
            " match is older than a weaker one (rank_before: the better match first)"
        ),
    ),
    Mutation(
        "stopwords-not-removed",
        "the stopword list is empty: BM25 matches every note that shares 'the', 'is', 'what', ...",
        {"fts_query": _fts_query_without_stopwords},
        hint=(
            "BM25 matches on 'the', 'is', 'what': add distractors that share only stopwords with the "
            "queries, so that precision falls"
        ),
    ),
    Mutation(
        "recency-decay-sign-flipped",
        "final = relevance - weight * decay: recency pushes fresh rows down instead of up",
        {"recency": partial(apply_recency, combine=operator.sub)},
        hint=(
            "recency pushes fresh rows down: add a query with recency_weight and a rank_before that puts "
            "the fresh thought above its stale twin"
        ),
    ),
    Mutation(
        "over-fetch-removed",
        "the candidate budget is top_k even under suppress, so suppressed rows are not back-filled",
        {"budget": _budget_without_over_fetch},
        hint=(
            "suppressed rows are not back-filled: ask, inside a small scope, a query whose superseded notes"
            " outrank the current one, with the current one relevant (as supersession-history does)"
        ),
    ),
    Mutation(
        "gate-drops-bm25-hits",
        "the relevance gate keeps only vector hits above the floor, dropping strong BM25 matches",
        {"gate": partial(apply_gate, strong=_strong_if_similar)},
        hint=(
            "the relevance gate drops strong word matches: add a query that pins min_relevance and whose "
            "relevant thought matches by words but has a low vector similarity"
        ),
    ),
    Mutation(
        "cluster-thought-never-returned",
        "cluster thoughts are filtered out of both legs, so a consolidated summary is never found",
        {"row_filter": _filter_without_clusters},
        hint=(
            "cluster summaries are never found: add a cluster thought (is_cluster: true) that is the "
            "relevant answer of a query"
        ),
    ),
    Mutation(
        "control-rrf-rewritten",
        "no-op control: RRF re-implemented with an id -> ranks table and math.fsum (same results)",
        {"fuse": _fuse_rrf_fsum},
        control=True,
        hint=(
            "the no-op control raised an alarm: a check depends on float rounding or on the order of tied "
            "scores; find the query (evalkit run --repeat) and break the tie"
        ),
    ),
    Mutation(
        "deletion-keeps-text",
        "a delete removes the thought's vector and edges but not its row, so its FTS5 row stays and BM25 "
        "keeps returning the deleted thought (found by the deletion-ghosts pack)",
        {"purge_on_delete": False},
        hint=(
            "delete a thought between queries and forbid it afterwards, in a query sharing its words "
            "(evalkit run --pack deletion-ghosts)"
        ),
        pack="deletion-ghosts",
    ),
    Mutation(
        "update-keeps-old-vector",
        "an update re-indexes the new text for BM25 but keeps the old vector, so the vector leg still "
        "ranks the thought by its old meaning (found by the update-propagation pack)",
        {"reembed_on_update": False},
        hint=(
            "update a thought to another subject and ask in its old exact words with "
            "expect_no_strong_match (evalkit run --pack update-propagation)"
        ),
        pack="update-propagation",
    ),
    Mutation(
        "project-filter-after-cut",
        "each leg keeps its best K rows of every project before the project filter, so a search of a "
        "small project returns too little (found by the filter-selectivity pack)",
        {"filter_before_cut": False},
        hint=(
            "put most thoughts, sharing the question's words, in another project and floor the small "
            "project's recall (evalkit run --pack filter-selectivity)"
        ),
        pack="filter-selectivity",
    ),
)

MUTATIONS: Mapping[str, Mutation] = MappingProxyType({m.name: m for m in _CATALOGUE if m.pack is None})
"""The mutations the built-in suite must catch, by name, in catalogue order (the control last):
what `evalkit mutants` runs by default."""

PACK_MUTATIONS: Mapping[str, Mutation] = MappingProxyType({m.name: m for m in _CATALOGUE if m.pack})
"""The mutations of behaviours only the scenario packs exercise (deletion, update, a filter on a
large corpus), by name: each is caught by its `pack` and escapes the built-in suite by design
(it has no delete or update step and no project of 95% of the thoughts)."""


# ----------------------------------------------------------------------------- running


def most_specific_first(regressions: Sequence[Regression]) -> list[Regression]:
    """`regressions` ordered so the first say best what caught a mutation: assertion errors, then
    category metrics, then missing categories, then overall metrics (stable within a kind)."""
    return sorted(regressions, key=_specificity)


def _specificity(regression: Regression) -> int:
    if regression.kind == "assertion":
        return 0
    if regression.kind == "metric" and regression.category is not None:
        return 1
    return 2 if regression.kind == "present" else 3


def select_mutations(names: Sequence[str] | None = None, packs: Sequence[str] = ()) -> tuple[Mutation, ...]:
    """The named mutations in the order given (duplicates dropped; any catalogued name, pack
    mutations included). For None: the mutations of `packs` and the control when packs are given
    (the suite is those packs), else the built-in suite's catalogue (`MUTATIONS`). An unknown
    name raises UsageError listing the valid ones."""
    known = {**MUTATIONS, **PACK_MUTATIONS}
    if names is None:
        if packs:
            return tuple(m for m in _CATALOGUE if m.control or m.pack in packs)
        return tuple(MUTATIONS.values())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown mutation(s): {', '.join(unknown)}; valid mutations: {', '.join(known)}")
    return tuple(known[n] for n in dict.fromkeys(names))


def mutant_config(config: RunConfig) -> RunConfig:
    """The configuration a mutant runs with: `config` in deterministic mode, ungated (the gated
    pass is report-only and cannot catch anything), a missing baseline never a regression (the
    mutants are checked against the suite's own unmutated run instead, see `run_mutants`)."""
    return config.model_copy(
        update={
            "mode": MODE,
            "model": None,
            "embedding_cache": None,
            "gated": False,
            "require_baseline": False,
        }
    )


def checked_settings(suite: Suite, settings: RunConfig, scratch: Path) -> tuple[RunConfig, str]:
    """(the settings the mutants run with, what they are checked against). The suite runs once
    on the unmutated reference store under `settings`: when its metrics were compared with a
    baseline of `settings.thresholds`, the mutants are checked against that file. Otherwise (no
    file, no entry at this top_k, one of another system or suite) that unmutated run is recorded
    as the baseline of a thresholds file in `scratch` (exactly what `evalkit baseline record` would
    record; the user's file is never written) and the mutants are checked against it — except on
    a subset of the suite (`--scenario`), whose metrics are never compared: only assertions count
    there."""
    embedder = HashingEmbedder(DETERMINISTIC_DIM)
    system = ReferenceSystem(embedder, options=settings.store)
    clean = evaluate(suite, system, settings, embedder=embedder_provenance(embedder), progress=False)
    why = clean.metrics_not_compared
    where = f"{MODE} baseline at top_k {settings.top_k} in {settings.thresholds}"
    if why is None:
        return settings, f"the {where}"
    if suite.subset or averages_nothing(clean):  # nothing a baseline could compare
        return settings, f"assertions only ({why})"
    own = record_baseline(scratch / "thresholds.json", clean)
    missing = f"no comparable {where}" if settings.thresholds is not None else "no thresholds file"
    return settings.model_copy(update={"thresholds": own}), f"this suite's unmutated run ({missing})"


@dataclass(frozen=True)
class MutantRunner:
    """Runs the suite on one mutation (a picklable callable, so executors can ship it to worker
    processes): `evaluate` on the reference store with the mutated pipeline, serially."""

    suite: Suite
    config: RunConfig
    embedder: HashingEmbedder
    info: EmbedderInfo

    def __call__(self, mutation: Mutation) -> MutationOutcome:
        system = ReferenceSystem(self.embedder, options=self.config.store, pipeline=mutation.build())
        result = evaluate(self.suite, system, self.config, embedder=self.info, progress=False)
        return MutationOutcome(
            mutation=mutation.name,
            description=mutation.description,
            control=mutation.control,
            regressions=most_specific_first(result.regressions),
            hint=mutation.hint,
        )


def run_mutants(
    suite: Suite,
    config: RunConfig,
    names: Sequence[str] | None = None,
    workers: int | None = None,
    *,
    executor: Executor | None = None,
    packs: Sequence[str] = (),
) -> DetectionPower:
    """Run `suite` once per mutation (all, or those `names` selects) on the deterministic
    embedder through `evaluate`, checked as `checked_settings` says: against the deterministic
    baseline of `config.thresholds` when the unmutated suite compares with it, else against the
    unmutated run itself (so a new suite without baselines, `evalkit init`'s, is measured too).
    The result's `checked_against` says which.

    The unit of work is a mutation: `executor` runs them (default: `workers` local processes,
    serially when `workers` is None or 1); outcomes come back in catalogue (or `names`) order,
    identical on every executor. `packs` names the scenario packs `suite` is made of: without
    `names`, their mutations (and the control) are run instead of the built-in catalogue. Raises
    UsageError for an unknown mutation name or bad workers; ThresholdsError on an invalid file.
    """
    selected = select_mutations(names, packs)
    runner = executor or make_executor("processes", workers)
    embedder = HashingEmbedder(DETERMINISTIC_DIM)
    with tempfile.TemporaryDirectory(prefix="evalkit-mutants-") as scratch:
        settings, checked_against = checked_settings(suite, mutant_config(config), Path(scratch))
        job = MutantRunner(suite, settings, embedder, embedder_provenance(embedder))
        outcomes = list(runner.map(job, selected))
    return DetectionPower(outcomes=outcomes, checked_against=checked_against)
