"""LongMemEval: the importer (evalkit.suites.longmemeval), its benchmark set and `evalkit bench
longmemeval`, on `tests/fixtures/longmemeval_tiny.json` (five questions in the published format,
written for these tests; expected values worked out by hand below)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalkit import load_run
from evalkit.benchmarks import run_longmemeval
from evalkit.cli import main
from evalkit.errors import DatasetError, UsageError
from evalkit.suites.benchmarks import LONGMEMEVAL_METRICS, longmemeval_set
from evalkit.suites.longmemeval import load_longmemeval, parse_haystack_date
from evalkit.views.frames import question_category_frame
from tests.shared import FIXTURES

TINY = FIXTURES / "longmemeval_tiny.json"


def test_haystack_dates_parse_as_utc() -> None:
    assert parse_haystack_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    for bad in ("2023-05-20 02:21", "2023/05/20 02:21", "2023/02/30 (Thu) 10:00", "2023/05/20 (Sat) 25:00"):
        with pytest.raises(ValueError):
            parse_haystack_date(bad)


def test_session_level_seeds_user_turns_of_each_session_with_its_date() -> None:
    loaded = load_longmemeval(TINY, "session")
    first = loaded.scenarios[0]
    assert (first.name, first.category, first.measure_only, first.distractors) == (
        "q-user-1",
        "longmemeval",
        False,
        False,
    )
    assert [t.id for t in first.thoughts] == [
        "q_user_1/sharegpt_x1",
        "q_user_1/answer_a1",
        "q_user_1/ultrachat_y1",
    ]
    answer = first.thoughts[1]
    assert answer.content == "I adopted a beagle named Rufus last spring.\nWe walk in the park every morning."
    assert answer.created_at == datetime(2023, 5, 2, 18, 40, tzinfo=UTC)
    query = first.queries[0]
    assert (query.id, query.category, query.relevant) == (
        "q_user_1",
        "single-session-user",
        ["q_user_1/answer_a1"],
    )
    multi = loaded.scenarios[1].queries[0]
    assert multi.relevant == ["q_multi_2/answer_b1", "q_multi_2/answer_b2"]


def test_turn_level_numbers_turns_from_one_counting_assistant_turns() -> None:
    loaded = load_longmemeval(TINY, "turn")
    multi = loaded.scenarios[1]
    assert [t.id for t in multi.thoughts] == [
        "q_multi_2/answer_b1/1",
        "q_multi_2/sharegpt_z1/1",
        "q_multi_2/answer_b2/1",
        "q_multi_2/answer_b2/3",
    ]
    assert multi.queries[0].relevant == ["q_multi_2/answer_b1/1", "q_multi_2/answer_b2/3"]
    # the single-session-assistant question's evidence is an assistant turn: not seeded, no query
    assert "q-assist-3" not in [s.name for s in loaded.scenarios]
    assert loaded.report.without_evidence == ("q_assist_3",)


def test_abstention_questions_are_measure_only_and_counted_in_the_report() -> None:
    for granularity in ("session", "turn"):
        report = load_longmemeval(TINY, granularity).report
        assert report.abstention == ("q_user_4_abs",)
        assert report.questions == report.scored + len(report.abstention) + len(report.without_evidence) == 5
        assert report.answer_sessions_without_marked_turn == 1  # answer_c1: evidence on the assistant side
    abstention = load_longmemeval(TINY).scenarios[-1]
    assert (abstention.name, abstention.category, abstention.measure_only) == (
        "q-user-4-abs",
        "longmemeval-abstention",
        True,
    )


def test_turn_run_scores_per_question_type_without_the_abstention_question() -> None:
    run = run_longmemeval(TINY, "turn", progress=False)
    queries = run.queries
    assert queries["counted"].tolist() == [True, True, True, False]
    assert queries["measure_only"].tolist() == [False, False, False, True]
    # q_ku_5: BM25 puts the filler turn (it says "office" and "city", like the question) first, then both
    # evidence turns: nDCG@5 = (1/log2 3 + 1/log2 4) / (1 + 1/log2 3)
    ku = queries.set_index("scenario").loc["q-ku-5"]
    assert ku["retrieved"] == ["q_ku_5/sharegpt_e2/1", "q_ku_5/answer_e1/1", "q_ku_5/answer_e3/1"]
    expected_ndcg = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ku["ndcg@5"] == pytest.approx(expected_ndcg)
    table = question_category_frame(run, ["recall@5", "success@5", "ndcg@5"]).set_index("category")
    assert table["queries"].to_dict() == {
        "knowledge-update": 1,
        "multi-session": 1,
        "single-session-user": 1,
        "overall": 3,
    }
    assert table.loc["overall", "ndcg@5"] == pytest.approx((1 + 1 + expected_ndcg) / 3)
    overall = run.overall.iloc[0]
    assert overall["queries"] == 3  # the abstention question is not in the aggregates
    assert set(run.result.categories) == {"longmemeval"}


def test_benchmark_set_names_its_metrics_and_notes() -> None:
    bench = longmemeval_set(TINY, "session", (1, 3))
    assert [m.label for m in bench.metrics] == [f"{m}@{k}" for m in LONGMEMEVAL_METRICS for k in (1, 3)]
    assert bench.top_k == 3
    assert "1 abstention" in bench.notes[0] and "each question is its own store" in bench.notes[1]


def test_unknown_granularity_or_run_option_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown granularity 'message'"):
        load_longmemeval(TINY, "message")
    with pytest.raises(UsageError, match="unknown run option"):
        run_longmemeval(TINY, top_kk=3)


def test_every_problem_of_a_bad_file_is_listed_once(tmp_path: Path) -> None:
    items = json.loads(TINY.read_text())
    del items[0]["answer_session_ids"]
    items[1]["haystack_dates"] = items[1]["haystack_dates"][:2]
    items[2]["haystack_dates"][0] = "yesterday"
    items[3]["haystack_sessions"][0][0]["role"] = "system"
    items[4]["question_id"] = "q_multi_2"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(items))
    with pytest.raises(DatasetError) as caught:
        load_longmemeval(bad)
    problems = caught.value.problems
    assert len(problems) == 5, problems
    assert '"answer_session_ids" (missing)' in problems[0] and "question #0" in problems[0]
    assert "lengths 3, 2, 3" in problems[1]
    assert "session #0 (sharegpt_w1) date" in problems[2]
    assert "answer_e1" in problems[3] and "role" in problems[3]
    assert "scenario name 'q-multi-2' already used" in problems[4]
    assert all(str(bad) in p for p in problems)


@pytest.mark.parametrize("text", ["{}", "[]", "[1, "])
def test_a_file_that_is_not_a_question_list_is_a_dataset_error(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(DatasetError, match="LongMemEval file"):
        load_longmemeval(bad)


def test_cli_prints_the_question_type_table_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lme.json"
    code = main(
        ["bench", "longmemeval", str(TINY), "--granularity", "turn", "--out", str(out), "--no-progress"]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "Per question type (ungated):" in printed
    assert "knowledge-update" in printed and "recall_all@10" in printed
    loaded = load_run(out)
    assert loaded.queries.equals(run_longmemeval(TINY, "turn", progress=False).queries)


def test_cli_rejects_an_unknown_granularity(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["bench", "longmemeval", str(TINY), "--granularity", "message"])
    assert caught.value.code == 2
    assert "invalid choice: 'message'" in capsys.readouterr().err


def test_a_session_repeated_in_a_haystack_is_seeded_once_and_a_clashing_one_is_an_error(
    tmp_path: Path,
) -> None:
    items = json.loads(TINY.read_text())
    first = items[0]
    for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
        first[key].append(first[key][1])  # answer_a1 again, same turns
    repeated = tmp_path / "repeated.json"
    repeated.write_text(json.dumps(items))
    loaded = load_longmemeval(repeated)
    assert loaded.report.repeated_sessions == ("q_user_1/answer_a1",)
    assert [t.id for t in loaded.scenarios[0].thoughts].count("q_user_1/answer_a1") == 1
    first["haystack_sessions"][-1] = [{"role": "user", "content": "something else"}]
    repeated.write_text(json.dumps(items))
    with pytest.raises(DatasetError, match=r"session #3: session id 'answer_a1' .* names an earlier session"):
        load_longmemeval(repeated)


def test_a_question_id_without_letters_or_digits_cannot_name_a_scenario(tmp_path: Path) -> None:
    items = json.loads(TINY.read_text())[:1]
    items[0]["question_id"] = "__"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(items))
    with pytest.raises(DatasetError, match="question __: question_id has no letter or digit"):
        load_longmemeval(bad)
