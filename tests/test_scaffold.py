"""`evalkit init` (evalkit.scaffold): the files it writes, that `evalkit run` works inside them at
once, and that it never overwrites a file without --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main
from evalkit.errors import UsageError
from evalkit.scaffold import init_project

FILES = [
    ".github/workflows/evalkit-baseline.yml",
    ".github/workflows/evalkit.yml",
    "EVALKIT.md",
    "distractors.yaml",
    "evalkit.toml",
    "notebooks/compare_runs.ipynb",
    "notebooks/eval_report.ipynb",
    "notebooks/scenario_drilldown.ipynb",
    "notebooks/traces.ipynb",
    "scenarios/example.yaml",
    "suite.yaml",
    "thresholds.json",
]


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_init_writes_the_project_and_run_works_inside_it_at_once(tmp_path, monkeypatch, capsys) -> None:
    assert main(["init", str(tmp_path / "x")]) == 0
    project = tmp_path / "x"
    assert _files(project) == sorted(FILES)
    monkeypatch.chdir(project)
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert "deploy-facts" in out and "facts" in out
    assert "baseline check OFF: no baseline for deterministic at top_k 5" in out
    assert (project / "reports" / "report.json").is_file()
    assert main(["run", "--require-baseline"]) == 1  # what the generated workflow runs
    assert main(["baseline", "record"]) == 0  # the run's report, reports/report.json
    assert list(json.loads((project / "thresholds.json").read_text())) == ["deterministic@5"]
    assert main(["run", "--require-baseline"]) == 0
    assert "No gating regressions." in capsys.readouterr().out


def test_init_never_overwrites_without_force_and_writes_nothing(tmp_path, capsys) -> None:
    (tmp_path / "evalkit.toml").write_text("top_k = 3\n")
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"would overwrite {tmp_path / 'evalkit.toml'}; nothing was written" in err and "--force" in err
    assert _files(tmp_path) == ["evalkit.toml"]
    assert (tmp_path / "evalkit.toml").read_text() == "top_k = 3\n"
    assert main(["init", str(tmp_path), "--force"]) == 0
    assert _files(tmp_path) == sorted(FILES)
    assert "datasets" in (tmp_path / "evalkit.toml").read_text()


def test_init_keeps_other_files_and_refuses_a_file_as_folder(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    init_project(tmp_path, "1.2.3")
    assert (tmp_path / "notes.txt").read_text() == "mine"
    with pytest.raises(UsageError, match="is a file; evalkit init needs a folder"):
        init_project(tmp_path / "notes.txt", "1.2.3")


def test_the_generated_workflow_gates_pull_requests_runs_real_weekly_and_uploads_the_html(tmp_path) -> None:
    init_project(tmp_path, "1.2.3")
    text = (tmp_path / ".github" / "workflows" / "evalkit.yml").read_text()
    doc = yaml.safe_load(text)
    triggers = doc.get("on", doc.get(True))
    assert set(triggers) == {"pull_request", "schedule", "workflow_dispatch"}
    assert triggers["schedule"] == [{"cron": "0 6 * * 1"}]
    (job,) = doc["jobs"].values()
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "evalkit run $MODE_FLAG --require-baseline --mutants" in runs
    assert "evalkit report -p report_json reports/report.json" in runs
    assert '"evalkit-memory==1.2.3"' in runs and '"evalkit-memory[real]==1.2.3"' in runs
    assert "${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}" in runs
    assert job["env"]["MODE_FLAG"] == "${{ github.event_name != 'pull_request' && '--embedder real' || '' }}"
    (upload,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert upload["if"] == "always()" and upload["with"]["path"] == "reports/"


def test_an_unknown_version_leaves_the_install_unpinned(tmp_path) -> None:
    init_project(tmp_path, None)
    text = (tmp_path / ".github" / "workflows" / "evalkit.yml").read_text()
    assert 'pip install "evalkit-memory"' in text and "@evalkit_pin@" not in text


def test_the_workflows_report_step_renders_the_saved_run_of_a_new_project(tmp_path, monkeypatch) -> None:
    init_project(tmp_path, None)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--gated-pass", "off"]) == 0
    assert main(["report", "--no-progress", "-p", "report_json", "reports/report.json"]) == 0
    html = (tmp_path / "reports" / "eval_report.html").read_text(encoding="utf-8")
    assert "baseline check OFF: no baseline for deterministic at top_k 5" in html
    assert "No gating regressions." not in html


def test_evalkit_notebooks_copies_the_packaged_notebooks_as_they_are(tmp_path, capsys) -> None:
    from tests.shared import NOTEBOOKS

    assert main(["notebooks", str(tmp_path / "nb")]) == 0
    names = ["compare_runs.ipynb", "eval_report.ipynb", "scenario_drilldown.ipynb", "traces.ipynb"]
    assert _files(tmp_path / "nb") == names
    assert all((tmp_path / "nb" / n).read_bytes() == (NOTEBOOKS / n).read_bytes() for n in names)
    assert f"next: jupyter lab {tmp_path / 'nb'}" in capsys.readouterr().out
    (tmp_path / "nb" / "eval_report.ipynb").write_text("mine")
    assert main(["notebooks", str(tmp_path / "nb")]) == 2
    assert "would overwrite" in capsys.readouterr().err
    assert (tmp_path / "nb" / "eval_report.ipynb").read_text() == "mine"
    assert main(["notebooks", str(tmp_path / "nb"), "--force"]) == 0
    assert (tmp_path / "nb" / "eval_report.ipynb").read_bytes() == (
        NOTEBOOKS / "eval_report.ipynb"
    ).read_bytes()


def test_the_projects_notebooks_run_its_own_suite_and_write_its_reports(tmp_path) -> None:
    from evalkit.notebooks import read_parameters, run_notebook

    init_project(tmp_path, None)
    report = read_parameters(tmp_path / "notebooks" / "eval_report.ipynb")
    assert (report["datasets"].default, report["thresholds"].default) == (".", None)
    assert report["out"].default == "reports/eval_report.json"  # relative to the project root
    assert report["history"].default == "reports/history.sqlite3"
    drilldown = tmp_path / "notebooks" / "scenario_drilldown.ipynb"
    assert read_parameters(drilldown)["scenario"].default == "deploy-facts"
    run_notebook(drilldown, {}, tmp_path / "out", progress=False)  # as JupyterLab would, in notebooks/
    saved = json.loads((tmp_path / "reports" / "scenario_drilldown.json").read_text())
    assert [s["name"] for s in saved["scenarios"]] == ["deploy-facts"]


@pytest.mark.parametrize("where", [".", "notebooks"])
def test_papermill_runs_the_projects_report_from_its_root_and_from_notebooks(
    tmp_path, monkeypatch, where
) -> None:
    """The issue: `datasets = ".."` was resolved from the kernel's working directory, so papermill
    from the project root looked for the suite above the project."""
    import papermill

    project = tmp_path / "proj"
    init_project(project, None)
    monkeypatch.chdir(project / where)
    papermill.execute_notebook(
        str(project / "notebooks" / "eval_report.ipynb"),
        str(tmp_path / "out.ipynb"),
        parameters={"mutants": None, "perturb": None},
        progress_bar=False,
    )
    saved = json.loads((project / "reports" / "eval_report.json").read_text())
    assert [s["name"] for s in saved["scenarios"]] == ["deploy-facts"]
    assert not (project / "notebooks" / "reports").exists()


def test_a_relative_suite_that_is_not_one_names_what_it_was_resolved_against(tmp_path, monkeypatch) -> None:
    from evalkit import run_and_load

    init_project(tmp_path / "proj", None)
    monkeypatch.chdir(tmp_path / "proj" / "notebooks")
    with pytest.raises(UsageError) as caught:
        run_and_load("reports/x.json", datasets="..", mutants=None)
    message = str(caught.value)
    assert f"datasets '..': {tmp_path} holds no scenarios/ folder" in message
    assert f"relative to the project root (the folder of evalkit.toml), {tmp_path / 'proj'}" in message
    monkeypatch.chdir(tmp_path)  # outside the project: the working directory
    with pytest.raises(UsageError, match="relative to the kernel's working directory"):
        run_and_load("reports/x.json", datasets="nowhere", mutants=None)


def test_the_init_example_catches_the_mutation_it_illustrates(tmp_path, monkeypatch, capsys) -> None:
    """`evalkit run --mutants` in a new project: the example's forbid, asked inside project
    `orders` where fewer than top_k current notes compete, catches supersession-not-suppressed
    (without a recorded baseline: the mutants are gated on the suite's own unmutated run)."""
    init_project(tmp_path, None)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--mutants", "report", "--history", "none"]) == 0
    out = capsys.readouterr().out
    assert "Suite strength: caught " in out and "supersession-not-suppressed escaped" not in out
    detection = json.loads((tmp_path / "reports" / "report.json").read_text())["detection"]
    (outcome,) = [o for o in detection["outcomes"] if o["mutation"] == "supersession-not-suppressed"]
    assert outcome["regressions"][0]["message"] == (
        "deploy-facts query 2 ('Which PostgreSQL version does the orders database run?'): forbid: "
        "'db-old' was retrieved at rank 3"
    )
    assert detection["checked_against"].startswith("this suite's unmutated run")
    assert main(["lint"]) == 0
