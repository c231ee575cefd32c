"""Tests for evalkit.scenarios.loading: the loader, its validation report, and the built-in scenario suite."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalkit
from evalkit.embedders import HashingEmbedder, hashing_tokens
from evalkit.errors import DatasetError
from evalkit.harness.checks import check_query
from evalkit.memory import MemoryStore, fts_terms
from evalkit.records import Edge
from evalkit.scenarios.dates import resolve_created_at
from evalkit.scenarios.loading import Suite, load_suite
from evalkit.scenarios.model import BUILTIN_CATEGORIES
from evalkit.scenarios.seeding import own_ids, seed_edges, seed_thoughts
from tests.shared import DATASETS, FIXTURES

TINY = FIXTURES / "datasets_tiny"
CLOCK = datetime(2025, 6, 2, 12, 0, tzinfo=UTC)
DEFAULT_TOP_K = 5


@pytest.fixture(scope="module")
def builtin() -> Suite:
    return load_suite(DATASETS)


def _write(root: Path, scenarios: dict[str, str], distractors: str | None = None) -> Path:
    """A dataset directory under `root` with the given scenario files (name -> text)."""
    (root / "scenarios").mkdir(parents=True)
    for name, text in scenarios.items():
        (root / "scenarios" / name).write_text(text, encoding="utf-8")
    if distractors is not None:
        (root / "distractors.yaml").write_text(distractors, encoding="utf-8")
    return root


_MINIMAL = (
    "name: minimal\ncategory: explicit-fact\nthoughts:\n  - {id: a, content: Alpha.}\n"
    "queries:\n  - {query: q, relevant: [a]}\n"
)
_ONE_DISTRACTOR = "thoughts:\n  - {id: d, content: Distractor.}\n"


def _problems(directory: Path) -> list[str]:
    with pytest.raises(DatasetError) as caught:
        load_suite(directory)
    return caught.value.problems


# ------------------------------------------------------------------------------------ built-in suite


def test_builtin_suite_covers_each_category_once_with_a_scenario_named_after_it(builtin: Suite) -> None:
    by_name = {s.name: s for s in builtin.scenarios}
    for category in BUILTIN_CATEGORIES:
        assert by_name[category].category == category
        assert by_name[category].measure_only is (category == "no-match")
    assert by_name["recency"].category == "temporal" and by_name["recency"].measure_only
    assert list(builtin.sources) == [s.name for s in builtin.scenarios]
    assert [p.name for p in builtin.sources.values()] == sorted(p.name for p in builtin.sources.values())


def test_builtin_contradiction_is_the_only_xfail_and_has_no_distractors(builtin: Suite) -> None:
    xfail = [s for s in builtin.scenarios if s.outcome == "xfail"]
    assert [s.name for s in xfail] == ["contradiction"]
    assert xfail[0].distractors is False
    assert any(e.type == "contradicts" for e in xfail[0].edges)


def test_builtin_non_xfail_scenarios_hold_more_thoughts_than_top_k(builtin: Suite) -> None:
    assert len(builtin.distractors) >= 8
    assert {t.project for t in builtin.distractors} == {"default"}
    for scenario in builtin.scenarios:
        if scenario.outcome == "xfail":
            continue
        seeded = seed_thoughts(scenario, builtin.distractors, CLOCK)
        top_k = max(q.top_k or DEFAULT_TOP_K for q in scenario.queries)
        assert len(seeded) > top_k, scenario.name


def test_builtin_no_match_query_shares_no_term_with_any_thought(builtin: Suite) -> None:
    (scenario,) = [s for s in builtin.scenarios if s.name == "no-match"]
    texts = [t.content for t in seed_thoughts(scenario, builtin.distractors, CLOCK)]
    stored_tokens = {tok for text in texts for tok in hashing_tokens(text)}
    stored_words = {w for text in texts for w in re.findall(r"\w+", text.lower())}
    assert len(builtin.distractors) > DEFAULT_TOP_K and scenario.distractors
    for query in scenario.queries:
        assert query.no_relevant and query.expect_no_strong_match and not query.relevant
        assert not set(hashing_tokens(query.query)) & stored_tokens
        query_words = {w for term in fts_terms(query.query) for w in re.findall(r"\w+", term.lower())}
        assert query_words and not query_words & stored_words


def test_builtin_recency_probe_pits_a_fresh_note_against_a_better_matching_stale_one(builtin: Suite) -> None:
    (scenario,) = [s for s in builtin.scenarios if s.name == "recency"]
    (query,) = scenario.queries
    assert (query.recency_weight, query.recency_half_life_days) == (1.0, 1.0)
    assert query.rank_before is not None
    fresh, stale = query.rank_before.before, query.rank_before.after
    assert query.relevant == [fresh]
    by_id = {t.id: t for t in seed_thoughts(scenario, builtin.distractors, CLOCK)}
    fresh_at, stale_at = by_id[fresh].created_at, by_id[stale].created_at
    assert fresh_at is not None and stale_at is not None and fresh_at > stale_at
    # As in the original service's probe, the shared distractors are dated like the stale note.
    assert {by_id[d.id].created_at for d in builtin.distractors} == {stale_at}
    words = set(hashing_tokens(query.query))
    assert len(words & set(hashing_tokens(by_id[stale].content))) > len(
        words & set(hashing_tokens(by_id[fresh].content))
    )


def test_builtin_suite_meets_its_assertions_with_the_hashing_embedder(builtin: Suite, tmp_path: Path) -> None:
    """Every non-xfail scenario passes its hard assertions ungated; contradiction fails its forbid."""
    errors: dict[str, list[str]] = {}
    recalls: list[float] = []
    for scenario in builtin.scenarios:
        with MemoryStore(tmp_path / f"{scenario.name}.db", HashingEmbedder()) as store:
            store.add_thoughts(seed_thoughts(scenario, builtin.distractors, CLOCK))
            store.add_edges(seed_edges(scenario))
            errors[scenario.name] = []
            for q in scenario.queries:
                response = store.search(
                    q.query,
                    top_k=q.top_k or DEFAULT_TOP_K,
                    project=q.project,
                    supersession="suppress",
                    contradiction="flag",
                    recency_weight=q.recency_weight or 0.0,
                    recency_half_life_days=q.recency_half_life_days or 30.0,
                    min_relevance=0,
                    now=CLOCK,
                )
                errors[scenario.name] += check_query(q, response.hits, own_ids(scenario))
                if scenario.outcome == "pass" and not scenario.measure_only:
                    recalls.append(len(set(q.relevant) & set(response.ids)) / len(q.relevant))
    assert {name: errs for name, errs in errors.items() if name != "contradiction"} == {
        s.name: [] for s in builtin.scenarios if s.name != "contradiction"
    }
    assert errors["contradiction"] and all(e.startswith("forbid:") for e in errors["contradiction"])
    assert sum(recalls) / len(recalls) >= 0.9
    assert min(recalls) < 1.0  # a realistic suite has misses: not every query is trivially solved


# ------------------------------------------------------------------------------------ loading


def test_tiny_dataset_loads_in_file_order_with_sources() -> None:
    suite = load_suite(TINY)
    assert [s.name for s in suite.scenarios] == ["alone", "facts"]
    assert dict(suite.sources) == {
        "alone": TINY / "scenarios" / "a-alone.json",
        "facts": TINY / "scenarios" / "b-facts.yml",
    }
    assert [t.id for t in suite.distractors] == ["d-lunch", "d-parking"]
    assert re.fullmatch(r"[0-9a-f]{64}", suite.digest)


def test_a_file_loaded_again_with_the_same_bytes_is_not_parsed_again_but_a_changed_one_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evalkit run` loads its suite twice (the lint warning, then the run): the second load
    reuses each file found valid, and still checks the suite as a whole."""
    from evalkit.scenarios import loading

    root = tmp_path / "suite"
    shutil.copytree(TINY, root)
    monkeypatch.setattr(loading, "_last_valid", {})  # whatever an earlier test loaded
    parsed: list[str] = []
    real_parse = loading.parse_text
    monkeypatch.setattr(
        loading, "parse_text", lambda text, suffix: parsed.append(suffix) or real_parse(text, suffix)
    )
    first = load_suite(root)
    assert sorted(parsed) == [".json", ".yaml", ".yml"]  # two scenarios, the distractors file
    parsed.clear()
    again = load_suite(root)
    assert parsed == [".yaml"] and again == first  # the distractors file only
    facts = root / "scenarios" / "b-facts.yml"
    text = facts.read_text(encoding="utf-8")
    facts.write_text(text.replace("name: facts", "name: fakts"), encoding="utf-8")  # same size
    parsed.clear()
    changed = load_suite(root)
    assert sorted(parsed) == [".yaml", ".yml"] and [s.name for s in changed.scenarios] == ["alone", "fakts"]
    (root / "scenarios" / "c-twin.yml").write_text(
        text.replace("name: facts", "name: alone"), encoding="utf-8"
    )
    with pytest.raises(DatasetError, match="alone"):  # the suite is checked whole on every load
        load_suite(root)


def test_seed_thoughts_puts_own_thoughts_first_then_distractors_with_resolved_dates() -> None:
    suite = load_suite(TINY)
    alone, facts = suite.scenarios
    seeded = seed_thoughts(facts, suite.distractors, CLOCK)
    assert [t.id for t in seeded] == ["port", "path", "summary", "d-lunch", "d-parking"]
    assert [t.created_at for t in seeded] == [
        datetime(2025, 6, 2, 10, 30, tzinfo=UTC),  # -90m
        datetime(2024, 1, 8, 8, 0, tzinfo=UTC),  # 10:00+02:00
        CLOCK,  # no created_at
        datetime(2025, 5, 23, 12, 0, tzinfo=UTC),  # -10d
        CLOCK,
    ]
    port, path, summary = seeded[:3]
    assert (port.project, path.importance, summary.is_cluster, summary.status) == (
        "harbor",
        0.5,
        True,
        "draft",
    )
    assert seed_edges(facts) == [Edge("summary", "port", "cluster"), Edge("summary", "path", "cluster")]
    assert own_ids(facts) == frozenset({"port", "path", "summary"})

    lone = seed_thoughts(alone, suite.distractors, CLOCK)
    assert [(t.id, t.created_at) for t in lone] == [
        ("low", datetime(2025, 5, 19, 12, 0, tzinfo=UTC)),  # -2w
        ("high", datetime(2024, 1, 8, 0, 0, tzinfo=UTC)),  # date only: midnight UTC
    ]


_FLAGGED = (
    "name: flagged\ncategory: no-match\nmeasure_only: true\n{extra}thoughts:\n"
    "  - {{id: own, content: Harbor deploy notes., project: alpha, created_at: -1d}}\n"
    "  - {{id: local-distractor, content: Harbor lunch menu., project: beta{flag}}}\n"
    "queries:\n  - {{query: harbor lunch, project: beta, no_relevant: true}}\n"
)
_TWO_DISTRACTORS = (
    "thoughts:\n  - {id: d1, content: Parking passes., created_at: -10d}\n  - {id: d2, content: Plants.}\n"
)


def _flagged(tmp_path: Path, extra: str = "", flag: str = ", distractor: true") -> tuple[Suite, Path]:
    directory = _write(
        tmp_path / "ds", {"flagged.yaml": _FLAGGED.format(extra=extra, flag=flag)}, _TWO_DISTRACTORS
    )
    return load_suite(directory), directory


def test_a_thought_marked_distractor_is_seeded_in_file_order_but_is_not_the_scenarios_own(
    tmp_path: Path,
) -> None:
    suite, _ = _flagged(tmp_path)
    (scenario,) = suite.scenarios
    assert [t.id for t in seed_thoughts(scenario, suite.distractors, CLOCK)] == [
        "own", "local-distractor", "d1", "d2",
    ]  # fmt: skip
    assert own_ids(scenario) == frozenset({"own"})


@pytest.mark.parametrize(("flag", "errors"), [(", distractor: true", []), ("", ["no_relevant"])])
def test_no_relevant_allows_a_retrieved_thought_marked_distractor(
    tmp_path: Path, flag: str, errors: list[str]
) -> None:
    # The query searches project beta, which holds only local-distractor: it is always retrieved.
    _, directory = _flagged(tmp_path, flag=flag)
    run = evalkit.run_eval(datasets=directory, thresholds=None, gated=False)
    (query,) = run.result.scenarios[0].queries
    assert query.retrieved == ["local-distractor"]
    assert [error.split(":")[0] for error in query.check_errors] == errors


def test_distractors_created_at_re_dates_every_shared_distractor_and_nothing_else(tmp_path: Path) -> None:
    suite, _ = _flagged(tmp_path, extra="distractors_created_at: -30d\n")
    seeded = seed_thoughts(suite.scenarios[0], suite.distractors, CLOCK)
    assert [(t.id, t.created_at) for t in seeded] == [
        ("own", CLOCK - timedelta(days=1)),
        ("local-distractor", CLOCK),
        ("d1", CLOCK - timedelta(days=30)),
        ("d2", CLOCK - timedelta(days=30)),
    ]


def test_shared_distractors_keep_their_own_dates_by_default(tmp_path: Path) -> None:
    suite, _ = _flagged(tmp_path)
    seeded = seed_thoughts(suite.scenarios[0], suite.distractors, CLOCK)
    assert [t.created_at for t in seeded[2:]] == [CLOCK - timedelta(days=10), CLOCK]


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ("distractors_created_at: -3x\n", "distractors_created_at: cannot read created_at '-3x'"),
        ("distractors_created_at: 30\n", "distractors_created_at: 30 is not a string"),
        (
            "distractors: false\ndistractors_created_at: -30d\n",
            "distractors_created_at: this scenario sets distractors: false",
        ),
    ],
)
def test_bad_distractors_created_at_is_reported_with_file_scenario_and_field(
    tmp_path: Path, extra: str, problem: str
) -> None:
    directory = _write(
        tmp_path / "ds", {"flagged.yaml": _FLAGGED.format(extra=extra, flag="")}, _TWO_DISTRACTORS
    )
    (found,) = _problems(directory)
    assert found.startswith(f"{directory / 'scenarios' / 'flagged.yaml'}: scenario 'flagged': {problem}")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, CLOCK),
        ("-30d", datetime(2025, 5, 3, 12, 0, tzinfo=UTC)),
        ("-12h", datetime(2025, 6, 2, 0, 0, tzinfo=UTC)),
        ("-90m", datetime(2025, 6, 2, 10, 30, tzinfo=UTC)),
        ("-2w", datetime(2025, 5, 19, 12, 0, tzinfo=UTC)),
        ("+1d", datetime(2025, 6, 3, 12, 0, tzinfo=UTC)),
        ("-1.5h", datetime(2025, 6, 2, 10, 30, tzinfo=UTC)),
        (" -1d ", datetime(2025, 6, 1, 12, 0, tzinfo=UTC)),
        ("2024-01-08T10:00:00Z", datetime(2024, 1, 8, 10, 0, tzinfo=UTC)),
        ("2024-01-08T10:00:00", datetime(2024, 1, 8, 10, 0, tzinfo=UTC)),
        ("2024-01-08T10:00:00-05:00", datetime(2024, 1, 8, 15, 0, tzinfo=UTC)),
        ("2024-01-08", datetime(2024, 1, 8, 0, 0, tzinfo=UTC)),
        (datetime(2024, 1, 8, 10, 0), datetime(2024, 1, 8, 10, 0, tzinfo=UTC)),
    ],
)
def test_resolve_created_at(value: str | datetime | None, expected: datetime) -> None:
    resolved = resolve_created_at(value, CLOCK)
    assert resolved == expected
    assert resolved.tzinfo == UTC


def test_resolve_created_at_takes_a_naive_clock_as_utc() -> None:
    assert resolve_created_at("-1h", datetime(2025, 6, 2, 12, 0)) == datetime(2025, 6, 2, 11, 0, tzinfo=UTC)


@pytest.mark.parametrize("value", ["30d", "-3x", "-1M", "yesterday", "", "2024-13-45", "-99999999999w"])
def test_resolve_created_at_rejects_unreadable_values_saying_what_is_accepted(value: str) -> None:
    with pytest.raises(DatasetError, match=r"created_at .*ISO-8601.*-30d"):
        resolve_created_at(value, CLOCK)


@given(n=st.integers(min_value=0, max_value=100_000), unit=st.sampled_from(["m", "h", "d", "w"]))
def test_relative_offsets_move_the_clock_by_exactly_that_amount(n: int, unit: str) -> None:
    step = timedelta(**{{"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[unit]: n})
    assert resolve_created_at(f"-{n}{unit}", CLOCK) == CLOCK - step
    assert resolve_created_at(f"+{n}{unit}", CLOCK) == CLOCK + step


def test_unquoted_yaml_dates_stay_strings(tmp_path: Path, yaml_loader: type) -> None:
    text = _MINIMAL.replace("content: Alpha.}", "content: Alpha., created_at: 2024-01-08}")
    suite = load_suite(_write(tmp_path / "ds", {"minimal.yaml": text}, _ONE_DISTRACTOR))
    assert suite.scenarios[0].thoughts[0].created_at == "2024-01-08"


# ------------------------------------------------------------------------------------ validation


_MALFORMED_EXPECTED: list[tuple[str, str | None, str | None, str]] = [
    # (file, scenario label, field, key phrase) in reported order: by file, then as found
    ("a-syntax.yaml", None, None, "YAML syntax error at line 7, column 1"),
    ("b-shape.yaml", "scenario 'Bad_Name'", "name", "is not kebab-case"),
    ("b-shape.yaml", "scenario 'Bad_Name'", "outcome", "'pass' or 'xfail' (got 'maybe')"),
    ("b-shape.yaml", "scenario 'Bad_Name'", "thoughts[0].importance", "less than or equal to 1 (got 2)"),
    (
        "b-shape.yaml",
        "scenario 'Bad_Name'",
        "query 1.relevent",
        "unknown key 'relevent' (did you mean 'relevant'?)",
    ),
    ("c-refs.yaml", "scenario 'refs'", "category", "unknown category 'made-up'; use one of: explicit-fact"),
    ("c-refs.yaml", "scenario 'refs'", "thoughts[0].created_at", "cannot read created_at '-3x'"),
    ("c-refs.yaml", "scenario 'refs'", "thoughts[1].id", "duplicate thought id 'a' (also thoughts[0].id)"),
    ("c-refs.yaml", "scenario 'refs'", "thoughts[2].id", "'d-one' is also a shared distractor id"),
    ("c-refs.yaml", "scenario 'refs'", "thoughts[3].created_at", "cannot read created_at '2024-13-45'"),
    ("c-refs.yaml", "scenario 'refs'", "edges[0].target", "unknown thought id 'ghost'"),
    ("c-refs.yaml", "scenario 'refs'", "edges[1]", "edge from 'b' to itself"),
    ("c-refs.yaml", "scenario 'refs'", "query 1.relevant[0]", "unknown thought id 'nope'"),
    ("c-refs.yaml", "scenario 'refs'", "query 2.forbid[0]", "'a' is also in relevant"),
    (
        "c-refs.yaml",
        "scenario 'refs'",
        "query 3.no_relevant",
        "no_relevant is true but relevant lists ids",
    ),
    ("c-refs.yaml", "scenario 'refs'", "query 4.relevant", "or set no_relevant: true"),
    ("c-refs.yaml", "scenario 'refs'", "query 5.rank_before.before", "unknown thought id 'x'"),
    ("c-refs.yaml", "scenario 'refs'", "query 5.grades['zzz']", "unknown thought id 'zzz'"),
    ("d-dup.yaml", "scenario 'refs'", "name", "duplicate scenario name, also used by"),
    ("d-dup.yaml", "scenario 'refs'", "query 1.relevant[0]", "'d-two' is a shared distractor, but"),
    (
        "d-dup.yaml",
        "scenario 'refs'",
        "query 2.project",
        "no thought of this scenario is in project 'gamma'",
    ),
    ("e-json.json", None, None, "JSON syntax error at line 4, column 54"),
    (
        "f-numeric-date.yaml",
        "scenario 'numeric-date'",
        "thoughts[0].created_at",
        "1700000000 is not a string",
    ),
    ("g-dup-key.yaml", None, None, "line 8, column 5: duplicate key 'query' (first given on line 6)"),
    ("h-latin1.yaml", None, None, "not valid UTF-8 (byte 0xe9 at offset 70)"),
    ("notes.txt", None, None, "not a scenario file"),
]


def test_malformed_dataset_reports_every_problem_with_file_scenario_and_field(yaml_loader: type) -> None:
    directory = FIXTURES / "datasets_malformed"
    with pytest.raises(DatasetError) as caught:
        load_suite(directory)
    problems = caught.value.problems
    assert len(problems) == len(_MALFORMED_EXPECTED)
    assert str(caught.value).startswith(f"{directory}: {len(_MALFORMED_EXPECTED)} problems")
    for problem, (file, label, field, phrase) in zip(problems, _MALFORMED_EXPECTED, strict=True):
        head = f"{directory / 'scenarios' / file}: " + "".join(f"{part}: " for part in (label, field) if part)
        assert problem.startswith(head), problem
        assert phrase in problem, problem
    assert not any("README.md" in p for p in problems)
    (duplicate,) = [p for p in problems if "duplicate scenario name" in p]
    assert duplicate.endswith(f"also used by {directory / 'scenarios' / 'c-refs.yaml'}; names must be unique")


def test_invalid_distractors_are_reported_and_references_to_them_not_judged() -> None:
    directory = FIXTURES / "datasets_bad_distractors"
    problems = _problems(directory)
    head = f"{directory / 'distractors.yaml'}: "
    assert problems == [
        head + "thoughts[2].id: duplicate thought id 'd-two' (also thoughts[1].id)",
        head
        + "thoughts[2].created_at: cannot read created_at 'yesterday'; use an ISO-8601 date-time such as "
        "2024-05-01T09:30:00Z, or an offset from the run's clock such as -30d, -12h, -90m, -2w or +1d",
    ]


def test_distractors_file_with_unknown_key_or_wrong_shape_is_a_problem(tmp_path: Path) -> None:
    bad_key = _write(
        tmp_path / "a", {"m.yaml": _MINIMAL}, "thoughts:\n  - {id: d, content: D., colour: blue}\n"
    )
    assert _problems(bad_key) == [
        f"{bad_key / 'distractors.yaml'}: thoughts[0].colour: unknown key 'colour'; allowed keys: "
        "id, content, project, status, created_at, is_cluster, is_global, importance, distractor"
    ]
    a_list = _write(tmp_path / "b", {"m.yaml": _MINIMAL}, "- {id: d, content: D.}\n")
    assert _problems(a_list) == [
        f"{a_list / 'distractors.yaml'}: the file is a list; it must hold one mapping (key: value pairs)"
    ]


def test_missing_distractors_file_is_a_problem_only_when_a_scenario_wants_them(tmp_path: Path) -> None:
    wants = _write(tmp_path / "wants", {"m.yaml": _MINIMAL})
    (problem,) = _problems(wants)
    assert problem.startswith(f"{wants / 'distractors.yaml'}: file not found, but scenario(s) minimal ask")
    without = _write(tmp_path / "without", {"m.yaml": _MINIMAL + "distractors: false\n"})
    assert load_suite(without).distractors == ()


def test_missing_or_empty_dataset_directories_are_problems(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="directory not found"):
        load_suite(tmp_path / "absent")
    (tmp_path / "no-scenarios").mkdir()
    assert _problems(tmp_path / "no-scenarios") == [
        f"{tmp_path / 'no-scenarios' / 'scenarios'}: directory not found; put one scenario per "
        ".yaml/.yml/.json file there"
    ]
    empty = _write(tmp_path / "empty", {}, _ONE_DISTRACTOR)
    assert _problems(empty) == [
        f"{empty / 'scenarios'}: no scenario files; add one .yaml/.yml/.json file per scenario"
    ]


def test_empty_or_non_mapping_scenario_files_are_problems(tmp_path: Path) -> None:
    directory = _write(
        tmp_path / "ds", {"a.yaml": "", "b.json": "[1, 2]", "c.yaml": _MINIMAL}, _ONE_DISTRACTOR
    )
    scenarios = directory / "scenarios"
    assert _problems(directory) == [
        f"{scenarios / 'a.yaml'}: the file is empty; it must hold one mapping (key: value pairs)",
        f"{scenarios / 'b.json'}: the file is a list; it must hold one mapping (key: value pairs)",
    ]


def test_unknown_scenario_names_are_an_error_listing_the_available_ones() -> None:
    with pytest.raises(DatasetError) as caught:
        load_suite(TINY, ["facts", "factz", "nothing-like-it"])
    assert "available: alone, facts" in str(caught.value)
    assert caught.value.problems == [
        "unknown scenario 'factz' (did you mean 'facts'?)",
        "unknown scenario 'nothing-like-it'",
    ]
    with pytest.raises(DatasetError, match="no scenario name given"):
        load_suite(TINY, [])


def test_names_select_scenarios_in_file_order() -> None:
    suite = load_suite(TINY, ["facts", "alone"])
    assert [s.name for s in suite.scenarios] == ["alone", "facts"]
    only = load_suite(TINY, "facts")
    assert [s.name for s in only.scenarios] == ["facts"]
    assert list(only.sources) == ["facts"]


def test_digest_is_stable_location_independent_and_changed_by_a_one_byte_edit(tmp_path: Path) -> None:
    first = load_suite(TINY).digest
    assert load_suite(TINY).digest == first
    copy = tmp_path / "copy"
    shutil.copytree(TINY, copy)
    assert load_suite(copy).digest == first
    (copy / "scenarios" / "README.md").write_text("not read, not digested\n", encoding="utf-8")
    assert load_suite(copy).digest == first
    distractors = copy / "distractors.yaml"
    data = distractors.read_bytes()
    index = data.index(b"Friday")
    distractors.write_bytes(data[:index] + b"f" + data[index + 1 :])
    assert load_suite(copy).digest != first


# ------------------------------------------------------------------------------- suite categories

_BILLING = _MINIMAL.replace("category: explicit-fact", "category: billing-facts")


def test_the_builtin_suite_declares_the_builtin_categories(builtin: Suite) -> None:
    assert (DATASETS / "suite.yaml").is_file()
    assert builtin.categories == BUILTIN_CATEGORIES


def test_a_suite_without_a_suite_file_has_the_builtin_categories(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, {"m.yaml": _MINIMAL}, _ONE_DISTRACTOR))
    assert suite.categories == BUILTIN_CATEGORIES
    problems = _problems(_write(tmp_path / "other", {"m.yaml": _BILLING}, _ONE_DISTRACTOR))
    assert any("unknown category 'billing-facts'; use one of: explicit-fact" in p for p in problems)


def test_a_suite_declares_its_own_categories_and_only_they_are_valid(tmp_path: Path) -> None:
    root = _write(tmp_path, {"m.yaml": _BILLING}, _ONE_DISTRACTOR)
    (root / "suite.yaml").write_text("categories: [billing-facts, refunds]\n", encoding="utf-8")
    suite = load_suite(root)
    assert suite.categories == ("billing-facts", "refunds")
    assert [s.category for s in suite.scenarios] == ["billing-facts"]
    (root / "scenarios" / "m.yaml").write_text(_MINIMAL, encoding="utf-8")
    (problem,) = _problems(root)
    assert str(root / "scenarios" / "m.yaml") in problem
    assert "unknown category 'explicit-fact'; use one of: billing-facts, refunds" in problem


@pytest.mark.parametrize(
    ("content", "phrase"),
    [
        ("categories: []\n", "categories"),
        ("categories: [a, b, a]\n", "categories listed twice: a"),
        ("categories: [a]\nextra: 1\n", "extra"),
        ("- a\n", "it must hold one mapping"),
    ],
)
def test_an_invalid_suite_file_is_a_problem_naming_it(tmp_path: Path, content: str, phrase: str) -> None:
    root = _write(tmp_path, {"m.yaml": _MINIMAL}, _ONE_DISTRACTOR)
    (root / "suite.yaml").write_text(content, encoding="utf-8")
    problems = _problems(root)
    assert any(p.startswith(f"{root / 'suite.yaml'}: ") and phrase in p for p in problems), problems


def test_only_a_measure_only_scenario_may_hold_unjudged_queries(tmp_path: Path) -> None:
    text = (
        "name: imported\ncategory: explicit-fact\ndistractors: false\n{extra}thoughts:\n"
        "  - {{id: a, content: Alpha.}}\nqueries:\n  - {{query: q, forbid: [a]}}\n"
    )
    unjudged = load_suite(_write(tmp_path / "ok", {"s.yaml": text.format(extra="measure_only: true\n")}))
    assert unjudged.scenarios[0].queries[0].relevant == []
    problems = _problems(_write(tmp_path / "bad", {"s.yaml": text.format(extra="")}))
    assert any("query 1.relevant: no relevant ids" in p for p in problems)
