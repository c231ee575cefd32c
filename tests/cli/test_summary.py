"""`evalkit summary REPORT`: the Markdown of a saved run on stdout, compared with the baseline the
run was checked against (or --thresholds); exit 0 whatever the verdict, 2 for a report it cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("summary") / "report.json"
    assert main(["run", "--out", str(out), "--history", "none", "--no-progress"]) == 0
    return out


def test_summary_of_a_built_in_run_compares_it_with_its_baseline(
    report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["summary", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## evalkit: PASS\n\nsystem reference · mode deterministic · top_k 5 · ")
    assert "### Biggest drops against the baseline (deterministic@5, recorded " in out
    assert "No overall or category metric is below its baseline." in out


def test_summary_says_when_there_is_no_baseline_to_compare_with(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    missing = tmp_path / "none.json"
    assert main(["summary", str(report), "--thresholds", str(missing)]) == 0
    assert f"Nothing to compare: {missing} does not exist." in capsys.readouterr().out


def test_summary_of_an_unreadable_report_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["summary", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
