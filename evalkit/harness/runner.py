"""Run a scenario suite against a memory system: seed, query, score, check (SPEC §3.2).

Each scenario gets a fresh memory in its own temporary directory, removed when the scenario ends
— also on an error or Ctrl-C. Both passes query the same seeded memory: the ungated pass with
min_relevance=0 (what baselines gate on) and, unless disabled, the gated pass with the system's
default gate (or an explicit value), which is report-only. A query that pins its own
`min_relevance` is asked with that gate in both passes: what the gate keeps is then measured and
asserted by the gating pass (its drops show in the ungated pass's gate counts too).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from evalkit.harness.aggregation import mean_metrics, pass_result
from evalkit.harness.checks import check_query, scenario_status
from evalkit.harness.config import RunConfig
from evalkit.harness.results import (
    CandidateRecord,
    DroppedRecord,
    HitRecord,
    PassResult,
    QueryResult,
    ScenarioResult,
)
from evalkit.metrics import MetricSpec, parse_metrics, score_query
from evalkit.progress import progress_enabled
from evalkit.records import GateCandidate, SearchResponse
from evalkit.scenarios import QuerySpec, Scenario, Suite
from evalkit.scenarios.seeding import own_ids, seed_edges, seed_thoughts
from evalkit.systems import MemorySystem


@dataclass(frozen=True)
class SuiteResult:
    """The passes of one run; `gated` is None when the gated pass was skipped."""

    ungated: PassResult
    gated: PassResult | None
    clock: datetime


def run_suite(
    suite: Suite,
    system: MemorySystem,
    config: RunConfig,
    *,
    clock: datetime | None = None,
    progress: bool | None = None,
) -> SuiteResult:
    """Run every scenario of `suite` on fresh memories of `system`.

    From `config`: `top_k` applies to queries without their own; `gated` adds the gated pass and
    `min_relevance` is its gate (None = the system's default, resolved from its responses);
    `metrics` (e.g. ndcg@10) are computed per query beside the harness metrics. `clock` resolves
    relative dates and is the "now" of every search (default: the current UTC time, truncated to
    seconds).
    """
    now = clock or datetime.now(UTC).replace(microsecond=0)
    top_k, gated, min_relevance = config.top_k, config.gated, config.min_relevance
    extra_metrics = parse_metrics(",".join(config.metrics)) if config.metrics else ()
    total = sum(len(s.queries) for s in suite.scenarios)
    bar = tqdm(total=total, desc="queries", unit="q", disable=not progress_enabled(progress))
    ungated: list[ScenarioResult] = []
    gated_results: list[ScenarioResult] = []
    gate_values: set[float] = set()
    try:
        for scenario in suite.scenarios:
            with (
                tempfile.TemporaryDirectory(prefix="evalkit-") as workdir,
                system.open(Path(workdir)) as memory,
            ):
                memory.add_thoughts(seed_thoughts(scenario, suite.distractors, now))
                memory.add_edges(seed_edges(scenario))
                own = own_ids(scenario)
                plain: list[QueryResult] = []
                filtered: list[QueryResult] = []
                for index, query in enumerate(scenario.queries):
                    k = query.top_k or top_k
                    options: dict[str, Any] = dict(
                        top_k=k,
                        project=query.project,
                        include_global=query.include_global,
                        recency_weight=query.recency_weight or 0.0,
                        recency_half_life_days=query.recency_half_life_days or 30.0,
                        now=now,
                    )
                    pinned = query.min_relevance
                    response = memory.search(
                        query.query, min_relevance=0.0 if pinned is None else pinned, **options
                    )
                    plain.append(_query_result(index, query, response, k, own, extra_metrics))
                    if gated:
                        response = memory.search(
                            query.query, min_relevance=min_relevance if pinned is None else pinned, **options
                        )
                        if pinned is None:
                            gate_values.add(response.min_relevance)
                        result = _query_result(index, query, response, k, own, extra_metrics)
                        if pinned is None and response.gate_candidates:
                            result = result.model_copy(
                                update={"gate_candidates": _candidates(response.gate_candidates)}
                            )
                        filtered.append(result)
                    bar.update()
            ungated.append(_scenario_result(scenario, plain))
            if gated:
                gated_results.append(_scenario_result(scenario, filtered))
    finally:
        bar.close()
    gate_value = max(gate_values) if gate_values else (min_relevance or 0.0)
    return SuiteResult(
        ungated=pass_result(ungated, 0.0),
        gated=pass_result(gated_results, gate_value) if gated else None,
        clock=now,
    )


def _query_result(
    index: int,
    query: QuerySpec,
    response: SearchResponse,
    top_k: int,
    own: frozenset[str],
    extra_metrics: Sequence[MetricSpec],
) -> QueryResult:
    relevant = set(query.relevant)
    retrieved = list(dict.fromkeys(h.id for h in response.hits))
    metrics = asdict(score_query(retrieved, relevant))
    if extra_metrics:
        qrels = {**dict.fromkeys(query.relevant, 1), **query.grades}
        metrics.update({spec.label: spec.compute(retrieved, qrels) for spec in extra_metrics})
    return QueryResult(
        index=index,
        query=query.query,
        query_id=query.id,
        query_category=query.category,
        project=query.project,
        top_k=top_k,
        relevant=list(query.relevant),
        retrieved=retrieved,
        hits=[
            HitRecord(
                id=h.id,
                rank=h.rank,
                relevant=h.id in relevant,
                similarity=h.similarity,
                relevance=h.relevance,
                low_confidence=h.low_confidence,
                match_source=list(h.match_source),
                standing=h.standing,
                superseded_by=list(h.superseded_by),
                contradicted_by=list(h.contradicted_by),
                bm25_score=h.bm25_score,
                rrf_score=h.rrf_score,
                recency_score=h.recency_score,
                final_score=h.final_score,
            )
            for h in response.hits
        ],
        metrics=metrics,
        check_errors=check_query(query, response.hits, own),
        candidates=response.candidates,
        dropped=[DroppedRecord(id=i, relevant=i in relevant) for i in response.dropped_ids],
    )


def _candidates(rows: Sequence[GateCandidate]) -> list[CandidateRecord]:
    return [CandidateRecord(id=c.id, bm25=c.bm25, similarity=c.similarity) for c in rows]


def _scenario_result(scenario: Scenario, queries: list[QueryResult]) -> ScenarioResult:
    return ScenarioResult(
        name=scenario.name,
        category=scenario.category,
        outcome=scenario.outcome,
        status=scenario_status(scenario.outcome, any(q.check_errors for q in queries)),  # type: ignore[arg-type]
        measure_only=scenario.measure_only,
        metrics=mean_metrics(queries),
        queries=queries,
    )
