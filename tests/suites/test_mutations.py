"""Mutation testing (evalkit.suites.mutations, `evalkit mutants`): every catalogued search bug turns the
built-in suite into a regression, and the no-op control raises none."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit import EvalRun, RunConfig, load_suite, run_eval
from evalkit.cli import main
from evalkit.errors import UsageError
from evalkit.harness.results import DetectionPower, MutationOutcome, Regression
from evalkit.memory import STOPWORDS
from evalkit.memory.pipeline import DEFAULT_PIPELINE, Candidate, RowFilter, SearchPipeline, fuse_rrf
from evalkit.suites.mutations import MUTATIONS, most_specific_first, run_mutants, select_mutations
from evalkit.views.frames import CAUGHT_BY_MESSAGES, MUTATION_COLUMNS, mutation_frame
from tests.shared import DATASETS, run_and_record

THRESHOLDS = DATASETS / "thresholds.json"
CONTROL = "control-rrf-rewritten"

WHERE_CAUGHT = {
    "supersession-not-suppressed": "supersession-history",
    "contradicted-rows-suppressed": "contradiction",
    "superseded-ranked-first": "contradiction-flagged",
    "project-filter-ignored": "project-scope",
    "include-global-ignored": "project-scope-global",
    "include-global-dropped": "project-scope",
    "gate-drops-bm25-hits": "explicit-fact",
    "bm25-leg-off": "consolidation",
    "vector-leg-off": "multi-hop",
    "rrf-constant-1": "recency-gentle",
    "relevance-not-normalised": "recency-gentle",
    "stopwords-not-removed": "multi-hop",
    "recency-decay-sign-flipped": "recency",
    "over-fetch-removed": "supersession-history",
    "cluster-thought-never-returned": "consolidation",
}
"""Each real mutation → a scenario (assertion) or category (metric) that must report it: the
scenario written to expose that bug. A new mutation must say here where it is caught."""


@pytest.fixture(scope="module")
def catalogue_eval() -> EvalRun:
    """The built-in suite with the whole catalogue's detection power saved with it (about 5 s)."""
    return run_eval(datasets=DATASETS, thresholds=THRESHOLDS, gated=False, mutations=True)


@pytest.fixture(scope="module")
def catalogue_run(catalogue_eval: EvalRun) -> DetectionPower:
    detection = catalogue_eval.result.detection
    assert detection is not None
    return detection


# ----------------------------------------------------------------------------- the key property


def test_every_mutation_is_caught_and_the_control_is_not(catalogue_run):
    assert [o.mutation for o in catalogue_run.outcomes] == list(MUTATIONS)
    escaped = [o.mutation for o in catalogue_run.outcomes if not o.control and not o.caught]
    false_alarms = [
        (o.mutation, [r.message for r in o.regressions])
        for o in catalogue_run.outcomes
        if o.control and o.caught
    ]
    assert escaped == []
    assert false_alarms == []
    assert catalogue_run.ok


def test_each_mutation_is_caught_by_the_scenario_that_exposes_its_bug(catalogue_run):
    real = {name for name, m in MUTATIONS.items() if not m.control}
    assert set(WHERE_CAUGHT) == real
    for outcome in catalogue_run.outcomes:
        if outcome.control:
            continue
        where = WHERE_CAUGHT[outcome.mutation]
        reporters = {r.scenario for r in outcome.regressions} | {r.category for r in outcome.regressions}
        assert where in reporters, (outcome.mutation, [r.message for r in outcome.regressions])


def test_table_has_one_row_per_mutation_with_the_documented_columns(catalogue_eval, catalogue_run):
    table = catalogue_eval.mutations()
    assert tuple(table.columns) == MUTATION_COLUMNS
    assert list(table["mutation"]) == list(MUTATIONS)
    assert table["caught"].dtype == bool and table["control"].dtype == bool
    control = table.set_index("mutation").loc[CONTROL]
    assert (control["caught"], control["caught_by"], control["regressions"]) == (False, "", 0)
    for outcome, row in zip(catalogue_run.outcomes, table.itertuples(index=False), strict=True):
        assert row.regressions == len(outcome.regressions)
        if outcome.caught:
            assert row.caught_by.startswith(outcome.regressions[0].message)


# ----------------------------------------------------------------------------- the catalogue


def test_catalogue_covers_the_required_bugs_and_one_control():
    required = {
        "supersession-not-suppressed", "contradicted-rows-suppressed", "superseded-ranked-first",
        "project-filter-ignored", "include-global-ignored", "bm25-leg-off", "vector-leg-off",
        "rrf-constant-1", "relevance-not-normalised", "stopwords-not-removed",
        "recency-decay-sign-flipped", "over-fetch-removed", "cluster-thought-never-returned",
        "include-global-dropped", "gate-drops-bm25-hits",
    }  # fmt: skip
    assert required <= set(MUTATIONS)
    assert [name for name, m in MUTATIONS.items() if m.control] == [CONTROL]
    for name, mutation in MUTATIONS.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and mutation.name == name
        assert mutation.description
        pipeline = mutation.build()
        assert isinstance(pipeline, SearchPipeline) and pipeline != DEFAULT_PIPELINE


def test_select_mutations_keeps_the_given_order_and_drops_duplicates():
    chosen = select_mutations(["vector-leg-off", "bm25-leg-off", "vector-leg-off"])
    assert [m.name for m in chosen] == ["vector-leg-off", "bm25-leg-off"]
    assert [m.name for m in select_mutations()] == list(MUTATIONS)


def test_unknown_mutation_name_is_a_usage_error_listing_the_valid_ones():
    with pytest.raises(UsageError, match=r"unknown mutation\(s\): no-such-bug; valid mutations: ") as info:
        run_mutants(load_suite(DATASETS), RunConfig(thresholds=THRESHOLDS), ["bm25-leg-off", "no-such-bug"])
    assert all(name in str(info.value) for name in MUTATIONS)


def test_without_a_recorded_baseline_mutants_are_checked_against_the_unmutated_run(tmp_path):
    suite = load_suite(DATASETS)
    missing = tmp_path / "missing.json"
    names = ["rrf-constant-1", "vector-leg-off", CONTROL]
    detection = run_mutants(suite, RunConfig(thresholds=missing), names)
    assert detection.checked_against == (
        f"this suite's unmutated run (no comparable deterministic baseline at top_k 5 in {missing})"
    )
    assert [(o.mutation, o.caught) for o in detection.outcomes] == [
        ("rrf-constant-1", True), ("vector-leg-off", True), (CONTROL, False),
    ]  # fmt: skip
    assert not missing.exists()  # the user's thresholds file is never written
    recorded = run_mutants(suite, RunConfig(thresholds=THRESHOLDS), ["vector-leg-off"])
    assert recorded.checked_against == f"the deterministic baseline at top_k 5 in {THRESHOLDS}"
    other_top_k = run_mutants(suite, RunConfig(thresholds=THRESHOLDS, top_k=10), [CONTROL])
    assert other_top_k.checked_against is not None and other_top_k.checked_against.startswith(
        "this suite's unmutated run"
    )
    assert other_top_k.ok
    unthresholded = run_mutants(suite, RunConfig(thresholds=None), ["vector-leg-off"])
    assert unthresholded.checked_against == "this suite's unmutated run (no thresholds file)"
    subset = run_mutants(load_suite(DATASETS, ["multi-hop"]), RunConfig(thresholds=THRESHOLDS), [CONTROL])
    assert subset.checked_against is not None and subset.checked_against.startswith(
        "assertions only (scenarios were selected"
    )
    with pytest.raises(UsageError, match="workers must be a positive integer"):
        run_mutants(suite, RunConfig(thresholds=THRESHOLDS), workers=0)


def test_every_mutation_has_a_hint_and_outcomes_carry_it(catalogue_run):
    assert all(m.hint for m in MUTATIONS.values())
    assert [o.hint for o in catalogue_run.outcomes] == [m.hint for m in MUTATIONS.values()]


def test_caught_by_quotes_the_most_specific_messages_first():
    def regression(kind: str, message: str, category: str | None = None) -> Regression:
        return Regression(kind=kind, message=message, category=category)  # type: ignore[arg-type]

    mutation = MUTATIONS["bm25-leg-off"]
    ranked = most_specific_first(
        [
            regression("metric", "overall"),
            regression("metric", "category a", "a"),
            regression("present", "missing b", "b"),
            regression("assertion", "scenario x", "a"),
            regression("metric", "category c", "c"),
        ],
    )
    outcome = MutationOutcome(
        mutation=mutation.name,
        description=mutation.description,
        control=False,
        regressions=ranked,
        hint=mutation.hint,
    )
    assert [r.message for r in outcome.regressions] == [
        "scenario x", "category a", "category c", "missing b", "overall",
    ]  # fmt: skip
    row = mutation_frame(DetectionPower(outcomes=[outcome], checked_against=None)).iloc[0]
    assert CAUGHT_BY_MESSAGES == 3
    assert row["caught_by"] == "scenario x; category a; category c (+2 more)"
    assert (row["caught"], row["regressions"]) == (True, 5)


# ----------------------------------------------------------------------------- the faulty steps

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def cand(id: str, **fields: object) -> Candidate:
    base: dict[str, object] = dict(rowid=1, id=id, content=id, project="p", created_at=NOW, is_cluster=False)
    return Candidate(**{**base, **fields})  # type: ignore[arg-type]


def standing_of(name: str, supersession: str = "suppress") -> list[tuple[str, str]]:
    rows = (cand("old"), cand("disputed"), cand("plain"))
    out = (
        MUTATIONS[name]
        .build()
        .standing(rows, {"old": ("new",)}, {"disputed": ("other",)}, supersession, "flag")
    )
    return [(c.id, c.standing) for c in out]


def test_default_standing_drops_superseded_and_ranks_contradicted_after_current():
    out = DEFAULT_PIPELINE.standing(
        (cand("old"), cand("disputed"), cand("plain")),
        {"old": ("new",)},
        {"disputed": ("other",)},
        "suppress",
        "flag",
    )
    assert [(c.id, c.standing) for c in out] == [("plain", "current"), ("disputed", "contradicted")]


def test_standing_mutations_do_what_their_descriptions_say():
    assert standing_of("supersession-not-suppressed") == [
        ("plain", "current"), ("disputed", "contradicted"), ("old", "superseded"),
    ]  # fmt: skip
    assert standing_of("contradicted-rows-suppressed") == [("plain", "current")]
    assert standing_of("contradicted-rows-suppressed", "flag") == [
        ("plain", "current"), ("disputed", "contradicted"), ("old", "superseded"),
    ]  # fmt: skip
    assert standing_of("superseded-ranked-first") == [("disputed", "contradicted"), ("plain", "current")]
    assert standing_of("superseded-ranked-first", "flag") == [
        ("old", "superseded"), ("disputed", "contradicted"), ("plain", "current"),
    ]  # fmt: skip


def test_row_filter_mutations():
    assert MUTATIONS["project-filter-ignored"].build().row_filter("alpha", False, None) == RowFilter(
        None, False, None
    )
    assert MUTATIONS["include-global-ignored"].build().row_filter("alpha", False, None) == RowFilter(
        "alpha", True, None
    )
    assert MUTATIONS["cluster-thought-never-returned"].build().row_filter("alpha", False, None) == RowFilter(
        "alpha", False, None, include_clusters=False
    )


def test_unnormalised_relevance_is_the_raw_rrf_score():
    fused = (
        MUTATIONS["relevance-not-normalised"]
        .build()
        .fuse([cand("a", vector_rank=1, similarity=0.5)], [cand("a", bm25_rank=1, bm25_score=2.0)], 10, 60)
    )
    assert fused[0].relevance == pytest.approx(2 / 61)
    assert DEFAULT_PIPELINE.fuse(
        [cand("a", vector_rank=1, similarity=0.5)], [cand("a", bm25_rank=1, bm25_score=2.0)], 10, 60
    )[0].relevance == pytest.approx(1.0)


def test_flipped_recency_subtracts_the_decay_and_ranks_fresh_rows_last():
    rows = (
        cand("fresh", relevance=1.0, created_at=NOW),
        cand("stale", relevance=1.0, created_at=NOW - timedelta(30)),
    )
    out = MUTATIONS["recency-decay-sign-flipped"].build().recency(rows, 0.5, 30.0, NOW)
    assert [(c.id, c.final_score) for c in out] == [
        ("stale", pytest.approx(0.75)),
        ("fresh", pytest.approx(0.5)),
    ]
    assert [c.id for c in DEFAULT_PIPELINE.recency(rows, 0.5, 30.0, NOW)] == ["fresh", "stale"]


def test_budget_without_over_fetch_is_top_k():
    assert MUTATIONS["over-fetch-removed"].build().budget(5, True, True) == 5
    assert DEFAULT_PIPELINE.budget(5, True, False) == 20


def test_leg_stopword_and_rrf_constant_mutations():
    assert MUTATIONS["bm25-leg-off"].build().use_bm25 is False
    assert MUTATIONS["vector-leg-off"].build().use_vector is False
    unfiltered = MUTATIONS["stopwords-not-removed"].build()
    assert (
        unfiltered.fts_query("what is the port", STOPWORDS, "delete") == '"what" OR "is" OR "the" OR "port"'
    )
    assert MUTATIONS["rrf-constant-1"].build().rrf_k == 1


legs = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10)


@given(vector_ids=legs, bm25_ids=legs, budget=st.integers(1, 12), rrf_k=st.integers(1, 100))
def test_control_fusion_equals_the_reference_fusion(vector_ids, bm25_ids, budget, rrf_k):
    vector = [cand(i, vector_rank=r, similarity=1.0 / r) for r, i in enumerate(vector_ids, start=1)]
    bm25 = [cand(i, bm25_rank=r, bm25_score=10.0 / r) for r, i in enumerate(bm25_ids, start=1)]
    expected = fuse_rrf(vector, bm25, budget, rrf_k)
    actual = MUTATIONS[CONTROL].build().fuse(vector, bm25, budget, rrf_k)
    assert [c.id for c in actual] == [c.id for c in expected]
    for a, e in zip(actual, expected, strict=True):
        assert a.rrf_score == pytest.approx(e.rrf_score, rel=1e-12)
        assert a.relevance == pytest.approx(e.relevance, rel=1e-12)
        assert a._replace(rrf_score=None, relevance=0.0) == e._replace(rrf_score=None, relevance=0.0)


# ----------------------------------------------------------------------------- the command


def mutants(*args: str, datasets: Path = DATASETS, thresholds: Path = THRESHOLDS) -> int:
    return main(["mutants", "--datasets", str(datasets), "--thresholds", str(thresholds), *args])


def suite_paths(root: Path) -> dict[str, Path]:
    return {"datasets": root, "thresholds": root / "thresholds.json"}


@pytest.fixture
def small_suite(tmp_path: Path) -> Path:
    """A dataset with only the explicit-fact scenario and its own recorded baseline: too small to
    see most bugs, which is what the exit-1 tests need."""
    root = tmp_path / "datasets"
    (root / "scenarios").mkdir(parents=True)
    shutil.copy(DATASETS / "distractors.yaml", root)
    shutil.copy(DATASETS / "scenarios" / "explicit-fact.yaml", root / "scenarios")
    record = ["--datasets", str(root), "--thresholds", str(root / "thresholds.json")]
    assert run_and_record([*record, "--gated-pass", "off", "--out", str(tmp_path / "report.json")]) == 0
    return root


def test_cli_exits_0_when_the_selected_mutations_are_caught_and_the_control_is_not(capsys):
    assert mutants("--mutation", "project-filter-ignored", "--mutation", CONTROL) == 0
    out = capsys.readouterr().out
    assert re.search(r"^project-filter-ignored +yes +\d+ +ok$", out, re.MULTILINE)
    assert re.search(rf"^{CONTROL} \(control\) +no +0 +ok$", out, re.MULTILINE)
    assert "    project-scope" in out and "forbid: " in out
    assert "Every mutation was caught; the control raised no alarm." in out
    assert "2 mutant suite runs and 1 unmutated one in " in out  # the unmutated run: what to check against


def test_cli_exits_1_when_a_mutation_escapes(small_suite, capsys):
    assert mutants("--mutation", "include-global-ignored", **suite_paths(small_suite)) == 1
    out = capsys.readouterr().out
    assert re.search(r"^include-global-ignored +no +0 +ESCAPED$", out, re.MULTILINE)
    assert "Not as expected: include-global-ignored" in out


def test_cli_exits_1_when_the_control_raises_a_false_alarm(small_suite, capsys):
    data = json.loads((small_suite / "thresholds.json").read_text())
    data["deterministic@5"]["thresholds"]["categories"]["explicit-fact"]["mrr"] = 1.0
    (small_suite / "thresholds.json").write_text(json.dumps(data))
    assert mutants("--mutation", CONTROL, **suite_paths(small_suite)) == 1
    out = capsys.readouterr().out
    assert re.search(rf"^{CONTROL} \(control\) +yes +1 +FALSE ALARM$", out, re.MULTILINE)
    assert "category 'explicit-fact': mrr 0.9000 is below its threshold 1.0000" in out


def test_cli_unknown_mutation_exits_2_listing_the_valid_names(capsys):
    assert mutants("--mutation", "no-such-bug") == 2
    err = capsys.readouterr().err
    assert "unknown mutation(s): no-such-bug; valid mutations: " in err
    assert all(name in err for name in MUTATIONS)


def test_cli_without_a_baseline_gates_on_the_unmutated_run_and_says_so(tmp_path, capsys):
    none = tmp_path / "none.json"
    assert mutants("--mutation", "vector-leg-off", "--mutation", CONTROL, thresholds=none) == 0
    out = capsys.readouterr().out
    checked_against = (
        f"this suite's unmutated run (no comparable deterministic baseline at top_k 5 in {none})"
    )
    assert f"Mutants checked against {checked_against}" in out
    assert not none.exists()
