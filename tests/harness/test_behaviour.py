"""Behaviour metrics in a run: the memory state the scenario describes at each query, the means,
the JSON, the frame and the console; recorded in a baseline and checked against it only then."""

from __future__ import annotations

import json
import shutil

from evalkit import load_run, run_eval
from evalkit.harness.behaviour import MemoryState
from evalkit.records import Edge, Thought
from evalkit.scenarios.model import StepSpec
from evalkit.suites.mutations import PACK_MUTATIONS
from evalkit.systems import ReferenceSystem
from evalkit.views.console import render_run
from tests.shared import DATASETS

PACK = DATASETS / "packs" / "deletion-ghosts"


def test_the_memory_state_replays_deletes_updates_and_adds():
    state = MemoryState([Thought("old", "v1"), Thought("new", "v2")], [Edge("new", "old", "replaces")])
    assert state.stale == {"old"}
    state.apply(StepSpec.model_validate({"after_query": 0, "delete": ["new"]}))
    assert state.stale == {"new"} and "old" in state.contents  # its replacement is gone
    state.apply(StepSpec.model_validate({"after_query": 0, "update": {"id": "old", "content": "v3"}}))
    state.apply(
        StepSpec.model_validate({"after_query": 0, "add": {"thoughts": [{"id": "new", "content": "v4"}]}})
    )
    assert state.stale == set() and state.contents == {"old": "v3", "new": "v4"}


def test_a_suite_asking_for_behaviour_metrics_reports_them_everywhere(tmp_path):
    run = run_eval(datasets=PACK)
    overall = run.result.overall
    assert overall.behaviour["contamination"] == 0.0 and overall.behaviour_queries["contamination"] == 11
    saved = json.loads(run.save(tmp_path / "r.json").read_text())
    assert saved["overall"]["behaviour"] == overall.behaviour
    assert "behaviour" in saved["scenarios"][0]["queries"][0]
    assert load_run(tmp_path / "r.json").result.overall.behaviour == overall.behaviour
    frame = run.behaviour
    assert set(frame["metric"]) == {"stale_fact_rate", "contamination", "duplicate_rate", "query_sensitivity"}
    assert "Behaviour metrics (better:" in render_run(run)


def test_the_builtin_suite_reports_no_behaviour_metrics_so_its_report_keeps_its_shape():
    run = run_eval(datasets=DATASETS, scenarios=["supersession"])
    assert run.result.overall.behaviour == {} and run.behaviour.empty
    assert "behaviour" not in json.dumps(run.result.model_dump(mode="json"))


def test_behaviour_metrics_are_checked_only_against_a_baseline_that_records_them(tmp_path):
    suite = tmp_path / "pack"
    shutil.copytree(PACK, suite)
    entry = json.loads((suite / "thresholds.json").read_text())["deterministic@5"]
    assert entry["thresholds"]["overall"]["behaviour"]["contamination"] == 0.02  # a ceiling
    assert entry["thresholds"]["overall"]["behaviour"]["query_sensitivity"] == 0.98  # a floor
    # a baseline that records none of them: the same run is not checked on them
    data = json.loads((suite / "thresholds.json").read_text())
    for scope in ("baseline", "thresholds"):
        data["deterministic@5"][scope]["overall"].pop("behaviour")
        for levels in data["deterministic@5"][scope]["categories"].values():
            levels.pop("behaviour")
    data["deterministic@5"]["thresholds"]["overall"]["recall"] = 0.0
    (suite / "thresholds.json").write_text(json.dumps(data))
    assert run_eval(datasets=suite).result.regressions == []
    # the shipped baseline records them: a system returning deleted thoughts regresses on them
    leaky = ReferenceSystem(pipeline=PACK_MUTATIONS["deletion-keeps-text"].build())
    found = run_eval(datasets=PACK, system=leaky).result.regressions
    stale = [r for r in found if r.kind == "metric" and r.metric == "stale_fact_rate" and r.category is None]
    assert stale and stale[0].message.startswith("overall: stale_fact_rate ")
    assert stale[0].message.endswith("is above its threshold 0.0200")


def test_the_ids_behind_a_stale_or_contaminated_query_are_saved_in_rank_order(tmp_path):
    leaky = ReferenceSystem(pipeline=PACK_MUTATIONS["deletion-keeps-text"].build())
    run = run_eval(datasets=PACK, system=leaky)
    queries = [q for s in run.result.scenarios for q in s.queries]
    leaking = [q for q in queries if q.behaviour.get("stale_fact_rate", 0) > 0]
    assert leaking
    for q in queries:
        stale = [i for i in q.retrieved if i in q.leaked.get("stale", [])]
        assert q.leaked.get("stale", []) == stale  # rank order, only returned ids
        assert (q.behaviour.get("stale_fact_rate", 0) > 0) == bool(q.leaked.get("stale"))
        assert (q.behaviour.get("contamination", 0) > 0) == bool(q.leaked.get("forbidden"))
        if "stale_fact_rate" in q.behaviour and q.retrieved:
            assert q.behaviour["stale_fact_rate"] == len(q.leaked.get("stale", [])) / len(q.retrieved)
    saved = json.loads(run.save(tmp_path / "r.json").read_text())
    written = [q for s in saved["scenarios"] for q in s["queries"]]
    assert [q.get("leaked", {}) for q in written] == [q.leaked for q in queries]
    assert load_run(tmp_path / "r.json").result.scenarios == run.result.scenarios
    clean = json.loads(run_eval(datasets=PACK).save(tmp_path / "clean.json").read_text())
    assert not [q for s in clean["scenarios"] for q in s["queries"] if "leaked" in q]  # left out when none
