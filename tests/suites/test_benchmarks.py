"""Benchmark runs (evalkit.suites.benchmarks) and the `evalkit bench` command.

Unit tests use the tiny fixtures; expected values are worked out by hand below. Tests marked
`shared_data` run the real SciFact and LoCoMo files and pin the figures recorded in
docs/reproduction.md (the deterministic runs are exactly reproducible).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pandas.io.formats.style import Styler

from evalkit import assert_thresholds, charts, load_run, run_beir, run_locomo, tables
from evalkit.cli import main
from evalkit.errors import DatasetError, UsageError
from evalkit.metrics import HARNESS_METRICS
from evalkit.suites.benchmarks import BEIR_METRICS, LOCOMO_METRICS, bench_metrics, check_ks, files_digest
from evalkit.views.frames import benchmark_metric_frame, question_category_frame
from tests.shared import BEIR_TINY, LOCOMO, LOCOMO_TINY, ROOT, SCIFACT

BEIR_DEFAULT_LABELS = [f"{m}@{k}" for m in BEIR_METRICS for k in (10, 100)]


# --- cutoffs and metric lists ---------------------------------------------------------------------


def test_metric_lists_are_family_times_cutoff_in_order() -> None:
    assert [m.label for m in bench_metrics(BEIR_METRICS, (100, 10))] == [
        "ndcg@10", "ndcg@100", "recall@10", "recall@100", "map@10", "map@100",
        "mrr@10", "mrr@100", "success@10", "success@100",
    ]  # fmt: skip
    assert [m.label for m in bench_metrics(LOCOMO_METRICS, (5, 10))] == [
        "recall@5", "recall@10", "success@5", "success@10", "ndcg@5", "ndcg@10",
    ]  # fmt: skip


@given(st.sets(st.integers(1, 1000), min_size=1, max_size=6))
def test_check_ks_sorts_any_set_of_valid_cutoffs(ks: set[int]) -> None:
    assert check_ks(list(ks)) == tuple(sorted(ks))


@pytest.mark.parametrize("ks", [(), (0,), (1001,), (10, 10), (True,), (2.5,)])
def test_check_ks_rejects_bad_cutoffs(ks: tuple[object, ...]) -> None:
    with pytest.raises(UsageError):
        check_ks(ks)  # type: ignore[arg-type]


def test_files_digest_follows_content_and_names(tmp_path: Path) -> None:
    copy = tmp_path / "beir"
    shutil.copytree(BEIR_TINY, copy)
    files = ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"]
    before = files_digest(copy, [copy / f for f in files])
    assert before == files_digest(BEIR_TINY, [BEIR_TINY / f for f in files])
    with (copy / "qrels" / "test.tsv").open("a") as handle:
        handle.write("q2\td1\t1\n")
    assert files_digest(copy, [copy / f for f in files]) != before


# --- library runs on the tiny fixtures ------------------------------------------------------------


def test_beir_run_scores_the_hand_checked_ranking() -> None:
    # q1 "Does aspirin help headaches?" -> d1 (grade 2) first; q2 "What is in coffee?" -> d2 first;
    # q3 judges only d4 with grade 0 (d9 is not in the corpus): nothing relevant, every metric 0.
    run = run_beir(BEIR_TINY, progress=False)
    assert run.result.top_k == 100
    assert run.result.gated is None
    queries = run.queries
    assert list(queries["query_id"]) == ["q1", "q2", "q3"]
    assert list(queries["retrieved"].map(lambda ids: ids[0])) == ["d1", "d2", "d4"]
    for label in BEIR_DEFAULT_LABELS:
        assert list(queries[label]) == [1.0, 1.0, 0.0], label
    assert set(HARNESS_METRICS) <= set(queries.columns)
    assert run.overall["ndcg@10"].item() == pytest.approx(2 / 3)
    system = run.result.provenance.system
    assert (system["retrieval"], system["tokenizer"]) == ("bm25", "unicode61")
    assert run.result.notes[0].startswith(
        "benchmark: BEIR beir_tiny (test split): 5 documents, 3 judged queries"
    )


def test_locomo_category_table_matches_hand_computed_recall() -> None:
    # conv-1 has 7 turns; BM25 ranks shorter turns first when term counts tie (FTS5 bm25, b=0.75),
    # and equal scores keep insertion order. Per query, relevant turns and their BM25 ranks:
    #   cat 1: "What happened to Rex?" D1:3 (4th of the 4 Rex turns), D2:1 (1st) -> r@1 .5, r@2 .5, r@5 1
    #          "What did Bob do with the violin?" D2:2 (1st), D1:2 (2nd)      -> .5, 1, 1
    #          "What are Bob's hobbies and home?" D1:2: no term matches        -> 0, 0, 0
    #          "What did Ann say about Rex?" D1:1 (2nd), D2:3 (4th or 5th)    -> 0, .5, 1
    #   cat 2: "When did Rex turn one?" D2:1 (1st); "When did Bob play a concert?" D2:2 (1st)
    #   cat 3: "Would Ann visit Portugal?" D2:3 (1st), D1:4 never matched       -> .5, .5, .5
    #   cat 4: puppy D1:1 (1st); "Where did Bob move?" D1:4 (1st, tie with D2:2 broken by
    #          insertion order); "Where was Rex photographed?" D1:3 (4th)       -> 1,1,1 / 1,1,1 / 0,0,1
    run = run_locomo(LOCOMO_TINY, ks=(1, 2, 5), progress=False)
    table = question_category_frame(run, ["recall@1", "recall@2", "recall@5"])
    assert list(table.columns) == ["category", "name", "queries", "recall@1", "recall@2", "recall@5"]
    assert list(table["category"]) == ["1", "2", "3", "4", "overall"]
    assert list(table["name"]) == ["multi-hop", "temporal", "open-domain", "single-hop", ""]
    assert list(table["queries"]) == [4, 2, 1, 3, 10]
    expected = {
        "recall@1": [0.25, 1.0, 0.5, 2 / 3, 0.55],
        "recall@2": [0.5, 1.0, 0.5, 2 / 3, 0.65],
        "recall@5": [0.75, 1.0, 0.5, 1.0, 0.85],
    }
    for label, values in expected.items():
        assert list(table[label]) == pytest.approx(values), label
    assert run.overall["recall@5"].item() == pytest.approx(0.85)


def test_locomo_category_selection_keeps_only_those_questions() -> None:
    run = run_locomo(LOCOMO_TINY, categories=("4", "2"), ks=(5,), progress=False)
    table = question_category_frame(run, ["recall@5"])
    assert list(table["category"]) == ["2", "4", "overall"]
    assert list(table["queries"]) == [2, 3, 5]
    assert "categories evaluated: 2 temporal, 4 single-hop (5 queries)" in run.result.notes[1]


def test_locomo_adversarial_only_runs_conversations_that_have_such_questions() -> None:
    run = run_locomo(LOCOMO_TINY, categories=("5",), ks=(1,), progress=False)
    assert list(run.scenarios["scenario"]) == ["conv-1", "conv-2"]
    assert list(question_category_frame(run, ["recall@1"])["queries"]) == [3, 3]


def test_metric_table_has_one_row_per_conversation_then_overall() -> None:
    run = run_locomo(LOCOMO_TINY, categories=("5",), ks=(1,), progress=False)
    table = benchmark_metric_frame(run)
    assert list(table.columns) == ["scenario", "queries", "recall@1", "success@1", "ndcg@1"]
    assert list(table["scenario"]) == ["conv-1", "conv-2", "overall"]
    assert list(table["queries"]) == [1, 2, 3]


def test_porter_tokenizer_stems_query_terms() -> None:
    # "Where did Bob move?": D1:4 "Bob: I moved to Lisbon last month." and D2:2 "Bob: I played my
    # first violin concert." both have 7 tokens and one "bob"; only Porter stemming lets "move"
    # match "moved", so the tie breaks in D1:4's favour by score, not by insertion order.
    def scores(tokenizer: str) -> dict[str, float]:
        run = run_locomo(LOCOMO_TINY, categories=("4",), ks=(5,), tokenizer=tokenizer, progress=False)
        assert run.result.provenance.system["tokenizer"] == tokenizer
        hits = run.hits[run.hits["query"] == "Where did Bob move?"]
        return dict(zip(hits["id"], hits["bm25_score"], strict=True))

    plain, porter = scores("unicode61"), scores("porter")
    assert plain["conv-1/D1:4"] == pytest.approx(plain["conv-1/D2:2"])
    assert porter["conv-1/D1:4"] > porter["conv-1/D2:2"]


def test_gated_flag_adds_the_report_only_pass() -> None:
    run = run_beir(BEIR_TINY, ks=(10,), gated=True, progress=False)
    assert run.result.gated is not None
    assert run.result.gated.relevance_gate.min_relevance == pytest.approx(0.4)
    assert run.result.pinned_gates.min_relevance == 0.0
    assert run.result.relevance_gate == run.result.gated.relevance_gate
    assert set(run.overall["pass"]) == {"ungated", "gated"}


def test_category_table_refuses_runs_without_query_categories() -> None:
    run = run_beir(BEIR_TINY, ks=(10,), progress=False)
    with pytest.raises(UsageError, match="carry a category"):
        question_category_frame(run, ["recall@10"])
    with pytest.raises(UsageError, match="recall@5 not in this run"):
        benchmark_metric_frame(run, ["recall@5"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"retrieval": "dense"}, "unknown retrieval 'dense'"),
        ({"tokenizer": "snowball"}, "unknown tokenizer 'snowball'"),
        ({"ks": (0,)}, "cutoff 0"),
        ({"model": "x"}, "needs mode 'real'"),
    ],
)
def test_bad_options_raise_usage_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        run_beir(BEIR_TINY, progress=False, **options)  # type: ignore[arg-type]


def test_locomo_unknown_or_empty_categories_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown LoCoMo categories"):
        run_locomo(LOCOMO_TINY, categories=("6",), progress=False)
    with pytest.raises(UsageError, match="no LoCoMo category given"):
        run_locomo(LOCOMO_TINY, categories=(), progress=False)


def test_missing_beir_split_is_a_dataset_error() -> None:
    with pytest.raises(DatasetError, match="available splits: test, train"):
        run_beir(BEIR_TINY, split="dev", progress=False)


# --- the command line -----------------------------------------------------------------------------


def test_cli_beir_writes_a_report_that_loads_back_with_every_metric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.json"
    argv = ["bench", "beir", str(BEIR_TINY), "--tokenizer", "porter", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "retrieval bm25 · tokenizer porter · top_k 100 · ungated" in printed
    assert "ndcg@10" in printed and "recall@100" in printed
    assert f"report: {out}" in printed
    run = load_run(out)
    assert run.result.mode == "deterministic"
    for frame in (run.queries, run.scenarios, run.categories, run.overall):
        assert {*HARNESS_METRICS, *BEIR_DEFAULT_LABELS} <= set(frame.columns)
    assert run.overall["ndcg@10"].item() == pytest.approx(2 / 3)
    assert json.loads(out.read_text())["top_k"] == 100


def test_cli_locomo_prints_the_category_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "locomo.json"
    code = main(["bench", "locomo", str(LOCOMO_TINY), "--k", "1,2,5", "--out", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Per LoCoMo category (ungated):" in printed
    lines = {line.split()[0]: line.split() for line in printed.splitlines() if line.strip()}
    # category, name, queries, recall@1, recall@2, recall@5, success@1, ...
    assert lines["1"][:6] == ["1", "multi-hop", "4", "0.2500", "0.5000", "0.7500"]
    assert lines["4"][:6] == ["4", "single-hop", "3", "0.6667", "0.6667", "1.0000"]
    assert load_run(out).result.top_k == 5


def test_bench_report_renders_with_the_report_notebook_functions(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    assert (
        main(["bench", "locomo", str(LOCOMO_TINY), "--gated-pass", "--out", str(out), "--no-progress"]) == 0
    )
    run = load_run(out)
    assert _data(tables.run_summary(run)).loc["mode", "value"] == "deterministic"
    assert list(_data(tables.scenario_table(run)).index) == ["conv-1"]
    assert list(_data(tables.category_table(run)).index) == ["locomo", "overall"]
    assert len(_data(tables.hits_table(run, "conv-1"))) == (run.hits["pass"] == "ungated").sum()
    assert _data(tables.assertion_failures(run)).empty
    assert _data(tables.regressions_table(run)).empty
    for chart in (charts.gate_chart(run), charts.category_chart(run)):
        assert chart._repr_png_().startswith(b"\x89PNG")
    # a benchmark has no baselines: its verdict is NOT COMPARED, never "No gating regressions."
    assert (
        assert_thresholds(run)
        == "baseline check OFF: no baselines (no thresholds file) — no assertion regressions"
    )
    assert run.result.outcome.value == "NOT COMPARED"


def _data(styler: Styler) -> pd.DataFrame:
    """The frame behind a notebook table (pandas-stubs do not declare `Styler.data`)."""
    frame: pd.DataFrame = styler.data  # type: ignore[attr-defined]
    return frame


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["beir", "/no/such/dir"], "/no/such/dir/corpus.jsonl: file not found"),
        (["locomo", "/no/such/file.json"], "LoCoMo file /no/such/file.json not found"),
        (["beir", str(BEIR_TINY), "--k", "0,10"], "argument --k: cutoff 0 is not an integer from 1 to 1000"),
        (["beir", str(BEIR_TINY), "--k", "10,ten"], "argument --k: expected comma-separated integers"),
        (["beir", str(BEIR_TINY), "--k", "10,10"], "argument --k: cutoff(s) 10 given twice"),
        (["locomo", str(LOCOMO_TINY), "--categories", "1,6"], "unknown LoCoMo categories ['6']"),
        (["locomo", str(LOCOMO_TINY), "--categories", ""], "unknown LoCoMo categories ['']"),
        (["beir", str(BEIR_TINY), "--retrieval", "dense"], "invalid choice: 'dense'"),
        (["beir", str(BEIR_TINY), "--embedder", "rea"], "--embedder: unknown embedder 'rea'"),
        (["beir", str(BEIR_TINY), "--cache", "none"], "--cache needs a real embedder"),
    ],
)
def test_cli_bad_input_exits_2_with_a_clear_message(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.json"
    try:
        code = main(["bench", *argv, "--out", str(out), "--no-progress"])
    except SystemExit as exc:  # argparse rejects bad values itself
        code = int(exc.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


# --- real data (figures recorded in docs/reproduction.md) -----------------------------------------

needs_scifact = pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"shared SciFact data absent at {SCIFACT}")
needs_locomo = pytest.mark.skipif(not LOCOMO.is_file(), reason=f"shared LoCoMo data absent at {LOCOMO}")


@pytest.mark.shared_data
@needs_scifact
def test_scifact_bm25_reproduces_the_recorded_figures() -> None:
    run = run_beir(SCIFACT, retrieval="bm25", progress=False)
    overall = run.overall.iloc[0]
    assert overall["queries"] == 300
    assert overall["ndcg@10"] == pytest.approx(0.6399, abs=0.005)
    assert overall["recall@100"] == pytest.approx(0.8509, abs=0.005)


@pytest.mark.shared_data
@needs_locomo
def test_locomo_bm25_categories_1_to_4_reproduce_the_recorded_recall() -> None:
    run = run_locomo(LOCOMO, retrieval="bm25", progress=False)
    table = question_category_frame(run, ["recall@5", "recall@10"]).set_index("category")
    assert list(table["queries"]) == [282, 321, 92, 841, 1536]
    assert table.loc["overall", "recall@5"] == pytest.approx(0.4952, abs=0.005)
    assert table.loc["overall", "recall@10"] == pytest.approx(0.5630, abs=0.005)
    assert list(table["recall@10"]) == pytest.approx([0.2515, 0.6643, 0.2800, 0.6597, 0.5630], abs=0.005)


@pytest.mark.shared_data
@needs_scifact
def test_scifact_bm25_with_porter_and_spaced_syntax_closes_the_gap_to_anserini() -> None:
    run = run_beir(SCIFACT, retrieval="bm25", tokenizer="porter", query_syntax="space", progress=False)
    overall = run.overall.iloc[0]
    assert overall["ndcg@10"] == pytest.approx(0.6881, abs=0.005)  # Anserini flat: 0.679
    assert overall["recall@100"] == pytest.approx(0.9210, abs=0.005)  # published 0.908-0.925
    assert run.result.provenance.system["query_syntax"] == "space"


def test_report_of_a_bench_result_shows_its_metrics_and_locomo_categories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hand-computed LoCoMo fixture above: recall@5 per category .75, 1, .5, 1; overall .85
    run = run_locomo(LOCOMO_TINY, ks=(1, 2, 5), progress=False)
    categories = _data(tables.question_category_table(run))
    assert list(categories["recall@5"]) == pytest.approx([0.75, 1.0, 0.5, 1.0, 0.85])
    metrics = _data(tables.benchmark_table(run))
    assert list(metrics["scenario"])[-1] == "overall" and metrics["recall@5"].iloc[-1] == pytest.approx(0.85)
    assert "ndcg@5" in metrics.columns
    (ax,) = charts.benchmark_chart(run).axes
    assert [t.get_text() for t in ax.get_xticklabels()] == list(run.extra_metrics)
    saved = run.save(tmp_path / "bench.json")
    monkeypatch.chdir(ROOT)
    argv = ["report", "-p", "report_json", str(saved), "--out-dir", str(tmp_path / "out"), "--no-progress"]
    assert main(argv) == 0
    html = (tmp_path / "out" / "eval_report.html").read_text(encoding="utf-8")
    assert "Benchmark metrics (recall@1" in html and "Per LoCoMo question category" in html
    assert ">single-hop<" in html and ">ndcg@5</th>" in html


def test_benchmark_views_say_when_a_run_has_no_benchmark_metrics() -> None:
    run = run_locomo(LOCOMO_TINY, ks=(5,), progress=False)
    plain = run.__class__(run.result.with_pass(run.result.measurement.model_copy(update={"scenarios": []})))
    assert tables.benchmark_table(plain).caption == "Benchmark metrics: none in this run"
    assert tables.question_category_table(plain).caption == "Per question category: not a LoCoMo run"
    assert "no benchmark metrics" in charts.benchmark_chart(plain).axes[0].texts[0].get_text()
