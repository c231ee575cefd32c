"""`evalkit` starts at once: `--version`, `--help`, `config`, `lint` and `init` import nothing heavy.

Each command runs in a fresh interpreter, which then lists the modules it imported; nothing is
timed. The parser is built in two steps (`evalkit.cli.parse_args`): the command is found on a
parser whose commands are empty, then parsed by its own module only.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli import COMMANDS, build_parser, parse_args
from tests.shared import ROOT

HEAVY = frozenset(
    {"pandas", "matplotlib", "scipy", "torch", "numpy", "httpx", "fastapi", "uvicorn", "starlette", "mcp"}
)
"""What a command that does not use them must not import: the frames and charts, statistics, the
real embedder, arrays, and the HTTP and MCP stacks."""

PROBE = """
import contextlib, io, json, sys
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    if sys.argv[1:] == ["--import-only"]:
        import evalkit.cli
    else:
        from evalkit.cli import main
        main(sys.argv[1:])
print(json.dumps(sorted({name.partition(".")[0] for name in sys.modules})))
"""
"""Runs `evalkit ARGS` (or only `import evalkit.cli`) and prints the top-level packages imported."""


def _imported(cwd: Path, *args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert proc.returncode in (0, 1), proc.stderr  # 1: the run found regressions
    return set(json.loads(proc.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "args",
    [("--import-only",), ("--version",), ("--help",), ("config",), ("lint",), ("init", "project")],
    ids=lambda args: " ".join(args),
)
def test_a_light_command_imports_nothing_heavy(tmp_path: Path, args: tuple[str, ...]) -> None:
    imported = _imported(tmp_path, *args)
    assert "evalkit" in imported  # the probe ran the command
    assert sorted(imported & HEAVY) == []


RUN_MACHINERY = frozenset(
    {
        "evalkit.harness.request",
        "evalkit.harness.executors",
        "evalkit.suites.packs",
        "multiprocessing",
        "concurrent.futures",
    }
)
"""What only a run needs (the run request, the executors and their process pools, the packs): a
command that reads the project settings and a suite, no more, must not load it."""


@pytest.mark.parametrize("args", [("lint",), ("config",)], ids=" ".join)
def test_a_settings_command_loads_no_run_machinery(tmp_path: Path, args: tuple[str, ...]) -> None:
    probe = PROBE.replace('name.partition(".")[0]', "name")
    proc = subprocess.run(
        [sys.executable, "-c", probe, *args], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    modules = set(json.loads(proc.stdout.splitlines()[-1]))
    assert "evalkit.harness.project" in modules  # the probe read the settings
    assert sorted(modules & RUN_MACHINERY) == []


def test_version_and_help_import_no_command_module(tmp_path: Path) -> None:
    probe = PROBE.replace('name.partition(".")[0]', "name")
    for args in (("--version",), ("--help",)):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *args], cwd=tmp_path, capture_output=True, text=True, check=True
        )
        modules = set(json.loads(proc.stdout.splitlines()[-1]))
        assert sorted(m for m in modules if m.startswith("evalkit.cli.") and m != "evalkit.cli.signals") == [
            "evalkit.cli.exit_codes"
        ]


def test_every_command_module_is_listed_once() -> None:
    modules = {
        path.stem
        for path in (ROOT / "evalkit" / "cli").glob("*.py")
        if any(
            isinstance(node, ast.FunctionDef) and node.name == "register"
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    }
    listed = [module for module, _ in COMMANDS.values()]
    assert sorted(listed) == sorted(modules)


def test_top_level_help_lists_every_command_with_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, (_, summary) in COMMANDS.items():
        assert f"{name} {summary}" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--top-k", "3", "--gated-pass", "off"],
        ["lint", "--strict"],
        ["config"],
        ["compare", "a.json", "b.json"],
        ["mcp", "inspect", "--", "server"],
        ["import", "traces", "spans.json", "--out", "out"],
    ],
)
def test_two_step_parse_gives_what_the_full_parser_gives(argv: list[str]) -> None:
    assert vars(parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_a_command_help_is_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["run", "--help"])
    assert "--require-baseline" in capsys.readouterr().out


RUN_NEEDS = frozenset({"numpy"})
"""What `evalkit run` still loads of `HEAVY`: numpy (the hashing embedder's and the store's vectors).
No pandas: the console summary reads the run's rows (`EvalRun.query_rows`), not its frames."""


def test_a_run_of_the_built_in_suite_loads_no_frames_charts_statistics_model_or_network_stack(
    tmp_path: Path,
) -> None:
    imported = _imported(tmp_path, "run", "--history", "none", "--out", str(tmp_path / "report.json"))
    assert (tmp_path / "report.json").is_file()
    assert sorted(imported & (HEAVY - RUN_NEEDS)) == []


def test_a_command_runs_with_the_collectors_thresholds_raised_and_restores_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every command, also one that fails, runs under `COMMAND_GC_THRESHOLD`; the thresholds
    before it are back afterwards (the library leaves them alone)."""
    import gc

    import evalkit.cli.lint
    from evalkit.cli import COMMAND_GC_THRESHOLD, main

    seen = []

    def failing(args: object) -> int:
        seen.append(gc.get_threshold())
        raise OSError("disk full")

    monkeypatch.setattr(evalkit.cli.lint, "lint_command", failing)
    before = gc.get_threshold()
    assert before != COMMAND_GC_THRESHOLD
    assert main(["lint"]) == 2
    assert seen == [COMMAND_GC_THRESHOLD] and gc.get_threshold() == before
