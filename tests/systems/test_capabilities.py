"""Capabilities: what a scenario needs, what a system declares, and a scenario needing what the
system lacks reported not_applicable — listed, excluded from means and the baseline check, never red."""

from __future__ import annotations

import json
import re

import pytest

from evalkit import MemorySystem, run_eval
from evalkit.cli import main
from evalkit.errors import AdapterError, DatasetError
from evalkit.scenarios import load_suite
from evalkit.scenarios.requirements import required_capabilities
from evalkit.systems.capabilities import ALL_CAPABILITIES, UNDECLARED_CAPABILITIES, declared_capabilities
from tests.shared import DATASETS
from tests.systems_fixtures import LimitedSystem

LIMITED_NOT_APPLICABLE = {
    "contradiction-flagged": ["projects"],
    "no-match": ["confidence"],
    "project-scope-global": ["projects"],
    "project-scope": ["projects"],
    "recency-gentle": ["recency"],
    "recency": ["recency"],
    "supersession-history": ["projects"],
}
"""Read off datasets/scenarios: which built-in scenarios filter by project, weight recency or
expect no strong match (the limited system lacks projects, recency and confidence)."""


def test_requirements_are_derived_from_options_assertions_and_edges():
    needs = {s.name: required_capabilities(s) for s in load_suite(DATASETS).scenarios}
    assert needs["supersession"] == {"supersession"}
    assert needs["contradiction"] == {"contradiction"}
    assert needs["explicit-fact-gated"] == {"relevance_gate"}
    assert needs["project-scope-global"] == {"projects", "global_thoughts"}
    assert needs["recency"] == {"recency"}
    assert needs["no-match"] == {"confidence"}
    assert needs["consolidation"] == needs["multi-hop"] == frozenset()


def test_requires_in_a_scenario_file_adds_a_capability(tmp_path):
    scenario = tmp_path / "scenarios" / "needs-recency.yaml"
    scenario.parent.mkdir()
    scenario.write_text(
        "name: needs-recency\ncategory: temporal\nrequires: [recency]\ndistractors: false\n"
        "thoughts:\n  - {id: a, content: alpha}\nqueries:\n  - {query: alpha, relevant: [a]}\n"
    )
    (suite_scenario,) = load_suite(tmp_path).scenarios
    assert required_capabilities(suite_scenario) == {"recency"}
    scenario.write_text(scenario.read_text().replace("[recency]", "[telepathy]"))
    with pytest.raises(DatasetError, match="requires"):
        load_suite(tmp_path)


def test_declared_capabilities_default_to_all_and_reject_unknown_names():
    class Silent(MemorySystem):
        name = "silent"

    class Wrong(MemorySystem):
        name = "wrong"
        capabilities = frozenset({"projects", "telepathy"})

    assert (
        declared_capabilities(Silent())
        == UNDECLARED_CAPABILITIES
        == ALL_CAPABILITIES - {"deletion", "update"}
    )
    with pytest.raises(AdapterError, match=r"system 'wrong': unknown capabilities 'telepathy'"):
        declared_capabilities(Wrong())


def test_limited_system_gets_not_applicable_for_exactly_the_scenarios_needing_what_it_lacks():
    run = run_eval(datasets=DATASETS, system=LimitedSystem(), thresholds=DATASETS / "thresholds.json")
    result = run.result
    assert result.not_applicable == LIMITED_NOT_APPLICABLE
    statuses = {s.name: s.status for s in result.scenarios}
    assert {n for n, s in statuses.items() if s == "not_applicable"} == set(LIMITED_NOT_APPLICABLE)
    assert result.regressions == [] and run.ok
    assert "project-scope" not in result.categories
    applicable = [s for s in result.scenarios if s.status != "not_applicable" and s.outcome == "pass"]
    assert result.overall.queries == sum(len(s.queries) for s in applicable if not s.measure_only)
    frame = run.scenarios
    absent = frame[frame["status"] == "not_applicable"]
    assert not absent["counted"].any()
    assert absent[["recall", "precision", "mrr", "hit_rate"]].isna().all().all()  # never a silent zero
    assert set(run.not_applicable["scenario"]) == set(LIMITED_NOT_APPLICABLE)
    assert any("not applicable: project-scope (the system lacks projects)" in n for n in result.notes)


def test_limited_system_on_the_cli_exits_0_and_lists_not_applicable(tmp_path, capsys):
    code = main(
        [
            "run", "--system", "tests.systems_fixtures:limited_system", "--out", str(tmp_path / "r.json"),
            "--datasets", str(DATASETS), "--thresholds", str(DATASETS / "thresholds.json"),
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Not applicable (7 scenarios, excluded from means and the baseline check):" in out
    assert "  - recency-gentle (temporal): needs recency" in out
    assert re.search(r"^project-scope +project-scope +0 +n/a +n/a +n/a +n/a +not_applicable$", out, re.M), out
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["not_applicable"] == LIMITED_NOT_APPLICABLE
    assert saved["system"] == "limited"
    assert saved["provenance"]["config"]["system"] == "tests.systems_fixtures:limited_system"


def test_a_system_without_relevance_gate_gets_no_gated_pass_and_gated_scenarios_are_not_applicable():
    class Ungated(LimitedSystem):
        capabilities = ALL_CAPABILITIES - {"relevance_gate"}

    result = run_eval(datasets=DATASETS, system=Ungated(), thresholds=None).result
    assert result.gated is None
    assert result.not_applicable == {"explicit-fact-gated": ["relevance_gate"]}
    assert "the system declares no relevance_gate capability: the gated pass was skipped" in result.notes
