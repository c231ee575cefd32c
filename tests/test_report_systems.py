"""`evalkit report --system`: the HTML names the system, lists not-applicable scenarios and
latency, and leaves out the sections that describe the reference store (detection, embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main


def test_report_for_another_system_names_it_and_omits_reference_only_sections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system = "tests.systems_fixtures:limited_system"
    assert main(["report", "--system", system, "--out-dir", str(tmp_path), "--no-progress"]) == 0
    html = (tmp_path / "eval_report.html").read_text(encoding="utf-8")
    assert f"<title>evalkit · eval_report · system {system}</title>" in html
    assert "Run summary and provenance — system limited" in html
    assert "none (the system embeds by itself)" in html
    assert (
        "Detection power: not applicable — it measures the reference store's search, "
        "this run evaluated limited" in html
    )
    assert "Not applicable: 7 scenario(s) need capabilities limited lacks" in html
    assert "Search latency of limited (wall ms, reported only, never gated)" in html
    assert "No gating regressions." in html


def test_system_given_twice_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["report", "--system", "reference-x", "-p", "system", "reference-y", "--out-dir", str(tmp_path)]
    assert main(argv) == 2
    assert "give the system once" in capsys.readouterr().err
