"""Production replay from OpenTelemetry traces: reading OTLP JSON (evalkit.suites.traces), the
labelling rules (trace_labels), the import `evalkit score` reads (trace_import) and the
regression scenario of a failing search (trace_scenarios), through the library and the CLI.

The fixtures (tests/fixtures/traces/, see its README.md) are written from the conventions'
published examples: the OTLP envelope of opentelemetry-proto `examples/trace.json`, the
attribute names and example values of semantic-conventions-genai `model/gen-ai/spans.yaml` and
`docs/registry/attributes/gen-ai.md` (gen_ai memory and retrieval spans, the MemoryRecord and
retrieval-documents examples, one record without an id as in `memory-records-records.yaml`),
and OpenInference `spec/semantic_conventions.md` (RETRIEVER spans, flattened documents).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from evalkit import record_baseline, run_eval
from evalkit.benchmarks import score_run
from evalkit.cli import main
from evalkit.errors import DatasetError, UsageError
from evalkit.scenarios import load_suite
from evalkit.suites.trace_import import (
    IMPORT_FILES,
    QUERY_LOG,
    QUERY_LOG_FIELDS,
    QUERY_LOG_FORMAT,
    RUN_FILE,
    ImportCounts,
    degenerate,
    import_traces,
    plan_import,
)
from evalkit.suites.trace_labels import label_searches, read_labels
from evalkit.suites.trace_scenarios import trace_scenario, write_trace_scenario
from evalkit.suites.traces import CONVENTIONS, MemoryOp, Record, read_traces
from tests.shared import FIXTURES

TRACES = FIXTURES / "traces"
MEMORY = TRACES / "genai_memory.jsonl"
RETRIEVAL = TRACES / "retrieval.json"
LABELS = TRACES / "labels.jsonl"

T_FIRST = "5b8efff798038103d269b633813fc60c"  # the first search
T_DELETE = "5b8efff798038103d269b633813fc60d"  # the delete and the update
T_LATER = "5b8efff798038103d269b633813fc60e"  # the later searches
FIRST = f"{T_FIRST}/eee19b7ec3c1b174"
LATER = f"{T_LATER}/eee19b7ec3c1b179"
EMPTY = f"{T_LATER}/eee19b7ec3c1b17a"
NO_ID = f"{T_LATER}/eee19b7ec3c1b17b"
GEN_AI_RETRIEVAL = "0af7651916cd43dd8448eb211c80319c/b7ad6b7169203331"
OPENINFERENCE = "0af7651916cd43dd8448eb211c80319c/b7ad6b7169203332"
VEG = "mem_5j66UpCpwteGg4YSxUnt7lPY"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_lines(path: Path, requests: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    return path


def _spans(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _span(requests: list[dict[str, Any]], span_id: str) -> dict[str, Any]:
    return next(s for r in requests for s in _spans(r) if s["spanId"] == span_id)


def _attr(span: dict[str, Any], key: str) -> dict[str, Any]:
    return next(a for a in span["attributes"] if a["key"] == key)


def _drop_attr(span: dict[str, Any], key: str) -> None:
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key]


# --- reading ---------------------------------------------------------------------------------


def test_reads_every_retrieval_span_of_the_three_conventions() -> None:
    traces = read_traces([MEMORY, RETRIEVAL])
    searches = {op.query_id: op for op in traces.searches}
    assert list(searches) == [FIRST, LATER, EMPTY, NO_ID, GEN_AI_RETRIEVAL, OPENINFERENCE]  # time order
    first = searches[FIRST]
    assert (first.convention, first.store_id, first.query) == (
        "gen_ai.memory",
        "user-preferences-store",
        "user dietary preferences",
    )
    assert [(r.id, r.score, r.content) for r in first.records] == [
        (VEG, 0.95, "User prefers vegetarian meals"),
        ("mem_123", 0.41, "User prefers dark mode"),
    ]  # gen_ai.memory.records given as the JSON string the conventions allow
    assert first.latency_ms == 30.0
    assert searches[LATER].records[0].id == VEG  # gen_ai.memory.records as a structured array
    assert searches[EMPTY].records == ()  # gen_ai.memory.record.count 0: an empty result
    retrieval = searches[GEN_AI_RETRIEVAL]
    assert (retrieval.convention, retrieval.store_id, retrieval.top_k) == (
        "gen_ai.retrieval",
        "H7STPQYOND",
        3,
    )
    assert [(r.id, r.score) for r in retrieval.records] == [
        ("doc_123", 0.95),
        ("doc_456", 0.87),
        ("doc_789", 0.82),
    ]
    oi = searches[OPENINFERENCE]
    assert (oi.convention, oi.store_id, oi.query) == ("openinference", "", "sample document")
    assert [(r.id, r.score, r.content) for r in oi.records] == [
        ("1234", 0.98, "This is a sample document content."),
        ("1", 0.9, "Another sample document."),
    ]  # an intValue document.id becomes its decimal string
    kinds = [(op.kind, op.operation) for op in traces.operations if op.kind != "search"]
    assert kinds == [("delete", "delete_memory"), ("write", "update_memory")]
    assert traces.spans == 11 and set(CONVENTIONS) == {"gen_ai.memory", "gen_ai.retrieval", "openinference"}


def test_a_single_request_document_and_snake_case_names_are_read(tmp_path: Path) -> None:
    request = _lines(MEMORY)[0]
    pretty = tmp_path / "body.json"
    pretty.write_text(json.dumps(request, indent=2), encoding="utf-8")
    snake = json.loads(
        json.dumps(request)
        .replace('"resourceSpans"', '"resource_spans"')
        .replace('"scopeSpans"', '"scope_spans"')
        .replace('"traceId"', '"trace_id"')
        .replace('"spanId"', '"span_id"')
        .replace('"stringValue"', '"string_value"')
    )
    snake_file = _write_lines(tmp_path / "snake.jsonl", [snake])
    assert [op.query_id for op in read_traces([pretty]).searches] == [FIRST]
    assert [op.query for op in read_traces([snake_file]).searches] == ["user dietary preferences"]


def test_record_without_id_keeps_its_rank_under_a_placeholder_and_is_warned() -> None:
    traces = read_traces([MEMORY])
    search = next(op for op in traces.searches if op.query_id == NO_ID)
    assert [r.id for r in search.records] == ["mem_123", "unidentified/eee19b7ec3c1b17b/2"]
    assert search.records[1].placeholder
    (warning,) = [w for w in traces.warnings if "records[1].id" in w]
    assert warning.startswith(f"{MEMORY}: trace {T_LATER} span eee19b7ec3c1b17b: gen_ai.memory.records[1].id")


def test_search_without_query_or_records_is_warned_per_span(tmp_path: Path) -> None:
    requests = _lines(MEMORY)
    _drop_attr(_span(requests, "eee19b7ec3c1b174"), "gen_ai.memory.query.text")
    _drop_attr(_span(requests, "eee19b7ec3c1b179"), "gen_ai.memory.records")
    traces = read_traces([_write_lines(tmp_path / "t.jsonl", requests)])
    ids = [op.query_id for op in traces.searches]
    assert FIRST in ids and LATER not in ids  # no query: still scored; no records: skipped
    assert any(
        f"trace {T_FIRST} span eee19b7ec3c1b174: gen_ai.memory.query.text missing" in w
        for w in traces.warnings
    )
    assert any(
        f"trace {T_LATER} span eee19b7ec3c1b179: gen_ai.memory.records missing" in w and "span skipped" in w
        for w in traces.warnings
    )


def test_unknown_attributes_are_reported_never_read(tmp_path: Path) -> None:
    body = json.loads(RETRIEVAL.read_text(encoding="utf-8"))
    span = _span([body], "b7ad6b7169203331")
    _attr(span, "gen_ai.request.top_k")["key"] = "gen_ai.retrieval.top_k"
    span["attributes"].append({"key": "gen_ai.retrieval.rerank", "value": {"boolValue": True}})
    oi = _span([body], "b7ad6b7169203332")
    oi["attributes"].append({"key": "retrieval.documents.0.document.title", "value": {"stringValue": "x"}})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    traces = read_traces([path])
    assert next(op for op in traces.searches if op.query_id == GEN_AI_RETRIEVAL).top_k is None
    assert any(
        "gen_ai.retrieval.top_k is not in the conventions read (it is gen_ai.request.top_k now)" in w
        for w in traces.warnings
    )
    assert any(
        "span b7ad6b7169203331: gen_ai.retrieval.rerank is not an attribute" in w for w in traces.warnings
    )
    assert any(
        "span b7ad6b7169203332: retrieval.documents.0.document.title is not an attribute" in w
        for w in traces.warnings
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# a Markdown file\n", "not JSON (Expecting value at line 1 column 1)"),
        ('{"spans": []}\n', "not OTLP JSON: expected an object with a 'resourceSpans' list"),
        ("[1, 2]", "not OTLP JSON"),
        ("", "empty"),
        ("[" * 100_000 + "]" * 100_000, "JSON nested deeper than Python's limit"),  # a traceback before
    ],
)
def test_a_file_that_is_not_otlp_json_is_an_error(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match="nothing was written") as caught:
        read_traces([path])
    assert any(p.startswith(str(path)) and expected in p for p in caught.value.problems)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"top_k": float("inf")}, "gen_ai.request.top_k inf is not a positive whole number; ignored"),
        ({"top_k": float("nan")}, "gen_ai.request.top_k nan is not a positive whole number; ignored"),
        ({"startTimeUnixNano": float("inf")}, "startTimeUnixNano inf is not unix nanoseconds; time ignored"),
        ({"startTimeUnixNano": str(10**26)}, "is after the year 9999; time ignored"),
    ],
)
def test_hostile_numbers_in_a_span_are_warnings_not_tracebacks(tmp_path: Path, change, expected) -> None:
    requests = _lines(MEMORY)
    span = _span(requests, FIRST.split("/")[1])
    if "top_k" in change:
        _drop_attr(span, "gen_ai.request.top_k")
        span["attributes"].append({"key": "gen_ai.request.top_k", "value": {"doubleValue": change["top_k"]}})
    else:
        span.update(change)
    traces = read_traces([_write_lines(tmp_path / "t.jsonl", requests)])
    assert any(expected in w for w in traces.warnings), traces.warnings


def test_duplicate_span_ids_and_bad_ids_are_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        read_traces([MEMORY, MEMORY])
    assert any(
        p.startswith(f"{MEMORY}: trace {T_FIRST} span eee19b7ec3c1b174: duplicate span id")
        for p in caught.value.problems
    )
    requests = _lines(MEMORY)
    _span(requests, "eee19b7ec3c1b174")["traceId"] = "not-hex"
    with pytest.raises(DatasetError, match="32-hex-digit trace id"):
        read_traces([_write_lines(tmp_path / "t.jsonl", requests)])
    with pytest.raises(DatasetError, match="not found"):
        read_traces([tmp_path / "missing.jsonl"])


def test_degenerate_rankings_need_no_label() -> None:
    def search(*records: Record) -> MemoryOp:
        return MemoryOp(
            "search",
            "gen_ai.memory",
            "search_memory",
            "f",
            "a" * 32,
            "b" * 16,
            None,
            1,
            2,
            "s",
            records=records,
        )

    assert degenerate(search()) == ["empty"]
    assert degenerate(search(Record("x", None, None), Record("y", None, None))) == ["unscored"]
    assert degenerate(search(Record("x", 0.5, None), Record("y", 0.5, None))) == ["tied"]
    assert degenerate(search(Record("x", 0.2, None), Record("y", 0.9, None))) == ["unsorted"]
    assert degenerate(search(Record("x", 0.9, None), Record("u/1", 0.1, None, placeholder=True))) == [
        "unidentified"
    ]
    assert degenerate(search(Record("x", 0.9, None), Record("y", 0.1, None))) == []


# --- labels ----------------------------------------------------------------------------------


def test_a_record_deleted_earlier_is_forbidden_for_later_searches_only() -> None:
    labels, warnings = label_searches(read_traces([MEMORY]))
    assert labels[LATER].forbid == (VEG,)
    assert labels[FIRST].forbid == ()  # the delete came after it
    assert labels[NO_ID].forbid == ()  # another store
    assert not any(q.labelled for q in labels.values()) and warnings == ()


def test_an_update_marks_the_content_returned_afterwards_stale() -> None:
    labels, _ = label_searches(read_traces([MEMORY]))
    assert labels[LATER].stale == ("mem_123",)  # returned "dark mode" after the update to "light mode"
    assert labels[FIRST].stale == ()


def test_rules_are_optional_and_the_label_file_always_wins() -> None:
    traces = read_traces([MEMORY, RETRIEVAL])
    off, _ = label_searches(traces, rules=False)
    assert all(q.forbid == () and q.stale == () for q in off.values())
    explicit = {LATER: (VEG,), **read_labels(LABELS)}
    labels, _ = label_searches(traces, explicit)
    assert labels[LATER].relevant == (VEG,) and labels[LATER].forbid == ()  # a person said relevant
    assert labels[GEN_AI_RETRIEVAL].relevant == ("doc_456",) and labels[FIRST].labelled


def test_a_write_after_the_delete_brings_the_record_back(tmp_path: Path) -> None:
    requests = _lines(MEMORY)
    update = _span(requests, "eee19b7ec3c1b177")
    _attr(update, "gen_ai.memory.record.id")["value"] = {"stringValue": VEG}
    _attr(update, "gen_ai.memory.records")["value"] = {
        "stringValue": json.dumps([{"id": VEG, "content": "x"}])
    }
    labels, _ = label_searches(read_traces([_write_lines(tmp_path / "t.jsonl", requests)]))
    assert labels[LATER].forbid == ()


def test_clock_skew_and_overlap_label_nothing_and_are_warned(tmp_path: Path) -> None:
    requests = _lines(MEMORY)
    delete = _span(requests, "eee19b7ec3c1b176")
    delete["endTimeUnixNano"] = str(int(delete["startTimeUnixNano"]) - 5_000_000)  # ends before it starts
    traces = read_traces([_write_lines(tmp_path / "skew.jsonl", requests)])
    assert any(
        f"trace {T_DELETE} span eee19b7ec3c1b176: endTimeUnixNano is 5 ms before" in w
        for w in traces.warnings
    )
    labels, warnings = label_searches(traces)
    assert labels[LATER].forbid == ()
    assert any("eee19b7ec3c1b176" in w and f"not used to label search {LATER}" in w for w in warnings)
    requests = _lines(MEMORY)
    search = _span(requests, "eee19b7ec3c1b179")
    delete = _span(requests, "eee19b7ec3c1b176")
    parent = _span(requests, "eee19b7ec3c1b175")
    parent["endTimeUnixNano"] = search["endTimeUnixNano"]
    delete["endTimeUnixNano"] = search["endTimeUnixNano"]  # the delete still runs when the search starts
    labels, warnings = label_searches(read_traces([_write_lines(tmp_path / "overlap.jsonl", requests)]))
    assert labels[LATER].forbid == ()
    assert any(f"overlaps search {LATER} in time" in w for w in warnings)
    requests = _lines(MEMORY)
    child = _span(requests, "eee19b7ec3c1b176")
    child["startTimeUnixNano"] = str(int(_span(requests, "eee19b7ec3c1b175")["startTimeUnixNano"]) - 1)
    traces = read_traces([_write_lines(tmp_path / "parent.jsonl", requests)])
    assert any("lie outside its parent span eee19b7ec3c1b175" in w for w in traces.warnings)


def test_label_files_in_both_formats_and_unknown_query_ids(tmp_path: Path) -> None:
    qrels = tmp_path / "labels.qrels"
    qrels.write_text(f"{FIRST} 0 {VEG} 2\n{FIRST} 0 mem_123 0\n", encoding="utf-8")
    assert read_labels(qrels) == {FIRST: (VEG,)}
    assert read_labels(LABELS)[FIRST] == (VEG,)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "x", "relevant": "y"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1"):
        read_labels(bad)
    with pytest.raises(DatasetError, match="not searches of the traces"):
        label_searches(read_traces([MEMORY]), {"0" * 32 + "/" + "1" * 16: ("x",)})


# --- the import ------------------------------------------------------------------------------


def test_import_writes_a_run_and_a_suite_that_score_reads(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    result = import_traces([MEMORY, RETRIEVAL], out, labels=LABELS)
    assert {p.relative_to(out).parts[0] for p in result.files} == set(IMPORT_FILES)
    assert (result.searches, result.labelled, result.forbidden) == (6, 2, 1)
    suite = load_suite(out)
    assert [s.name for s in suite.scenarios] == [
        "h7stpqyond-labelled",
        "ms-abc123-unlabelled",
        "no-store-unlabelled",
        "user-preferences-store-labelled",
        "user-preferences-store-unlabelled",
    ]
    run = score_run(out / RUN_FILE, datasets=out)
    assert run.result.overall.queries == 2  # only the labelled searches are averaged
    assert run.result.overall.metrics["recall"] == 1.0
    assert any(
        n.startswith("production replay of 6 searches imported from OpenTelemetry traces: 2 labelled")
        and n.endswith("holds user text: no")
        for n in run.result.notes
    )
    (regression,) = run.result.regressions
    assert "forbid" in regression.message and VEG in regression.message  # the later search returned it
    assert not run.ok


def test_an_import_reports_the_counts_its_plan_computed(tmp_path: Path) -> None:
    plan = plan_import(read_traces([MEMORY, RETRIEVAL]), read_labels(LABELS), label_file=LABELS)
    result = import_traces([MEMORY, RETRIEVAL], tmp_path / "imported", labels=LABELS)
    assert isinstance(result, ImportCounts)
    reported = {f.name: getattr(result, f.name) for f in dataclasses.fields(ImportCounts)}
    assert reported == dataclasses.asdict(plan.counts) and reported["searches"] == 6


def test_an_imported_replay_is_metric_gated_on_a_recorded_baseline(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    import_traces([MEMORY, RETRIEVAL], out, labels=LABELS)
    assert any("the baseline check is off" in n for n in score_run(out / RUN_FILE, datasets=out).result.notes)
    record_baseline(score_run(out / RUN_FILE, datasets=out), out / "thresholds.json")
    again = score_run(out / RUN_FILE, datasets=out)
    assert not any("the baseline check is off" in n for n in again.result.notes)  # compared with its baseline
    assert [r.kind for r in again.result.regressions] == ["assertion"]  # the forbid; metrics meet it


def test_the_query_log_records_each_search_without_user_text(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    import_traces([MEMORY, RETRIEVAL], out, labels=LABELS)
    log = json.loads((out / QUERY_LOG).read_text(encoding="utf-8"))
    assert (log["format"], log["holds_user_text"], log["conventions"]) == (
        QUERY_LOG_FORMAT,
        False,
        dict(CONVENTIONS),
    )
    assert [s["file"] for s in log["sources"]] == [str(MEMORY), str(RETRIEVAL)]
    by_id = {e["query_id"]: e for e in log["queries"]}
    assert all(tuple(e) == QUERY_LOG_FIELDS for e in log["queries"])
    later = by_id[LATER]
    assert (later["forbidden_returned"], later["stale"], later["stale_rate"]) == ([VEG], ["mem_123"], 0.5)
    assert (later["latency_ms"], later["result_count"], later["query"], later["query_chars"]) == (
        45.0,
        2,
        None,
        24,
    )
    assert later["start"] == "2018-12-13T14:53:00.100000+00:00"
    assert by_id[EMPTY]["degenerate"] == ["empty"] and by_id[NO_ID]["degenerate"] == ["unidentified"]
    written = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file())
    for text in ("vegetarian", "dark mode", "dietary", "capital of France", "sample document"):
        assert text not in written
    assert "Holds user text: no" in (out / "scenarios" / "user-preferences-store-labelled.json").read_text()


def test_with_content_copies_texts_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    import_traces([MEMORY], out, with_content=True)
    log = json.loads((out / QUERY_LOG).read_text(encoding="utf-8"))
    assert log["holds_user_text"] is True
    assert {e["query"] for e in log["queries"]} == {"user dietary preferences", "past flight bookings"}
    scenario = json.loads((out / "scenarios" / "user-preferences-store-unlabelled.json").read_text())
    assert scenario["thoughts"][0] == {"id": VEG, "content": "User prefers vegetarian meals"}
    assert {t["id"]: t["content"] for t in scenario["thoughts"]}[
        "mem_123"
    ] == "User prefers light mode"  # latest
    assert "Holds user text: yes" in scenario["description"]


def test_nothing_is_written_on_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(DatasetError):
        import_traces([MEMORY, bad], out)
    with pytest.raises(DatasetError):
        import_traces([MEMORY], out, labels=tmp_path / "missing.jsonl")
    assert not out.exists()
    spanless = tmp_path / "spanless.json"
    spanless.write_text('{"resourceSpans": []}', encoding="utf-8")
    with pytest.raises(DatasetError, match="no search span"):
        import_traces([spanless], out)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="holds no earlier trace import"):
        import_traces([MEMORY], other)


def test_reimport_replaces_the_earlier_scenarios(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    import_traces([MEMORY, RETRIEVAL], out)
    import_traces([MEMORY], out)
    assert sorted(p.name for p in (out / "scenarios").iterdir()) == [
        "ms-abc123-unlabelled.json",
        "user-preferences-store-unlabelled.json",
    ]


def test_stores_sharing_a_slug_get_distinct_scenarios() -> None:
    traces = read_traces([MEMORY])
    renamed = [
        op if op.query_id != NO_ID else MemoryOp(**{**op.__dict__, "store_id": "USER preferences store"})
        for op in traces.operations
    ]
    plan = plan_import(type(traces)(tuple(renamed), (), traces.files, traces.spans))
    names = sorted(n for n in plan.texts if n.startswith("scenarios/"))
    assert names[0] == "scenarios/ms-abc123-unlabelled.json"
    assert len(names) == 3 and all(n.startswith("scenarios/user-preferences-store-") for n in names[1:])


# --- from a failure to a scenario ------------------------------------------------------------


def test_from_trace_writes_a_scenario_the_reference_store_fails_as_the_trace_did(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    path, built = write_trace_scenario([MEMORY], T_LATER, suite, with_content=True)
    assert path == suite / "scenarios" / "trace-5b8efff79803.yaml"
    assert built.query_ids == (LATER,)  # the failing search of the trace only
    scenario = load_suite(suite).scenarios[0]
    assert [(t.id, t.content) for t in scenario.thoughts] == [
        (VEG, "User prefers vegetarian meals"),
        ("mem_123", "User prefers dark mode"),
    ]
    (query,) = scenario.queries
    assert (query.query, query.forbid, query.top_k, scenario.measure_only) == (
        "user dietary preferences",
        [VEG],
        2,
        True,
    )
    run = run_eval(datasets=suite, gated=False)
    assert run.result.scenarios[0].status == "fail"
    assert any(VEG in r.message and "forbid" in r.message for r in run.result.regressions)


def test_from_trace_of_a_passing_labelled_search_passes_on_the_reference_store(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    write_trace_scenario(
        [MEMORY, RETRIEVAL], FIRST, suite, labels=LABELS, with_content=True, name="diet-before-delete"
    )
    loaded = load_suite(suite)
    assert loaded.scenarios[0].queries[0].relevant == [VEG] and not loaded.scenarios[0].measure_only
    run = run_eval(datasets=suite, gated=False)
    assert run.result.scenarios[0].status == "pass" and run.ok


def test_from_trace_refuses_without_content_or_a_failure(tmp_path: Path) -> None:
    traces = read_traces([MEMORY])
    with pytest.raises(UsageError, match="--with-content"):
        trace_scenario(traces, T_LATER)
    with pytest.raises(DatasetError, match="no search of trace"):
        trace_scenario(traces, T_FIRST, with_content=True)
    with pytest.raises(DatasetError, match="holds no search span"):
        trace_scenario(traces, T_DELETE, with_content=True)
    with pytest.raises(UsageError, match="neither a trace id"):
        trace_scenario(traces, "nope", with_content=True)
    with pytest.raises(DatasetError, match="unknown category"):
        write_trace_scenario([MEMORY], T_LATER, tmp_path, with_content=True, category="bogus")
    assert not (tmp_path / "scenarios").exists()


def test_from_trace_without_query_text_is_an_error(tmp_path: Path) -> None:
    requests = _lines(MEMORY)
    _drop_attr(_span(requests, "eee19b7ec3c1b179"), "gen_ai.memory.query.text")
    traces = read_traces([_write_lines(tmp_path / "t.jsonl", copy.deepcopy(requests))])
    with pytest.raises(DatasetError, match="without its query text") as caught:
        trace_scenario(traces, LATER, with_content=True)
    assert f"trace {T_LATER} span eee19b7ec3c1b179: no query text" in caught.value.problems[0]


# --- the CLI ---------------------------------------------------------------------------------


def test_cli_imports_scores_and_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "imported"
    assert (
        main(["import", "traces", str(MEMORY), str(RETRIEVAL), "--out", str(out), "--labels", str(LABELS)])
        == 0
    )
    printed = capsys.readouterr()
    assert "imported 6 searches from 4 stores" in printed.out and "holds user text: no" in printed.out
    assert "records[1].id missing" in printed.err
    report = tmp_path / "score.json"
    code = main(
        [
            "score",
            "--run",
            str(out / RUN_FILE),
            "--suite",
            "builtin",
            "--datasets",
            str(out),
            "--out",
            str(report),
        ]
    )
    assert code == 1  # the later search returned the deleted record
    assert "forbid: 'mem_5j66UpCpwteGg4YSxUnt7lPY' was retrieved at rank 1" in capsys.readouterr().out
    assert main(["import", "traces", str(LABELS), "--out", str(tmp_path / "x")]) == 2
    assert "not OTLP JSON" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_cli_scenario_from_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite"
    args = ["scenario", "from-trace", T_LATER, "--traces", str(MEMORY), "--out", str(suite)]
    assert main(args) == 2
    assert "--with-content" in capsys.readouterr().err
    assert main([*args, "--with-content"]) == 0
    assert "holds user text: yes" in capsys.readouterr().out
    assert main([*args, "--with-content"]) == 2  # the file exists: never overwritten
    assert "exists" in capsys.readouterr().err
