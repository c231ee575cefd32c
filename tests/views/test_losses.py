"""The report's first screen (evalkit.views.losses, evalkit.views.report, evalkit.views.verdict):
the verdict, then the biggest losses against the baseline and under the gate, each linked to its
details, then the contents; and the cells the issue called confusing, each saying what it means."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from evalkit import ReferenceSystem, run_eval
from evalkit.views import charts, losses, report, tables
from evalkit.views.frames import EvalRun
from evalkit.views.verdict import run_verdict
from tests.shared import DATASETS
from tests.systems_fixtures import limited_system


class NoGateSystem(ReferenceSystem):
    """The reference store declaring no relevance gate (as the built-in vector stores do)."""

    name = "no-gate"
    capabilities = frozenset({"global_thoughts", "supersession", "contradiction", "projects", "recency"})


@pytest.fixture(scope="module")
def reference() -> EvalRun:
    return run_eval(datasets=DATASETS, thresholds=DATASETS / "thresholds.json")


@pytest.fixture(scope="module")
def below_baseline(tmp_path_factory: pytest.TempPathFactory) -> EvalRun:
    """A run compared with a baseline of 1.0 everywhere (thresholds 0.98 for recall): it fell."""
    ones = {"recall": 1.0, "precision": 1.0, "mrr": 1.0, "hit_rate": 1.0}
    low = {"recall": 0.98, "precision": 0.0, "mrr": 0.0, "hit_rate": 0.0}
    entry = {
        "recorded_at": "2026-01-01T00:00:00+00:00",
        "top_k": 5,
        "baseline": {"overall": {**ones, "queries": 41}, "categories": {}},
        "thresholds": {"overall": low, "categories": {}},
    }
    path = tmp_path_factory.mktemp("baseline") / "thresholds.json"
    path.write_text(json.dumps({"deterministic": entry}), encoding="utf-8")
    return run_eval(datasets=DATASETS, thresholds=path, gated=False)


def _page(run: EvalRun) -> BeautifulSoup:
    parts = [report.section(run, spec.key)._repr_html_() for spec in report.SECTIONS]
    return BeautifulSoup("<h1>evalkit report</h1>" + "".join(parts), "html.parser")


def test_the_first_sections_are_the_verdict_the_losses_then_the_contents() -> None:
    assert [spec.key for spec in report.SECTIONS[:3]] == ["verdict", "losses", "contents"]


def test_the_gate_losses_name_the_scope_and_the_query_and_link_to_their_details(reference: EvalRun) -> None:
    scopes = losses.scope_losses(reference)
    gate = scopes[scopes["against"] == "gate"]
    first = gate.iloc[0]
    assert (first["scope"], first["metric"]) == ("multi-hop", "MRR")
    assert first["delta"] == pytest.approx(-0.2)
    assert list(gate["delta"]) == sorted(gate["delta"])  # the largest fall first
    queries = losses.query_losses(reference)
    assert queries[["scenario", "query #", "lost ids"]].values.tolist() == [["multi-hop", 5, "query-uses-es"]]
    assert "recall 0.333 → 0.000" in queries.iloc[0]["fell"]
    page = _page(reference)
    section = page.find(id="losses").find_next_sibling("div")
    anchors = {tag["id"] for tag in page.find_all(id=True)}
    links = [a["href"] for a in page.find(id="losses").find_all_next("a", limit=12) if a.find_parent("table")]
    assert "#scenario-multi-hop" in links and "#categories" in links
    assert {link[1:] for link in links} <= anchors  # every link lands
    assert section is not None
    assert losses.no_baseline_losses(reference) == "no compared scope fell below its recorded baseline"


def test_the_baseline_losses_list_the_scopes_that_fell_with_their_margin(below_baseline: EvalRun) -> None:
    scopes = losses.scope_losses(below_baseline)
    fell = scopes[scopes["against"] == "baseline"].set_index("metric")
    assert set(fell.index) == {"recall", "precision", "MRR", "hit rate"}
    assert fell.loc["recall", "before"] == 1.0
    assert fell.loc["recall", "margin"] == pytest.approx(fell.loc["recall", "after"] - 0.98)
    assert losses.no_baseline_losses(below_baseline) is None
    text = " ".join(report.section(below_baseline, "losses")._repr_html_().split())
    assert "Against the baseline: the scopes that fell most" in text
    assert "no gated pass" in losses.no_gate_losses(below_baseline)
    verdict = run_verdict(below_baseline)._repr_html_()
    assert "Δ base" in verdict  # something moved: the table, with what Δ and margin mean


def test_an_unmoved_baseline_is_one_line_not_a_table_of_zeros(reference: EvalRun) -> None:
    html = run_verdict(reference)._repr_html_()
    assert (
        "Every compared value (4 metrics × 9 scopes) equals its baseline (Δ 0); each may fall 0.020" in html
    )
    assert "Δ base" not in html and "<table" not in html


def test_a_run_without_a_gated_pass_says_so_in_one_line_per_gate_section() -> None:
    run = run_eval(datasets=DATASETS, system=NoGateSystem(), thresholds=None)
    reason = "the run's system 'no-gate' declares no relevance gate, so the run has no gated pass"
    assert losses.no_gate_losses(run) == reason
    assert losses.no_baseline_losses(run) == "not compared: the run was configured without a thresholds file"
    for key in ("dropped", "sweep", "gate-recommendation"):
        assert report.section(run, key).reason == reason
    reading = report.section(run, "how-to-read")._repr_html_()
    assert "No gated pass: " in reading and "The <b>gated</b> pass applies" not in reading
    assert "then what the gate did" not in report.section(run, "scenarios").intro


def test_another_systems_verdict_is_short_relative_and_advises_the_reports_own_flag(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(DATASETS.parent)
    run = run_eval(datasets=DATASETS, system=limited_system(), thresholds=DATASETS / "thresholds.json")
    html = run_verdict(run)._repr_html_()
    headline = BeautifulSoup(html, "html.parser").find("p").get_text()
    assert headline == "Verdict: NOT COMPARED"
    assert (
        "<b>Baseline check OFF:</b> the baseline for deterministic at top_k 5 in datasets/thresholds.json"
        in html
    )
    assert "`evalkit report -p thresholds PATH`" in html
    assert str(DATASETS) not in html and str(DATASETS) not in tables.run_summary(run).to_html()
    monkeypatch.chdir(tmp_path)  # elsewhere: the built-in baselines by name, not by path
    html = unescape(run_verdict(run)._repr_html_())
    assert "at top_k 5 in the built-in suite's thresholds.json was recorded" in html
    assert str(DATASETS) not in html


def test_a_suite_no_scenario_of_which_applies_still_renders(tmp_path: Path) -> None:
    everything = run_eval(datasets=DATASETS, system=limited_system(), thresholds=None, gated=False)
    names = [row.scenario for row in everything.not_applicable.itertuples()]
    run = run_eval(datasets=DATASETS, system=limited_system(), thresholds=None, scenarios=names)
    assert charts.gate_chart(run).alt_text.startswith("Chart: Ungated vs gated")  # n/a bars: none drawn
    assert _page(run).find(id="losses") is not None


def test_the_failure_table_says_whose_status_it_shows(reference: EvalRun) -> None:
    frame = report.failures_frame(reference)
    row = frame[frame["query_id"] == "retrieval-quality#4"].iloc[0]
    assert (row["scenario status"], row["recall"]) == ("pass", 0.0)
    intro = report.section(reference, "failures").intro
    assert "<code>pass</code> beside recall 0.000 is a query that broke no assertion" in intro


def test_the_candidates_chart_says_why_it_counts_fewer_rows_than_the_gate(reference: EvalRun) -> None:
    gate = reference.result.gated.relevance_gate
    title = charts.candidates_chart(reference).axes[0].get_title()
    assert title == (
        f"Rows that reached the relevance gate (540 of the gated pass's {gate.candidates}: 3 queries with a "
        "gate of their own not drawn)"
    )


def test_a_recommended_gate_at_the_top_of_the_sweep_reads_any(reference: EvalRun) -> None:
    page = BeautifulSoup(tables.gate_recommendation(reference).to_html(), "html.parser")
    gates = {
        row.find_all("td")[1].get_text(): row.find_all("td")[3].get_text() for row in page.select("tbody tr")
    }
    assert gates["overall"] == "any (to 1)"
    assert gates["multi-hop"] == "0.200"  # a real limit


def test_the_uncertainty_caption_is_one_short_line_and_the_method_follows(reference: EvalRun) -> None:
    section = report.section(reference, "uncertainty")
    table, method = section.parts
    assert len(table.caption) < 100
    assert "percentile bootstrap (9999 resamples, seed 0)" in method
