"""Run files and TREC interop: reading TREC/JSONL runs (evalkit.suites.runfiles), the replay
system, `evalkit score` and `evalkit export --trec`. The exported files are checked with
ir_measures (an independent implementation of trec_eval's measures) and scored back to the
same metrics."""

from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, datetime
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, RR, R, Success, nDCG

from evalkit import EvalRun, assert_thresholds, charts, load_run, run_eval, tables
from evalkit.benchmarks import export_trec, run_beir, run_longmemeval, score_run
from evalkit.cli import main
from evalkit.errors import DatasetError, UsageError
from evalkit.harness.results import HitRecord
from evalkit.records import Hit
from evalkit.scenarios import load_suite, stable_query_id
from evalkit.suites.benchmarks import beir_set, longmemeval_set
from evalkit.suites.runfiles import RunHit, check_run, read_run, run_format
from evalkit.systems import ReplaySystem
from evalkit.systems.base import OpenContext, SearchOptions
from tests.shared import BEIR_TINY, DATASETS, FIXTURES, SCIFACT

LONGMEMEVAL_TINY = FIXTURES / "longmemeval_tiny.json"
HARNESS = ["recall", "precision", "mrr", "hit_rate"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- reading ------------------------------------------------------------------------------------


def test_trec_rows_are_ordered_by_rank_with_the_score_as_relevance(tmp_path: Path) -> None:
    run = read_run(_write(tmp_path / "r.trec", "q1 Q0 b 2 0.5 t\nq1 Q0 a 1 0.9 t\n\nq2 Q0 c 0 3 t\n"))
    assert [(h.id, h.rank, h.relevance, h.low_confidence) for h in run.rankings["q1"]] == [
        ("a", 1, 0.9, None),
        ("b", 2, 0.5, None),
    ]
    assert run.lines == {"q1": {"a": 2, "b": 1}, "q2": {"c": 4}}
    assert run.describe()["queries"] == 2 and run.format == "trec"


def test_every_problem_of_a_trec_run_is_listed_with_its_line(tmp_path: Path) -> None:
    text = "q1 Q0 a 1 2 t\nq1 Q0 a 2 1 t\nq1 Q0 b 2 0 t\nq2 Q0 c one 1 t\nq2 Q0 c 1 nan t\nq3 Q0 d\n"
    text += "q4 Q0 e 1 1 t\nq4 Q0 f 2 5 t\n"
    with pytest.raises(DatasetError) as caught:
        read_run(_write(tmp_path / "bad.trec", text))
    problems = caught.value.problems
    assert len(problems) == 6, problems
    assert "line 4: rank 'one' must be an integer" in problems[0]
    assert "line 5: score 'nan' is not finite" in problems[1]
    assert "line 6: 3 columns" in problems[2]
    assert "line 2: query 'q1' lists 'a' again (first on line 1)" in problems[3]
    assert "line 3: query 'q1' has two documents at rank 2 (line 2)" in problems[4]
    assert "line 8: query 'q4' scores rank 2 (5) above rank 1 (1)" in problems[5]


def test_jsonl_results_take_ids_or_objects_with_signals(tmp_path: Path) -> None:
    signals = '{"id": "b", "low_confidence": true, "match_source": ["bm25"]}'
    text = f'{{"query_id": "q1", "results": ["a", {signals}]}}\n'
    run = read_run(_write(tmp_path / "r.jsonl", text))
    a, b = run.rankings["q1"]
    assert (a.id, a.rank, a.low_confidence, a.relevance) == ("a", 1, None, 0.0)
    assert (b.id, b.rank, b.low_confidence, b.match_source) == ("b", 2, True, ("bm25",))


def test_every_problem_of_a_jsonl_run_is_listed_with_its_line(tmp_path: Path) -> None:
    text = "\n".join(
        [
            '{"query_id": "q1", "results": ["a"]}',
            '{"query_id": "q1", "results": ["b"]}',
            '{"query_id": "q2", "results": [{"id": "a", "score": 1}]}',
            '{"query_id": "q3", "results": ["a", "a"]}',
            '{"query_id": "q4"',
            '{"results": []}',
            "[" * 100_000 + "]" * 100_000,  # a traceback (exit 1) before
        ]
    )
    with pytest.raises(DatasetError) as caught:
        read_run(_write(tmp_path / "bad.jsonl", text))
    problems = caught.value.problems
    assert len(problems) == 6, problems
    assert any("line 7: JSON nested deeper than Python's limit" in p for p in problems)
    assert "line 2: query id 'q1' again (first on line 1)" in problems[0]
    assert "line 3: results[0].score: unknown key 'score'" in problems[1]
    assert "line 4: query 'q3' lists a more than once" in problems[2]
    assert "line 5: malformed JSON" in problems[3]
    assert "line 6: query_id" in problems[4]


def test_the_format_follows_the_suffix_unless_given(tmp_path: Path) -> None:
    assert run_format("x.jsonl") == run_format("x.JSON") == "jsonl"
    assert run_format("x.txt") == run_format("run") == "trec"
    assert run_format("x.jsonl", "trec") == "trec"
    with pytest.raises(UsageError, match="unknown run format 'csv'"):
        run_format("x", "csv")
    with pytest.raises(DatasetError, match="not found"):
        read_run(tmp_path / "absent.trec")


# --- matching a run against a suite -------------------------------------------------------------


def test_unknown_queries_and_documents_are_errors_missing_queries_score_zero(tmp_path: Path) -> None:
    suite = load_suite(DATASETS)
    assert stable_query_id("temporal", 1, None) == "temporal#2"
    run = read_run(
        _write(tmp_path / "r.trec", "temporal#1 Q0 nothing 1 1 t\nnope#1 Q0 x 1 1 t\ntemporal/1 Q0 x 1 1 t\n")
    )
    with pytest.raises(DatasetError) as caught:
        check_run(run, suite)
    assert len(caught.value.problems) == 3
    assert "line 1: document 'nothing' of query 'temporal#1' is not a thought of scenario 'temporal'" in str(
        caught.value
    )
    assert "line 2: query id 'nope#1' is not a query of the suite" in str(caught.value)
    assert (
        "line 3: query id 'temporal/1' is the old 0-based form; queries are numbered from 1 now: "
        "write 'temporal#2'"
    ) in str(caught.value)
    seeded = next(t.id for s in suite.scenarios if s.name == "temporal" for t in s.thoughts)
    (note,) = check_run(read_run(_write(tmp_path / "ok.trec", f"temporal#1 Q0 {seeded} 1 1 t\n")), suite)
    total = sum(len(s.queries) for s in suite.scenarios)
    assert f"1 of {total} queries have results; {total - 1} without results score 0" in note


def test_the_replay_system_returns_the_recorded_hits_cut_to_top_k(tmp_path: Path) -> None:
    hits = tuple(
        Hit(id=i, content="", project="", rank=r, similarity=None, distance=None, match_source=(),
            rrf_score=None, bm25_score=None, relevance=0.0, low_confidence=None)
        for r, i in enumerate("abc", start=1)
    )  # fmt: skip
    system = ReplaySystem({"q": hits}, {"run_file": "r"})
    options = dict(project=None, min_relevance=None, recency_weight=0.0, recency_half_life_days=30.0)
    now = datetime(2024, 1, 1, tzinfo=UTC)
    with system.open(OpenContext(tmp_path)) as memory:
        assert memory.add_thoughts([]) == 0
        assert memory.search("text", SearchOptions(top_k=2, now=now, query_id="q", **options)).ids == [
            "a",
            "b",
        ]
        assert memory.search("text", SearchOptions(top_k=2, now=now, query_id="other", **options)).ids == []
        assert memory.search("text", SearchOptions(top_k=2, now=now, **options)).ids == []
    assert system.describe() == {"system": "replay", "run_file": "r"}
    assert list(tmp_path.iterdir()) == []


# --- export, ir_measures, round trip ------------------------------------------------------------


def _ir_measures_values(run_path: Path, qrels_path: Path, measures: list) -> dict[tuple[str, str], float]:
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    ranking = list(ir_measures.read_trec_run(str(run_path)))
    return {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, ranking)}


def _queries_by_stable_id(run: EvalRun) -> dict[str, dict]:
    frame = run.queries[run.queries["pass"] == "ungated"]
    return {row["query_id"]: row for _, row in frame.iterrows()}


@pytest.mark.parametrize(
    ("make_run", "pairs"),
    [
        (
            lambda: run_beir(BEIR_TINY, ks=(1, 3, 10), progress=False),
            {"ndcg@10": nDCG @ 10, "ndcg@1": nDCG @ 1, "recall@3": R @ 3, "map@10": AP @ 10,
             "mrr@10": RR @ 10, "success@1": Success @ 1},
        ),
        (
            lambda: run_longmemeval(LONGMEMEVAL_TINY, "turn", ks=(1, 5, 10), progress=False),
            {"ndcg@10": nDCG @ 10, "ndcg@1": nDCG @ 1, "recall@1": R @ 1, "recall@5": R @ 5,
             "success@1": Success @ 1},
        ),
        (lambda: run_eval(datasets=DATASETS, gated=False), {"mrr": RR, "hit_rate": Success @ 5}),
    ],
    ids=["beir-graded", "longmemeval-turn", "builtin"],
)  # fmt: skip
def test_ir_measures_reads_the_export_and_agrees_with_evalkit(tmp_path: Path, make_run, pairs) -> None:
    run = make_run()
    run_path, qrels_path, _ = export_trec(run, tmp_path)
    values = _ir_measures_values(run_path, qrels_path, list(pairs.values()))
    queries = _queries_by_stable_id(run)
    checked = 0
    for qid, row in queries.items():
        for label, measure in pairs.items():
            key = (qid, str(measure))
            if key in values:  # ir_measures scores queries that have both judgements and results
                assert values[key] == pytest.approx(row[label], abs=1e-9), (qid, label)
                checked += 1
            elif row["n_relevant"] and row["n_retrieved"]:
                pytest.fail(f"ir_measures did not score {qid}")
    assert checked >= len(pairs) * 3


def test_the_export_keeps_grades_and_a_score_order_equal_to_rank_order(tmp_path: Path) -> None:
    run = run_beir(BEIR_TINY, ks=(10,), progress=False)
    run_path, qrels_path, jsonl_path = export_trec(run, tmp_path / "out")
    assert "q1 0 d1 2\nq1 0 d5 0\n" in qrels_path.read_text()
    for qid, hits in read_run(run_path).rankings.items():
        scores = [h.relevance for h in hits]
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores), qid
    assert load_run(run.save(tmp_path / "r.json")).result.scenarios[0].queries[0].grades == {"d1": 2, "d5": 0}
    assert jsonl_path.name == "run.jsonl"


@pytest.mark.parametrize("name", ["run.trec", "run.jsonl"])
def test_scoring_the_exported_benchmark_run_gives_identical_metrics(tmp_path: Path, name: str) -> None:
    original = run_longmemeval(LONGMEMEVAL_TINY, "session", progress=False)
    export_trec(original, tmp_path)
    replayed = score_run(tmp_path / name, longmemeval_set(LONGMEMEVAL_TINY, "session"), progress=False)
    metrics = [*HARNESS, *original.extra_metrics]
    assert replayed.queries[["scenario", "retrieved", *metrics]].equals(
        original.queries[["scenario", "retrieved", *metrics]]
    )
    assert replayed.overall[metrics].equals(original.overall[metrics])
    assert replayed.result.system == "replay" and replayed.result.provenance.embedder is None


def test_the_builtin_round_trip_is_lossless_in_jsonl_and_trec_lacks_confidence(tmp_path: Path) -> None:
    original = run_eval(datasets=DATASETS, thresholds=DATASETS / "thresholds.json")
    export_trec(load_run(original.save(tmp_path / "report.json")), tmp_path)
    columns = ["scenario", "query_number", "retrieved", *HARNESS]
    ungated = original.queries[original.queries["pass"] == "ungated"][columns].reset_index(drop=True)
    from_jsonl = score_run(tmp_path / "run.jsonl", datasets=DATASETS, thresholds=DATASETS / "thresholds.json")
    assert from_jsonl.queries[columns].equals(ungated)
    assert [s.status for s in from_jsonl.result.scenarios] == [s.status for s in original.result.scenarios]
    assert from_jsonl.ok == original.ok
    from_trec = score_run(tmp_path / "run.trec", datasets=DATASETS, thresholds=DATASETS / "thresholds.json")
    # a TREC run carries no confidence signal: the no-match probe, which asserts it, is not
    # applicable (never failed, never passed vacuously); every other query scores as recorded
    assert from_trec.result.not_applicable == {"no-match": ["confidence"]}
    scored = ungated[ungated["scenario"] != "no-match"].reset_index(drop=True)
    assert from_trec.queries[columns].reset_index(drop=True).equals(scored)
    assert from_trec.result.overall == original.result.overall  # no-match is measure-only
    assert from_trec.result.regressions == [] and from_trec.ok


# --- CLI ----------------------------------------------------------------------------------------


def test_cli_export_then_score_against_beir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "bench.json"
    assert main(["bench", "beir", str(BEIR_TINY), "--k", "1,3", "--out", str(report), "--no-progress"]) == 0
    assert main(["export", "--trec", str(report), str(tmp_path / "out")]) == 0
    assert "run.trec" in capsys.readouterr().out
    scored = tmp_path / "scored.json"
    argv = ["score", "--run", str(tmp_path / "out" / "run.trec"), "--beir", str(BEIR_TINY), "--k", "1,3"]
    assert main([*argv, "--out", str(scored), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "system replay" in printed and "replayed run file" in printed
    before, after = load_run(report), load_run(scored)
    assert after.overall[after.extra_metrics].equals(before.overall[before.extra_metrics])
    assert math.isclose(after.overall["ndcg@3"].iloc[0], before.overall["ndcg@3"].iloc[0])


def test_cli_score_builtin_gates_and_bad_runs_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    assert main(["run", "--out", str(report), "--gated-pass", "off"]) == 0
    assert main(["export", "--trec", str(report), str(tmp_path)]) == 0
    assert (
        main(["score", "--run", str(tmp_path / "run.jsonl"), "--suite", "builtin", "--out", str(report)]) == 0
    )
    assert "No gating regressions." in capsys.readouterr().out
    assert (
        main(["score", "--run", str(tmp_path / "run.trec"), "--suite", "builtin", "--out", str(report)]) == 0
    )
    assert "no-match (no-match): needs confidence" in capsys.readouterr().out
    bad = _write(tmp_path / "bad.trec", "explicit-fact#1 Q0 unknown-id 1 1 t\n")
    assert main(["score", "--run", str(bad), "--suite", "builtin", "--out", str(report)]) == 2
    assert "document 'unknown-id' of query 'explicit-fact#1'" in capsys.readouterr().err
    assert main(["score", "--run", str(bad), "--suite", "builtin", "--k", "5"]) == 2


def test_cli_score_reads_the_project_suite_and_gates_on_its_own_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evalkit score --suite builtin` resolves its suite like `evalkit run`: the project file's
    `datasets`, checked against `<datasets>/thresholds.json`; --thresholds overrides it."""
    shutil.copytree(DATASETS, tmp_path / "suite")
    thresholds = tmp_path / "suite" / "thresholds.json"
    data = json.loads(thresholds.read_text(encoding="utf-8"))
    data["deterministic@5"]["thresholds"]["overall"]["recall"] = 1.0  # the exported run regresses
    data["deterministic@5"]["system"] = {"name": "replay"}  # ... on a baseline of the replay system
    thresholds.write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "evalkit.toml").write_text('datasets = "suite"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "run",
                "--out",
                "first.json",
                "--gated-pass",
                "off",
                "--thresholds",
                str(DATASETS / "thresholds.json"),
            ]
        )
        == 0
    )
    assert main(["export", "--trec", "first.json", "out"]) == 0
    capsys.readouterr()
    assert main(["score", "--run", "out/run.jsonl", "--suite", "builtin", "--out", "scored.json"]) == 1
    assert "[metric] overall: recall " in capsys.readouterr().out
    assert load_run("scored.json").result.provenance.dataset_digest == load_suite("suite").digest
    builtin = ["--thresholds", str(DATASETS / "thresholds.json")]
    assert (
        main(["score", "--run", "out/run.jsonl", "--suite", "builtin", "--out", "scored.json", *builtin]) == 0
    )
    # the built-in baselines are the reference store's: a replayed run is not compared with them
    assert "Verdict: NOT COMPARED" in capsys.readouterr().out


def test_a_measure_only_scenario_not_applicable_to_a_trec_run_leaves_the_overall_gated(
    tmp_path: Path,
) -> None:
    export_trec(run_eval(datasets=DATASETS, gated=False), tmp_path)
    data = json.loads((DATASETS / "thresholds.json").read_text(encoding="utf-8"))
    data["deterministic@5"]["thresholds"]["overall"]["recall"] = 1.0
    data["deterministic@5"]["system"] = {"name": "replay"}  # a baseline of the replay system
    strict = _write(tmp_path / "strict.json", json.dumps(data))
    scored = score_run(tmp_path / "run.trec", datasets=DATASETS, thresholds=strict)
    assert scored.result.not_applicable == {"no-match": ["confidence"]}  # measure-only: no mean moves
    assert [(r.kind, r.category, r.metric) for r in scored.result.regressions] == [("metric", None, "recall")]


def test_benchmark_sets_used_for_scoring_are_the_bench_ones(tmp_path: Path) -> None:
    bench = beir_set(BEIR_TINY, ks=(1, 3))
    run = score_run(_write(tmp_path / "r.trec", "q1 Q0 d1 1 1 t\n"), bench, progress=False)
    assert run.result.top_k == 3
    assert run.overall["queries"].iloc[0] == 3  # the two queries without results score 0
    assert run.overall["success@1"].iloc[0] == pytest.approx(1 / 3)


def test_a_score_report_renders_with_the_report_notebook_functions(tmp_path: Path) -> None:
    export_trec(run_eval(datasets=DATASETS, gated=False), tmp_path)
    scored = score_run(tmp_path / "run.trec", datasets=DATASETS, thresholds=DATASETS / "thresholds.json")
    run = load_run(scored.save(tmp_path / "score.json"))
    summary: pd.DataFrame = tables.run_summary(run).data  # type: ignore[attr-defined]
    assert summary.loc["system", "value"] == "replay"
    assert "replayed run file" in summary.loc["notes", "value"]
    assert run.not_applicable["scenario"].tolist() == ["no-match"]  # a TREC run has no confidence
    assert charts.category_chart(run)._repr_png_().startswith(b"\x89PNG")
    # the built-in baselines are the reference store's, not the replay's: metrics are not compared
    assert "was recorded for system reference; this run evaluated replay" in assert_thresholds(run)
    assert run.result.outcome.value == "NOT COMPARED"


def test_jsonl_signals_are_the_report_hit_fields() -> None:
    # the export writes HitRecord fields and the reader validates them: the two must not drift
    assert set(RunHit.model_fields) == set(HitRecord.model_fields) - {"rank", "relevant"}


@pytest.mark.shared_data
@pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"shared SciFact data absent at {SCIFACT}")
def test_scifact_export_gives_ir_measures_the_recorded_figures_and_scores_back(tmp_path: Path) -> None:
    run = run_beir(SCIFACT, retrieval="bm25", progress=False)
    run_path, qrels_path, _ = export_trec(run, tmp_path)
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    ranking = list(ir_measures.read_trec_run(str(run_path)))
    pairs = {"ndcg@10": nDCG @ 10, "recall@100": R @ 100, "map@100": AP @ 100, "success@10": Success @ 10}
    aggregate = ir_measures.calc_aggregate(list(pairs.values()), qrels, ranking)
    overall = run.overall.iloc[0]
    for label, measure in pairs.items():  # every SciFact query retrieves something: same denominators
        assert aggregate[measure] == pytest.approx(overall[label], abs=1e-9), label
    assert overall["ndcg@10"] == pytest.approx(0.6399, abs=0.00005)  # service stopwords (issue 15)
    replayed = score_run(run_path, beir_set(SCIFACT), progress=False)
    assert replayed.overall[run.extra_metrics].equals(run.overall[run.extra_metrics])


@pytest.mark.parametrize(
    ("bench_argv", "against", "title"),
    [
        (["locomo", str(FIXTURES / "locomo_tiny.json")], ["--locomo", str(FIXTURES / "locomo_tiny.json")],
         "Per LoCoMo category (ungated):"),
        (["longmemeval", str(LONGMEMEVAL_TINY), "--granularity", "turn"],
         ["--longmemeval", str(LONGMEMEVAL_TINY), "--granularity", "turn"], "Per question type (ungated):"),
    ],
    ids=["locomo", "longmemeval"],
)  # fmt: skip
def test_cli_scores_conversation_benchmarks_with_their_category_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bench_argv: list[str], against: list[str], title: str
) -> None:
    report, scored = tmp_path / "bench.json", tmp_path / "scored.json"
    assert main(["bench", *bench_argv, "--out", str(report), "--no-progress"]) == 0
    assert main(["export", "--trec", str(report), str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["score", "--run", str(tmp_path / "run.jsonl"), *against, "--out", str(scored)]) == 0
    assert title in capsys.readouterr().out
    before, after = load_run(report), load_run(scored)
    assert after.queries[before.extra_metrics].equals(before.queries[before.extra_metrics])
