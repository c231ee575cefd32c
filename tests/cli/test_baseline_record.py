"""`evalkit baseline record [REPORT]` (issue 34 items 4 and 9): recording is its own command over a
saved report, and its advice never destroys another suite's or system's baseline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.shared import DATASETS, cli

PACK = DATASETS / "packs" / "cjk"


def test_another_suites_thresholds_file_is_named_and_never_overwritten_unasked(
    tmp_path: Path, capsys
) -> None:
    """A run of one suite against another suite's thresholds file: the verdict names the entry's
    suite once, briefly, advises no command that would overwrite it, and recording there refuses
    (naming the entry's system and suite) unless --replace."""
    suite = tmp_path / "cjk"
    shutil.copytree(PACK, suite)
    theirs = tmp_path / "thresholds.json"
    theirs.write_bytes((DATASETS / "thresholds.json").read_bytes())  # the built-in suite's
    before = theirs.read_bytes()
    report = tmp_path / "r.json"
    argv = [
        "run",
        "--datasets",
        str(suite),
        "--thresholds",
        str(theirs),
        "--out",
        str(report),
        "--history",
        "none",
    ]
    code, out, _ = cli(capsys, *argv)
    assert code == 0
    (verdict,) = [line for line in out.splitlines() if line.startswith("Verdict:")]
    assert verdict.startswith("Verdict: NOT COMPARED") and "was recorded on suite built-in" in verdict
    assert len(verdict) < 700 and verdict.count("scenarios/") <= 3 and " more" in verdict  # 996 before
    assert "--update-baseline" not in out and "re-record it" not in out
    assert "if that entry is this suite's own older baseline" in verdict  # --replace only on that condition
    code, out, err = cli(capsys, "baseline", "record", str(report))
    assert code == 2 and out == ""
    assert (
        f"{theirs} already holds the baseline for deterministic at top_k 5 of system reference on "
        "suite built-in" in err
    )
    assert f"this run is system reference on suite {suite}" in err and "--replace" in err
    assert theirs.read_bytes() == before
    code, out, _ = cli(capsys, "baseline", "record", str(report), "--replace")
    assert code == 0 and "recorded in" in out
    entry = json.loads(theirs.read_text())["deterministic@5"]
    assert entry["suite"]["source"] == str(suite) and "real@5" in json.loads(theirs.read_text())


def test_recording_reads_the_projects_report_and_never_advises_recording(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    shutil.copytree(PACK, tmp_path / "suite")
    (tmp_path / "suite" / "thresholds.json").unlink()
    (tmp_path / "evalkit.toml").write_text('datasets = "suite"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "run", "--history", "none")
    assert code == 0 and "`evalkit baseline record`" in out  # the run, with no baseline, says how
    code, out, err = cli(capsys, "baseline", "record")
    assert code == 0, err
    assert (
        out.startswith("baseline for deterministic at top_k 5 recorded in ")
        and "suite/thresholds.json" in out
    )
    assert "reports/report.json" in out and "record one" not in out and "baseline record" not in out
    code, out, _ = cli(capsys, "run", "--history", "none", "--require-baseline")
    assert code == 0 and "Verdict: PASS" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--tolerance", "0.1"], "add --gated"),
        (["--category-tolerance", "cjk=0.1"], "add --gated"),
        (["missing.json"], "missing.json"),
    ],
)
def test_recording_options_are_checked(
    tmp_path: Path, capsys, monkeypatch, argv: list[str], needle: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "baseline", "record", *argv)
    assert code == 2 and needle in err and "Traceback" not in err
