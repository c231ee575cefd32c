"""`evalkit run` end to end: exit codes, baseline checks, reports (SPEC §3.5, §3.6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli import build_parser, main
from tests.shared import DATASETS, cli


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the built-in datasets (tests may edit it)."""
    shutil.copytree(DATASETS, tmp_path / "datasets")
    return tmp_path


def record(workspace: Path, *args: str) -> int:
    """`run(workspace, *args)`, then `evalkit baseline record` over its report."""
    code = run(workspace, *args)
    return code if code not in (0, 1) else main(["baseline", "record", str(workspace / "report.json")])


def run(workspace: Path, *args: str) -> int:
    return main(
        [
            "run",
            "--datasets", str(workspace / "datasets"),
            "--thresholds", str(workspace / "datasets" / "thresholds.json"),
            "--out", str(workspace / "report.json"),
            *args,
        ]
    )  # fmt: skip


def thresholds(workspace: Path) -> dict:
    return json.loads((workspace / "datasets" / "thresholds.json").read_text())


def write_thresholds(workspace: Path, data: dict) -> None:
    (workspace / "datasets" / "thresholds.json").write_text(json.dumps(data))


def test_builtin_suite_exits_0_with_console_summary_and_report(workspace, capsys):
    assert run(workspace) == 0
    out = capsys.readouterr().out
    assert "No gating regressions." in out
    assert "Gated pass (report-only): min_relevance 0.4 — dropped " in out
    assert "candidate rows across " in out
    assert "contradiction" in out and "xfail" in out
    report = json.loads((workspace / "report.json").read_text())
    assert report["mode"] == "deterministic" and report["top_k"] == 5
    assert report["gated"]["relevance_gate"]["dropped_rows"] > 0
    assert report["pinned_gates"]["min_relevance"] == 0.0
    assert report["gated"]["relevance_gate"]["min_relevance"] == 0.4
    # SPEC §5: the top-level relevance_gate is the report-only gated pass's summary
    assert report["relevance_gate"] == report["gated"]["relevance_gate"]
    assert report["relevance_gate"]["dropped_rows"] == 488
    assert report["regressions"] == []


def test_floors_above_the_actual_metrics_are_metric_regressions(workspace, capsys):
    data = thresholds(workspace)
    for levels in [
        data["deterministic@5"]["thresholds"]["overall"],
        *data["deterministic@5"]["thresholds"]["categories"].values(),
    ]:
        levels.update(recall=1.0, precision=1.0, mrr=1.0, hit_rate=1.0)
    write_thresholds(workspace, data)
    assert run(workspace) == 1
    out = capsys.readouterr().out
    assert "[metric] overall: precision" in out and "is below its threshold 1.0000" in out
    report = json.loads((workspace / "report.json").read_text())
    assert {r["kind"] for r in report["regressions"]} == {"metric"}


def test_a_baseline_category_missing_from_the_run_is_a_present_regression(workspace, capsys):
    data = thresholds(workspace)
    entry = data["deterministic@5"]
    entry["thresholds"]["categories"]["retired-category"] = dict(recall=0, precision=0, mrr=0, hit_rate=0)
    write_thresholds(workspace, data)
    assert run(workspace) == 1
    assert (
        "[present] category 'retired-category' has a baseline but no counted scenario ran in it"
        in capsys.readouterr().out
    )


def test_measure_only_assertion_failures_still_gate(workspace, capsys):
    probe = workspace / "datasets" / "scenarios" / "no-match.yaml"
    probe.write_text(
        probe.read_text().replace("Grandma's favourite gelato flavour?", "terraform state bucket locking")
    )
    assert run(workspace) == 1
    out = capsys.readouterr().out
    assert "[assertion] no-match query 1" in out
    assert "no_relevant: the scenario's own thought 'nm-terraform-state'" in out


@pytest.mark.parametrize("content", ["{broken", '{"deterministic": {"top_k": "five"}}'])
def test_corrupt_thresholds_exit_2_naming_the_file(workspace, capsys, content):
    (workspace / "datasets" / "thresholds.json").write_text(content)
    assert run(workspace) == 2
    err = capsys.readouterr().err
    assert str(workspace / "datasets" / "thresholds.json") in err


def test_missing_thresholds_warns_and_still_gates_assertions(workspace, capsys):
    (workspace / "datasets" / "thresholds.json").unlink()
    assert run(workspace) == 0
    assert "the baseline check is off" in capsys.readouterr().out


def test_recording_touches_only_its_mode_and_exits_0(workspace, capsys):
    data = thresholds(workspace)
    data["real@5"] = data["deterministic@5"] | {"recorded_at": "2026-01-01T00:00:00+00:00"}
    data["deterministic@5"]["thresholds"]["overall"]["recall"] = 1.0  # would regress
    write_thresholds(workspace, data)
    assert record(workspace) == 0
    after = thresholds(workspace)
    assert after["real@5"] == data["real@5"]
    assert after["deterministic@5"]["thresholds"]["overall"]["recall"] < 1.0
    assert run(workspace) == 0


def test_a_top_k_10_baseline_keeps_the_top_k_5_entry(workspace, capsys):
    before = thresholds(workspace)
    assert record(workspace, "--top-k", "10") == 0
    assert "baseline for deterministic at top_k 10 recorded in" in capsys.readouterr().out
    after = thresholds(workspace)
    assert after["deterministic@5"] == before["deterministic@5"]
    assert after["real@5"] == before["real@5"]
    assert after["deterministic@10"]["top_k"] == 10
    assert run(workspace, "--top-k", "10", "--require-baseline") == 0
    assert "No gating regressions." in capsys.readouterr().out
    assert run(workspace, "--require-baseline") == 0  # the top_k 5 entry still gates


def test_a_top_k_without_a_baseline_says_the_check_is_off_and_require_baseline_exits_1(workspace, capsys):
    message = "baseline check OFF: no baseline for deterministic at top_k 10"
    assert run(workspace, "--top-k", "10") == 0
    out = capsys.readouterr().out
    assert message in out and "No gating regressions." not in out
    assert (
        "to record one from this run's report, `evalkit baseline record` (it adds this entry and keeps" in out
    )
    report = json.loads((workspace / "report.json").read_text())
    assert any(note.startswith(message) for note in report["notes"])
    assert run(workspace, "--top-k", "10", "--require-baseline") == 1
    out = capsys.readouterr().out
    required = "[baseline] a baseline is required (require_baseline is on) but not every metric was compared"
    assert required in out
    assert "no baseline for deterministic at top_k 10" in out
    report = json.loads((workspace / "report.json").read_text())
    assert [r["kind"] for r in report["regressions"]] == ["baseline"]


def test_require_baseline_without_a_thresholds_file_exits_1(workspace, capsys):
    (workspace / "datasets" / "thresholds.json").unlink()
    assert run(workspace, "--require-baseline") == 1
    assert "baseline check OFF: no thresholds file at" in capsys.readouterr().out


def test_recording_refuses_a_partial_suite(workspace, capsys):
    assert record(workspace, "--scenario", "temporal") == 2
    assert (
        "the run selected scenarios (temporal), and a baseline averages the whole suite"
        in capsys.readouterr().err
    )


def test_two_runs_give_identical_reports_apart_from_timestamps(workspace):
    assert run(workspace) == 0
    first = json.loads((workspace / "report.json").read_text())
    assert run(workspace) == 0
    second = json.loads((workspace / "report.json").read_text())
    for report in (first, second):
        report.pop("generated_at")
        report.pop("latency")  # wall-clock search times, like the timestamp
    assert first == second


def test_scenario_selection_runs_only_those_and_is_not_metric_gated(workspace, capsys):
    data = thresholds(workspace)
    data["deterministic@5"]["thresholds"]["overall"]["recall"] = 1.0  # the whole suite would regress
    write_thresholds(workspace, data)
    assert run(workspace, "--scenario", "temporal", "--scenario", "supersession") == 0
    report = json.loads((workspace / "report.json").read_text())
    assert [s["name"] for s in report["scenarios"]] == ["supersession", "temporal"]
    assert "scenarios were selected by name: the baseline check is off" in capsys.readouterr().out


def test_unknown_scenario_is_exit_2_listing_names(workspace, capsys):
    assert run(workspace, "--scenario", "nope") == 2
    assert "temporal" in capsys.readouterr().err


def test_malformed_dataset_is_exit_2_and_nothing_runs(workspace, capsys):
    (workspace / "datasets" / "scenarios" / "temporal.yaml").write_text("name: Bad Name\ncategory: nope\n")
    assert run(workspace) == 2
    err = capsys.readouterr().err
    assert "temporal.yaml" in err and "required key 'queries' is missing" in err
    assert not (workspace / "report.json").exists()


@pytest.mark.parametrize(
    "args",
    [["--top-k", "0"], ["--top-k", "x"], ["--top-k", "1001"], ["--gated-pass", "1.5"], ["--bogus"]],
)
def test_bad_values_are_usage_errors(workspace, capsys, args):
    try:
        code = run(workspace, *args)
    except SystemExit as exit_:  # argparse refuses an unknown flag itself
        code = int(str(exit_.code))
    assert code == 2
    assert "error" in capsys.readouterr().err


def test_options_that_need_real_mode_are_usage_errors(workspace, capsys):
    assert run(workspace, "--cache", "c.sqlite3") == 2
    assert "--cache needs a real embedder (--embedder real or real:MODEL)" in capsys.readouterr().err


def test_min_relevance_override_and_no_gated(workspace):
    assert run(workspace, "--gated-pass", "0.95") == 0
    report = json.loads((workspace / "report.json").read_text())
    assert report["gated"]["relevance_gate"]["min_relevance"] == 0.95
    assert run(workspace, "--gated-pass", "off") == 0
    assert json.loads((workspace / "report.json").read_text())["gated"] is None


def test_help_documents_every_flag(capsys):
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    for name, sub in commands.choices.items():  # type: ignore[union-attr]
        text = sub.format_help()
        for action in sub._actions:
            for flag in action.option_strings:
                assert flag in text, (name, flag)
            assert action.help, (name, action.dest)


def test_python_dash_m_entry_point(workspace):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "--top-k", "0"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert "--top-k" in proc.stderr


def test_perturb_curve_prints_the_curve_saves_it_and_keeps_the_run_checked_against_its_baseline(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(workspace, "--history", "none", "--perturb", "distractors=0,5,10", "--perturb-seed", "2") == 0
    out = capsys.readouterr().out
    assert "Verdict: PASS" in out  # the run is the unperturbed suite's
    table = out[out.index("Perturbation curve (distractors added per scenario, seed 2; reference;") :]
    assert table.splitlines()[1].split() == ["metric", "0", "5", "10"]
    assert "never compared with a baseline" in table
    saved = json.loads((workspace / "report.json").read_text())
    curve = saved["perturbation_curve"]
    assert curve["kind"] == "distractors" and curve["seed"] == 2 and curve["values"] == [0, 5, 10]
    recall = curve["series"]["reference"]["recall"]
    assert recall[0] == saved["overall"]["metrics"]["recall"]
    assert f"{recall[1]:.3f}" in table.splitlines()[3]
    assert "perturbation" not in saved["provenance"]  # the run itself is not perturbed
    assert run(workspace, "--history", "none", "--perturb", "distractors=0,5,10", "--perturb-seed", "2") == 0
    again = json.loads((workspace / "report.json").read_text())["perturbation_curve"]
    assert again == curve  # seeded: the same curve every time


def test_a_run_without_perturb_curve_saves_no_curve(workspace: Path) -> None:
    assert run(workspace, "--history", "none", "--scenario", "temporal") == 0
    assert "perturbation_curve" not in json.loads((workspace / "report.json").read_text())


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--perturb", "distractors=0,x"],
            "--perturb 'distractors=0,x': 'x' is not a whole number",
        ),
        (["--perturb", "distractors=0,,5"], "'' is not a whole number 0 or more"),
        (["--perturb", "distractors=5,5"], "a value is given twice; give each value once"),
        (["--perturb", "distractors=0,65"], "the shipped pool holds 64 thoughts"),
        (["--perturb", "paraphrase=1,2"], "paraphrase is not offered"),
        (["--perturb", "nope"], "unknown perturbation; use --perturb distractors=N"),
        (
            ["--perturb", "distractors=0,5", "--perturb", "stale-repeats=1"],
            "--perturb with one value and --perturb with several together: a curve (several values) "
            "starts from the unperturbed suite; give the curve alone",
        ),
    ],
)
def test_bad_perturb_curves_exit_2_naming_the_flag_and_the_fix(
    workspace: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    assert run(workspace, "--history", "none", *argv) == 2
    assert expected in capsys.readouterr().err
    assert not (workspace / "report.json").exists()


def test_a_run_replacing_the_report_of_another_suite_says_so(capsys, tmp_path):
    out = ["--out", str(tmp_path / "report.json"), "--history", "none"]
    assert cli(capsys, "run", "--datasets", "built-in", *out)[0] == 0
    code, _, err = cli(capsys, "run", "--pack", "deletion-ghosts", *out)
    assert code == 0
    assert (
        f"evalkit: note: replaced {tmp_path / 'report.json'}, a run of system reference on suite built-in"
        in err
    )
    code, _, err = cli(capsys, "run", "--pack", "deletion-ghosts", *out)
    assert code == 0 and "replaced" not in err  # the same suite again: nothing to say
