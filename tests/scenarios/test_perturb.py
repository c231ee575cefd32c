"""Deterministic perturbations of a suite (`evalkit.scenarios.perturb`, `evalkit run --perturb`,
`evalkit.perturbation_curve` and its chart)."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from evalkit import perturbation_curve, run_eval
from evalkit.errors import UsageError
from evalkit.metrics import HARNESS_METRICS
from evalkit.scenarios import load_suite
from evalkit.scenarios.dates import resolve_created_at
from evalkit.scenarios.perturb import (
    CurveSpec,
    Perturbation,
    distractor_pool,
    parse_curve,
    parse_perturb,
    perturb_suite,
)
from evalkit.views.charts import perturbation_chart
from evalkit.views.verdict import reproduce_command, run_verdict
from tests.shared import DATASETS, cli, cli_record, comparable


def test_distractors_add_exactly_n_pool_thoughts_per_scenario_and_a_larger_n_keeps_the_smaller_draw() -> None:
    suite = load_suite(DATASETS)
    ten = perturb_suite(suite, Perturbation(distractors=10))
    fifty = perturb_suite(suite, Perturbation(distractors=50))
    pool = {t.content for t in distractor_pool()}
    for plain, small, large in zip(suite.scenarios, ten.scenarios, fifty.scenarios, strict=True):
        added_small = small.thoughts[len(plain.thoughts) :]
        added_large = large.thoughts[len(plain.thoughts) :]
        assert len(small.thoughts) == len(plain.thoughts) + 10
        assert len(large.thoughts) == len(plain.thoughts) + 50
        assert all(t.distractor and t.content in pool for t in added_large)
        assert {t.id for t in added_small} <= {t.id for t in added_large}
        assert small.queries == plain.queries and small.edges == plain.edges
    assert ten.digest != suite.digest != fifty.digest != ten.digest
    assert ten.perturbation == "distractors=10, seed 0" and suite.perturbation is None
    shipped = pickle.loads(pickle.dumps(ten))  # how a suite reaches worker processes
    assert shipped.perturbation == ten.perturbation and shipped.scenarios == ten.scenarios


def test_the_draw_depends_on_the_seed_and_only_on_it() -> None:
    suite = load_suite(DATASETS)
    ids = [
        [t.id for t in perturb_suite(suite, Perturbation(distractors=5, seed=seed)).scenarios[0].thoughts]
        for seed in (0, 0, 1)
    ]
    assert ids[0] == ids[1] != ids[2]


def test_stale_repeats_add_k_older_superseded_copies_that_the_same_queries_forbid() -> None:
    suite = load_suite(DATASETS, ["supersession"])
    (plain,) = suite.scenarios
    (perturbed,) = perturb_suite(suite, Perturbation(stale_repeats=3)).scenarios
    clock = datetime(2026, 1, 1, tzinfo=UTC)
    superseded = {e.target: e.source for e in plain.edges if e.type == "replaces"}
    assert len(perturbed.thoughts) == len(plain.thoughts) + 3 * len(superseded)
    by_id = {t.id: t for t in perturbed.thoughts}
    for old, newer in superseded.items():
        for k in (1, 2, 3):
            copy = by_id[f"{old}~stale{k}"]
            assert copy.content == by_id[old].content
            assert resolve_created_at(copy.created_at, clock) == resolve_created_at(
                by_id[old].created_at, clock
            ) - timedelta(days=k)
            assert any(
                e.source == newer and e.target == copy.id and e.type == "replaces" for e in perturbed.edges
            )
    for before, after in zip(plain.queries, perturbed.queries, strict=True):
        assert after.forbid == [*before.forbid, *(f"{i}~stale{k}" for i in before.forbid for k in (1, 2, 3))]


def test_a_perturbed_run_is_deterministic_and_never_compared_with_the_baseline() -> None:
    perturbation = Perturbation(distractors=10, stale_repeats=2, seed=4)
    run = run_eval(datasets=DATASETS, perturb=perturbation)
    first = run.result
    second = run_eval(datasets=DATASETS, perturb=perturbation).result
    assert comparable(first.model_dump(mode="json")) == comparable(second.model_dump(mode="json"))
    assert first.baseline_check_off
    assert any("the suite is perturbed (distractors=10, stale-repeats=2, seed 4)" in n for n in first.notes)
    assert first.provenance.perturbation == {"distractors": 10, "stale_repeats": 2, "seed": 4}
    assert reproduce_command(first) == (
        "evalkit run --top-k 5 --perturb distractors=10 --perturb stale-repeats=2 --perturb-seed 4"
    )
    assert run_verdict(run).value == "NOT COMPARED"
    unperturbed = run_eval(datasets=DATASETS, scenarios=["temporal"]).result
    assert "perturbation" not in unperturbed.provenance.model_dump(mode="json")


def test_recall_does_not_increase_as_distractors_grow_on_the_reference_store() -> None:
    curve = perturbation_curve([0, 10, 50], datasets=DATASETS)
    assert list(curve.columns) == [0, 10, 50] and curve.columns.name == "distractors"
    assert list(curve.index) == [("reference", metric) for metric in HARNESS_METRICS]
    recall = curve.loc[("reference", "recall")].tolist()
    assert recall == sorted(recall, reverse=True)
    assert recall[0] > recall[-1]  # the pool does cost the reference store something at 50
    figure = perturbation_chart(curve)
    assert "Metrics as memory grows" in figure.alt_text
    assert len(figure.axes) == len(HARNESS_METRICS)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--perturb", "nope=1"], "--perturb 'nope=1': unknown perturbation; use --perturb distractors=N"),
        (["--perturb", "distractors=-1"], "'-1' is not a whole number 0 or more"),
        (
            ["--perturb", "distractors=0,10", "--perturb", "stale-repeats=0,1"],
            "--perturb: one curve at a time; give several values to one kind only",
        ),
        (["--perturb", "paraphrase"], "paraphrase is not offered: no deterministic paraphrase source exists"),
        (
            ["--perturb", "distractors=1", "--perturb", "distractors=2"],
            "--perturb distractors is given twice",
        ),
        (["--perturb", "distractors=999"], "the shipped pool holds 64 thoughts"),
        # it grew to 1.2 GB in 13 s, until out of memory
        (["--perturb", "stale-repeats=1000000000"], "at most 100 stale copies of each superseded thought"),
        (["--perturb", "stale-repeats=0,1000000000"], "at most 100 stale copies"),
    ],
)
def test_bad_perturbations_are_usage_errors_naming_the_flag_and_the_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], expected: str
) -> None:
    code, _, err = cli(
        capsys, "run", "--datasets", str(DATASETS), "--thresholds", str(tmp_path / "t.json"),
        "--out", str(tmp_path / "r.json"), "--history", "none", *argv,
    )  # fmt: skip
    assert code == 2
    assert expected in err
    assert not (tmp_path / "t.json").exists()


def test_the_api_refuses_what_the_flag_refuses() -> None:
    with pytest.raises(UsageError, match="whole number"):
        Perturbation(distractors=-3)
    with pytest.raises(UsageError, match="unknown perturbation kind 'paraphrase'"):
        perturbation_curve([1], kind="paraphrase")
    assert parse_perturb(["stale-repeats=2", "distractors=3"], seed=7) == Perturbation(3, 2, 7)


_LATE_CORRECTION = """\
name: late-correction
category: update
distractors: false
thoughts:
  - {id: port-old, content: The staging server listens on port 8080., created_at: -30d}
  - {id: lunch, content: Team lunch is on Friday at noon.}
queries:
  - query: Which port does the staging server listen on?
    relevant: [port-old]
  - query: Which port does the staging server listen on now?
    relevant: [port-new]
    forbid: [port-old]
steps:
  - after_query: 1
    add:
      thoughts:
        - {id: port-new, content: The staging server now listens on port 9090., created_at: -1d}
      edges:
        - {source: port-new, target: port-old, type: replaces}
"""

_ARRIVES_LATE = """\
name: arrives-late
category: update
distractors: false
thoughts:
  - {id: lunch, content: Team lunch is on Friday at noon.}
queries:
  - query: When is team lunch?
    relevant: [lunch]
  - query: Where is the release checklist?
    relevant: [list-new]
    forbid: [list-old]
steps:
  - after_query: 1
    add:
      thoughts:
        - {id: list-old, content: The release checklist lives in the ops wiki., created_at: -20d}
        - {id: list-new, content: The release checklist moved to the repo's docs folder., created_at: -2d}
      edges:
        - {source: list-new, target: list-old, type: replaces}
"""


@pytest.fixture
def stepped_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "stepped"
    (suite / "scenarios").mkdir(parents=True)
    (suite / "suite.yaml").write_text("categories: [update]\nbehaviour_metrics: true\n", encoding="utf-8")
    (suite / "scenarios" / "late-correction.yaml").write_text(_LATE_CORRECTION, encoding="utf-8")
    (suite / "scenarios" / "arrives-late.yaml").write_text(_ARRIVES_LATE, encoding="utf-8")
    return suite


def test_stale_repeats_follow_a_fact_superseded_or_seeded_by_an_add_step(stepped_suite: Path) -> None:
    suite = load_suite(stepped_suite)
    perturbed = {s.name: s for s in perturb_suite(suite, Perturbation(stale_repeats=2)).scenarios}
    copies = ["port-old~stale1", "port-old~stale2"]
    late = perturbed["late-correction"]
    # the original is seeded up front, so are its copies; they are superseded only by the step
    assert [t.id for t in late.thoughts] == ["port-old", "lunch", *copies]
    assert late.edges == []
    (step,) = late.steps
    assert step.add is not None and [t.id for t in step.add.thoughts] == ["port-new"]
    assert [(e.source, e.target) for e in step.add.edges] == [("port-new", "port-old")] + [
        ("port-new", c) for c in copies
    ]
    assert late.queries[0].forbid == [] and late.queries[1].forbid == ["port-old", *copies]
    # the original and its correction both arrive in a step: the copies arrive with them
    (step,) = perturbed["arrives-late"].steps
    assert step.add is not None
    assert [t.id for t in step.add.thoughts] == ["list-old", "list-new", "list-old~stale1", "list-old~stale2"]
    assert [t.id for t in perturbed["arrives-late"].thoughts] == ["lunch"]
    # stale only once superseded: the first query's memory holds no stale id, the second's does
    run = run_eval(datasets=stepped_suite, thresholds=None, perturb=Perturbation(stale_repeats=2))
    (late_result,) = [s for s in run.result.measurement.scenarios if s.name == "late-correction"]
    first, second = late_result.queries
    assert "stale_fact_rate" not in first.behaviour and "stale_fact_rate" in second.behaviour
    assert not set(copies) & set(second.retrieved)  # the reference store suppresses every copy
    assert set(copies) <= set(first.retrieved)  # before the step, the copies are current facts


def test_distractors_are_seeded_up_front_and_leave_the_steps_alone(stepped_suite: Path) -> None:
    suite = load_suite(stepped_suite)
    for plain, grown in zip(
        suite.scenarios, perturb_suite(suite, Perturbation(distractors=5)).scenarios, strict=True
    ):
        assert grown.steps == plain.steps
        assert len(grown.thoughts) == len(plain.thoughts) + 5


def test_a_curve_of_a_pack_also_follows_the_behaviour_metrics_it_scores() -> None:
    pack = DATASETS / "packs" / "update-propagation"
    curve = perturbation_curve([0, 2], kind="stale-repeats", datasets=pack, thresholds=None)
    metrics = list(curve.loc["reference"].index)
    assert metrics[: len(HARNESS_METRICS)] == list(HARNESS_METRICS)
    assert "duplicate_rate" in metrics[len(HARNESS_METRICS) :]
    assert curve.columns.name == "stale-repeats" and list(curve.columns) == [0, 2]


def test_a_curve_spec_refuses_what_the_flag_refuses() -> None:
    assert CurveSpec("distractors", (0, 10)).flag == "distractors=0,10"
    assert [p.distractors for p in CurveSpec("distractors", (0, 10), seed=3).perturbations] == [0, 10]
    with pytest.raises(UsageError, match="at least one value"):
        CurveSpec("distractors", ())
    with pytest.raises(UsageError, match="each value once"):
        CurveSpec("stale-repeats", (1, 1))
    with pytest.raises(UsageError, match="the shipped pool holds 64"):
        CurveSpec("distractors", (0, 100))
    with pytest.raises(UsageError, match="unknown perturbation kind"):
        perturbation_curve([], kind="nope")
    assert parse_curve(" stale-repeats = 0, 1 ,3 ", seed=5) == CurveSpec("stale-repeats", (0, 1, 3), 5)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: CurveSpec("stale-repeats", (1, 1)),
            "a perturbation curve measures each value once; got [1, 1]",
        ),
        (
            lambda: CurveSpec("distractors", (0, 100)),
            "values=[0, 100]: the shipped pool holds 64 thoughts (distractor_pool.yaml); "
            "ask for 64 or fewer distractors",
        ),
        (
            lambda: parse_curve("distractors=5,5"),
            "--perturb 'distractors=5,5': a value is given twice; give each value once",
        ),
        (
            lambda: parse_curve("distractors=0,65", flag="perturbation_curve"),
            "perturbation_curve 'distractors=0,65': the shipped pool holds 64 thoughts "
            "(distractor_pool.yaml); ask for 64 or fewer distractors",
        ),
    ],
)
def test_a_curve_is_refused_in_the_words_it_was_asked_in(make: Callable[[], object], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        make()
    assert str(raised.value) == message


def test_a_curve_asked_for_from_python_is_refused_naming_the_parameters_passed_not_a_flag() -> None:
    """The API's words (`CurveSpec` itself, `perturbation_curve`, `run_eval(perturb_curve=...)`):
    the parameters the caller passed, never `--perturb-curve`, which it did not type."""
    pool = "the shipped pool holds 64 thoughts (distractor_pool.yaml); ask for 64 or fewer distractors"
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: perturbation_curve([0, 65, 10], datasets=DATASETS), f"values=[0, 65, 10]: {pool}"),
        (lambda: CurveSpec("distractors", (70,)), f"values=[70]: {pool}"),
        (lambda: run_eval(perturb_curve=CurveSpec("distractors", (0, 99))), f"values=[0, 99]: {pool}"),
        (
            lambda: perturbation_curve([2, 2], kind="stale-repeats"),
            "a perturbation curve measures each value once; got [2, 2]",
        ),
        (
            lambda: perturbation_curve([]),
            "a perturbation curve needs at least one value; give values as whole numbers 0 or more, "
            "each once (e.g. values=[0, 10, 25, 50])",
        ),
        (
            lambda: perturbation_curve([1], kind="nope"),
            "unknown perturbation kind 'nope'; use one of distractors, stale-repeats",
        ),
    ]
    for make, message in cases:
        with pytest.raises(UsageError) as raised:
            make()
        assert str(raised.value) == message and "--" not in message


def test_how_a_curve_was_asked_for_is_not_part_of_it() -> None:
    spec = CurveSpec("distractors", (0, 10), given_as="--perturb-curve 'distractors=0,10'")
    assert spec == CurveSpec("distractors", (0, 10)) and "given_as" not in repr(spec)
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_a_perturbed_report_is_never_recorded_as_a_baseline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    thresholds = tmp_path / "t.json"
    code, _, err = cli_record(
        capsys, "run", "--datasets", str(DATASETS), "--thresholds", str(thresholds),
        "--out", str(tmp_path / "r.json"), "--history", "none", "--perturb", "distractors=1",
    )  # fmt: skip
    assert code == 2 and "a perturbed run is never a baseline" in err and not thresholds.exists()
