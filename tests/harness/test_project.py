"""The project file (evalkit.toml, [tool.evalkit]) and its resolution with the command line
(evalkit.harness.project), `evalkit config`, and `evalkit run` inside a project."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.api import run_eval
from evalkit.cli import main
from evalkit.errors import UsageError
from evalkit.harness.project import resolve_project
from evalkit.packaged import BUILTIN_DATASETS, BUILTIN_THRESHOLDS
from tests.shared import DATASETS, run_and_record


def test_without_a_project_file_everything_is_a_default(tmp_path: Path) -> None:
    project = resolve_project({}, tmp_path)
    assert project.file is None
    assert project.datasets == BUILTIN_DATASETS and project.thresholds == BUILTIN_THRESHOLDS
    assert project.reports == Path("reports")
    assert project.config.top_k == 5 and project.config.thresholds == BUILTIN_THRESHOLDS
    assert set(project.sources.values()) == {"default", "default: <datasets>/thresholds.json"}


def test_flags_override_the_file_and_file_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "evalkit.toml").write_text(
        'datasets = "suite"\ntop_k = 7\ngated = false\nrequire_baseline = true\nreports = "out"\n'
    )
    below = tmp_path / "a" / "b"
    below.mkdir(parents=True)
    project = resolve_project({"top_k": 3}, below)
    assert project.file == tmp_path / "evalkit.toml"
    assert project.datasets == tmp_path / "suite"
    assert project.thresholds == tmp_path / "suite" / "thresholds.json"  # follows datasets
    assert project.reports == tmp_path / "out"
    assert (project.config.top_k, project.sources["top_k"]) == (3, "command line")
    assert project.config.gated is False and project.config.require_baseline is True
    assert project.sources["datasets"] == str(tmp_path / "evalkit.toml")


def test_a_datasets_flag_finds_its_own_thresholds_file(tmp_path: Path) -> None:
    project = resolve_project({"datasets": tmp_path / "mine"}, tmp_path)
    assert project.thresholds == tmp_path / "mine" / "thresholds.json"
    explicit = resolve_project({"datasets": tmp_path / "mine", "thresholds": tmp_path / "t.json"}, tmp_path)
    assert explicit.thresholds == tmp_path / "t.json" and explicit.sources["thresholds"] == "command line"


def test_pyproject_tool_table_is_read_and_evalkit_toml_takes_precedence(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.evalkit]\ntop_k = 9\n')
    project = resolve_project({}, tmp_path)
    assert project.config.top_k == 9
    assert project.sources["top_k"] == f"{tmp_path / 'pyproject.toml'} [tool.evalkit]"
    (tmp_path / "evalkit.toml").write_text("top_k = 4\n")
    project = resolve_project({}, tmp_path)
    assert project.config.top_k == 4
    (note,) = project.notes
    assert (
        note == f"{tmp_path / 'pyproject.toml'} [tool.evalkit] is ignored: {tmp_path / 'evalkit.toml'} wins"
    )


def test_a_pyproject_without_a_tool_table_is_not_a_project_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert resolve_project({}, tmp_path).file is None


@pytest.mark.parametrize(
    ("content", "phrases"),
    [
        ("top_k = 0\n", ["top_k:", "fix it"]),
        ("datasets = 'x'\ncolour = 1\n", ["unknown key 'colour'", "datasets"]),
        ("top_k = [\n", ["is not valid TOML"]),
        ("min_relevance = 2.0\n", ["min_relevance:"]),
    ],
)
def test_a_bad_project_file_is_a_usage_error_naming_the_file_and_key(
    tmp_path: Path, content: str, phrases: list[str]
) -> None:
    (tmp_path / "evalkit.toml").write_text(content)
    with pytest.raises(UsageError) as info:
        resolve_project({}, tmp_path)
    assert str(tmp_path / "evalkit.toml") in str(info.value)
    assert all(p in str(info.value) for p in phrases), str(info.value)


def test_evalkit_config_prints_each_value_and_its_source(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "evalkit.toml").write_text('top_k = 7\ndatasets = "suite"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["config", "--thresholds", "base.json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"project file: {tmp_path / 'evalkit.toml'}"
    table = {line.split()[0]: line for line in lines[1:]}
    assert list(table) == [
        "datasets", "thresholds", "system", "top_k", "gated", "min_relevance", "require_baseline", "reports"
    ]  # fmt: skip
    assert str(tmp_path / "suite") in table["datasets"] and table["datasets"].endswith(
        f"({tmp_path / 'evalkit.toml'})"
    )
    assert "base.json" in table["thresholds"] and table["thresholds"].endswith("(command line)")
    assert " 7 " in table["top_k"] and table["top_k"].endswith(f"({tmp_path / 'evalkit.toml'})")
    assert table["reports"].split()[1] == "reports" and table["reports"].endswith("(default)")


def test_evalkit_config_exits_2_on_a_bad_project_file(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "evalkit.toml").write_text("topk = 7\n")
    monkeypatch.chdir(tmp_path)
    assert main(["config"]) == 2
    assert f"{tmp_path / 'evalkit.toml'}: topk: unknown key 'topk'" in capsys.readouterr().err


def test_run_inside_a_project_uses_its_suite_thresholds_and_reports_folder(
    tmp_path, monkeypatch, capsys
) -> None:
    shutil.copytree(DATASETS, tmp_path / "suite")
    (tmp_path / "evalkit.toml").write_text('datasets = "suite"\nreports = "out"\ntop_k = 10\n')
    monkeypatch.chdir(tmp_path)
    assert run_and_record(["--gated-pass", "off"]) == 0
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved["top_k"] == 10
    assert "deterministic@10" in json.loads((tmp_path / "suite" / "thresholds.json").read_text())
    assert main(["run", "--gated-pass", "off", "--require-baseline"]) == 0
    assert "No gating regressions." in capsys.readouterr().out


def test_a_datasets_flag_gates_on_that_folders_thresholds_file(tmp_path, monkeypatch, capsys) -> None:
    shutil.copytree(DATASETS, tmp_path / "suite")
    data = json.loads((tmp_path / "suite" / "thresholds.json").read_text())
    data["deterministic@5"]["thresholds"]["overall"]["recall"] = 1.0  # unreachable: must regress
    (tmp_path / "suite" / "thresholds.json").write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--gated-pass", "off", "--datasets", "suite"]) == 1
    assert "[metric] overall: recall" in capsys.readouterr().out


def test_the_api_gates_a_suite_on_its_own_thresholds_file_too(tmp_path) -> None:
    suite = shutil.copytree(DATASETS, tmp_path / "suite")
    (suite / "thresholds.json").unlink()
    run = run_eval(datasets=suite, gated=False)
    assert run.result.baseline_check_off is not None
    assert f"no thresholds file at {suite / 'thresholds.json'}" in run.result.baseline_check_off
    with_builtin = run_eval(datasets=suite, gated=False, thresholds=DATASETS / "thresholds.json")
    assert with_builtin.result.baseline_check_off is None and with_builtin.result.regressions == []


def test_an_mcp_mapping_in_the_project_file_is_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "evalkit.toml").write_text('system = "mcp:maps/server.toml"\n')
    below = tmp_path / "sub"
    below.mkdir()
    assert resolve_project({}, below).config.system == f"mcp:{tmp_path / 'maps' / 'server.toml'}"
    flagged = resolve_project({"system": "mcp:here.toml"}, below)
    assert (flagged.config.system, flagged.sources["system"]) == ("mcp:here.toml", "command line")


def test_run_evaluates_the_project_files_system_unless_system_is_given(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "evalkit.toml").write_text('system = "tests.systems_fixtures:limited_system"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--gated-pass", "off", "--scenario", "temporal", "--out", "a.json"]) == 0
    assert json.loads((tmp_path / "a.json").read_text())["system"] == "limited"
    assert (
        main(
            [
                "run",
                "--gated-pass",
                "off",
                "--scenario",
                "temporal",
                "--out",
                "b.json",
                "--system",
                "reference",
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "b.json").read_text())["system"] == "reference"
