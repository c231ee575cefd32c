"""Importers: BEIR layout and LoCoMo, on hand-written fixtures (expected values computed by hand
from tests/fixtures/beir_tiny and tests/fixtures/locomo_tiny.json) and on the real shared data."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.errors import MAX_LISTED_PROBLEMS, DatasetError, UsageError
from evalkit.suites.beir import QrelRow, load_beir
from evalkit.suites.locomo import (
    LOCOMO_CATEGORIES,
    STANDARD_CATEGORIES,
    UnresolvedEvidence,
    load_locomo,
    parse_session_datetime,
    resolve_evidence,
)
from tests.shared import BEIR_TINY, LOCOMO, LOCOMO_TINY, SCIFACT

# --- BEIR -----------------------------------------------------------------------------------------


def test_beir_builds_one_thought_per_document_with_title_joined_to_text() -> None:
    scenario = load_beir(BEIR_TINY, progress=False).scenario
    contents = {t.id: t.content for t in scenario.thoughts}
    assert list(contents) == ["d1", "d2", "d3", "d4", "d5"]
    assert contents["d1"] == "Aspirin and headaches\n\nAspirin relieves tension headaches in adults."
    assert contents["d2"] == "Coffee contains caffeine."  # empty title
    assert contents["d3"] == "Sleep"  # empty text
    assert contents["d4"] == "Vitamin C does not prevent colds."  # no title key
    assert scenario.name == "beir-beir-tiny"
    assert scenario.category == "beir"
    assert scenario.distractors is False


def test_beir_queries_keep_graded_qrels_and_relevant_is_grade_at_least_one() -> None:
    queries = load_beir(BEIR_TINY, progress=False).scenario.queries
    assert [(q.id, q.query) for q in queries] == [
        ("q1", "Does aspirin help headaches?"),
        ("q2", "What is in coffee?"),
        ("q3", "Does vitamin C prevent colds?"),
    ]
    assert [(q.relevant, q.grades) for q in queries] == [
        (["d1"], {"d1": 2, "d5": 0}),
        (["d2"], {"d2": 1}),
        ([], {"d4": 0}),  # the unknown d9 is left out, the 0 grade kept
    ]
    assert all(q.top_k is None for q in queries)


def test_beir_report_accounts_for_every_skipped_query_and_unknown_id() -> None:
    report = load_beir(BEIR_TINY, progress=False).report
    assert (report.dataset, report.split) == ("beir_tiny", "test")
    assert (report.documents, report.queries, report.qrels_rows) == (5, 3, 7)
    assert report.queries_without_qrels == ("q4", "q5")
    assert report.unknown_doc_qrels == (QrelRow(6, "q3", "d9", 1), QrelRow(7, "q6", "d8", 1))
    assert report.unknown_query_qrels == (QrelRow(8, "q7", "d1", 1),)
    assert report.queries_without_known_docs == ("q6",)
    assert report.queries_without_relevant == ("q3",)
    assert "queries without qrels in split (skipped): 2" in report.summary()


def test_beir_loads_another_split() -> None:
    loaded = load_beir(BEIR_TINY, "train", progress=False)
    assert [(q.id, q.relevant) for q in loaded.scenario.queries] == [("q4", ["d5"])]
    assert loaded.report.queries_without_qrels == ("q1", "q2", "q3", "q5", "q6")


def test_beir_accepts_crlf_qrels(tmp_path: Path) -> None:
    root = _beir_copy(tmp_path)
    text = (root / "qrels" / "test.tsv").read_text()
    (root / "qrels" / "test.tsv").write_bytes(text.replace("\n", "\r\n").encode())
    assert load_beir(root, progress=False) == load_beir(BEIR_TINY, progress=False)


def test_beir_missing_split_names_the_file_and_the_available_splits() -> None:
    with pytest.raises(DatasetError) as caught:
        load_beir(BEIR_TINY, "dev", progress=False)
    assert "available splits: test, train" in str(caught.value)
    assert caught.value.problems == [f"{BEIR_TINY / 'qrels' / 'dev.tsv'}: file not found"]


def test_beir_missing_directory_lists_every_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        load_beir(tmp_path / "nowhere", progress=False)
    assert len(caught.value.problems) == 3
    assert "no qrels/*.tsv found" in str(caught.value)


def test_beir_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    root = _beir_copy(tmp_path)
    with (root / "corpus.jsonl").open("a") as handle:
        handle.write('{"_id": "d6", "text": \n')
    with pytest.raises(DatasetError) as caught:
        load_beir(root, progress=False)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{root / 'corpus.jsonl'} line 7: malformed JSON")
    assert "fix or remove the line" in problem


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("q1 d2 1", "expected 3 tab-separated fields"),
        ("q1\td2\thigh", "score 'high' is not an integer"),
        ("q1\t\t1", "empty query-id or corpus-id"),
        ("q1\td1\t1", "duplicate judgement of document 'd1' for query 'q1' (first on line 2)"),
    ],
)
def test_beir_bad_qrels_row_names_file_and_line(tmp_path: Path, row: str, message: str) -> None:
    root = _beir_copy(tmp_path)
    with (root / "qrels" / "test.tsv").open("a") as handle:
        handle.write(row + "\n")
    with pytest.raises(DatasetError) as caught:
        load_beir(root, progress=False)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{root / 'qrels' / 'test.tsv'} line 9: ")
    assert message in problem


def test_beir_wrong_qrels_header_is_an_error(tmp_path: Path) -> None:
    root = _beir_copy(tmp_path)
    (root / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    with pytest.raises(DatasetError, match="line 1: expected the header"):
        load_beir(root, progress=False)


def test_beir_reports_problems_of_every_file_at_once(tmp_path: Path) -> None:
    root = _beir_copy(tmp_path)
    with (root / "corpus.jsonl").open("a") as handle:
        handle.write('{"_id": "d1", "text": "again"}\n["not", "an", "object"]\n{"_id": "d7"}\n')
    with (root / "queries.jsonl").open("a") as handle:
        handle.write('{"_id": 8, "text": "numeric id"}\n')
    with (root / "qrels" / "test.tsv").open("a") as handle:
        handle.write("q1\td2\n")
    with pytest.raises(DatasetError) as caught:
        load_beir(root, progress=False)
    problems = caught.value.problems
    assert len(problems) == 5
    assert "line 9: expected 3 tab-separated fields" in problems[0]
    assert "line 7: duplicate document id 'd1' (first on line 1)" in problems[1]
    assert "line 8: expected a JSON object, got list" in problems[2]
    assert 'line 9: "text" must be a string, found missing' in problems[3]
    assert 'queries.jsonl line 7: "_id" must be a string, found a int' in problems[4]


def test_beir_lists_a_screen_of_problems_and_counts_the_rest(tmp_path: Path) -> None:
    root = _beir_copy(tmp_path)
    with (root / "corpus.jsonl").open("a") as handle:
        handle.write("not json\n" * 60)
    with pytest.raises(DatasetError) as caught:
        load_beir(root, progress=False)
    assert len(caught.value.problems) == 60  # all of them, for a caller
    lines = str(caught.value).splitlines()
    assert len(lines) == 1 + MAX_LISTED_PROBLEMS + 1
    assert lines[-1] == f"  - … and {60 - MAX_LISTED_PROBLEMS} more problems"


def test_beir_split_judging_nothing_known_is_an_error(tmp_path: Path) -> None:
    root = _beir_copy(tmp_path)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq6\td8\t1\n")
    with pytest.raises(DatasetError, match=r"no query of .* has a qrels row naming a known document"):
        load_beir(root, progress=False)


def test_progress_bar_goes_to_stderr_only_when_asked_or_on_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    load_beir(BEIR_TINY, progress=True)
    assert "corpus.jsonl" in capsys.readouterr().err
    load_locomo(LOCOMO_TINY, progress=True)
    assert "locomo_tiny.json" in capsys.readouterr().err
    load_beir(BEIR_TINY, progress=False)
    load_beir(BEIR_TINY)  # None: captured stderr is not a terminal
    load_locomo(LOCOMO_TINY)
    assert capsys.readouterr().err == ""


def _beir_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(BEIR_TINY, tmp_path / "beir_tiny"))


# --- LoCoMo: dates and evidence -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:05 am on 1 January, 2024", datetime(2024, 1, 1, 0, 5, tzinfo=UTC)),
        ("12:30 pm on 29 February, 2024", datetime(2024, 2, 29, 12, 30, tzinfo=UTC)),
        (" 10:04 AM on 19 AUGUST, 2023 ", datetime(2023, 8, 19, 10, 4, tzinfo=UTC)),
    ],
)
def test_session_datetime_parses_twelve_hour_clock_as_utc(text: str, expected: datetime) -> None:
    assert parse_session_datetime(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "13:00 pm on 8 May, 2023",
        "0:10 am on 8 May, 2023",
        "1:60 pm on 8 May, 2023",
        "1:56 pm on 30 February, 2023",
        "1:56 pm on 8 Mai, 2023",
        "2023-05-08T13:56:00",
        "1:56 pm on 8 May 2023",
    ],
)
def test_session_datetime_rejects_anything_else(text: str) -> None:
    with pytest.raises(ValueError):
        parse_session_datetime(text)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 12, 31)))
def test_session_datetime_round_trips_locomo_rendering(moment: datetime) -> None:
    moment = moment.replace(second=0, microsecond=0)
    hour = moment.hour % 12 or 12
    meridiem = "am" if moment.hour < 12 else "pm"
    text = f"{hour}:{moment.minute:02d} {meridiem} on {moment.day} {moment.strftime('%B')}, {moment.year}"
    assert parse_session_datetime(text) == moment.replace(tzinfo=UTC)


TURNS = {"D1:1", "D1:2", "D2:3", "D30:5", "D11:26"}


@pytest.mark.parametrize(
    ("raw", "ids", "kinds"),
    [
        ("D1:1", ("D1:1",), ()),
        ("D1:1; D2:3", ("D1:1", "D2:3"), ("split-list",)),
        ("D1:1,D2:3", ("D1:1", "D2:3"), ("split-list",)),
        ("D1:1 D2:3", ("D1:1", "D2:3"), ("split-list",)),
        (" D1:2 ", ("D1:2",), ("trimmed",)),
        ("D1 : 2", ("D1:2",), ("trimmed",)),
        ("D1:2;", ("D1:2",), ("trimmed",)),
        ("1:2", ("D1:2",), ("missing-prefix",)),
        ("D:11:26", ("D11:26",), ("extra-colon",)),
        ("D30:05", ("D30:5",), ("leading-zero",)),
        ("D01:1; 30:005", ("D1:1", "D30:5"), ("split-list", "missing-prefix", "leading-zero")),
    ],
)
def test_evidence_repairs_only_to_existing_turns(
    raw: str, ids: tuple[str, ...], kinds: tuple[str, ...]
) -> None:
    resolution = resolve_evidence(raw, TURNS)
    assert (resolution.ids, resolution.kinds, resolution.unresolved) == (ids, kinds, ())


@pytest.mark.parametrize(
    ("raw", "ids", "unresolved"),
    [
        ("D", (), (("D", "unparseable", None),)),
        ("", (), (("", "unparseable", None),)),
        ("d1:1", (), (("d1:1", "unparseable", None),)),
        ("D4:36", (), (("D4:36", "missing-turn", "D4:36"),)),
        ("D2:07", (), (("D2:07", "missing-turn", "D2:7"),)),
        ("D1:1; D9:9", ("D1:1",), (("D9:9", "missing-turn", "D9:9"),)),
    ],
)
def test_evidence_that_names_no_turn_is_unresolved(
    raw: str, ids: tuple[str, ...], unresolved: tuple[tuple[str, str, str | None], ...]
) -> None:
    resolution = resolve_evidence(raw, TURNS)
    assert (resolution.ids, resolution.unresolved) == (ids, unresolved)
    assert resolution.kinds == (("split-list",) if ids else ())


@given(
    session=st.integers(1, 40),
    turn=st.integers(1, 40),
    prefix=st.sampled_from(["D", "", "D:"]),
    pads=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    padding=st.sampled_from(["", " ", "\t"]),
)
def test_any_unambiguous_spelling_of_a_turn_resolves_to_it(
    session: int, turn: int, prefix: str, pads: tuple[int, int], padding: str
) -> None:
    canonical = f"D{session}:{turn}"
    raw = f"{padding}{prefix}{'0' * pads[0]}{session}:{'0' * pads[1]}{turn}{padding}"
    expected_kinds = tuple(
        kind
        for kind, applied in [
            ("trimmed", bool(padding)),
            ("missing-prefix", prefix == ""),
            ("extra-colon", prefix == "D:"),
            ("leading-zero", pads != (0, 0)),
        ]
        if applied
    )
    resolution = resolve_evidence(raw, {canonical, "D99:99"})
    assert resolution == resolve_evidence(raw, {canonical, "D99:99"})
    assert (resolution.ids, resolution.kinds, resolution.unresolved) == ((canonical,), expected_kinds, ())


@given(raw=st.text(max_size=30), turn_ids=st.sets(st.sampled_from(sorted(TURNS))))
def test_evidence_resolution_only_yields_existing_turns(raw: str, turn_ids: set[str]) -> None:
    resolution = resolve_evidence(raw, turn_ids)
    assert set(resolution.ids) <= turn_ids
    assert resolution.ids or resolution.unresolved
    assert resolution.kinds == () or resolution.ids


# --- LoCoMo: loading ------------------------------------------------------------------------------


def test_locomo_builds_one_scenario_per_conversation_with_namespaced_dated_turns() -> None:
    loaded = load_locomo(LOCOMO_TINY, progress=False)
    conv1, conv2 = loaded.scenarios
    assert (conv1.name, conv1.category, conv1.distractors) == ("conv-1", "locomo", False)
    assert [t.id for t in conv1.thoughts] == [
        f"conv-1/D{s}:{n}" for s, k in ((1, 4), (2, 3)) for n in range(1, k + 1)
    ]
    photo = conv1.thoughts[2]
    assert photo.content == "Ann: Here is Rex at the park. [shares a photo of a small dog on grass]"
    assert conv1.thoughts[0].content == "Ann: I adopted a puppy named Rex."
    assert {t.project for t in conv1.thoughts} == {"conv-1"}
    assert conv1.thoughts[3].created_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert conv1.thoughts[4].created_at == datetime(2024, 1, 1, 0, 5, tzinfo=UTC)
    assert [t.id for t in conv2.thoughts] == ["conv-2/D1:1", "conv-2/D1:2"]
    assert conv2.thoughts[0].created_at == datetime(2024, 2, 29, 12, 30, tzinfo=UTC)


def test_locomo_questions_become_queries_with_repaired_namespaced_evidence() -> None:
    conv1 = load_locomo(LOCOMO_TINY, progress=False).scenarios[0]
    got = {q.id: (q.category, q.relevant) for q in conv1.queries}
    assert got == {
        "conv-1/q0": ("4", ["conv-1/D1:1"]),
        "conv-1/q1": ("1", ["conv-1/D1:3", "conv-1/D2:1"]),
        "conv-1/q2": ("1", ["conv-1/D1:2", "conv-1/D2:2"]),
        "conv-1/q3": ("3", ["conv-1/D1:4", "conv-1/D2:3"]),
        "conv-1/q4": ("2", ["conv-1/D2:1"]),
        "conv-1/q5": ("2", ["conv-1/D2:2"]),
        "conv-1/q6": ("4", ["conv-1/D1:4"]),
        "conv-1/q7": ("4", ["conv-1/D1:3"]),
        "conv-1/q8": ("5", ["conv-1/D1:2"]),
        "conv-1/q11": ("1", ["conv-1/D1:2"]),
        "conv-1/q13": ("1", ["conv-1/D1:1", "conv-1/D2:3"]),
    }
    first = conv1.queries[0]
    assert (first.query, first.project, first.top_k) == ("What is Ann's puppy called?", "conv-1", None)


def test_locomo_report_counts_repairs_by_kind_and_questions_left_out() -> None:
    report = load_locomo(LOCOMO_TINY, progress=False).report
    assert (report.conversations, report.sessions, report.turns) == (2, 3, 9)
    assert (report.questions, report.kept, len(report.without_evidence)) == (16, 13, 3)
    assert report.questions_by_category == {"1": 4, "2": 3, "3": 2, "4": 4, "5": 3}
    assert report.kept_by_category == {"1": 4, "2": 2, "3": 1, "4": 3, "5": 3}
    assert report.repairs_by_kind == {
        "split-list": 4,
        "trimmed": 1,
        "missing-prefix": 2,
        "extra-colon": 1,
        "leading-zero": 2,
        "duplicate": 1,
    }
    assert report.questions_repaired == 9
    duplicate = next(r for r in report.repairs if "duplicate" in r.kinds)
    assert (duplicate.question_id, duplicate.raw, duplicate.ids) == ("conv-1/q8", "D1:2", ())
    assert report.unresolved == (
        UnresolvedEvidence("conv-1", "conv-1/q9", "D", "D", "unparseable", None),
        UnresolvedEvidence("conv-1", "conv-1/q11", "D9:9", "D9:9", "missing-turn", "D9:9"),
        UnresolvedEvidence("conv-1", "conv-1/q12", "D2:07", "D2:07", "missing-turn", "D2:7"),
    )
    assert [(s.question_id, s.category, s.reason) for s in report.without_evidence] == [
        ("conv-1/q9", "4", "unresolvable-evidence"),
        ("conv-1/q10", "3", "no-evidence"),
        ("conv-1/q12", "2", "unresolvable-evidence"),
    ]
    assert report.orphan_session_dates == ("conv-1/session_3_date_time",)
    assert report.conversations_without_queries == ()
    summary = report.summary()
    assert "questions: 16, kept: 13, without evidence: 3" in summary
    assert "1 multi-hop 4/4" in summary


def test_locomo_with_categories_keeps_standard_questions_and_drops_emptied_conversations() -> None:
    loaded = load_locomo(LOCOMO_TINY, progress=False)
    standard = loaded.with_categories(STANDARD_CATEGORIES)
    assert [s.name for s in standard.scenarios] == ["conv-1"]
    assert standard.query_count == 10
    assert {q.category for q in standard.scenarios[0].queries} == {"1", "2", "3", "4"}
    assert standard.report == loaded.report
    assert loaded.query_count == 13  # the original is untouched
    only_adversarial = loaded.with_categories(["5"])
    assert [(s.name, len(s.queries)) for s in only_adversarial.scenarios] == [("conv-1", 1), ("conv-2", 2)]


def test_locomo_with_unknown_category_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"unknown LoCoMo categories \['6'\]"):
        load_locomo(LOCOMO_TINY, progress=False).with_categories(["1", "6"])


def test_locomo_category_names_follow_the_official_evaluation_code() -> None:
    assert LOCOMO_CATEGORIES == {
        "1": "multi-hop",
        "2": "temporal",
        "3": "open-domain",
        "4": "single-hop",
        "5": "adversarial",
    }


def test_locomo_conversation_without_any_resolvable_question_is_reported(tmp_path: Path) -> None:
    data = json.loads(LOCOMO_TINY.read_text())
    data[1]["qa"] = [{"question": "Anything?", "evidence": ["D7:7"], "category": 4}]
    loaded = load_locomo(_write(tmp_path, data), progress=False)
    assert [s.name for s in loaded.scenarios] == ["conv-1"]
    assert loaded.report.conversations_without_queries == ("conv-2",)
    assert loaded.report.questions == loaded.report.kept + len(loaded.report.without_evidence)


def test_locomo_bad_session_date_names_conversation_and_session(tmp_path: Path) -> None:
    data = json.loads(LOCOMO_TINY.read_text())
    data[0]["conversation"]["session_2_date_time"] = "yesterday"
    with pytest.raises(DatasetError) as caught:
        load_locomo(_write(tmp_path, data), progress=False)
    (problem,) = caught.value.problems
    assert "conversation conv-1 session_2_date_time: 'yesterday' is not of the form" in problem


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d[0]["conversation"].pop("session_1_date_time"),
            'session_1: "session_1_date_time" is missing',
        ),
        (
            lambda d: d[0]["conversation"]["session_2"].append(dict(d[0]["conversation"]["session_1"][0])),
            "session_2 turn #3: duplicate dia_id 'D1:1'",
        ),
        (
            lambda d: d[0]["conversation"]["session_1"][0].pop("text"),
            "session_1 turn #0: a turn needs string",
        ),
        (lambda d: d[0]["qa"][0].update(category=6), "qa #0: category 6 is not an integer 1-5"),
        (lambda d: d[0]["qa"][0].update(evidence="D1:1"), 'qa #0: "evidence" must be a list of strings'),
        (lambda d: d[1].update(sample_id="conv-1"), "conversation conv-1: duplicate sample_id"),
        (lambda d: d[1].update(sample_id="Conv 2"), "sample_id must be kebab-case"),
    ],
)
def test_locomo_structural_problems_name_the_item_and_the_fix(
    tmp_path: Path, edit: Callable[[list[Any]], object], message: str
) -> None:
    data = json.loads(LOCOMO_TINY.read_text())
    edit(data)
    with pytest.raises(DatasetError) as caught:
        load_locomo(_write(tmp_path, data), progress=False)
    assert any(message in problem for problem in caught.value.problems), caught.value.problems


def test_locomo_malformed_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"sample_id": "conv-1",\n  }\n]\n')
    with pytest.raises(DatasetError, match=r"broken.json line 3 column 3: malformed JSON"):
        load_locomo(path, progress=False)


def test_locomo_missing_file_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"not found; pass the path of locomo10\.json"):
        load_locomo(tmp_path / "locomo10.json", progress=False)


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    return path


# --- real data ------------------------------------------------------------------------------------

needs_scifact = pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"shared SciFact data absent at {SCIFACT}")
needs_locomo = pytest.mark.skipif(not LOCOMO.is_file(), reason=f"shared LoCoMo data absent at {LOCOMO}")


@pytest.mark.shared_data
@needs_scifact
def test_real_scifact_test_split_has_300_queries_over_5183_documents() -> None:
    loaded = load_beir(SCIFACT, progress=False)
    report = loaded.report
    assert (report.documents, report.queries, report.qrels_rows) == (5183, 300, 339)
    assert len(report.queries_without_qrels) == 809
    assert report.unknown_doc_qrels == report.unknown_query_qrels == ()
    assert loaded.scenario.name == "beir-scifact"
    assert sum(len(q.relevant) for q in loaded.scenario.queries) == 339


@pytest.mark.shared_data
@needs_locomo
def test_real_locomo_accounts_for_all_1986_questions() -> None:
    loaded = load_locomo(LOCOMO, progress=False)
    report = loaded.report
    assert (report.conversations, report.sessions, report.turns) == (10, 272, 5882)
    assert len(loaded.scenarios) == 10
    assert report.questions == report.kept + len(report.without_evidence) == 1986
    assert report.kept == loaded.query_count == 1982
    assert report.questions_by_category == {"1": 282, "2": 321, "3": 96, "4": 841, "5": 446}
    assert report.kept_by_category == {"1": 282, "2": 321, "3": 92, "4": 841, "5": 446}
    assert report.repairs_by_kind == {"split-list": 4, "extra-colon": 1, "leading-zero": 1, "duplicate": 1}
    assert [(u.question_id, u.piece, u.reason) for u in report.unresolved] == [
        ("conv-42/q58", "D10:19", "missing-turn"),
        ("conv-42/q88", "D", "unparseable"),
        ("conv-47/q38", "D4:36", "missing-turn"),
    ]
    assert {s.reason for s in report.without_evidence} == {"no-evidence"}
    assert len(report.orphan_session_dates) == 16
    assert loaded.with_categories(STANDARD_CATEGORIES).query_count == 1536
    first = loaded.scenarios[0].thoughts[0]
    assert (first.id, first.created_at) == ("conv-26/D1:1", datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    dates = {t.created_at for s in loaded.scenarios for t in s.thoughts}
    assert all(isinstance(d, datetime) and d.tzinfo is UTC for d in dates)
