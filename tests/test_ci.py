"""The CI context (`evalkit.ci`) and what it switches on: a run that compared nothing with a
baseline fails unless told otherwise in so many words (`evalkit.harness.requirement`, SPEC §3.7),
in every spelling; `evalkit run` outside a project says so, and refuses in CI; `evalkit init`'s
workflow runs the mutation suite only where it applies.

tests/conftest.py clears `CI` for the whole suite: each test here sets it itself."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalkit import run_eval
from evalkit.ci import ci_context
from evalkit.scaffold import init_project
from tests.shared import DATASETS, FIXTURES, NOTEBOOKS, cli


@pytest.mark.parametrize(
    ("value", "context"),
    [
        (None, None),
        ("", None),
        ("0", None),
        ("false", None),
        ("False", None),
        ("no", None),
        ("off", None),
        ("true", "CI=true in the environment"),
        ("1", "CI=1 in the environment"),
        ("yes", "CI=yes in the environment"),
    ],
)
def test_the_ci_context_is_the_ci_variable_set_to_a_true_word(value: str | None, context: str | None) -> None:
    assert ci_context({} if value is None else {"CI": value}) == context


def test_in_ci_a_run_without_baselines_fails_unless_the_baseline_is_turned_off_in_so_many_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    common = ("run", "--datasets", str(DATASETS), "--thresholds", "none", "--gated-pass", "off")
    common += ("--out", str(tmp_path / "report.json"))
    assert cli(capsys, *common)[0] == 0  # outside CI: NOT COMPARED, a note
    monkeypatch.setenv("CI", "1")
    code, out, _ = cli(capsys, *common)
    assert code == 1
    assert (
        "[baseline] a baseline is required (a CI context: CI=1 in the environment) but not every metric"
        in out
    )
    assert "to pass without comparing, say so: --no-require-baseline (or require_baseline = false in " in out
    code, out, _ = cli(capsys, *common, "--no-require-baseline")
    assert code == 0 and "NOT COMPARED" in out and "[baseline]" not in out
    assert cli(capsys, *common, "--require-baseline")[0] == 1
    monkeypatch.setenv("CI", "false")
    assert cli(capsys, *common)[0] == 0


def test_in_ci_a_new_project_fails_until_a_baseline_is_recorded_or_the_toml_turns_it_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    init_project(tmp_path, None)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    code, out, _ = cli(capsys, "run", "--gated-pass", "off")
    assert code == 1
    assert f"--no-require-baseline (or require_baseline = false in {tmp_path / 'evalkit.toml'})" in out
    assert cli(capsys, "config", "--get", "require_baseline")[1] == "auto (on in a CI context)\n"
    with (tmp_path / "evalkit.toml").open("a") as toml:
        toml.write("require_baseline = false\n")
    code, out, _ = cli(capsys, "run", "--gated-pass", "off")
    assert code == 0 and "to pass without comparing" not in out
    assert cli(capsys, "run", "--gated-pass", "off", "--require-baseline")[0] == 1  # the flag over the file


def test_run_eval_in_ci_fails_without_a_baseline_and_passes_when_told_none_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = FIXTURES / "datasets_tiny"
    assert run_eval(datasets=tiny, gated=False).ok  # outside CI: no thresholds file is a note
    monkeypatch.setenv("CI", "true")
    run = run_eval(datasets=tiny, gated=False)
    assert not run.ok and [r.kind for r in run.result.regressions] == ["baseline"]
    assert "no thresholds file at" in run.result.regressions[0].message
    assert run_eval(datasets=tiny, gated=False, require_baseline=False).ok


def test_outside_a_project_run_says_it_uses_the_builtin_suite_and_in_ci_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    code, _, err = cli(capsys, "run", "--gated-pass", "off")
    assert code == 2 and list(tmp_path.iterdir()) == []  # refused before anything was written
    where = f"no evalkit.toml or [tool.evalkit] in pyproject.toml in {tmp_path}"
    assert err.startswith(f"evalkit: error: {where} or above, and in CI")
    assert "in CI (CI=true in the environment) evalkit does not fall back to its built-in suite" in err
    assert "`evalkit init`" in err and "--datasets built-in" in err
    code, out, err = cli(capsys, "run", "--gated-pass", "off", "--datasets", "built-in")
    assert code == 0 and "No gating regressions." in out  # asked for by name: compared, passes
    assert "running the built-in suite" not in err
    monkeypatch.delenv("CI")
    code, out, err = cli(capsys, "run", "--gated-pass", "off")
    assert code == 0 and "No gating regressions." in out
    (note,) = [line for line in err.splitlines() if line.startswith("evalkit: note:")]
    assert note == (
        f"evalkit: note: {where} or above: running the built-in suite, reports in reports/; start a project "
        "of your own with `evalkit init`"
    )


def _run_step(project: Path, tmp_path: Path) -> tuple[list[str], str]:
    """Execute the run step of `project`'s evalkit workflow with bash, `evalkit config` real and
    `evalkit run` recorded: (the recorded `run` argument lists, the step's stdout)."""
    doc = yaml.safe_load((project / ".github" / "workflows" / "evalkit.yml").read_text())
    (job,) = doc["jobs"].values()
    (script,) = [s["run"] for s in job["steps"] if str(s.get("name", "")).startswith("Run the suite")]
    stub, calls = tmp_path / "bin" / "evalkit", tmp_path / "calls.txt"
    stub.parent.mkdir(parents=True)
    stub.write_text(
        f'#!/bin/sh\nif [ "$1" = config ]; then exec {sys.executable} -m evalkit "$@"; fi\n'
        f'echo "$@" >> {calls}\n'
    )
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{stub.parent}{os.pathsep}{os.environ['PATH']}", "MODE_FLAG": ""}
    done = subprocess.run(
        ["bash", "-e", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return calls.read_text().splitlines(), done.stdout


def test_the_init_workflow_runs_the_mutation_suite_only_for_the_reference_store(tmp_path: Path) -> None:
    reference, qdrant = tmp_path / "reference", tmp_path / "qdrant"
    init_project(reference, None)
    init_project(qdrant, None)
    with (qdrant / "evalkit.toml").open("a") as toml:
        toml.write('system = "qdrant"\n')
    assert _run_step(reference, tmp_path / "a") == (["run --require-baseline --mutants report"], "")
    calls, out = _run_step(qdrant, tmp_path / "b")
    assert calls == ["run --require-baseline"]
    assert out == (
        "mutation suite skipped: it mutates the reference store's search; this project's system is qdrant\n"
    )


def test_papermill_on_the_report_notebook_in_ci_without_a_baseline_fails(tmp_path: Path) -> None:
    """`papermill notebooks/eval_report.ipynb out.ipynb -p top_k 10` with CI set: no baseline at
    top_k 10, so the last cell fails, naming the papermill spelling of the way out; the saved run
    shown again (`report_json`) fails in CI too, unless `-p require_baseline False` says so."""
    papermill = [sys.executable, "-m", "papermill", str(NOTEBOOKS / "eval_report.ipynb"), "out.ipynb"]
    env = {**os.environ, "CI": "1"}

    def papermill_run(*parameters: str) -> subprocess.CompletedProcess[str]:
        argv = [*papermill, "--no-progress-bar", *parameters]
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540)

    failed = papermill_run("-p", "top_k", "10")
    assert failed.returncode == 1
    assert "a baseline is required (a CI context: CI=1 in the environment)" in failed.stderr
    assert "to pass without comparing, say so: -p require_baseline False" in failed.stderr
    saved = ("-p", "report_json", "reports/eval_report.json")
    assert papermill_run(*saved).returncode == 1
    passed = papermill_run(*saved, "-p", "require_baseline", "False")
    assert passed.returncode == 0, passed.stderr
