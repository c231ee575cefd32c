"""The report file (evalkit.harness.report_file): one module reads and writes every report. Each
older shape kept under tests/fixtures/reports (written by evalkit at the commit its README names)
migrates to what the current models read; the golden report, of version 2, differs from what a
run writes today by its version number only; a newer report is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import ReportError, ReportNewerError
from evalkit.harness.report_file import (
    MIGRATIONS,
    OLDEST_MIGRATED,
    load_report,
    migrate_report,
    report_from_data,
    save_report,
    saved_run_of,
)
from evalkit.harness.results import SCHEMA_VERSION, RunResult
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import ROOT, cli, comparable

FIXTURES = ROOT / "tests" / "fixtures" / "reports"
OLD_REPORTS = sorted(FIXTURES.glob("v*.json"))
GOLDEN = ROOT / "tests" / "golden" / "builtin_deterministic.json"


def _saved(tmp_path: Path, **fields: Any) -> dict[str, Any]:
    """A report of the current version, as JSON."""
    run = a_run(a_pass(scenario("facts", "explicit-fact", [query(0)])), **fields)
    return json.loads(save_report(run, tmp_path / "now.json").read_text(encoding="utf-8"))


def _write(tmp_path: Path, data: dict[str, Any], name: str = "r.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_every_version_below_the_current_one_has_one_documented_migration() -> None:
    assert sorted(MIGRATIONS) == list(range(OLDEST_MIGRATED, SCHEMA_VERSION))
    for step in MIGRATIONS.values():
        assert step.__doc__ and "Dec 2026" in step.__doc__  # says what changed and when


def test_there_is_a_fixture_of_every_migrated_version() -> None:
    versions = {json.loads(path.read_text(encoding="utf-8"))["schema_version"] for path in OLD_REPORTS}
    assert versions == set(MIGRATIONS)


@pytest.mark.parametrize("path", OLD_REPORTS, ids=lambda p: p.stem)
def test_an_older_report_migrates_to_the_current_shape_and_saves_as_it(path: Path, tmp_path: Path) -> None:
    run = load_report(path)
    assert run.schema_version == SCHEMA_VERSION
    assert run.provenance.declaration.capabilities and run.latency is not None
    saved = json.loads(save_report(run, tmp_path / "again.json").read_text(encoding="utf-8"))
    assert saved["schema_version"] == SCHEMA_VERSION
    assert migrate_report(saved) == saved  # the current shape needs no migration
    assert load_report(tmp_path / "again.json") == run


def test_a_report_before_pinned_gates_moves_its_top_level_gate_and_rewords_its_note() -> None:
    path = FIXTURES / "v2-2026-12-01-before-pinned-gates.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    assert "pinned_gates" not in old and "verdict" not in old and "declaration" not in old["provenance"]
    run = load_report(path)
    assert run.pinned_gates.model_dump() == old["relevance_gate"]  # the measurement's own gates
    assert (
        run.relevance_gate is not None and run.relevance_gate.model_dump() == old["gated"]["relevance_gate"]
    )
    assert run.notes == [
        "baseline check OFF: no thresholds file at datasets/thresholds.json: the baseline check is off "
        "(assertions still count)"
    ]
    assert run.outcome.value == "NOT COMPARED"  # the unprefixed note of then is read: never PASS
    assert run.provenance.declaration.regates and run.provenance.declaration.confidence_floor == 0.9
    assert run.latency.overall is None and run.latency.scenarios == {}


def test_a_report_before_verdicts_with_recall_zero_gets_the_degenerate_regression_and_fails() -> None:
    run = load_report(FIXTURES / "v2-2026-12-01-before-verdicts-recall-zero.json")
    assert [r.kind for r in run.regressions] == ["degenerate"]
    assert run.outcome.value == "FAIL"
    assert run.outcome.reasons[0] == "1 regression: 1 degenerate"


def test_a_report_of_metric_gating_off_reads_as_not_compared_with_numbered_findings() -> None:
    path = FIXTURES / "v2-2026-12-01-metric-gating-off.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    assert old["notes"][0].startswith("metric gating OFF: ") and old["verdict"]["degenerate"][0]["query"] == 0
    run = load_report(path)
    reason = (
        "no thresholds file at /tmp/rf/ds/thresholds.json: the baseline check is off until a baseline "
        "is recorded"
    )
    assert run.notes == [f"baseline check OFF: {reason} (assertions still count)"]
    assert run.metrics_not_compared == reason
    assert [(d.scenario, d.query_number) for d in run.outcome.degenerate] == [("miss", 1)]
    assert run.outcome.reasons == old["verdict"]["reasons"]  # a stored verdict is kept as written


def test_a_report_with_0_based_degenerate_queries_numbers_them_from_1() -> None:
    run = load_report(FIXTURES / "v2-2026-12-01-degenerate-query-index.json")
    assert [d.query_number for d in run.outcome.degenerate] == [1]


def test_a_detection_saved_before_strength_gets_its_strength_hints_and_checked_against() -> None:
    path = FIXTURES / "v2-2026-12-01-detection-before-strength.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    assert "strength" not in old["verdict"] and "hint" not in old["detection"]["outcomes"][0]
    run = load_report(path)
    assert run.detection is not None and run.detection.checked_against is None
    assert {o.hint for o in run.detection.outcomes} == {""}
    assert run.strength is not None
    assert (run.strength.caught, run.strength.injected) == (run.detection.caught, len(run.detection.injected))


@pytest.mark.parametrize(
    ("note", "current"),
    [
        ("scenarios were selected by name: metric gating is off (assertions still gate)",
         "baseline check OFF: scenarios were selected by name: the baseline check is off "
         "(assertions still count)"),
        ("metric gating OFF: no thresholds file at t.json: metric gating is off until a baseline is recorded "
         "(assertions still gate)",
         "baseline check OFF: no thresholds file at t.json: the baseline check is off until a baseline is "
         "recorded (assertions still count)"),
        ("baseline check OFF: no baseline here (assertions still count)",
         "baseline check OFF: no baseline here (assertions still count)"),
        ("loaded 3 queries", "loaded 3 queries"),
    ],
)  # fmt: skip
def test_each_wording_of_the_baseline_check_note_reads_as_todays(
    tmp_path: Path, note: str, current: str
) -> None:
    old = {**_saved(tmp_path), "schema_version": 2, "notes": [note]}
    del old["verdict"]
    run = report_from_data(old)
    assert run.notes == [current]
    assert run.outcome.value == ("NOT COMPARED" if current.startswith("baseline check OFF") else "PASS")


def test_the_golden_report_of_version_2_differs_from_todays_by_its_version_only(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert golden["schema_version"] == 2
    run_specific = {key: _saved(tmp_path)[key] for key in ("generated_at", "provenance", "latency")}
    run = report_from_data({**golden, **run_specific})
    assert [(p.name, p.role) for p in run.passes] == [("ungated", "measurement"), ("gated", "report-only")]
    saved = json.loads(save_report(run, tmp_path / "r.json").read_text(encoding="utf-8"))
    assert comparable(saved) == {**golden, "schema_version": SCHEMA_VERSION}


def test_a_newer_report_is_refused_in_one_line_whatever_its_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    newer = _write(tmp_path, {**_saved(tmp_path), "schema_version": SCHEMA_VERSION + 1, "future": {}})
    with pytest.raises(ReportNewerError) as raised:
        load_report(newer)
    message = str(raised.value)
    assert message == (
        f"report {newer} is of schema {SCHEMA_VERSION + 1}, newer than this evalkit "
        f"({message.split('(')[1].split(')')[0]}) reads (up to {SCHEMA_VERSION}): upgrade evalkit to read it"
    )
    assert isinstance(raised.value, ReportError)
    code, out, err = cli(capsys, "summary", str(newer))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"evalkit: error: {message}"]


def test_unknown_keys_in_a_current_report_are_named(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    saved["future_section"] = {"points": []}
    saved["scenarios"][0]["future_field"] = 1
    with pytest.raises(
        ReportError, match="does not have: future_field, future_section; it was written by another"
    ):
        load_report(_write(tmp_path, saved))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ("[]", "is not an evalkit report .no integer schema_version"),
        ('{"schema_version": "3"}', "is not an evalkit report .no integer schema_version"),
        ('{"schema_version": 1}', "is of schema 1, older than this evalkit reads .from 2.: re-run it"),
    ],
)
def test_what_is_not_a_readable_report_says_so(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportError, match=message):
        load_report(path)
    with pytest.raises(ReportError, match="does not exist; run `evalkit run --out"):
        load_report(tmp_path / "missing.json")


def test_a_wrong_value_says_the_report_is_not_valid(tmp_path: Path) -> None:
    saved = {**_saved(tmp_path), "mode": 7, "future_section": 1}
    with pytest.raises(ReportError, match=f"is not a valid evalkit report of schema {SCHEMA_VERSION}"):
        load_report(_write(tmp_path, saved))


def test_the_models_read_the_current_version_only(tmp_path: Path) -> None:
    old = {**_saved(tmp_path), "schema_version": 2}
    with pytest.raises(ValueError, match=r"read report files with evalkit\.harness\.report_file"):
        RunResult.model_validate(old)


def test_the_commands_that_read_a_report_read_an_older_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oldest, last = FIXTURES / "v2-2026-12-01-before-pinned-gates.json", FIXTURES / "v2-2026-12-04-last.json"
    for argv in (
        ("summary", str(oldest)),
        ("compare", str(oldest), str(last)),
        ("export", "--trec", str(oldest), str(tmp_path / "trec")),
        ("sweep", str(last)),
    ):
        code, out, err = cli(capsys, *argv)
        assert (code, err) == (0, "") and out, argv


def test_saved_run_of_reads_the_system_and_suite_of_a_report_and_nothing_of_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = a_run(a_pass(scenario("facts", "explicit-fact", [query(0)])))
    run = run.model_copy(update={"provenance": run.provenance.model_copy(update={"datasets": "built-in"})})
    saved = save_report(run, tmp_path / "r.json")
    assert load_report(saved).system == run.system
    with monkeypatch.context() as patched:
        patched.setattr(json, "loads", None)  # a report save_report wrote is not parsed whole
        assert saved_run_of(saved) == (run.system, "built-in")
    data = json.loads(saved.read_text(encoding="utf-8"))
    del data["provenance"]["datasets"]
    (tmp_path / "no-suite.json").write_text(json.dumps(data), encoding="utf-8")  # not indented: parsed whole
    assert saved_run_of(tmp_path / "no-suite.json") == (run.system, None)
    not_reports = {
        "broken.json": "{", "list.json": "[1]", "other.json": '{"system": 3, "provenance": {}}',
        "no-provenance.json": '{"system": "x"}',
    }  # fmt: skip
    for name, text in not_reports.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert saved_run_of(tmp_path / name) is None, name
    assert saved_run_of(tmp_path / "missing.json") is None and saved_run_of(None) is None
    assert saved_run_of(tmp_path) is None  # a folder
