"""The runner end to end on small hand-written suites: passes, statuses, temp-dir hygiene."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalkit import load_run, run_eval
from evalkit.embedders import HashingEmbedder
from evalkit.embedders.factory import RunEmbedder
from evalkit.errors import MemorySystemError
from evalkit.harness import runner
from evalkit.harness.config import RunConfig
from evalkit.harness.runner import (
    MEASUREMENT_PASS,
    PassSpec,
    Shard,
    ShardRunner,
    SuiteResult,
    pass_plan,
    run_suite,
)
from evalkit.harness.sweep import regate_pass
from evalkit.scenarios import QuerySpec, Scenario, Suite, ThoughtSpec, load_suite
from evalkit.systems import MemorySystem, ReferenceSystem
from evalkit.systems.base import NO_WORKDIR, OpenContext
from tests.shared import DATASETS

CLOCK = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)

THOUGHTS = [
    ThoughtSpec(id="port", content="The billing API listens on port 8443 behind the gateway"),
    ThoughtSpec(id="db", content="Billing stores invoices in the Postgres cluster pg-billing-2"),
    ThoughtSpec(id="owner", content="Team Atlas owns the billing service and its on-call rota"),
    ThoughtSpec(id="cat", content="The office cat is called Miso and sleeps on the radiator"),
    ThoughtSpec(id="lunch", content="Friday lunch is usually ramen from the place on Elm Street"),
    ThoughtSpec(id="bike", content="Bike racks are in the basement next to the showers"),
]


def run(suite: Suite, system: MemorySystem, *, clock: datetime, **config: object) -> SuiteResult:
    """`run_suite` with a RunConfig made of `config` (top_k, gated, min_relevance, ...)."""
    return run_suite(suite, system, RunConfig(**config), clock=clock)


def suite_of(*scenarios: Scenario) -> Suite:
    return Suite(scenarios=scenarios, sources={}, distractors=(), digest="test")


def scenario(name: str, queries: list[QuerySpec], **extra: object) -> Scenario:
    return Scenario(
        name=name, category="explicit-fact", thoughts=THOUGHTS, distractors=False, queries=queries, **extra
    )


def test_metrics_and_hits_of_a_simple_query():
    result = run(
        suite_of(scenario("facts", [QuerySpec(query="billing API port", relevant=["port"])])),
        ReferenceSystem(),
        top_k=3,
        clock=CLOCK,
    )
    q = result.ungated.scenarios[0].queries[0]
    assert q.retrieved[0] == "port"
    assert q.hits[0].relevant is True
    assert q.hits[0].match_source == ["vector", "bm25"]
    assert len(q.retrieved) == 3
    assert q.metrics == {"recall": 1.0, "precision": pytest.approx(1 / 3), "mrr": 1.0, "hit_rate": 1.0}
    assert result.ungated.scenarios[0].status == "pass"
    assert result.ungated.relevance_gate.dropped_rows == 0


def test_gated_pass_resolves_the_service_default_and_records_dropped_ids():
    result = run(
        suite_of(scenario("facts", [QuerySpec(query="billing API port", relevant=["port"])])),
        ReferenceSystem(),
        top_k=3,
        clock=CLOCK,
    )
    assert result.gated is not None
    gate = result.gated.relevance_gate
    assert gate.min_relevance == 0.4
    q = result.gated.scenarios[0].queries[0]
    # bm25 matches "billing"/"API"/"port": port, db, owner survive; vector-only rows are dropped
    assert q.retrieved == ["port", "db", "owner"]
    assert {d.id for d in q.dropped} == {"cat", "lunch", "bike"}
    assert all(not d.relevant for d in q.dropped)
    assert gate.candidates == 6 and gate.dropped_rows == 3 and gate.queries_with_drops == 1


def test_explicit_gate_value_and_no_gated_pass():
    s = suite_of(scenario("facts", [QuerySpec(query="billing API port", relevant=["port"])]))
    assert (
        run(s, ReferenceSystem(), clock=CLOCK, min_relevance=0.75).gated.relevance_gate.min_relevance == 0.75
    )
    assert run(s, ReferenceSystem(), clock=CLOCK, gated=False).gated is None


def test_the_plan_is_the_measurement_then_the_gated_pass_when_asked_and_possible():
    gated = PassSpec("gated", "report-only", None)
    assert pass_plan(RunConfig(), frozenset({"relevance_gate"})) == (MEASUREMENT_PASS, gated)
    assert pass_plan(RunConfig(min_relevance=0.75), frozenset({"relevance_gate"}))[1].min_relevance == 0.75
    assert pass_plan(RunConfig(gated=False), frozenset({"relevance_gate"})) == (MEASUREMENT_PASS,)
    assert pass_plan(RunConfig(), frozenset()) == (MEASUREMENT_PASS,)
    assert (MEASUREMENT_PASS.name, MEASUREMENT_PASS.min_relevance, MEASUREMENT_PASS.relevance_gated) == (
        "ungated",
        0.0,
        False,
    )


def test_a_third_pass_is_one_more_spec_of_the_plan():
    one = scenario("facts", [QuerySpec(query="billing API port", relevant=["port"])])
    plan = (
        *pass_plan(RunConfig(top_k=3), frozenset({"relevance_gate"})),
        PassSpec("strict", "re-gated", 0.75),
    )
    shard = ShardRunner(ReferenceSystem(), RunConfig(top_k=3), (), CLOCK, plan, RunEmbedder())(
        Shard(one, 0, 1)
    )
    assert len(shard.queries) == 3 and len(shard.latencies_ms) == 3  # one search per pass
    assert shard.gate_values == (frozenset(), frozenset({0.4}), frozenset({0.75}))
    direct = run(suite_of(one), ReferenceSystem(), clock=CLOCK, top_k=3, min_relevance=0.75).gated
    assert direct is not None
    assert shard.queries[2] == direct.scenarios[0].queries
    assert (
        shard.queries[0]
        == run(suite_of(one), ReferenceSystem(), clock=CLOCK, top_k=3).ungated.scenarios[0].queries
    )


def test_a_third_pass_in_the_plan_is_saved_read_back_and_equals_the_sweep(monkeypatch, tmp_path):
    planned = runner.pass_plan
    third = PassSpec("gated@0.6", "re-gated", 0.6)
    monkeypatch.setattr(
        runner, "pass_plan", lambda config, capabilities: (*planned(config, capabilities), third)
    )
    run = run_eval(datasets=DATASETS, thresholds=None)
    assert [p.name for p in run.result.passes] == ["ungated", "gated", "gated@0.6"]
    assert load_run(run.save(tmp_path / "r.json")).result == run.result
    asked, regated = run.result.pass_named("gated@0.6"), regate_pass(run.result, 0.6)
    assert asked is not None
    assert (asked.overall, asked.categories, asked.relevance_gate) == (
        regated.overall,
        regated.categories,
        regated.relevance_gate,
    )
    assert list(run.overall["pass"]) == ["ungated", "gated", "gated@0.6"]


def test_failing_assertion_makes_the_scenario_fail_and_xfail_turns_it_into_xfail():
    forbid = [QuerySpec(query="billing API port", relevant=["port"], forbid=["db"])]
    failing = run(suite_of(scenario("f", forbid)), ReferenceSystem(), clock=CLOCK, gated=False)
    assert failing.ungated.scenarios[0].status == "fail"
    assert failing.ungated.scenarios[0].queries[0].check_errors == ["forbid: 'db' was retrieved at rank 2"]
    expected = run(
        suite_of(scenario("x", forbid, outcome="xfail")), ReferenceSystem(), clock=CLOCK, gated=False
    )
    assert expected.ungated.scenarios[0].status == "xfail"
    clean = [QuerySpec(query="billing API port", relevant=["port"], forbid=["cat"])]
    passing = run(suite_of(scenario("x", clean, outcome="xfail")), ReferenceSystem(), clock=CLOCK, top_k=2)
    assert passing.ungated.scenarios[0].status == "xpass"


def test_query_top_k_and_project_override_the_run():
    scoped = [
        ThoughtSpec(id="a1", content="deploy script lives in ops/deploy.sh", project="alpha"),
        *THOUGHTS,
    ]
    s = Scenario(
        name="scoped",
        category="project-scope",
        thoughts=scoped,
        distractors=False,
        queries=[QuerySpec(query="deploy script", relevant=["a1"], project="alpha", top_k=1)],
    )
    q = run(suite_of(s), ReferenceSystem(), clock=CLOCK, gated=False).ungated.scenarios[0].queries[0]
    assert q.top_k == 1 and q.retrieved == ["a1"] and q.project == "alpha"


class _Exploding(MemorySystem):
    """A memory system whose search raises: the runner must still remove its temp dirs, with
    whatever the system wrote there when `litter` (files in a subfolder)."""

    name = "exploding"

    def __init__(self, error: BaseException, litter: bool = False) -> None:
        self.error = error
        self.litter = litter
        self.workdirs: list[Path] = []
        self.inner = ReferenceSystem(HashingEmbedder())

    def describe(self) -> dict[str, object]:
        return {"system": self.name}

    @contextmanager
    def open(self, context: OpenContext):
        workdir = context.workdir
        self.workdirs.append(workdir)
        if self.litter:
            (workdir / "index").mkdir()
            (workdir / "index" / "segment.bin").write_bytes(b"\0" * 64)
        with self.inner.open(context) as memory:
            memory.search = self._raise  # type: ignore[method-assign]
            yield memory

    def _raise(self, *args: object, **kwargs: object) -> None:
        raise self.error


@pytest.mark.parametrize("litter", [False, True], ids=["empty", "files"])
@pytest.mark.parametrize(
    ("error", "raised"), [(RuntimeError("boom"), MemorySystemError), (KeyboardInterrupt(), KeyboardInterrupt)]
)
def test_temp_stores_are_removed_on_error_and_ctrl_c(error, raised, litter):
    system = _Exploding(error, litter)
    with pytest.raises(raised) as caught:
        run(suite_of(scenario("f", [QuerySpec(query="port", relevant=["port"])])), system, clock=CLOCK)
    assert caught.value is error or caught.value.__cause__ is error
    assert len(system.workdirs) == 1
    assert not system.workdirs[0].exists()
    assert Path(tempfile.gettempdir()) == system.workdirs[0].parent


class _Recording(MemorySystem):
    """The reference store, recording the workdir each memory is opened with; it declares
    `needs_workdir` as given (None: declares nothing)."""

    name = "recording"

    def __init__(self, needs: bool | None) -> None:
        if needs is not None:
            self.needs_workdir = needs
        self.workdirs: list[tuple[Path, bool]] = []
        self.inner = ReferenceSystem(HashingEmbedder())

    def describe(self) -> dict[str, object]:
        return {"system": self.name}

    @contextmanager
    def open(self, context: OpenContext):
        self.workdirs.append((context.workdir, context.workdir.is_dir()))
        with self.inner.open(context) as memory:
            yield memory


@pytest.mark.parametrize("needs", [None, True, False], ids=["undeclared", "needs", "needs-not"])
def test_a_system_declaring_needs_workdir_false_gets_no_directory_the_others_a_fresh_one(needs):
    system = _Recording(needs)
    queries = [QuerySpec(query="port", relevant=["port"])]
    run(suite_of(scenario("f", queries), scenario("g", queries)), system, clock=CLOCK)
    if needs is False:
        assert system.workdirs == [(NO_WORKDIR, False)] * 2
        assert not NO_WORKDIR.is_dir()
    else:
        assert [made for _, made in system.workdirs] == [True, True]
        assert len({path for path, _ in system.workdirs}) == 2  # one per scenario
        assert not any(path.exists() for path, _ in system.workdirs)


def test_builtin_suite_every_counted_scenario_passes_contradiction_is_xfail_and_gate_drops_rows():
    result = run(load_suite(DATASETS), ReferenceSystem(), clock=CLOCK)
    statuses = {s.name: s.status for s in result.ungated.scenarios}
    assert statuses.pop("contradiction") == "xfail"
    assert set(statuses.values()) == {"pass"}, statuses
    assert result.gated is not None and result.gated.relevance_gate.dropped_rows > 0


def test_two_runs_on_the_same_clock_give_identical_results():
    suite = load_suite(DATASETS)
    first = run(suite, ReferenceSystem(), clock=CLOCK)
    second = run(suite, ReferenceSystem(), clock=CLOCK)
    assert first.ungated == second.ungated
    assert first.gated == second.gated
