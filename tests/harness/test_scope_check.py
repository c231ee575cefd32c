"""Like with like (issue 34 item 2): a baseline records, per scope, the scenarios it averaged; a
later run is compared in every scope, overall included, over the same applicable scenarios, and a
scope whose scenarios changed is named, never passed silently."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evalkit import SearchOptions, SearchResponse, run_eval
from evalkit.errors import UsageError
from evalkit.harness.aggregation import mean_metrics
from evalkit.harness.baselines import baseline_entry, record_baseline
from evalkit.harness.config import RunConfig
from evalkit.harness.evaluate import baseline_check
from evalkit.harness.regressions import assertion_regressions, scope_check
from evalkit.harness.results import PassResult, ScenarioResult
from evalkit.harness.thresholds_file import (
    BaselineSystem,
    ModeEntry,
    SuiteFingerprint,
    load_thresholds,
)
from evalkit.harness.verdict import NOT_COMPARED
from evalkit.metrics import HARNESS_METRICS
from evalkit.scenarios import Suite
from evalkit.systems.base import OpenContext
from evalkit.systems.capabilities import ALL_CAPABILITIES
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS, cli, cli_record
from tests.systems_fixtures import LimitedSystem, Wrapping

SUITE = Suite(scenarios=(), sources={}, distractors=(), digest="0" * 64)
IDENTITY = (BaselineSystem(name="reference"), SuiteFingerprint(digest="0" * 64))


def _not_applicable(one: ScenarioResult) -> ScenarioResult:
    """`one` as the runner reports a scenario the system lacks a capability for."""
    return one.model_copy(update={"status": "not_applicable", "queries": [], "metrics": mean_metrics([])})


def _verdict(run: PassResult, entry: ModeEntry | None, *, require: bool = False) -> tuple[str, list[str]]:
    """(verdict value, regression kinds) of `run` checked against `entry` (None: the file has none)."""
    config = RunConfig(thresholds=Path("t.json"), require_baseline=require)
    entries = {} if entry is None else {"deterministic@5": entry}
    notes, found, _ = baseline_check(SUITE, config, run, entries, IDENTITY)
    result = a_run(run, regressions=assertion_regressions(run) + found, notes=notes)
    return result.outcome.value, [r.kind for r in found]


def _with_na(*, recall_fact: float = 1.0, na: bool = True) -> PassResult:
    return a_pass(
        scenario("fact", "explicit-fact", [query(0, recall=recall_fact), query(1, recall=recall_fact)]),
        (_not_applicable if na else lambda s: s)(scenario("fact-gated", "explicit-fact", [query(0)])),
        scenario("hop", "multi-hop", [query(0, recall=0.5)]),
    )


def test_a_baseline_records_the_scenarios_of_each_scope():
    entry = baseline_entry(_with_na(), top_k=5)
    assert entry.baseline.overall.scenarios == ["fact", "hop"]
    assert entry.baseline.categories["explicit-fact"].scenarios == ["fact"]
    assert entry.thresholds.overall.model_dump().keys() >= set(HARNESS_METRICS)
    assert "scenarios" not in entry.thresholds.overall.model_dump()


def test_a_baseline_recorded_with_the_same_scenarios_not_applicable_is_compared_in_every_scope():
    entry = baseline_entry(_with_na(), top_k=5)
    check = scope_check(_with_na(recall_fact=0.0), entry)
    assert [scope for scope, _ in check.compared] == [None, "explicit-fact", "multi-hop"]
    assert check.not_comparable == {}
    value, kinds = _verdict(_with_na(recall_fact=0.0), entry)
    assert (value, kinds) == ("FAIL", ["metric"] * len(kinds)) and len(kinds) >= 2


def test_a_scope_whose_applicable_scenarios_changed_is_named_and_never_passes():
    entry = baseline_entry(_with_na(na=False), top_k=5)  # recorded with fact-gated applicable
    check = scope_check(_with_na(), entry)
    assert [scope for scope, _ in check.compared] == ["multi-hop"]
    assert check.not_comparable[None] == "baseline 3 scenarios, this run 2; missing now: fact-gated"
    notes, found, compared = baseline_check(SUITE, RunConfig(thresholds=Path("t.json")), _with_na(), {
        "deterministic@5": entry}, IDENTITY)  # fmt: skip
    assert found == [] and compared is not None and compared.overall is None
    (note,) = notes
    assert "2 scopes of the baseline for deterministic at top_k 5 in t.json not comparable" in note
    assert "overall (baseline 3 scenarios, this run 2; missing now: fact-gated)" in note
    assert "category 'explicit-fact' (baseline 2 scenarios, this run 1" in note
    assert "its other 1 scope was compared" in note
    assert _verdict(_with_na(), entry) == (NOT_COMPARED, [])
    assert _verdict(_with_na(), entry, require=True) == ("FAIL", ["baseline"])


def test_an_entry_without_scenario_sets_is_read_as_recorded_with_every_scenario_applicable():
    old = baseline_entry(_with_na(na=False), top_k=5)
    levels = old.baseline
    legacy = old.model_copy(
        update={
            "baseline": levels.model_copy(
                update={
                    "overall": levels.overall.model_copy(update={"scenarios": None}),
                    "categories": {
                        c: v.model_copy(update={"scenarios": None}) for c, v in levels.categories.items()
                    },
                }
            )
        }
    )
    assert "scenarios" not in json.dumps(legacy.model_dump(mode="json"))
    assert scope_check(_with_na(na=False), legacy).not_comparable == {}
    assert set(scope_check(_with_na(), legacy).not_comparable) == {None, "explicit-fact"}
    assert _verdict(_with_na(), legacy)[0] == NOT_COMPARED


def test_a_category_whose_scenarios_left_the_run_is_a_present_regression():
    entry = baseline_entry(_with_na(), top_k=5)
    without_hop = a_pass(scenario("fact", "explicit-fact", [query(0), query(1)]))
    assert scope_check(without_hop, entry).vanished == ["multi-hop"]
    assert "present" in _verdict(without_hop, entry)[1]


_values = st.floats(min_value=0.0, max_value=1.0)


@st.composite
def _suites(draw: st.DrawFn) -> list[tuple[str, str, list[dict[str, float]], bool]]:
    """Scenarios (name, category, per-query metric values, not applicable) over 1-3 categories."""
    found = []
    for c in range(draw(st.integers(1, 3))):
        for s in range(draw(st.integers(1, 3))):
            one = st.fixed_dictionaries(dict.fromkeys(HARNESS_METRICS, _values))
            queries = draw(st.lists(one, min_size=1, max_size=3))
            found.append((f"s{c}-{s}", f"cat-{c}", queries, draw(st.booleans())))
    assume(not all(na for *_, na in found))
    return found


def _built(spec: list[tuple[str, str, list[dict[str, float]], bool]], lowered: Any = None) -> PassResult:
    """The pass of `spec`, with `lowered(category, values)` rewriting each query's metric values."""
    scenarios = []
    for name, category, queries, na in spec:
        values = [lowered(category, q) if lowered else q for q in queries]
        one = scenario(name, category, [query(i, **v) for i, v in enumerate(values)])
        scenarios.append(_not_applicable(one) if na else one)
    return a_pass(*scenarios)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=_suites(), data=st.data())
def test_lowering_any_compared_metric_in_any_scope_below_its_threshold_fails(spec, data):
    entry = baseline_entry(_built(spec), top_k=5)
    scopes = [None, *entry.thresholds.categories]
    scope = data.draw(st.sampled_from(scopes))
    metric = data.draw(st.sampled_from(HARNESS_METRICS))
    levels = entry.thresholds.overall if scope is None else entry.thresholds.categories[scope]
    threshold = levels.value(metric)
    assume(threshold is not None and threshold > 1e-5)
    value = data.draw(st.floats(min_value=0.0, max_value=threshold - 2e-6))

    def lowered(category: str, values: dict[str, float]) -> dict[str, float]:
        return {**values, metric: value} if scope in (None, category) else values

    assert _verdict(_built(spec, lowered), entry)[0] == "FAIL"


@settings(max_examples=40, deadline=None)
@given(spec=_suites(), flips=st.lists(st.booleans(), min_size=9, max_size=9))
def test_without_a_baseline_or_with_a_scope_not_comparable_a_run_never_passes(spec, flips):
    run = _built(spec)
    assert _verdict(run, None)[0] != "PASS"
    changed = [(n, c, q, na != flip) for (n, c, q, na), flip in zip(spec, flips, strict=False)]
    assume(not all(na for *_, na in changed))
    entry = baseline_entry(_built(changed), top_k=5)
    if scope_check(run, entry).not_comparable:
        assert _verdict(run, entry)[0] != "PASS"
        assert _verdict(run, entry, require=True)[0] == "FAIL"


# --- A Python adapter with not-applicable scenarios, run for real ------------------------------

EXPLICIT_FACTS = {"orders-api-port", "billing-db-port", "metrics-path", "config-path", "app-log-path"}
"""The thoughts of datasets/scenarios/explicit-fact.yaml: the answers of that category."""


class NoGateSystem(LimitedSystem):
    """A Python adapter lacking recency, projects, confidence and a relevance gate (so 8 built-in
    scenarios are not applicable, explicit-fact-gated among them); with `forget`, it never
    returns the explicit-fact answers."""

    name = "no-gate"
    capabilities = LimitedSystem.capabilities - {"relevance_gate"}

    def __init__(self, forget: bool = False) -> None:
        super().__init__()
        self.forget = forget

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[Any]:
        with super().open(context) as memory:
            yield _Forgetting(memory) if self.forget else memory


class _Forgetting(Wrapping):
    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        response = self.memory.search(query, options)
        kept = [h for h in response.hits if h.id not in EXPLICIT_FACTS]
        return replace(response, hits=tuple(replace(h, rank=i) for i, h in enumerate(kept, start=1)))


def test_an_adapter_that_stops_returning_one_category_fails_though_scenarios_are_not_applicable(tmp_path):
    thresholds = tmp_path / "t.json"
    assert ALL_CAPABILITIES - NoGateSystem.capabilities >= {"relevance_gate"}
    first = run_eval(datasets=DATASETS, system=NoGateSystem(), thresholds=thresholds)
    assert "explicit-fact-gated" in first.result.not_applicable
    record_baseline(thresholds, first.result)
    entry = load_thresholds(thresholds)["deterministic@5"]  # type: ignore[index]
    assert entry.baseline.categories["explicit-fact"].recall == 1.0
    assert "explicit-fact-gated" not in (entry.baseline.overall.scenarios or [])
    again = run_eval(datasets=DATASETS, system=NoGateSystem(), thresholds=thresholds, require_baseline=True)
    assert again.result.outcome.value == "PASS", again.result.outcome.reasons
    broken = run_eval(datasets=DATASETS, system=NoGateSystem(forget=True), thresholds=thresholds)
    assert broken.result.categories["explicit-fact"].metrics["recall"] == 0.0
    assert broken.result.outcome.value == "FAIL"
    failed = {(r.category, r.metric) for r in broken.result.regressions if r.kind == "metric"}
    assert {("explicit-fact", "recall"), (None, "recall")} <= failed


def test_a_baseline_over_0_queries_is_refused(tmp_path):
    class Nothing(LimitedSystem):
        name = "nothing"
        capabilities = frozenset()

    suite = tmp_path / "suite"
    (suite / "scenarios").mkdir(parents=True)
    (suite / "scenarios" / "p.yaml").write_text(
        "name: p\ncategory: project-scope\ndistractors: false\n"
        "thoughts:\n  - {id: a, content: alpha, project: x}\n"
        "queries:\n  - {query: alpha, relevant: [a], project: x}\n"
    )
    run = run_eval(datasets=suite, system=Nothing(), thresholds=tmp_path / "t.json").result
    assert run.overall.queries == 0
    with pytest.raises(UsageError, match=r"no baseline recorded: the run counted 0 queries.*not applicable"):
        record_baseline(tmp_path / "t.json", run)
    assert not (tmp_path / "t.json").exists()


# --- The real built-in qdrant store, as the issue tells it -------------------------------------


def test_qdrant_with_raised_thresholds_fails_overall_and_in_a_category_with_na_scenarios(tmp_path, capsys):
    q = tmp_path / "q.json"
    out = ["--out", str(tmp_path / "r.json"), "--history", "none"]
    code, _, _ = cli_record(capsys, "run", "--system", "qdrant", "--thresholds", str(q), *out)
    assert code == 0
    data = json.loads(q.read_text())
    entry = data["deterministic@5"]
    entry["thresholds"]["overall"]["recall"] = 0.99
    entry["thresholds"]["categories"]["explicit-fact"]["mrr"] = 0.95
    q.write_text(json.dumps(data))
    again = ["--thresholds", str(q), "--require-baseline", *out]
    code, text, _ = cli(capsys, "run", "--system", "qdrant", *again)
    assert code == 1, text
    assert "[metric] overall: recall 0.9355 is below its threshold 0.9900" in text
    assert "[metric] category 'explicit-fact': mrr 0.8667 is below its threshold 0.9500" in text
    assert "Verdict: FAIL" in text
