"""harness.floors: absolute `min_recall` / `min_hit_rate` floors of a query or a scenario hold
with or without a baseline, fail the scenario and the run, and a floor needs relevant ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit import load_suite, run_eval
from evalkit.errors import DatasetError
from evalkit.harness.floors import FLOORS, query_floor_errors, scenario_floor_errors
from evalkit.scenarios.model import QuerySpec, Scenario

SCENARIO = """\
name: facts
category: explicit-fact
distractors: false
{scenario_floor}
thoughts:
  - {{id: port, content: "The API gateway listens on port 8443"}}
  - {{id: db, content: "The orders database is PostgreSQL 16"}}
  - {{id: deploy, content: "Deploys run every Tuesday at noon"}}
queries:
  - {{query: "Which port does the API gateway listen on?", relevant: [port]{first}}}
  - {{query: "zebra giraffe", relevant: [db]{second}}}
"""


def _suite(root: Path, scenario_floor: str = "", first: str = "", second: str = "") -> Path:
    (root / "scenarios").mkdir(parents=True)
    text = SCENARIO.format(scenario_floor=scenario_floor, first=first, second=second)
    (root / "scenarios" / "facts.yaml").write_text(text, encoding="utf-8")
    return root


def test_the_floors_bound_recall_and_hit_rate() -> None:
    assert dict(FLOORS) == {"min_recall": "recall", "min_hit_rate": "hit_rate"}
    query = QuerySpec(query="q", relevant=["a", "b"], min_recall=0.5, min_hit_rate=1.0)
    assert query_floor_errors(query, {"recall": 0.5, "hit_rate": 1.0}) == []  # on the floor holds
    assert query_floor_errors(query, {"recall": 0.0, "hit_rate": 0.0}) == [
        "min_recall: recall 0.0000 is below the query's floor 0.5",
        "min_hit_rate: hit_rate 0.0000 is below the query's floor 1",
    ]
    scenario = Scenario(name="s", category="c", thoughts=[], queries=[query], min_recall=0.9)
    assert scenario_floor_errors(scenario, {"recall": 0.75, "hit_rate": 1.0}, 4) == [
        "min_recall: the scenario's mean recall 0.7500 over 4 queries is below its floor 0.9"
    ]
    assert scenario_floor_errors(scenario, {"recall": 0.0, "hit_rate": 0.0}, 0) == []  # nothing asked


def test_floors_fail_a_run_without_any_baseline(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", "min_recall: 0.9", second=", min_recall: 1")
    run = run_eval(datasets=suite, thresholds=None, top_k=1, gated=False)
    assert run.result.scenarios[0].status == "fail"
    assert [r.message for r in run.result.regressions] == [
        "facts: min_recall: the scenario's mean recall 0.5000 over 2 queries is below its floor 0.9",
        "facts query 2 ('zebra giraffe'): min_recall: recall 0.0000 is below the query's floor 1",
    ]
    assert {r.kind for r in run.result.regressions} == {"assertion"}
    assert run.result.outcome.value == "FAIL"


def test_floors_that_hold_leave_the_run_as_it_was(tmp_path: Path) -> None:
    floored = run_eval(datasets=_suite(tmp_path / "a", "min_hit_rate: 0.5", first=", min_recall: 1"), top_k=1)
    plain = run_eval(datasets=_suite(tmp_path / "b"), top_k=1)
    assert floored.result.scenarios[0].status == plain.result.scenarios[0].status == "pass"
    assert floored.result.regressions == plain.result.regressions == []
    assert "floor_errors" not in floored.result.scenarios[0].model_dump(mode="json")


def test_a_floor_on_a_query_without_relevant_ids_is_a_dataset_error(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", first=", min_recall: 0.5")
    text = (suite / "scenarios" / "facts.yaml").read_text(encoding="utf-8")
    text = text.replace("relevant: [port], min_recall: 0.5", "no_relevant: true, min_recall: 0.5")
    (suite / "scenarios" / "facts.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_suite(suite)
    assert "min_recall is set but the query lists no relevant ids" in "\n".join(caught.value.problems)
