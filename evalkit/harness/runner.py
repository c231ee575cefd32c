"""Run a scenario suite against a memory system: seed, query, score, check (SPEC §3.2).

Each scenario gets a fresh memory in its own temporary directory, removed when the scenario ends
— also on an error or Ctrl-C. The unit of work is a `Shard` (a scenario, or a contiguous run of
one big scenario's queries); an `Executor` runs the shards here, on worker processes or on Ray,
and the results are assembled in scenario and query order, identical on every executor.

A scenario's steps (`StepSpec`: delete, update, add) are applied between its queries, in order:
each query is asked, in every pass, of the memory as the steps before it left it.

Every pass of the run's plan (`pass_plan`: a tuple of `PassSpec`, so another pass is data) queries
the same seeded memory, each query once per pass in plan order: the measurement pass ("ungated")
with min_relevance=0 (what baselines gate on) and, unless disabled, the gated pass with the
system's default gate (or an explicit value), which is report-only. A query that pins its own
`min_relevance` is asked with that gate in every pass: what the gate keeps is then measured and
asserted by the measurement pass (its drops show in the measurement pass's gate counts too).

A search response is checked before it is scored (`evalkit.systems.checked`): adapter mistakes
and NaN or infinite scores stop the run with an AdapterError (SystemOutputError for output)
naming the system, the scenario and the query; each search is timed. Whatever the system raises,
in any of its methods, stops the run with a MemorySystemError naming the system, the method, the
scenario and the query, after the scenario's temporary directory is removed. A scenario needing a
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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from evalkit.harness.aggregation import latency_report, mean_metrics, pass_result
from evalkit.harness.behaviour import MemoryState, leaked_ids, query_evidence, with_query_sensitivity
from evalkit.harness.checks import check_query, scenario_status
from evalkit.harness.config import RunConfig
from evalkit.harness.executors import Executor, for_system
from evalkit.harness.floors import query_floor_errors, scenario_floor_errors
from evalkit.harness.readiness import time_to_searchable
from evalkit.harness.results import (
    GATED,
    MEASUREMENT,
    LatencyReport,
    PassResult,
    PassRole,
    QueryResult,
    ScenarioResult,
)
from evalkit.harness.ties import tie_record
from evalkit.metrics import MetricSpec, judgements, parse_metrics, score_query
from evalkit.metrics.registry import QueryEvidence, score_behaviour
from evalkit.progress import progress_enabled
from evalkit.records import DEFAULT_HALF_LIFE_DAYS, reported_values
from evalkit.scenarios import QuerySpec, Scenario, Suite, stable_query_id
from evalkit.scenarios.model import StepSpec, ThoughtSpec
from evalkit.scenarios.requirements import required_capabilities
from evalkit.scenarios.seeding import edges_of, own_ids, seed_edges, seed_thoughts, thoughts_of
from evalkit.systems import MemorySystem
from evalkit.systems.base import NO_WORKDIR, OpenContext, SearchOptions
from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.checked import CheckedMemory, TimedResponse, call_system, open_checked, system_name
from evalkit.systems.resolve import checked_system
from evalkit.validation import shown_value

if TYPE_CHECKING:
    from evalkit.embedders.factory import RunEmbedder


@dataclass(frozen=True)
class PassSpec:
    """One pass of a run's plan: the runner asks every query once per spec, in plan order, of the
    same seeded memory. `min_relevance` is the gate asked of queries that pin none (None = the
    system's default); a query that pins its own is asked with it in every pass."""

    name: str
    role: PassRole
    min_relevance: float | None

    @property
    def relevance_gated(self) -> bool:
        """A pass under the relevance gate (every role but the measurement): it reports the gate
        the system resolved (the largest over the queries that pin none; `min_relevance`, or 0,
        when none was asked) and records, per such query, the rows that reached the gate (for the
        sweep). The measurement pass reports gate 0 and records no candidates."""
        return self.role != "measurement"


MEASUREMENT_PASS = PassSpec(MEASUREMENT, "measurement", 0.0)
"""The measurement pass: min_relevance 0, what baselines and regressions use."""


def pass_plan(config: RunConfig, capabilities: frozenset[str]) -> tuple[PassSpec, ...]:
    """The passes `config` asks of a system declaring `capabilities`: the measurement, then —
    when `config.gated` and the system has a `relevance_gate` — the report-only gated pass at
    `config.min_relevance` (None = the system's default). `evaluate` makes the gated pass
    own-baseline afterwards when a gated baseline applies."""
    gated = config.gated and "relevance_gate" in capabilities
    return (MEASUREMENT_PASS, *([PassSpec(GATED, "report-only", config.min_relevance)] if gated else []))


@dataclass(frozen=True)
class SuiteResult:
    """The passes of one run, in plan order (the measurement first); the gated pass is absent
    when it was not asked for or skipped (`gate_skipped`: because the system has no relevance
    gate). `not_applicable` maps each scenario that was not run to the capabilities it needs that
    the system lacks; `latency` times every search call."""

    passes: tuple[PassResult, ...]
    clock: datetime
    not_applicable: dict[str, list[str]]
    gate_skipped: bool
    latency: LatencyReport

    @property
    def measurement(self) -> PassResult:
        """The measurement pass (named "ungated")."""
        return self.passes[0]

    @property
    def ungated(self) -> PassResult:
        """The measurement pass, by its name (the same as `measurement`)."""
        return self.passes[0]

    @property
    def gated(self) -> PassResult | None:
        """The relevance-gated pass, or None when it did not run."""
        return next((p for p in self.passes if p.relevance_gated), None)


@dataclass(frozen=True)
class Shard:
    """A unit of work: the queries `start` to `stop` (exclusive) of `scenario`, asked of one
    fresh memory seeded with the whole scenario."""

    scenario: Scenario
    start: int
    stop: int


@dataclass(frozen=True)
class ShardResult:
    """One shard's results, per pass of the plan (in plan order): its query results and the gate
    values the system resolved for its queries without their own (relevance-gated passes only);
    and the wall time of each search call (ms, in call order)."""

    queries: tuple[list[QueryResult], ...]
    gate_values: tuple[frozenset[float], ...]
    latencies_ms: list[float]
    searchable_ms: float | None = None


def plan_shards(scenarios: Sequence[Scenario], workers: int) -> list[list[Shard]]:
    """The units of a run: per scenario, its shards in query order.

    One shard per scenario; when there are fewer scenarios than `workers` (a benchmark such as
    BEIR is one big scenario), each scenario's queries are cut into `workers` contiguous shards
    of near-equal size, so every worker has work. Every shard seeds the scenario's whole memory
    once (and applies the scenario's steps up to its last query, asking only its own queries); a
    query's result does not depend on which other queries share its memory, because searching the
    reference store writes nothing, so the cut never changes a result. (A system
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
    seeds a fresh memory of `system`, opened with the run's `embedder` in its own temporary
    directory — removed when the shard ends, also on an error or Ctrl-C — and asks each of the
    shard's queries once per pass of `plan`, in plan order."""

    system: MemorySystem
    config: RunConfig
    distractors: tuple[ThoughtSpec, ...]
    clock: datetime
    plan: tuple[PassSpec, ...]
    embedder: RunEmbedder
    behaviour: bool = False

    def __call__(self, shard: Shard) -> ShardResult:
        scenario = shard.scenario
        extra_metrics = parse_metrics(",".join(self.config.metrics)) if self.config.metrics else ()
        results: tuple[list[QueryResult], ...] = tuple([] for _ in self.plan)
        gate_values: tuple[set[float], ...] = tuple(set() for _ in self.plan)
        latencies: list[float] = []
        with (
            scratch_directory(self.system) as workdir,
            open_checked(self.system, OpenContext(workdir, scenario.name, self.embedder)) as memory,
        ):
            seeded, edges = seed_thoughts(scenario, self.distractors, self.clock), seed_edges(scenario)
            memory.add_thoughts(seeded)
            memory.add_edges(edges)
            searchable = None
            if self.system.indexes_later and seeded:
                searchable = time_to_searchable(memory, seeded[-1], self.clock)
            state = MemoryState(seeded, edges) if self.behaviour else None
            own = own_ids(scenario)
            asks: list[tuple[int, QuerySpec, int, list[QueryResult], set[float], bool]] = []
            searches: list[tuple[str, str, SearchOptions]] = []

            def flush() -> None:
                """Ask the searches gathered so far (one call for a memory with search_many), then
                score them."""
                for timed, (index, query, k, queries, resolved, free) in zip(
                    memory.search_all(searches), asks, strict=True
                ):
                    latencies.append(timed.latency_ms)
                    if free:
                        resolved.add(timed.response.min_relevance)
                    record = free and bool(timed.response.gate_candidates)
                    evidence = None if state is None else query_evidence(state, query, timed.response.hits, k)
                    queries.append(
                        _query_result(
                            index,
                            query,
                            timed,
                            k,
                            own,
                            extra_metrics,
                            gate_candidates=record,
                            evidence=evidence,
                        )
                    )
                asks.clear()
                searches.clear()

            # a shard that starts later replays the steps before its first query (not its queries)
            for index in range(0 if scenario.steps else shard.start, shard.stop):
                steps = scenario.steps_before(index)
                if steps:  # the searches before a step see the memory before it
                    flush()
                    for step in steps:
                        apply_step(memory, step, self.clock)
                        if state is not None:
                            state.apply(step)
                if index < shard.start:
                    continue
                query = scenario.queries[index]
                k = query.top_k or self.config.top_k
                options = SearchOptions(
                    top_k=k,
                    now=self.clock,
                    project=query.project,
                    include_global=query.include_global,
                    recency_weight=query.recency_weight or 0.0,
                    recency_half_life_days=query.recency_half_life_days or DEFAULT_HALF_LIFE_DAYS,
                    query_id=stable_query_id(scenario.name, index, query.id),
                )
                asked = f"query {index + 1} ({shown_value(query.query)})"
                pinned = query.min_relevance
                for spec, queries, resolved in zip(self.plan, results, gate_values, strict=True):
                    gate = spec.min_relevance if pinned is None else pinned
                    searches.append((query.query, asked, replace(options, min_relevance=gate)))
                    asks.append((index, query, k, queries, resolved, spec.relevance_gated and pinned is None))
            # every search between two steps in one go (the whole shard without steps)
            flush()
        return ShardResult(results, tuple(frozenset(v) for v in gate_values), latencies, searchable)


def apply_step(memory: CheckedMemory, step: StepSpec, clock: datetime) -> None:
    """Apply one operation step to `memory`: delete its ids, update its thought, or add its
    thoughts (dated against `clock`) then its edges."""
    if step.delete is not None:
        memory.delete_thoughts(step.delete)
    elif step.update is not None:
        memory.update_thought(step.update.id, content=step.update.content, status=step.update.status)
    elif step.add is not None:
        if step.add.thoughts:
            memory.add_thoughts(thoughts_of(step.add.thoughts, clock))
        if step.add.edges:
            memory.add_edges(edges_of(step.add.edges))


@contextmanager
def scratch_directory(system: MemorySystem) -> Iterator[Path]:
    """A new temporary directory for one memory of `system`, removed with what the system left
    in it on exit — also on an error or Ctrl-C (a removal that fails raises); an empty one is
    removed with one rmdir. For a system declaring `needs_workdir = False` (an HTTP system, an MCP
    system with one server for the run and no `{workdir}` in its templates: see
    `evalkit.systems.base`) no directory is made: `NO_WORKDIR`. The in-process reference
    store keeps its directory (see `ReferenceSystem.needs_workdir`)."""
    if not system.needs_workdir:
        yield NO_WORKDIR
        return
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

    From `config`: `top_k` applies to queries without their own; `gated` adds the gated pass to the
    plan (`pass_plan`) and `min_relevance` is its gate (None = the system's default, resolved from
    its responses); `metrics` (e.g. ndcg@10) are computed per query beside the harness metrics.
    `clock` resolves relative dates and is the "now" of every search (default: the current UTC time,
    truncated to seconds). `executor` runs the shards of the applicable scenarios (`plan_shards`;
    default: serially, in this process); for a system that waits on a service (HTTP, MCP:
    `evalkit.systems.base.in_flight`) its worker count becomes that many scenarios in flight on
    threads of this process, the system's `in_flight` by default (`executors.for_system`); results
    come back in scenario and query order, identical on every executor (latencies apart). A system
    with a `settle()` method (the HTTP and MCP adapters: their last scenario's drop is sent without
    waiting; see `evalkit.systems.base`) has it called once every shard is done, so that what it
    left in flight is answered, or its error raised, within the run.
    """
    checked_system(system, "the system is")
    now = clock or datetime.now(UTC).replace(microsecond=0)
    capabilities = declared_capabilities(system)
    plan = pass_plan(config, capabilities)
    not_applicable = {
        scenario.name: missing
        for scenario in suite.scenarios
        if (missing := sorted(required_capabilities(scenario) - capabilities))
    }
    applicable = [s for s in suite.scenarios if s.name not in not_applicable]
    runner = for_system(executor, system.in_flight, len(applicable))
    shards = plan_shards(applicable, runner.workers)
    shard_counts = iter(len(pieces) for pieces in shards)
    from evalkit.embedders.factory import RunEmbedder  # the model's stack only where a run builds one

    embedder = RunEmbedder(
        config.mode, model=config.model, cache_path=config.embedding_cache, use_cache=config.use_cache
    )
    job = ShardRunner(system, config, suite.distractors, now, plan, embedder, suite.behaviour_metrics)
    total = sum(len(s.queries) for s in suite.scenarios)
    bar = tqdm(total=total, desc="queries", unit="q", disable=not progress_enabled(progress))
    scenarios: tuple[list[ScenarioResult], ...] = tuple([] for _ in plan)
    gate_values: tuple[set[float], ...] = tuple(set() for _ in plan)
    latencies: dict[str, list[float]] = {}
    searchable: list[float] = []
    try:
        results = runner.map(job, [shard for pieces in shards for shard in pieces])
        for scenario in suite.scenarios:
            if scenario.name in not_applicable:
                for done in scenarios:
                    done.append(_not_applicable(scenario))
                bar.update(len(scenario.queries))
                continue
            parts = [next(results) for _ in range(next(shard_counts))]
            for i, done in enumerate(scenarios):
                asked = [q for part in parts for q in part.queries[i]]
                done.append(_scenario_result(scenario, asked, suite.behaviour_metrics))
                gate_values[i].update(*(part.gate_values[i] for part in parts))
            latencies[scenario.name] = [ms for part in parts for ms in part.latencies_ms]
            searchable += [part.searchable_ms for part in parts if part.searchable_ms is not None]
            bar.update(sum(len(part.queries[0]) for part in parts))
        # what the system sent without waiting (an MCP drop) is answered, or fails, here
        call_system(system_name(system), "settle", system.settle, ())
    finally:
        bar.close()
    return SuiteResult(
        passes=tuple(
            pass_result(spec.name, spec.role, done, max(values) if values else (spec.min_relevance or 0.0))
            for spec, done, values in zip(plan, scenarios, gate_values, strict=True)
        ),
        clock=now,
        not_applicable=not_applicable,
        gate_skipped=config.gated and "relevance_gate" not in capabilities,
        latency=latency_report(latencies, searchable),
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
    evidence: QueryEvidence | None = None,
) -> QueryResult:
    """The scored result of one search; `gate_candidates` records the rows that reached the
    gate; `evidence` (suites asking for behaviour metrics) is scored into `behaviour`. Validated
    as one nested document (pydantic-core builds the hit records)."""
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
            "check_errors": check_query(query, response.hits, own) + query_floor_errors(query, metrics),
            "candidates": response.candidates,
            "dropped": [{"id": i, "relevant": i in relevant} for i in response.dropped_ids],
            "gate_candidates": [
                {"id": c.id, "bm25": c.bm25, "similarity": c.similarity} for c in response.gate_candidates
            ]
            if gate_candidates
            else None,
            "ties": tie_record(response.hits, relevant, response.cut_tied),
            "behaviour": score_behaviour(evidence) if evidence is not None else {},
            "leaked": leaked_ids(evidence) if evidence is not None else {},
        }
    )


def _scenario_result(
    scenario: Scenario, queries: list[QueryResult], behaviour: bool = False
) -> ScenarioResult:
    """A scenario's result: its means, its floors checked on them, its status from every error;
    with `behaviour`, its queries' query sensitivity scored first."""
    if behaviour:
        queries = with_query_sensitivity(queries)
    means = mean_metrics(queries)
    floor_errors = scenario_floor_errors(scenario, means.metrics, means.queries)
    failed = bool(floor_errors) or any(q.check_errors for q in queries)
    return ScenarioResult(
        name=scenario.name,
        category=scenario.category,
        outcome=scenario.outcome,
        status=scenario_status(scenario.outcome, failed),  # type: ignore[arg-type]
        measure_only=scenario.measure_only,
        metrics=means,
        queries=queries,
        floor_errors=floor_errors,
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
