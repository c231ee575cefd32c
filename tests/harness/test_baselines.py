"""harness.baselines and the Python API's `record_baseline`: what `evalkit baseline record [--gated]`
records, reachable without the CLI, and the one floor rule of the thresholds file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit import EvalRun, assert_thresholds, record_baseline, run_eval
from evalkit.errors import RegressionError, UsageError
from evalkit.harness.baselines import MARGIN, check_recordable, gated_baseline_entry, gated_tolerances
from evalkit.harness.regressions import assert_no_regressions
from evalkit.harness.results import Regression
from evalkit.harness.thresholds_file import (
    GATED_KEY,
    GatedTolerances,
    floor_below,
    load_thresholds,
    read_thresholds,
)
from evalkit.packaged import THRESHOLDS_NAME
from evalkit.scenarios import load_suite
from evalkit.views import tables
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS


def _passes(recall_b: float = 0.5) -> tuple:
    ungated = a_pass(scenario("a", "cat-a", [query(0)]), scenario("b", "cat-b", [query(0, recall=recall_b)]))
    gated = a_pass(
        scenario("a", "cat-a", [query(0, recall=0.8)]),
        scenario("b", "cat-b", [query(0, recall=0.4)]),
        gate=0.4,
    )
    return ungated, gated


def _run(thresholds: Path | None, *, recall_b: float = 0.5, gated: bool = True) -> EvalRun:
    ungated, gated_pass = _passes(recall_b)
    return EvalRun(a_run(ungated, gated_pass if gated else None, thresholds=thresholds))


def test_floor_below_is_the_one_floor_rule_of_both_kinds_of_entry():
    assert floor_below(0.6667, MARGIN) == 0.6467
    assert floor_below(0.01, MARGIN) == 0.0  # floored at 0
    assert floor_below(0.03135, 0.0) == 0.0314  # rounded half away from zero
    assert floor_below(0.8333, 0.05) == 0.7833


def test_record_baseline_writes_the_runs_mode_entry_into_the_file_it_was_configured_with(tmp_path):
    path = tmp_path / "thresholds.json"
    assert record_baseline(_run(path)) == path
    entries = load_thresholds(path)
    assert entries is not None and list(entries) == ["deterministic@5"]
    assert entries["deterministic@5"].thresholds.categories["cat-b"].recall == 0.48
    other = tmp_path / "other.json"
    assert record_baseline(_run(path, recall_b=1.0), other) == other  # an explicit file wins
    assert load_thresholds(path) == entries


def test_record_baseline_gated_keeps_the_replaced_entrys_tolerances_unless_given(tmp_path):
    path = tmp_path / "thresholds.json"
    record_baseline(_run(path))
    modes = {k: v for k, v in json.loads(path.read_text()).items() if k != GATED_KEY}
    record_baseline(_run(path), gated=True, tolerance=0.03, category_tolerances={"cat-b": 0.1})
    record_baseline(_run(path), gated=True)
    data = json.loads(path.read_text())
    assert {k: v for k, v in data.items() if k != GATED_KEY} == modes  # the mode entry untouched
    assert data[GATED_KEY][0]["tolerances"] == {"default": 0.03, "categories": {"cat-b": 0.1}}
    document = read_thresholds(path)
    assert document is not None
    entry = document.gated_entry("deterministic", 5, 0.4)
    assert entry is not None and entry.floor("cat-b") == 0.3


def test_gated_tolerances_merge_flags_over_the_old_entry_over_the_default():
    _, gated = _passes()
    assert gated_tolerances(gated, None) == GatedTolerances()
    old = GatedTolerances(default=0.2, categories={"cat-a": 0.1, "retired": 0.3})
    entry = gated_baseline_entry(gated, "deterministic", 5).model_copy(update={"tolerances": old})
    merged = gated_tolerances(gated, entry, category_tolerances={"cat-b": 0.07})
    assert merged == GatedTolerances(default=0.2, categories={"cat-a": 0.1, "cat-b": 0.07})
    assert gated_tolerances(gated, entry, tolerance=0.01).default == 0.01
    with pytest.raises(UsageError, match="'cat-c', not a category"):
        gated_tolerances(gated, None, category_tolerances={"cat-c": 0.1})


@pytest.mark.parametrize(
    ("thresholds", "options", "needle"),
    [
        (None, {}, "pass thresholds=PATH"),
        (Path("t.json"), {"tolerance": 0.1}, "add gated=True"),
        (Path("t.json"), {"gated": True, "category_tolerances": {"nope": 0.1}}, "'nope', not a category"),
    ],
)
def test_record_baseline_refuses_what_it_cannot_record(tmp_path, thresholds, options, needle):
    run = _run(None if thresholds is None else tmp_path / thresholds)
    with pytest.raises(UsageError, match=needle):
        record_baseline(run, **options)
    assert list(tmp_path.iterdir()) == []


def test_record_baseline_gated_needs_a_gated_pass(tmp_path):
    with pytest.raises(UsageError, match="no gated pass to record"):
        record_baseline(_run(tmp_path / "t.json", gated=False), gated=True)


def test_the_installed_packages_baselines_are_never_recordable(monkeypatch):
    monkeypatch.setattr("evalkit.harness.baselines.inside_installed_package", lambda path: True)
    with pytest.raises(UsageError, match="inside the installed evalkit package"):
        check_recordable(DATASETS / THRESHOLDS_NAME)


def test_assert_thresholds_lives_in_the_harness_and_not_among_the_tables():
    regression = Regression(kind="metric", message="overall: recall 0.1000 is below its threshold 0.2000")
    failing = a_run(a_pass(scenario("a", "cat", [query(0)])), regressions=[regression])
    with pytest.raises(RegressionError, match=r"\[metric\] overall: recall"):
        assert_no_regressions(failing)
    assert not hasattr(tables, "assert_thresholds")  # 0.1.0 is unreleased: no deprecated alias
    assert assert_thresholds(EvalRun(failing), fail=False).endswith(
        "(not raised: fail_on_regression is False)"
    )


def test_the_builtin_baselines_belong_to_the_reference_store_and_its_suite(tmp_path: Path) -> None:
    document = read_thresholds(DATASETS / THRESHOLDS_NAME)
    assert document is not None
    suite = load_suite(DATASETS)
    for entry in document.modes.values():  # deterministic@5 and real@5, values as first recorded
        assert entry.system is not None and entry.system.name == "reference"
        assert entry.suite is not None and entry.suite.digest == suite.digest
        assert entry.suite.files == dict(suite.file_digests)
    assert run_eval(datasets=DATASETS, gated=False).result.outcome.value == "PASS"
    changed = tmp_path / "datasets"
    shutil.copytree(DATASETS, changed)
    facts = changed / "scenarios" / "explicit-fact.yaml"
    facts.write_text(facts.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    run = run_eval(datasets=changed, gated=False)
    assert run.result.outcome.value == "NOT COMPARED"
    assert (
        "was recorded on suite built-in, and this run's suite differs (1 file: scenarios/explicit-fact.yaml "
        "changed)" in (run.result.metrics_not_compared or "")
    )
    for entry in document.modes.values():  # each scope with the scenarios it averaged
        assert entry.suite.source == "built-in"
        assert (
            entry.baseline.overall.scenarios is not None
            and "explicit-fact" in entry.baseline.overall.scenarios
        )
