"""evalkit.views.verdict: PASS / FAIL / NOT COMPARED, the identity line, every regression and the
degenerate retrieval found, as text and as HTML, on hand-built runs."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from evalkit import EvalRun, run_eval, run_verdict
from evalkit.files import WORKDIR_ENV
from evalkit.harness.results import Regression
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS, ROOT

TWO = [
    Regression(kind="assertion", message="facts: forbid: 'x' was retrieved at rank 1", scenario="facts"),
    Regression(kind="metric", message="overall: recall 0.5000 is below its threshold 0.9000 <b>"),
]


def _run(
    regressions: list[Regression],
    notes: Sequence[str] = (),
    thresholds: Path | None = Path("t.json"),
    gate: bool = True,
) -> EvalRun:
    ungated = a_pass(scenario("facts", "explicit-fact", [query(0)]))
    gated = a_pass(scenario("facts", "explicit-fact", [query(0)]), gate=0.35) if gate else None
    return EvalRun(
        a_run(ungated, gated, regressions=regressions, notes=notes, thresholds=thresholds, top_k=7)
    )


def test_a_run_without_regressions_passes_and_names_what_ran() -> None:
    verdict = run_verdict(_run([]))
    assert (verdict.passed, verdict.baseline_check_off, verdict.headline) == (True, None, "PASS")
    assert str(verdict) == (
        "Verdict: PASS\n"
        "system reference · mode deterministic · top_k 7 · gate min_relevance 0.35 (report-only)\n"
        "No gating regressions."
    )


def test_a_run_with_regressions_fails_and_lists_every_one_in_order() -> None:
    verdict = run_verdict(_run(TWO))
    assert verdict.headline == "FAIL — 2 regressions"
    assert str(verdict).splitlines()[2:] == [
        "  - [assertion] facts: forbid: 'x' was retrieved at rank 1",
        "  - [metric] overall: recall 0.5000 is below its threshold 0.9000 <b>",
    ]
    page = verdict._repr_html_()
    assert page.index("FAIL") < page.index("[assertion]") < page.index("[metric]")
    assert "&lt;b&gt;" in page and "<b>" not in page  # messages are escaped
    assert "overflow" not in page and "max-height" not in page  # no scroll box


def test_baseline_check_off_says_why_whether_the_run_passed_or_not() -> None:
    why = "no baseline for deterministic at top_k 10 in t.json (it holds deterministic at top_k 5)"
    note = f"baseline check OFF: {why}"
    passed = run_verdict(_run([], notes=["loaded 3 queries", note]))
    assert passed.value == "NOT COMPARED"  # never PASS when the metrics were not compared
    assert passed.headline == f"NOT COMPARED · baseline check OFF ({why})"
    assert "No gating regressions." not in str(passed) + passed._repr_html_()
    assert "metrics were not compared with a baseline" in str(passed)
    failed = run_verdict(_run(TWO[:1], notes=[note]))
    assert failed.headline == f"FAIL — 1 regression · baseline check OFF ({why})"
    unconfigured = run_verdict(_run([], thresholds=None))
    assert unconfigured.baseline_check_off == "the run was configured without a thresholds file"
    assert unconfigured.value == "NOT COMPARED" and "PASS" not in unconfigured._repr_html_()


def test_identity_says_when_the_gated_pass_was_skipped() -> None:
    assert run_verdict(_run([], gate=False)).identity.endswith("top_k 7 · gated pass skipped")


def test_the_thresholds_file_is_shown_relative_to_the_working_directory_below_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thresholds = tmp_path / "project" / "t.json"
    thresholds.parent.mkdir()
    shutil.copy(DATASETS / "thresholds.json", thresholds)
    run = run_eval(datasets=DATASETS, thresholds=thresholds, progress=False)
    assert run.result.provenance.baseline is not None
    assert run.result.provenance.baseline.file == str(thresholds)  # the report keeps it as recorded
    monkeypatch.delenv(WORKDIR_ENV, raising=False)
    monkeypatch.chdir(thresholds.parent)
    verdict = run_verdict(run)
    assert verdict.baseline is not None and verdict.baseline.startswith("Baseline: t.json, recorded ")
    assert verdict.command is not None and "--thresholds t.json" in verdict.command
    monkeypatch.chdir(ROOT)  # not below it: the absolute path
    verdict = run_verdict(run)
    assert verdict.baseline is not None and verdict.baseline.startswith(f"Baseline: {thresholds}, recorded ")
    assert verdict.command is not None and f"--thresholds {thresholds}" in verdict.command
