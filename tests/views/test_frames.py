"""The DataFrames API: documented columns, tidy rows, identical frames after a JSON round trip."""

from __future__ import annotations

import pandas as pd
import pytest

import evalkit
from evalkit.views.frames import FRAME_NAMES
from tests.shared import DATASETS


@pytest.fixture(scope="module")
def run() -> evalkit.EvalRun:
    return evalkit.run_eval(datasets=DATASETS, thresholds=DATASETS / "thresholds.json")


def test_frames_have_the_documented_columns(run):
    assert list(run.queries.columns) == list(evalkit.columns.QUERY_COLUMNS)
    assert list(run.hits.columns) == list(evalkit.columns.HIT_COLUMNS)
    assert list(run.dropped.columns) == list(evalkit.columns.DROPPED_COLUMNS)
    assert list(run.scenarios.columns) == list(evalkit.columns.SCENARIO_COLUMNS)
    assert list(run.categories.columns) == list(evalkit.columns.CATEGORY_COLUMNS)
    assert list(run.overall.columns) == list(evalkit.columns.OVERALL_COLUMNS)
    assert list(run.regressions.columns) == list(evalkit.columns.REGRESSION_COLUMNS)
    assert list(run.gate_comparison().columns) == list(evalkit.columns.GATE_COMPARISON_COLUMNS)


def test_categories_are_listed_in_suite_order_in_report_and_frames(run, tmp_path):
    # File-name order: ... recency-gentle.yaml (temporal) comes before retrieval-quality.yaml.
    suite_order = [
        "consolidation", "contradiction", "explicit-fact", "multi-hop", "project-scope", "temporal",
        "retrieval-quality", "supersession",
    ]  # fmt: skip
    assert list(run.result.categories) == suite_order
    assert list(run.categories[run.categories["pass"] == "ungated"]["category"]) == suite_order
    assert list(evalkit.load_run(run.save(tmp_path / "report.json")).result.categories) == suite_order


def test_one_row_per_pass_per_query_and_per_hit(run):
    n_queries = sum(len(s.queries) for s in run.result.scenarios)
    assert len(run.queries) == 2 * n_queries
    assert set(run.queries["pass"]) == {"ungated", "gated"}
    n_hits = sum(len(q.hits) for p in run.passes.values() for s in p.scenarios for q in s.queries)
    assert len(run.hits) == n_hits
    # rows are ordered by rank within each query
    for _, group in run.hits.groupby(["pass", "scenario", "query_number"], sort=False):
        assert list(group["rank"]) == list(range(1, len(group) + 1))


def test_overall_frame_matches_the_report(run):
    ungated = run.overall.set_index("pass").loc["ungated"]
    assert ungated["recall"] == pytest.approx(run.result.overall.metrics["recall"])
    assert ungated["queries"] == run.result.overall.queries
    gated = run.overall.set_index("pass").loc["gated"]
    assert gated["min_relevance"] == 0.4
    assert gated["dropped_rows"] == run.result.gated.relevance_gate.dropped_rows


def test_dropped_by_gate_flags_match_the_dropped_frame(run):
    flagged = run.hits[(run.hits["pass"] == "ungated") & run.hits["dropped_by_gate"]]
    dropped = set(zip(run.dropped["scenario"], run.dropped["query_number"], run.dropped["id"], strict=True))
    assert len(flagged) > 0
    for row in flagged.itertuples():
        assert (row.scenario, row.query_number, row.id) in dropped
    assert not run.hits[run.hits["pass"] == "gated"]["dropped_by_gate"].any()


def test_gate_comparison_deltas_and_drops(run):
    comparison = run.gate_comparison().set_index("scenario")
    scenarios = run.scenarios.set_index(["pass", "scenario"])
    for name, row in comparison.iterrows():
        assert row["recall"] == scenarios.loc[("ungated", name), "recall"]
        assert row["recall_gated"] == scenarios.loc[("gated", name), "recall"]
        assert row["recall_delta"] == pytest.approx(row["recall_gated"] - row["recall"])
        assert row["dropped_rows"] == scenarios.loc[("gated", name), "dropped_rows"]
    assert comparison["dropped_rows"].sum() == run.result.gated.relevance_gate.dropped_rows


def test_load_run_gives_identical_frames(run, tmp_path):
    path = run.save(tmp_path / "report.json")
    loaded = evalkit.load_run(path)
    assert loaded.result == run.result
    original, reloaded = run.frames(), loaded.frames()
    assert set(original) == set(FRAME_NAMES)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(original[name], reloaded[name], check_dtype=True)


def test_no_gated_pass_gives_empty_comparison_with_columns():
    run = evalkit.run_eval(datasets=DATASETS, thresholds=None, gated=False, scenarios=["temporal"])
    assert run.gate_comparison().empty
    assert list(run.gate_comparison().columns) == list(evalkit.columns.GATE_COMPARISON_COLUMNS)
    assert set(run.queries["pass"]) == {"ungated"}


def test_load_run_errors_name_the_file(tmp_path):
    with pytest.raises(evalkit.errors.ReportError, match="does not exist"):
        evalkit.load_run(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"mode": 1}')
    with pytest.raises(evalkit.errors.ReportError, match="is not an evalkit report"):
        evalkit.load_run(bad)


def test_run_eval_rejects_bad_arguments():
    with pytest.raises(evalkit.UsageError, match="top_k"):
        evalkit.run_eval(datasets=DATASETS, top_k=0)
    with pytest.raises(evalkit.UsageError, match="unknown embedder mode"):
        evalkit.run_eval(datasets=DATASETS, mode="fancy")


def test_ties_are_recorded_per_query_and_read_as_unknown_from_older_reports(run, tmp_path):
    import json

    queries = run.queries[run.queries["pass"] == "ungated"].set_index(["scenario", "query_number"])
    assert queries["tied"].sum() == 2 and not queries["tied_at_cut"].any()
    assert queries.loc[("multi-hop", 3), "tied"] and queries.loc[("multi-hop", 3), "tied_relevant"]
    report = json.loads(run.save(tmp_path / "report.json").read_text())
    for part in (report, report["gated"]):
        for s in part["scenarios"]:
            for q in s["queries"]:
                q.pop("ties")  # a report written before ties were recorded
    older = tmp_path / "older.json"
    older.write_text(json.dumps(report))
    frame = evalkit.load_run(older).queries
    assert frame["tied"].isna().all() and frame["tied_at_cut"].isna().all()
    assert (frame["tied_relevant"].map(len) == 0).all()
