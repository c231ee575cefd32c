"""The opt-in gated baseline (issue 13, item 4): `evalkit baseline record --gated` records the
gated pass keyed by (mode, top_k, min_relevance) with recall tolerances; a run whose gate has an
entry is checked against it too (`gated-metric`/`gated-present` regressions), otherwise the gated pass
stays report-only. Mode entries and gated entries never touch each other."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit import EvalRun, ReferenceSystem, RunConfig, load_suite, run_eval, run_verdict
from evalkit.errors import ThresholdsError, UsageError
from evalkit.harness.baselines import baseline_entry, gated_baseline_entry
from evalkit.harness.evaluate import evaluate
from evalkit.harness.regressions import gated_regressions
from evalkit.harness.thresholds_file import (
    GATED_KEY,
    GatedTolerances,
    load_thresholds,
    read_thresholds,
    update_gated_baseline,
    update_thresholds,
)
from evalkit.suites.mutations import MUTATIONS
from evalkit.views.console import render_run
from tests.factories import a_pass, query, scenario
from tests.shared import DATASETS, cli, cli_record


def _gated(recall_a: float = 1.0, recall_b: float = 0.5, gate: float = 0.4):
    return a_pass(
        scenario("a", "cat-a", [query(0, recall=recall_a)]),
        scenario("b", "cat-b", [query(0, recall=recall_b)]),
        gate=gate,
    )


# ------------------------------------------------------------------------------ entries and floors


def test_floors_are_the_recorded_recall_minus_each_categorys_tolerance():
    tolerances = GatedTolerances(default=0.05, categories={"cat-b": 0.2})
    entry = gated_baseline_entry(_gated(recall_b=2 / 3), "deterministic", 5, tolerances)
    assert entry.key == ("deterministic", 5, 0.4)
    assert entry.baseline.categories["cat-b"].recall == 0.6667
    assert entry.floor(None) == 0.7833  # overall (1 + 0.6667) / 2 = 0.8333, − 0.05
    assert entry.floor("cat-a") == 0.95
    assert entry.floor("cat-b") == 0.4667  # its own tolerance
    assert GatedTolerances().default == 0.05


def test_a_recall_below_its_gated_floor_is_a_gated_metric_regression_named_as_such():
    entry = gated_baseline_entry(_gated(), "deterministic", 5, GatedTolerances(default=0.05))
    assert gated_regressions(_gated(recall_b=0.46), entry) == []  # within 0.05 of 0.5
    found = gated_regressions(_gated(recall_b=0.4), entry)  # overall 0.70 is at its floor 0.75 − 0.05
    assert [(r.kind, r.category, r.metric, r.threshold) for r in found] == [
        ("gated-metric", "cat-b", "recall", 0.45)
    ]
    assert found[0].actual == pytest.approx(0.4)
    assert found[0].message == (
        "gated pass (min_relevance 0.4): category 'cat-b': recall 0.4000 is below its gated floor 0.4500 "
        "(gated baseline 0.5000 − tolerance 0.05)"
    )


def test_a_category_of_the_gated_baseline_missing_from_the_run_is_gated_present():
    entry = gated_baseline_entry(_gated(), "deterministic", 5)
    only_a = a_pass(scenario("a", "cat-a", [query(0)]), gate=0.4)
    found = gated_regressions(only_a, entry)
    assert [(r.kind, r.category) for r in found] == [("gated-present", "cat-b")]
    assert found[0].message.startswith(
        "gated pass (min_relevance 0.4): category 'cat-b' has a gated baseline"
    )


def test_a_pass_without_a_gate_cannot_be_recorded_as_a_gated_baseline():
    with pytest.raises(UsageError, match="ran without a gate"):
        gated_baseline_entry(_gated(gate=0.0), "deterministic", 5)


# ------------------------------------------------------------------------------ the thresholds file


def test_recording_a_gated_entry_leaves_the_mode_entries_byte_for_byte(tmp_path):
    path = tmp_path / "thresholds.json"
    shutil.copy(DATASETS / "thresholds.json", path)
    modes_before = json.loads(path.read_text())
    update_gated_baseline(path, gated_baseline_entry(_gated(), "deterministic", 5))
    data = json.loads(path.read_text())
    assert list(data) == [*modes_before, GATED_KEY]
    assert {k: v for k, v in data.items() if k != GATED_KEY} == modes_before
    assert load_thresholds(path) == load_thresholds(DATASETS / "thresholds.json")
    assert [p.name for p in tmp_path.iterdir()] == ["thresholds.json"]


def test_recording_a_mode_entry_leaves_the_gated_entries(tmp_path):
    path = tmp_path / "thresholds.json"
    update_gated_baseline(path, gated_baseline_entry(_gated(), "deterministic", 5))
    gated_before = json.loads(path.read_text())[GATED_KEY]
    update_thresholds(path, "deterministic", baseline_entry(_gated(gate=0.0), top_k=5))
    data = json.loads(path.read_text())
    assert data[GATED_KEY] == gated_before and set(data) == {"deterministic@5", GATED_KEY}


def test_a_gated_entry_replaces_only_the_entry_of_its_own_key(tmp_path):
    path = tmp_path / "thresholds.json"
    update_gated_baseline(path, gated_baseline_entry(_gated(recall_b=0.5), "deterministic", 5))
    update_gated_baseline(path, gated_baseline_entry(_gated(gate=0.6), "deterministic", 5))
    update_gated_baseline(path, gated_baseline_entry(_gated(recall_b=0.25), "deterministic", 5))
    document = read_thresholds(path)
    assert document is not None and document.modes == {}
    assert sorted(e.key for e in document.gated) == [("deterministic", 5, 0.4), ("deterministic", 5, 0.6)]
    entry = document.gated_entry("deterministic", 5, 0.4)
    assert entry is not None and entry.baseline.categories["cat-b"].recall == 0.25
    assert document.gated_entry("deterministic", 10, 0.4) is None
    assert document.gated_entry("real", 5, 0.4) is None


def test_a_file_without_gated_entries_has_no_gated_key(tmp_path):
    path = tmp_path / "thresholds.json"
    update_thresholds(path, "deterministic", baseline_entry(_gated(gate=0.0), top_k=5))
    assert GATED_KEY not in json.loads(path.read_text())


@pytest.mark.parametrize(
    ("gated", "needles"),
    [
        ([{"mode": "deterministic"}], ["gated[0].top_k: required key 'top_k' is missing"]),
        ("nope", ["\n  - gated: Input should be a valid list (got 'nope')"]),
        ("TOLERANCE", ["tolerances.categories names 'cat-z'", "fix the name or remove it"]),
        ("DUPLICATE", ["gated[1] and gated[0] are both the gated baseline of mode 'deterministic', top_k 5"]),
    ],
)
def test_an_invalid_gated_list_is_an_error_naming_the_file_and_the_entry(tmp_path, gated, needles):
    entry = gated_baseline_entry(_gated(), "deterministic", 5).model_dump(mode="json")
    if gated == "TOLERANCE":
        gated = [{**entry, "tolerances": {"default": 0.05, "categories": {"cat-z": 0.1}}}]
    elif gated == "DUPLICATE":
        gated = [entry, entry]
    path = tmp_path / "thresholds.json"
    path.write_text(json.dumps({GATED_KEY: gated}))
    with pytest.raises(ThresholdsError) as info:
        read_thresholds(path)
    message = str(info.value)
    assert str(path) in message and all(needle in message for needle in needles), message
    with pytest.raises(ThresholdsError):
        update_gated_baseline(path, gated_baseline_entry(_gated(), "deterministic", 5))
    assert json.loads(path.read_text()) == {GATED_KEY: gated}  # never replaced


def test_the_gated_key_cannot_be_a_mode():
    with pytest.raises(UsageError, match="cannot be a mode name"):
        update_thresholds(Path("unused.json"), GATED_KEY, baseline_entry(_gated(gate=0.0), top_k=5))


# ------------------------------------------------------------------------------ runs


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, EvalRun]:
    """The built-in deterministic baseline plus a gated baseline recorded from a clean run at the
    service's gate (0.4) with the default tolerance."""
    path = tmp_path_factory.mktemp("gated") / "thresholds.json"
    shutil.copy(DATASETS / "thresholds.json", path)
    clean = run_eval(datasets=DATASETS, thresholds=path, progress=False)
    assert clean.result.gated is not None and clean.result.gated_baseline is None
    update_gated_baseline(path, gated_baseline_entry(clean.result.gated, "deterministic", 5))
    return path, clean


def _degraded(thresholds: Path, **config: object) -> EvalRun:
    """The built-in suite on a reference store whose gate drops strong BM25 hits: the gated pass
    degrades (and the ungated pass only where a query pins its own gate)."""
    system = ReferenceSystem(pipeline=MUTATIONS["gate-drops-bm25-hits"].build())
    settings = RunConfig(thresholds=thresholds, **config)  # type: ignore[arg-type]
    return EvalRun(evaluate(load_suite(DATASETS), system, settings, progress=False))


def test_a_degraded_gate_regresses_the_gated_pass_against_its_gated_baseline(recorded, tmp_path):
    path, clean = recorded
    again = run_eval(datasets=DATASETS, thresholds=path, progress=False)
    assert again.ok and again.result.gated_baseline is not None  # the clean run passes its own entry
    assert again.result.gated_baseline.min_relevance == 0.4
    degraded = _degraded(path)
    gated = [r for r in degraded.result.regressions if r.kind.startswith("gated-")]
    assert {r.kind for r in gated} == {"gated-metric"} and len(gated) >= 2
    overall = next(r for r in gated if r.category is None)
    assert clean.result.gated is not None
    assert overall.threshold == pytest.approx(
        round(clean.result.gated.overall.metrics["recall"] - 0.05, 4), abs=1e-4
    )
    assert overall.actual is not None and overall.actual + 1e-6 < overall.threshold
    saved = json.loads(degraded.save(tmp_path / "report.json").read_text())
    assert saved["gated_baseline"]["min_relevance"] == 0.4
    assert sum(r["kind"] == "gated-metric" for r in saved["regressions"]) == len(gated)
    console = render_run(degraded)
    assert "Gated pass (checked against its baseline recorded " in console
    assert "  - [gated-metric] gated pass (min_relevance 0.4): overall: recall " in console
    verdict = run_verdict(degraded)
    assert verdict.headline.startswith("FAIL")
    assert "gate min_relevance 0.4 (checked against its baseline recorded" in verdict.identity
    assert sum(
        line.startswith("[gated-metric] gated pass (min_relevance 0.4): ") for line in verdict.regressions
    ) == len(gated)


def test_without_an_entry_for_the_runs_gate_the_gated_pass_stays_report_only(recorded, tmp_path):
    path, _ = recorded
    for degraded in (_degraded(path, min_relevance=0.5), _degraded(DATASETS / "thresholds.json")):
        assert degraded.result.gated_baseline is None
        assert not [r for r in degraded.result.regressions if r.kind.startswith("gated-")]
        assert "Gated pass (report-only)" in render_run(degraded)
        assert "(report-only)" in run_verdict(degraded).identity
        assert "gated_baseline" not in json.loads(degraded.save(tmp_path / "r.json").read_text())
    other_top_k = _degraded(path, top_k=6)
    assert other_top_k.result.gated_baseline is None
    assert not [r for r in other_top_k.result.regressions if r.kind.startswith("gated-")]


# ------------------------------------------------------------------------------ the CLI


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copytree(DATASETS, tmp_path / "data")
    return tmp_path


def _run(ws: Path, *extra: str) -> list[str]:
    return [
        "run", "--datasets", str(ws / "data"), "--thresholds", str(ws / "data" / "thresholds.json"),
        "--out", str(ws / "report.json"), "--history", "none", "--no-progress", *extra,
    ]  # fmt: skip


def test_cli_records_a_gated_baseline_then_a_degraded_suite_exits_1_on_it(workspace, capsys):
    path = workspace / "data" / "thresholds.json"
    modes = json.loads(path.read_text())
    code, out, err = cli_record(
        capsys,
        *_run(workspace),
        record=("--gated", "--tolerance", "0.03", "--category-tolerance", "multi-hop=0.1"),
    )
    assert code == 0, err
    assert (
        f"gated baseline for mode 'deterministic', top_k 5, min_relevance 0.4 recorded in {path} "
        "(recall tolerance 0.03; multi-hop 0.1)"
    ) in out
    data = json.loads(path.read_text())
    assert {k: v for k, v in data.items() if k != GATED_KEY} == modes  # the mode baselines untouched
    assert data[GATED_KEY][0]["tolerances"] == {"default": 0.03, "categories": {"multi-hop": 0.1}}

    # Re-recording keeps the chosen tolerances unless flags change them.
    assert cli_record(capsys, *_run(workspace), record=("--gated",))[0] == 0
    assert json.loads(path.read_text())[GATED_KEY][0]["tolerances"]["categories"] == {"multi-hop": 0.1}

    scenario_file = workspace / "data" / "scenarios" / "multi-hop.yaml"
    scenario_file.write_text(
        scenario_file.read_text().replace(
            "The ledger service stores balances in the CockroachDB database crdb-east.",
            "Balances are kept in crdb-east.",
        )
    )
    code, out, err = cli(capsys, *_run(workspace))
    assert code == 1, err
    assert "  - [gated-metric] gated pass (min_relevance 0.4): category 'multi-hop': recall " in out
    assert "(gated baseline 0.7333 − tolerance 0.1)" in out

    code, out, err = cli(capsys, *_run(workspace, "--gated-pass", "0.9"))  # no entry at 0.9
    assert "[gated-" not in out and "Gated pass (report-only): min_relevance 0.9" in out


@pytest.mark.parametrize(
    ("flags", "record", "needle"),
    [
        (["--gated-pass", "off"], ["--gated"], "the run has no gated pass to record"),
        ([], ["--tolerance", "0.1"], "add --gated"),
        (["--gated-pass", "0"], ["--gated"], "without a gate (min_relevance 0)"),
        ([], ["--gated", "--category-tolerance", "multi-hops=0.1"], "'multi-hops', not a category"),
    ],
)
def test_cli_refuses_gated_flags_that_would_do_nothing(workspace, capsys, flags, record, needle):
    before = (workspace / "data" / "thresholds.json").read_bytes()
    code, _, err = cli_record(capsys, *_run(workspace, *flags), record=tuple(record))
    assert code == 2 and needle in err, err
    assert (workspace / "data" / "thresholds.json").read_bytes() == before
