"""Run a scenario suite against a memory system: seed, query, score, check (SPEC §3.2).

Each scenario gets a fresh memory in its own temporary directory, removed when the scenario ends
— also on an error or Ctrl-C. The unit of work is a `Shard` (a scenario, or a contiguous run of
one big scenario's queries); an `Executor` runs the shards here, on worker processes or on Ray,
and the results are assembled in scenario and query order, identical on every executor.

Both passes query the same seeded memory: the ungated pass with
min_relevance=0 (what baselines gate on) and, unless disabled, the gated pass with the system's
default gate (or an explicit value), which is report-only. A query that pins its own
`min_relevance` is asked with that gate in both passes: what the gate keeps is then measured and
asserted by the gating pass (its drops show in the ungated pass's gate counts too).

A search response is checked before it is scored (`evalkit.systems.checked`): adapter mistakes
and NaN or infinite scores stop the run with an AdapterError (SystemOutputError for output)
naming the system, the scenario and the query; each search is timed. A scenario needing a
capability the system does not declare is not run: it is reported `not_applicable` with the
missing capabilities. A system without `relevance_gate` gets no gated pass (`SuiteResult.gated`
None, `gate_skipped` True).
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from evalkit.harness.aggregation import latency_report, mean_metrics, pass_result
from evalkit.harness.checks import check_query, scenario_status
from evalkit.harness.config import RunConfig
from evalkit.harness.executors import Executor, SerialExecutor
from evalkit.harness.results import (
    LatencyReport,
    PassResult,
    QueryResult,
    ScenarioResult,
)
from evalkit.metrics import MetricSpec, judgements, parse_metrics, score_query
from evalkit.progress import progress_enabled
from evalkit.records import DEFAULT_HALF_LIFE_DAYS, reported_values
from evalkit.scenarios import QuerySpec, Scenario, Suite, stable_query_id
from evalkit.scenarios.model import ThoughtSpec
from evalkit.scenarios.requirements import required_capabilities
from evalkit.scenarios.seeding import own_ids, seed_edges, seed_thoughts
from evalkit.systems import MemorySystem
from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.checked import TimedResponse, open_checked
from evalkit.validation import shown_value


@dataclass(frozen=True)
class SuiteResult:
    """The passes of one run; `gated` is None when the gated pass was skipped (`gate_skipped`:
    because the system has no relevance gate). `not_applicable` maps each scenario that was not
    run to the capabilities it needs that the system lacks; `latency` times every search call."""

    ungated: PassResult
    gated: PassResult | None
    clock: datetime
    not_applicable: dict[str, list[str]]
    gate_skipped: bool
    latency: LatencyReport


@dataclass(frozen=True)
class Shard:
    """A unit of work: the queries `start` to `stop` (exclusive) of `scenario`, asked of one
    fresh memory seeded with the whole scenario."""

    scenario: Scenario
    start: int
    stop: int


@dataclass(frozen=True)
class ShardResult:
    """One shard's query results per pass (`gated` None when skipped), the gate values the
    system resolved for queries without their own, and the wall time of each search call (ms)."""

    ungated: list[QueryResult]
    gated: list[QueryResult] | None
    gate_values: frozenset[float]
    latencies_ms: list[float]


def plan_shards(scenarios: Sequence[Scenario], workers: int) -> list[list[Shard]]:
    """The units of a run: per scenario, its shards in query order.

    One shard per scenario; when there are fewer scenarios than `workers` (a benchmark such as
    BEIR is one big scenario), each scenario's queries are cut into `workers` contiguous shards
    of near-equal size, so every worker has work. Every shard seeds the scenario's whole memory
    once; a query's result does not depend on which other queries share its memory, because
    searching the reference store writes nothing, so the cut never changes a result. (A system
    whose searches change its state, e.g. access counts that feed ranking, must run serially.)
    With `workers` 1 every scenario is one shard."""
    pieces = workers if len(scenarios) < workers else 1
    plan = []
    for scenario in scenarios:
        count = len(scenario.queries)
        cuts = max(1, min(pieces, count))
        bounds = [count * i // cuts for i in range(cuts + 1)]
        plan.append([Shard(scenario, lo, hi) for lo, hi in itertools.pairwise(bounds)])
    return plan


@dataclass(frozen=True)
class ShardRunner:
    """Runs one shard (a picklable callable, so executors can ship it to worker processes):
    seeds a fresh memory of `system` in its own temporary directory — removed when the shard
    ends, also on an error or Ctrl-C — and asks the shard's queries in the ungated pass and, when
    `gated` (the config asks for it and the system has a relevance gate), the gated pass."""

    system: MemorySystem
    config: RunConfig
    distractors: tuple[ThoughtSpec, ...]
    clock: datetime
    gated: bool

    def __call__(self, shard: Shard) -> ShardResult:
        scenario, min_relevance = shard.scenario, self.config.min_relevance
        extra_metrics = parse_metrics(",".join(self.config.metrics)) if self.config.metrics else ()
        plain: list[QueryResult] = []
        filtered: list[QueryResult] = []
        gate_values: set[float] = set()
        latencies: list[float] = []
        with scratch_directory() as workdir, open_checked(self.system, workdir) as memory:
            memory.add_thoughts(seed_thoughts(scenario, self.distractors, self.clock))
            memory.add_edges(seed_edges(scenario))
            own = own_ids(scenario)
            for index in range(shard.start, shard.stop):
                query = scenario.queries[index]
                k = query.top_k or self.config.top_k
                options: dict[str, Any] = dict(
                    top_k=k,
                    project=query.project,
                    include_global=query.include_global,
                    recency_weight=query.recency_weight or 0.0,
                    recency_half_life_days=query.recency_half_life_days or DEFAULT_HALF_LIFE_DAYS,
                    now=self.clock,
                    query_id=stable_query_id(scenario.name, index, query.id),
                )
                asked = f"scenario {scenario.name!r}, query {index + 1} ({shown_value(query.query)})"
                pinned = query.min_relevance
                timed = memory.search(
                    query.query, asked=asked, min_relevance=0.0 if pinned is None else pinned, **options
                )
                latencies.append(timed.latency_ms)
                plain.append(_query_result(index, query, timed, k, own, extra_metrics))
                if self.gated:
                    gate = min_relevance if pinned is None else pinned
                    timed = memory.search(query.query, asked=asked, min_relevance=gate, **options)
                    latencies.append(timed.latency_ms)
                    if pinned is None:
                        gate_values.add(timed.response.min_relevance)
                    record = pinned is None and bool(timed.response.gate_candidates)
                    filtered.append(
                        _query_result(index, query, timed, k, own, extra_metrics, gate_candidates=record)
                    )
        return ShardResult(plain, filtered if self.gated else None, frozenset(gate_values), latencies)


@contextmanager
def scratch_directory() -> Iterator[Path]:
    """A new temporary directory for one memory, removed with what the system left in it on
    exit — also on an error or Ctrl-C (a removal that fails raises). An empty one (the reference
    store keeps its memory in RAM) is removed with one rmdir."""
    path = Path(tempfile.mkdtemp(prefix="evalkit-"))
    try:
        yield path
    finally:
        try:
            path.rmdir()
        except OSError:
            shutil.rmtree(path)


def run_suite(
    suite: Suite,
    system: MemorySystem,
    config: RunConfig,
    *,
    clock: datetime | None = None,
    progress: bool | None = None,
    executor: Executor | None = None,
) -> SuiteResult:
    """Run every scenario of `suite` on fresh memories of `system`.

    From `config`: `top_k` applies to queries without their own; `gated` adds the gated pass and
    `min_relevance` is its gate (None = the system's default, resolved from its responses);
    `metrics` (e.g. ndcg@10) are computed per query beside the harness metrics. `clock` resolves
    relative dates and is the "now" of every search (default: the current UTC time, truncated to
    seconds). `executor` runs the shards of the applicable scenarios (`plan_shards`; default:
    serially, in this process); results come back in scenario and query order, identical on
    every executor (latencies apart).
    """
    now = clock or datetime.now(UTC).replace(microsecond=0)
    capabilities = declared_capabilities(system)
    gate_skipped = config.gated and "relevance_gate" not in capabilities
    gated = config.gated and not gate_skipped
    not_applicable = {
        scenario.name: missing
        for scenario in suite.scenarios
        if (missing := sorted(required_capabilities(scenario) - capabilities))
    }
    applicable = [s for s in suite.scenarios if s.name not in not_applicable]
    runner = executor or SerialExecutor()
    plan = plan_shards(applicable, runner.workers)
    shard_counts = iter(len(shards) for shards in plan)
    job = ShardRunner(system, config, suite.distractors, now, gated)
    total = sum(len(s.queries) for s in suite.scenarios)
    bar = tqdm(total=total, desc="queries", unit="q", disable=not progress_enabled(progress))
    ungated: list[ScenarioResult] = []
    gated_results: list[ScenarioResult] = []
    gate_values: set[float] = set()
    latencies: dict[str, list[float]] = {}
    try:
        results = runner.map(job, [shard for shards in plan for shard in shards])
        for scenario in suite.scenarios:
            if scenario.name in not_applicable:
                ungated.append(_not_applicable(scenario))
                if gated:
                    gated_results.append(_not_applicable(scenario))
                bar.update(len(scenario.queries))
                continue
            parts = [next(results) for _ in range(next(shard_counts))]
            ungated.append(_scenario_result(scenario, [q for part in parts for q in part.ungated]))
            if gated:
                gated_results.append(
                    _scenario_result(scenario, [q for part in parts for q in part.gated or []])
                )
            gate_values.update(*(part.gate_values for part in parts))
            latencies[scenario.name] = [ms for part in parts for ms in part.latencies_ms]
            bar.update(sum(len(part.ungated) for part in parts))
    finally:
        bar.close()
    gate_value = max(gate_values) if gate_values else (config.min_relevance or 0.0)
    return SuiteResult(
        ungated=pass_result(ungated, 0.0),
        gated=pass_result(gated_results, gate_value) if gated else None,
        clock=now,
        not_applicable=not_applicable,
        gate_skipped=gate_skipped,
        latency=latency_report(latencies),
    )


def _query_result(
    index: int,
    query: QuerySpec,
    timed: TimedResponse,
    top_k: int,
    own: frozenset[str],
    extra_metrics: Sequence[MetricSpec],
    *,
    gate_candidates: bool = False,
) -> QueryResult:
    """The scored result of one search; `gate_candidates` records the rows that reached the
    gate. Validated as one nested document (pydantic-core builds the hit records)."""
    response = timed.response
    relevant = set(query.relevant)
    retrieved = list(dict.fromkeys(h.id for h in response.hits))
    metrics = score_query(retrieved, relevant).as_dict()
    if extra_metrics:
        qrels = judgements(query.relevant, query.grades)
        metrics.update({spec.label: spec.compute(retrieved, qrels) for spec in extra_metrics})
    return QueryResult.model_validate(
        {
            "index": index,
            "query": query.query,
            "query_id": query.id,
            "query_category": query.category,
            "project": query.project,
            "top_k": top_k,
            "relevant": list(query.relevant),
            "grades": dict(query.grades),
            "retrieved": retrieved,
            "hits": [{**reported_values(h), "relevant": h.id in relevant} for h in response.hits],
            "metrics": metrics,
            "check_errors": check_query(query, response.hits, own),
            "candidates": response.candidates,
            "dropped": [{"id": i, "relevant": i in relevant} for i in response.dropped_ids],
            "gate_candidates": [
                {"id": c.id, "bm25": c.bm25, "similarity": c.similarity} for c in response.gate_candidates
            ]
            if gate_candidates
            else None,
        }
    )


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


def _not_applicable(scenario: Scenario) -> ScenarioResult:
    """A scenario the system cannot be judged on: no queries, zero metrics over zero queries."""
    return ScenarioResult(
        name=scenario.name,
        category=scenario.category,
        outcome=scenario.outcome,
        status="not_applicable",
        measure_only=scenario.measure_only,
        metrics=mean_metrics([]),
        queries=[],
    )
