"""A run's passes as values (name, role, gate summary) and the report JSON they are written to
and read from: the original service's shape (SPEC §5), whatever the passes."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from evalkit import EvalRun, load_run, run_eval
from evalkit.errors import ReportError
from evalkit.harness.report_file import load_report, save_report
from evalkit.harness.results import CandidateRecord, GatedBaselineRef, RunResult
from evalkit.harness.sweep import regate_pass
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS, ROOT

GOLDEN = ROOT / "tests" / "golden" / "builtin_deterministic.json"

REPORT_KEYS = [
    "scenarios", "overall", "categories", "relevance_gate", "pinned_gates", "schema_version", "mode",
    "generated_at", "top_k", "system", "provenance", "regressions", "notes", "gated", "latency", "verdict",
]  # fmt: skip
"""The top-level keys of a plain run's report, in the order they are written."""


def _run(*, gated: bool = True, **fields: object) -> RunResult:
    pinned = query(0, dropped=(("p", False),), candidates=3)
    ungated = a_pass(scenario("facts", "explicit-fact", [pinned, query(1)]))
    weak = query(1, recall=0.5, dropped=(("r", True), ("x", False)), candidates=4)
    gate = a_pass(scenario("facts", "explicit-fact", [pinned, weak]), gate=0.4) if gated else None
    return a_run(ungated, gate, **fields)


def test_passes_have_a_name_a_role_and_their_own_gate_summary() -> None:
    run = _run()
    assert [(p.name, p.role) for p in run.passes] == [("ungated", "measurement"), ("gated", "report-only")]
    assert run.measurement is run.passes[0] and run.gated is run.passes[1]
    assert run.pass_named("gated") is run.gated and run.pass_named("gated@0.6") is None
    assert (run.pinned_gates.min_relevance, run.pinned_gates.dropped_rows) == (0.0, 1)
    assert run.relevance_gate is not None and run.relevance_gate == run.passes[1].relevance_gate
    assert (run.relevance_gate.min_relevance, run.relevance_gate.dropped_rows) == (0.4, 3)
    assert run.scenarios == run.measurement.scenarios and run.overall == run.measurement.overall
    assert _run(gated=False).gated is None and _run(gated=False).relevance_gate is None


def test_the_report_keeps_the_original_shape(tmp_path) -> None:
    run = _run()
    saved = json.loads(save_report(run, tmp_path / "r.json").read_text())
    assert list(saved) == REPORT_KEYS
    assert list(saved["gated"]) == ["scenarios", "overall", "categories", "relevance_gate"]
    assert (
        saved["relevance_gate"]
        == saved["gated"]["relevance_gate"]
        == run.passes[1].relevance_gate.model_dump()
    )
    assert saved["pinned_gates"] == run.measurement.relevance_gate.model_dump()
    assert saved["scenarios"] == [s.model_dump(mode="json") for s in run.measurement.scenarios]
    plain = json.loads(save_report(_run(gated=False), tmp_path / "p.json").read_text())
    assert (plain["gated"], plain["relevance_gate"]) == (None, None)


def test_a_written_run_reads_back_equal_with_its_roles(tmp_path) -> None:
    ref = GatedBaselineRef(mode="deterministic", top_k=5, min_relevance=0.4, recorded_at="2026-01-01")
    plain = _run()
    own = (plain.passes[0], plain.passes[1].model_copy(update={"role": "own-baseline"}))
    gated = RunResult.model_validate({**dict(plain), "passes": own, "gated_baseline": ref})
    for run in (plain, _run(gated=False), gated):
        again = load_report(save_report(run, tmp_path / "r.json"))
        assert again == run
    assert [p.role for p in load_report(tmp_path / "r.json").passes] == ["measurement", "own-baseline"]


def test_a_report_whose_top_level_gate_disagrees_with_its_gated_pass_is_rejected(tmp_path) -> None:
    saved = json.loads(save_report(_run(), tmp_path / "r.json").read_text())
    saved["relevance_gate"] = saved["pinned_gates"]
    (tmp_path / "bad.json").write_text(json.dumps(saved))
    with pytest.raises(ReportError, match=r"relevance_gate must repeat gated\.relevance_gate"):
        load_report(tmp_path / "bad.json")
    saved["gated"], saved["relevance_gate"] = None, saved["pinned_gates"]
    (tmp_path / "bad.json").write_text(json.dumps(saved))
    with pytest.raises(ReportError, match="relevance_gate must be null"):
        load_report(tmp_path / "bad.json")


def test_a_re_gated_pass_is_one_more_pass_of_the_run_and_round_trips(tmp_path) -> None:
    run = _run()
    regated = regate_pass(_with_candidates(run), 0.6)
    assert (regated.name, regated.role, regated.relevance_gate.min_relevance) == (
        "gated@0.6",
        "re-gated",
        0.6,
    )
    swept = run.with_pass(regated)
    assert [p.name for p in swept.passes] == ["ungated", "gated", "gated@0.6"]
    saved = json.loads(save_report(swept, tmp_path / "r.json").read_text())
    assert list(saved)[: len(REPORT_KEYS)] == REPORT_KEYS and list(saved)[-1] == "regated"
    assert [p["name"] for p in saved["regated"]] == ["gated@0.6"]
    assert load_report(tmp_path / "r.json") == swept
    assert "regated" not in json.loads(save_report(run, tmp_path / "p.json").read_text())


def test_passes_out_of_their_order_or_roles_are_rejected() -> None:
    run = _run()
    measurement, gated = run.passes
    with pytest.raises(ValidationError, match="first pass is its measurement"):
        RunResult.model_validate({**dict(run), "passes": (gated, measurement)})
    with pytest.raises(ValidationError, match="at most one relevance-gated pass"):
        run.with_pass(gated.model_copy(update={"name": "gated-2"}))
    with pytest.raises(ValidationError, match="unique pass names"):
        RunResult.model_validate(
            {**dict(run), "passes": (measurement, gated, gated.model_copy(update={"role": "re-gated"}))}
        )
    with pytest.raises(ValidationError, match="own-baseline exactly when"):
        run.with_pass(gated.model_copy(update={"role": "own-baseline"}))


def _with_candidates(run: RunResult) -> RunResult:
    """`run` whose gated queries recorded their gate candidates (as a real gated pass does)."""
    gated = run.passes[1]
    rows = [
        CandidateRecord(id=i, bm25=i == "r", similarity=s) for i, s in (("r", 0.3), ("x", 0.5), ("y", 0.7))
    ]
    scenarios = [
        s.model_copy(update={"queries": [q.model_copy(update={"gate_candidates": rows}) for q in s.queries]})
        for s in gated.scenarios
    ]
    return run.with_pass(gated.model_copy(update={"scenarios": scenarios}))


def test_a_perturbation_curve_holds_one_point_per_value_and_is_left_out_when_absent(tmp_path):
    from evalkit.harness.results import PerturbationCurve

    good = {
        "kind": "distractors",
        "seed": 0,
        "values": [0, 10],
        "series": {"reference": {"recall": [1.0, 0.5]}},
    }
    assert PerturbationCurve.model_validate(good).values == [0, 10]
    with pytest.raises(ValidationError, match="2 points for 3 values"):
        PerturbationCurve.model_validate({**good, "values": [0, 10, 20]})
    with pytest.raises(ValidationError, match="measures each value once"):
        PerturbationCurve.model_validate({**good, "values": [10, 10]})
    with pytest.raises(ValidationError):
        PerturbationCurve.model_validate({**good, "kind": "paraphrase"})
    run = run_eval(datasets=DATASETS, scenarios=["temporal"], thresholds=None)
    saved = json.loads(run.save(tmp_path / "r.json").read_text())
    assert "perturbation_curve" not in saved and load_run(tmp_path / "r.json").perturbation_curve is None
    with_curve = run.result.with_curve(PerturbationCurve.model_validate(good))
    assert with_curve.verdict == run.result.verdict
    EvalRun(with_curve).save(tmp_path / "c.json")
    assert json.loads((tmp_path / "c.json").read_text())["perturbation_curve"] == good
