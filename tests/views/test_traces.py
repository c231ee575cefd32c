"""Views of an imported production replay (evalkit.views.traces) on the trace fixtures
(tests/fixtures/traces/README.md): hand-computed latencies, counts and metrics, and the packaged
sample that the `traces` notebook defaults to."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from evalkit import traces
from evalkit.benchmarks import score_run, trace_replay
from evalkit.columns import TRACE_QUERY_COLUMNS
from evalkit.errors import ReportError
from evalkit.packaged import SAMPLE_TRACES
from evalkit.suites.trace_import import import_traces
from evalkit.views.traces import TraceReplay, load_trace_queries
from tests.shared import FIXTURES

TRACES = FIXTURES / "traces"


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> TraceReplay:
    out = tmp_path_factory.mktemp("import") / "imported"
    import_traces(
        [TRACES / "genai_memory.jsonl", TRACES / "retrieval.json"], out, labels=TRACES / "labels.jsonl"
    )
    queries, holds, warnings = load_trace_queries(out)
    return TraceReplay(queries, holds, warnings, score_run(out / "run.jsonl", datasets=out))


def test_the_query_log_frame_has_the_documented_columns(replay: TraceReplay) -> None:
    frame = replay.queries
    assert tuple(frame.columns) == TRACE_QUERY_COLUMNS and len(frame) == 6
    assert frame["start"].is_monotonic_increasing and str(frame["start"].dt.tz) == "UTC"
    assert not replay.holds_user_text and len(replay.warnings) == 1


def test_latency_per_store_by_hand(replay: TraceReplay) -> None:
    frame = traces.store_latency(replay.queries).set_index("store")
    # user-preferences-store: 30 and 45 ms; linear quantiles 37.5 / 43.5 / 44.85
    assert frame.loc["user-preferences-store", ["searches", "timed"]].tolist() == [2, 2]
    assert frame.loc[
        "user-preferences-store", ["p50_ms", "p90_ms", "p99_ms", "max_ms"]
    ].tolist() == pytest.approx([37.5, 43.5, 44.85, 45.0])
    assert frame.loc["ms_abc123", "p50_ms"] == pytest.approx(17.5)  # 10 and 25 ms
    assert list(frame.index) == ["user-preferences-store", "ms_abc123", "H7STPQYOND", "(none)"]


def test_a_store_without_timed_searches_has_no_quantiles() -> None:
    queries = pd.DataFrame({"store_id": ["s"], "latency_ms": [float("nan")]})
    row = traces.store_latency(queries).iloc[0]
    assert (
        (row["searches"], row["timed"]) == (1, 0) and math.isnan(row["p50_ms"]) and math.isnan(row["max_ms"])
    )


def test_measures_without_labels_by_hand(replay: TraceReplay) -> None:
    frame = traces.store_measures(replay.queries).set_index("store")
    user = frame.loc["user-preferences-store"]
    assert (user["searches"], user["labelled"], user["with_forbid"], user["forbidden_returned"]) == (
        2,
        1,
        1,
        1,
    )
    assert user["stale_rate"] == pytest.approx(0.25)  # 0 and 1/2
    other = frame.loc["ms_abc123"]
    assert (other["mean_results"], other["empty"], other["degenerate"]) == (1.0, 1, 2)  # empty; unidentified


def test_top_queries_by_result_count(replay: TraceReplay) -> None:
    top = traces.top_queries(replay.queries, 2)
    assert top["query_id"].tolist() == [
        "0af7651916cd43dd8448eb211c80319c/b7ad6b7169203331",  # 3 results
        "5b8efff798038103d269b633813fc60c/eee19b7ec3c1b174",  # 2 results, the earliest of those
    ]
    assert top["query"].tolist() == ["(no content)", "(no content)"]  # imported without --with-content


def test_labelled_subset_metrics(replay: TraceReplay) -> None:
    frame = traces.labelled_table(replay).data.set_index("store")
    assert frame.loc["overall", "queries"] == 2
    assert frame.loc["H7STPQYOND", ["recall", "precision", "mrr"]].tolist() == pytest.approx(
        [1.0, 1 / 3, 0.5]
    )
    assert frame.loc["overall", "precision"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert "Labelled searches (2 of 6)" in traces.labelled_table(replay).caption


def test_summary_chart_and_tables_render(replay: TraceReplay) -> None:
    assert traces.replay_summary(replay).startswith("6 searches from 4 stores; 2 labelled")
    assert "1 returned a record deleted before them" in traces.replay_summary(replay)
    chart = traces.latency_chart(replay)
    assert chart.alt_text == "Chart: Search latency per store" and chart._repr_png_().startswith(b"\x89PNG")
    for table in (
        traces.latency_table(replay),
        traces.measures_table(replay),
        traces.top_queries_table(replay),
    ):
        assert table.to_html()


def test_the_notebook_default_is_the_packaged_sample(tmp_path: Path) -> None:
    for name in ("genai_memory.jsonl", "retrieval.json", "labels.jsonl"):
        assert (SAMPLE_TRACES / name).read_bytes() == (
            TRACES / name
        ).read_bytes()  # one story, never drifting
    sample = trace_replay()
    assert len(sample.queries) == 6 and not sample.run.ok  # the forbid the sample violates gates
    report = tmp_path / "score.json"
    sample.run.save(report)
    out = tmp_path / "imported"
    import_traces([SAMPLE_TRACES / "genai_memory.jsonl"], out)
    saved = trace_replay(out, report)
    assert saved.run.result.overall.queries == 2 and len(saved.queries) == 4


def test_a_foreign_query_log_is_a_report_error(tmp_path: Path) -> None:
    (tmp_path / "queries.json").write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(ReportError, match="not a query log"):
        load_trace_queries(tmp_path)
    with pytest.raises(ReportError, match="cannot read the query log"):
        load_trace_queries(tmp_path / "missing.json")
