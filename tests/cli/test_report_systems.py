"""`evalkit report --system`: the HTML names the system, lists not-applicable scenarios and
latency, and leaves out the sections that describe the reference store (detection, embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main
from tests.shared import ROOT


def test_report_for_another_system_names_it_and_omits_reference_only_sections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user's module is importable from where they typed the command, as the README says;
    # the kernel runs in the notebook's folder, so the relative entry must be resolved for it.
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTHONPATH", ".")
    system = "tests.systems_fixtures:limited_system"
    assert main(["report", "--system", system, "--out-dir", str(tmp_path), "--no-progress"]) == 0
    html = (tmp_path / "eval_report.html").read_text(encoding="utf-8")
    assert "<title>evalkit · eval_report · NOT COMPARED · system limited</title>" in html
    assert "Run summary and provenance — system limited" in html
    assert "none (the system embeds by itself)" in html
    assert (
        "Not shown: mutation testing measures the reference store's search; this run evaluated limited, "
        "which declares no mutation testing" in html
    )
    assert "Not applicable: 7 scenarios need capabilities limited lacks" in html
    assert "Search latency of limited (wall ms, reported only, never gated)" in html
    # its first run meets the reference store's baseline, which is not its own: NOT COMPARED
    assert "Verdict: NOT COMPARED</p>" in html  # the headline is the verdict; the reason below it
    assert (
        "<b>Baseline check OFF:</b> the baseline for deterministic at top_k 5 in datasets/thresholds.json"
        in html
    )
    assert "was recorded for system reference; this run evaluated limited" in html
    assert "`evalkit report -p thresholds PATH`" in html  # the flag this command takes
    assert str(ROOT) not in html  # no path of this machine
    assert "No gating regressions." not in html


def test_system_given_twice_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["report", "--system", "reference-x", "-p", "system", "reference-y", "--out-dir", str(tmp_path)]
    assert main(argv) == 2
    assert "give the system once" in capsys.readouterr().err


def test_an_mcp_mapping_path_is_passed_to_the_notebook_as_an_absolute_path(monkeypatch, tmp_path):
    from evalkit.cli.report import _from_here

    monkeypatch.chdir(tmp_path)
    assert _from_here("mcp:maps/m.toml") == f"mcp:{tmp_path / 'maps' / 'm.toml'}"
    assert _from_here("http://127.0.0.1:8765") == "http://127.0.0.1:8765"


def test_bench_runs_another_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.shared import BEIR_TINY

    out = tmp_path / "bench.json"
    system = "tests.systems_fixtures:limited_system"
    assert main(["bench", "beir", str(BEIR_TINY), "--system", system, "--out", str(out)]) == 0
    assert "system limited" in capsys.readouterr().out
    assert '"system": "limited"' in out.read_text()


def test_the_drilldown_evaluates_the_system_given_with_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTHONPATH", ".")
    system = "tests.systems_fixtures:limited_system"
    argv = [
        "report",
        "--notebook",
        "scenario_drilldown",
        "--system",
        system,
        "-p",
        "scenario",
        "explicit-fact",
    ]
    assert main([*argv, "--out-dir", str(tmp_path), "--no-progress"]) == 0
    assert '"system": "limited"' in (tmp_path / "scenario_drilldown.json").read_text(encoding="utf-8")
    html = (tmp_path / "scenario_drilldown.html").read_text(encoding="utf-8")
    assert f"<title>evalkit · scenario_drilldown · system {system}</title>" in html


def test_a_notebook_that_cannot_use_system_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "report",
        "--notebook",
        "compare_runs",
        "--system",
        "http://127.0.0.1:1",
        "--out-dir",
        str(tmp_path),
    ]
    assert main(argv) == 2
    assert "compare_runs.ipynb declares no `system` parameter" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
